"""The suite must exercise the built wheel, not the source tree."""

from __future__ import annotations

from pathlib import Path

import ferroflake
import ferroflake._native


def test_package_is_imported_from_site_packages_not_the_source_tree() -> None:
    source_tree = Path(__file__).resolve().parents[1] / "python"
    installed = Path(ferroflake.__file__).resolve()
    assert source_tree not in installed.parents
    assert "site-packages" in installed.parts
    assert Path(ferroflake._native.__file__).resolve().parent == installed.parent


def test_package_ships_its_type_information() -> None:
    package_dir = Path(ferroflake.__file__).parent
    assert (package_dir / "py.typed").is_file()
    assert (package_dir / "_native.pyi").is_file()


def test_facade_exports_the_native_classes_themselves() -> None:
    # No Python wrapper between a caller and next_id: the facade re-exports.
    assert ferroflake.Generator is ferroflake._native.Generator
    assert ferroflake.__version__ == ferroflake._native.__version__
    for name in ferroflake.__all__:
        assert hasattr(ferroflake, name), name
