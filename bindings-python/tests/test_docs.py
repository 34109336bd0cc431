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


def test_readme_python_quickstart_runs() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("<!-- section:quickstart-python -->")[1].split(
        "<!-- /section:quickstart-python -->"
    )[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1, "expected one python block in the quickstart"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], "README.md quickstart-python", "exec"), {})
    assert out.getvalue() == "NODE_OUT_OF_RANGE 8\n"


def test_readme_python_lease_and_segment_quickstart_runs(tmp_path: Path) -> None:
    # The example's first lines choose the registry and the store (None: the embedded
    # defaults, shared by every process of the host); here they point into a temporary
    # directory, with short leases so the new registry's first claim waits 1.2 s, not 12.
    text = README.read_text(encoding="utf-8")
    marker = "<!-- section:quickstart-python-lease -->"
    if marker not in text or not hasattr(os, "fork"):
        pytest.skip("README has no quickstart-python-lease section (or not Unix)")
    section = text.split(marker)[1].split("<!-- /section:quickstart-python-lease -->")[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1, "expected one python block in the lease quickstart"
    code, registries = re.subn(
        r"^registry = None\b", f"registry = {str(tmp_path / 'leases')!r}", blocks[0], flags=re.M
    )
    code, stores = re.subn(
        r"^store = None\b", f"store = {'sqlite://' + str(tmp_path / 'segments.db')!r}", code, flags=re.M
    )
    assert (registries, stores) == (1, 1), "the example must start with `registry = None` and `store = None`"
    code = code.replace("LeasedGenerator(registry=registry)", "LeasedGenerator(registry=registry, ttl_ms=1000, max_ttl_ms=1000)")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md quickstart-python-lease", "exec"), {})
    assert out.getvalue().endswith("1 2 3\n"), out.getvalue()


def test_package_docstring_examples_pass() -> None:
    result = doctest.testmod(ferroflake, verbose=False)
    assert result.attempted >= 4
    assert result.failed == 0
