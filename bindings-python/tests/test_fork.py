"""A generator inherited through fork refuses to issue in the child; the parent goes on."""

from __future__ import annotations

import multiprocessing
import os
import pickle
from typing import Any

import pytest

import ferroflake
from ferroflake import ForkedGeneratorError, Generator, Layout, NodeInUseError

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def child_report(gen: Generator) -> str:
    """What an inherited generator does in this process, as one line."""
    try:
        gen.next_id()
    except ForkedGeneratorError as err:
        try:  # the parent still holds its node id
            Generator(gen.node_id)
            return "made another generator of the parent's node id"
        except NodeInUseError:
            pass
        own = Generator(gen.node_id + 100)  # a generator made in the child works
        own.next_id()
        return f"refused {err.kind} {os.getpid()} {err}"
    return "issued"


def test_os_fork_child_cannot_issue_from_the_parents_generator() -> None:
    gen = Generator(501)
    parent_id = gen.next_id()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report through the pipe, exit without running pytest's cleanup
        try:
            os.write(write_end, child_report(gen).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        report = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert report.startswith(f"refused GENERATOR_FORKED {pid} "), report
    assert "ferroflake-lease" in report and "node id" in report
    assert gen.next_id() > parent_id  # the parent keeps issuing


def report_into(gen: Generator, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    queue.put(child_report(gen))


def test_multiprocessing_fork_child_cannot_issue_from_the_parents_generator() -> None:
    ctx = multiprocessing.get_context("fork")
    gen = Generator(502)
    gen.next_id()
    queue = ctx.Queue()
    process = ctx.Process(target=report_into, args=(gen, queue))
    process.start()
    report = queue.get(timeout=60)
    process.join(timeout=60)
    assert process.exitcode == 0
    assert report.startswith("refused GENERATOR_FORKED "), report
    gen.next_id()


def test_a_generator_cannot_be_sent_to_a_spawned_process() -> None:
    # spawn and forkserver pickle their arguments: a generator must not travel that way.
    with pytest.raises(TypeError):
        pickle.dumps(Generator(503))


def test_generators_made_after_a_fork_work_in_the_child() -> None:
    ctx = multiprocessing.get_context("fork")
    next_node = ctx.Value("i", 700)
    with ctx.Pool(2, initializer=_make_worker_generator, initargs=(next_node,)) as pool:
        batches = pool.map(_issue_from_worker_generator, range(4))
    every = [i for b in batches for i in b]
    assert len(every) == 400
    assert len(set(every)) == len(every)
    assert {Layout.twitter().decode(i).node for i in every} <= {700, 701}


_worker_generator: Generator | None = None


def _make_worker_generator(next_node: Any) -> None:
    # Each worker takes a node id of its own after the fork (in production: a lease from
    # ferroflake-lease; here a shared counter).
    global _worker_generator
    with next_node.get_lock():
        node = next_node.value
        next_node.value += 1
    _worker_generator = Generator(node)


def _issue_from_worker_generator(_: int) -> list[int]:
    assert _worker_generator is not None
    return _worker_generator.next_ids(100)
