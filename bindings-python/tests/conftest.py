"""Shared fixtures. The tests import the INSTALLED ferroflake (scripts/test-python.sh runs
them from outside the source tree); test_installed.py checks that."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

VECTORS_PATH = Path(__file__).resolve().parents[2] / "testdata" / "vectors.json"


@pytest.fixture(scope="session")
def vectors() -> dict[str, Any]:
    with VECTORS_PATH.open(encoding="utf-8") as f:
        return json.load(f)
