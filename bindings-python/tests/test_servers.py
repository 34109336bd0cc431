"""A lease and a segment key on real servers, when they are up: run the suite under
`bash scripts/servers/with-servers.sh bash scripts/test-python.sh`, which exports their
addresses (FERROFLAKE_TEST_REDIS, FERROFLAKE_TEST_POSTGRES). Skipped otherwise."""

from __future__ import annotations

import os
import time
import uuid

import pytest

import ferroflake
from ferroflake import Layout, LeasedGenerator, SegmentAllocator

REDIS = os.environ.get("FERROFLAKE_TEST_REDIS")
POSTGRES = os.environ.get("FERROFLAKE_TEST_POSTGRES")
UNIX = hasattr(os, "fork")

ONE_NODE = Layout.custom(41, 0, 12, epoch=Layout.twitter().epoch_ms)


def with_query(url: str, name: str, value: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}{name}={value}"


@pytest.mark.skipif(not (UNIX and REDIS), reason="no Redis: FERROFLAKE_TEST_REDIS is unset (see scripts/servers/with-servers.sh)")
def test_a_lease_on_redis_is_held_refused_to_a_second_holder_and_released() -> None:
    assert REDIS is not None
    registry = with_query(REDIS, "prefix", f"ff-py-{uuid.uuid4().hex}")
    timings = {"ttl_ms": 1000, "max_ttl_ms": 1000}
    with LeasedGenerator(ONE_NODE, registry, **timings) as gen:
        assert gen.node_id == 0 and gen.status == "held"
        ids = gen.next_ids_array(1000)
        with pytest.raises(ferroflake.NoFreeNodeError):
            LeasedGenerator(ONE_NODE, registry, **timings)
    with LeasedGenerator(ONE_NODE, registry, **timings) as after:  # released: free at once
        assert after.next_id() > max(ids)


@pytest.mark.skipif(not (UNIX and POSTGRES), reason="no PostgreSQL: FERROFLAKE_TEST_POSTGRES is unset (see scripts/servers/with-servers.sh)")
def test_a_segment_key_on_postgres_issues_dense_ids_and_gives_the_rest_back() -> None:
    assert POSTGRES is not None
    name = f"ff-py-{uuid.uuid4().hex}"
    with SegmentAllocator(POSTGRES) as allocator:
        assert allocator.store.startswith("postgres://"), allocator.store
        allocator.create_key(name, 1, 100)
        key = allocator.key(name)
        assert [key.next_id(), *key.next_ids(150), *key.next_ids_array(9)] == list(range(1, 161))
    with SegmentAllocator(POSTGRES) as again:
        assert again.key(name).next_id() == 161


SERVICE = os.environ.get("FERROFLAKE_TEST_SERVICE")


@pytest.mark.skipif(not SERVICE, reason="no service: FERROFLAKE_TEST_SERVICE is unset (scripts/test-python.sh starts one)")
def test_a_segment_key_through_the_service_issues_dense_ids_and_gives_the_rest_back() -> None:
    assert SERVICE is not None
    name = f"ff-py-{uuid.uuid4().hex}"
    with SegmentAllocator(SERVICE) as allocator:
        assert allocator.store == SERVICE  # as given, nothing to hide
        allocator.create_key(name, 1, 100)
        key = allocator.key(name)
        assert [key.next_id(), *key.next_ids(150), *key.next_ids_array(9)] == list(range(1, 161))
    with SegmentAllocator(SERVICE) as again:
        assert again.key(name).next_id() == 161
    with SegmentAllocator(SERVICE) as allocator, pytest.raises(ferroflake.UnknownKeyError):
        allocator.key(f"ff-py-{uuid.uuid4().hex}")


def test_a_service_that_does_not_answer_is_a_typed_error_within_seconds() -> None:
    began = time.monotonic()
    with SegmentAllocator("ferroflake+http://127.0.0.1:1/") as allocator:
        with pytest.raises(ferroflake.StoreUnavailableError):
            allocator.key("orders")
    assert time.monotonic() - began < 15
    # A token in the address would be shown wherever the address is: refused, unshown.
    with pytest.raises(ferroflake.SegmentConfigError) as refused:
        SegmentAllocator("ferroflake+http://127.0.0.1:1/?token=hunter2-secret")
    assert "hunter2-secret" not in str(refused.value)


@pytest.mark.skipif(not (UNIX and SERVICE), reason="no service: FERROFLAKE_TEST_SERVICE is unset (scripts/test-python.sh starts one)")
def test_leases_through_the_service_are_exclusive_and_released() -> None:
    assert SERVICE is not None
    layout = Layout.twitter()
    timings = {"ttl_ms": 1000, "max_ttl_ms": 1000}
    with LeasedGenerator(layout, SERVICE, **timings) as first, LeasedGenerator(layout, SERVICE, **timings) as second:
        assert first.status == "held" and second.status == "held"
        assert first.node_id != second.node_id
        ids = [*first.next_ids(1000), *second.next_ids(1000)]
        assert len(set(ids)) == 2000
        assert {layout.decode(i).node for i in ids} == {first.node_id, second.node_id}
    assert first.status == "released" and second.status == "released"
    # A registry address the service would show: refused, unshown.
    with pytest.raises(ferroflake.RegistryAddressError) as refused:
        LeasedGenerator(layout, "ferroflake+http://127.0.0.1:1/?token=hunter2-secret")
    assert "hunter2-secret" not in str(refused.value)
