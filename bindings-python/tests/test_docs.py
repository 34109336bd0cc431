"""The examples users read first run as written: the README quickstart, every example of
the Python guide (bindings-python/README.md, the page PyPI shows), in order, and the package
docstring."""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
from pathlib import Path

import pytest

import ferroflake

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GUIDE = ROOT / "bindings-python" / "README.md"
# The guide's sections with a python block, in the order the guide has them.
GUIDE_SECTIONS = ["python-generator", "python-leases-and-segments", "python-public-ids"]

PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", flags=re.DOTALL)


def python_block(doc: Path, section: str) -> str:
    """The one python block of section `section` of `doc`."""
    text = doc.read_text(encoding="utf-8")
    name = doc.relative_to(ROOT)
    marker = f"<!-- section:{section} -->"
    assert marker in text, f"{name} has no {section} section"
    body = text.split(marker)[1].split(f"<!-- /section:{section} -->")[0]
    blocks: list[str] = PYTHON_BLOCK.findall(body)
    assert len(blocks) == 1, f"expected one python block in {name} section {section}"
    return blocks[0]


def run_printed(code: str, section: str) -> str:
    """What `code` prints when run as a script."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, section, "exec"), {})
    return out.getvalue()


def with_temporary_store(code: str, tmp_path: Path) -> str:
    """The example with its `store = None` (the host's embedded SQLite file) pointed at a
    file in `tmp_path`."""
    code, stores = re.subn(
        r"^store = None\b", f"store = {'sqlite://' + str(tmp_path / 'segments.db')!r}", code, flags=re.M
    )
    assert stores == 1, "the example must set `store = None`"
    return code


def test_readme_python_quickstart_runs() -> None:
    # README.md's quickstart prints the ID, its base62 text and its time in Unix ms.
    out = run_printed(python_block(README, "quickstart-python"), "README.md quickstart-python")
    match = re.fullmatch(r"(\d+) ([0-9A-Za-z]{11}) (\d{13})\n", out)
    assert match, out
    assert ferroflake.parse(match[2], "base62") == int(match[1])


def test_guide_runs_every_python_block() -> None:
    # Every python block of the guide lies in one of the sections below, which run it, in
    # the guide's order: a block added elsewhere fails here.
    text = GUIDE.read_text(encoding="utf-8")
    in_sections = [python_block(GUIDE, section) for section in GUIDE_SECTIONS]
    assert PYTHON_BLOCK.findall(text) == in_sections, (
        f"the python blocks of bindings-python/README.md are not those of {GUIDE_SECTIONS}, in order"
    )


def test_guide_generator_example_runs() -> None:
    code = python_block(GUIDE, "python-generator")
    assert run_printed(code, "python-generator") == "NODE_OUT_OF_RANGE 8\n"


def test_guide_lease_and_segment_example_runs(tmp_path: Path) -> None:
    # The example's first lines choose the registry and the store (None: the embedded
    # defaults, shared by every process of the host); here they point into a temporary
    # directory, with short leases so the new registry's first claim waits 1.2 s, not 12.
    if not hasattr(os, "fork"):
        pytest.skip("leases and segments are Unix-only")
    code = python_block(GUIDE, "python-leases-and-segments")
    code, registries = re.subn(
        r"^registry = None\b", f"registry = {str(tmp_path / 'leases')!r}", code, flags=re.M
    )
    assert registries == 1, "the example must start with `registry = None`"
    code = with_temporary_store(code, tmp_path)
    # The key is created once, apart from the program, as the example says.
    with ferroflake.SegmentAllocator(f"sqlite://{tmp_path / 'segments.db'}") as segments:
        segments.create_key("orders", start=1, step=1000)
    code = code.replace("LeasedGenerator(registry=registry)", "LeasedGenerator(registry=registry, ttl_ms=1000, max_ttl_ms=1000)")
    out = run_printed(code, "python-leases-and-segments")
    assert out.endswith("1 2 3\n"), out


def test_guide_mask_and_order_number_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key comes from the environment, as the example says.
    if not hasattr(os, "fork"):
        pytest.skip("order numbers are Unix-only")
    code = with_temporary_store(python_block(GUIDE, "python-public-ids"), tmp_path)
    monkeypatch.setenv("FERROFLAKE_MASK_KEY", "1:000102030405060708090a0b0c0d0e0f")
    assert run_printed(code, "python-public-ids") == "1000001 42\n1 True\n"


def test_package_docstring_examples_pass() -> None:
    result = doctest.testmod(ferroflake, verbose=False)
    assert result.attempted >= 4
    assert result.failed == 0
