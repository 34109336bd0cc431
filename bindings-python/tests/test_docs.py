"""The examples users read first run as written: the README quickstart and the package
docstring."""

from __future__ import annotations

import contextlib
import doctest
import io
import re
from pathlib import Path

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


def test_package_docstring_examples_pass() -> None:
    result = doctest.testmod(ferroflake, verbose=False)
    assert result.attempted >= 4
    assert result.failed == 0
