"""The stubs type the README's patterns as a strict type checker reads them."""

from __future__ import annotations

import pytest

mypy_api = pytest.importorskip("mypy.api", reason="mypy comes with the `test` extra")

# A function that returns from inside `with`: a checker must know that leaving the block
# never swallows an exception, or it reports a missing return.
RETURNS_FROM_WITH = """
import ferroflake

def next_order_id(store: str | None) -> int:
    with ferroflake.SegmentAllocator(store) as segments:
        return segments.key("orders").next_id()

def next_leased_id(registry: str) -> int:
    with ferroflake.LeasedGenerator(registry=registry) as gen:
        return gen.next_id()
"""


def test_returning_from_inside_with_passes_mypy_strict() -> None:
    out, err, status = mypy_api.run(["--strict", "--no-incremental", "-c", RETURNS_FROM_WITH])
    assert status == 0, out + err
