"""The examples users read first run as written: the README quickstart and the package
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

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_python_block(section: str) -> str:
    """The one python block of README section `section`."""
    text = README.read_text(encoding="utf-8")
    marker = f"<!-- section:{section} -->"
    assert marker in text, f"README has no {section} section"
    body = text.split(marker)[1].split(f"<!-- /section:{section} -->")[0]
    blocks: list[str] = re.findall(r"```python\n(.*?)```", body, flags=re.DOTALL)
    assert len(blocks) == 1, f"expected one python block in README section {section}"
    return blocks[0]


def run_printed(code: str, section: str) -> str:
    """What `code` prints when run as a script."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README.md {section}", "exec"), {})
    return out.getvalue()


def with_temporary_store(code: str, tmp_path: Path) -> str:
    """The example with its `store = None` (the host's embedded SQLite file) pointed at a
    file in `tmp_path`."""
    code, stores = re.subn(
        r"^store = None\b", f"store = {'sqlite://' + str(tmp_path / 'segments.db')!r}", code, flags=re.M
    )
    assert stores == 1, "the example must set `store = None`"
    return code


def test_package_readme_example_runs() -> None:
    # The README that PyPI shows (bindings-python/README.md): its one python block.
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    blocks: list[str] = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) == 1, "expected one python block in bindings-python/README.md"
    exec(compile(blocks[0], "bindings-python/README.md", "exec"), {})


def test_readme_python_quickstart_runs() -> None:
    code = readme_python_block("quickstart-python")
    assert run_printed(code, "quickstart-python") == "NODE_OUT_OF_RANGE 8\n"


def test_readme_python_lease_and_segment_quickstart_runs(tmp_path: Path) -> None:
    # The example's first lines choose the registry and the store (None: the embedded
    # defaults, shared by every process of the host); here they point into a temporary
    # directory, with short leases so the new registry's first claim waits 1.2 s, not 12.
    if not hasattr(os, "fork"):
        pytest.skip("leases and segments are Unix-only")
    code = readme_python_block("quickstart-python-lease")
    code, registries = re.subn(
        r"^registry = None\b", f"registry = {str(tmp_path / 'leases')!r}", code, flags=re.M
    )
    assert registries == 1, "the example must start with `registry = None`"
    code = with_temporary_store(code, tmp_path)
    # The key is created once, apart from the program, as the example says.
    with ferroflake.SegmentAllocator(f"sqlite://{tmp_path / 'segments.db'}") as segments:
        segments.create_key("orders", start=1, step=1000)
    code = code.replace("LeasedGenerator(registry=registry)", "LeasedGenerator(registry=registry, ttl_ms=1000, max_ttl_ms=1000)")
    out = run_printed(code, "quickstart-python-lease")
    assert out.endswith("1 2 3\n"), out


def test_readme_python_mask_and_order_number_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key comes from the environment, as the example says.
    if not hasattr(os, "fork"):
        pytest.skip("order numbers are Unix-only")
    code = with_temporary_store(readme_python_block("quickstart-python-mask"), tmp_path)
    monkeypatch.setenv("FERROFLAKE_MASK_KEY", "1:000102030405060708090a0b0c0d0e0f")
    assert run_printed(code, "quickstart-python-mask") == "1000001 42\n1 True\n"


def test_package_docstring_examples_pass() -> None:
    result = doctest.testmod(ferroflake, verbose=False)
    assert result.attempted >= 4
    assert result.failed == 0
