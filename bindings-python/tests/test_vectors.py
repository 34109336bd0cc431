"""Every case of testdata/vectors.json, the cases every language's suite reads."""

from __future__ import annotations

from typing import Any

import pytest

import ferroflake
from spec import FORMATS, layout_from_spec

ID_FIELDS = {"name", "preset", "layout", "parts", "decoded", "id"}


def test_the_vectors_hold_every_format_and_no_other(vectors: dict[str, Any]) -> None:
    for case in vectors["ids"]:
        assert set(case) - ID_FIELDS == set(FORMATS), case["name"]
    for case in vectors["mask"]["cases"]:
        assert set(case["text"]) == set(FORMATS), case


def test_presets_match_the_vectors(vectors: dict[str, Any]) -> None:
    presets = vectors["presets"]
    assert sorted(presets) == sorted(ferroflake.PRESET_NAMES)
    for name, spec in presets.items():
        preset = getattr(ferroflake.Layout, name)()
        assert preset == ferroflake.Layout.from_name(name) == layout_from_spec(spec), name
        assert preset.total_bits == spec["total_bits"], name
        assert preset.capacity_per_second == spec["capacity_per_second"], name
        assert preset.exhausts_at_ms == spec["exhausts_at_ms"], name
        assert preset.order == spec["order"], name
        assert preset.epoch_ms == spec["epoch_ms"], name


def test_ids_compose_decode_encode_and_parse_as_recorded(vectors: dict[str, Any]) -> None:
    assert vectors["ids"], "no id vectors"
    for case in vectors["ids"]:
        name = case["name"]
        layout = layout_from_spec(case["layout"])
        if "preset" in case:
            assert ferroflake.Layout.from_name(case["preset"]) == layout, name
        id_ = int(case["id"])
        assert layout.compose(**case["parts"]) == id_, name
        decoded = layout.decode(id_)
        assert decoded == ferroflake.Parts(**case["decoded"]), name
        for field, value in case["decoded"].items():
            assert getattr(decoded, field) == value, (name, field)
        for fmt in FORMATS:
            assert ferroflake.encode(id_, fmt) == case[fmt], (name, fmt)
            assert ferroflake.parse(case[fmt], fmt) == id_, (name, fmt)


def test_bad_layouts_raise_their_kind(vectors: dict[str, Any]) -> None:
    for case in vectors["layout_errors"]:
        with pytest.raises(ferroflake.LayoutError) as info:
            layout_from_spec(case["spec"])
        assert info.value.kind == case["error"], case
        assert isinstance(info.value, ValueError)


def test_bad_generators_raise_their_kind(vectors: dict[str, Any]) -> None:
    for case in vectors["generator_errors"]:
        clock = ferroflake.ManualClock(case["now_ms"])
        resume = case.get("resume_after_ms")
        with pytest.raises(ferroflake.InvalidInputError) as info:
            ferroflake.Generator(
                case["node"],
                layout_from_spec(case["layout"]),
                clock=clock,
                resume_after_ms=None if resume is None else int(resume),
            )
        assert info.value.kind == case["error"], case


def test_bad_parts_and_ids_raise_their_kind(vectors: dict[str, Any]) -> None:
    for case in vectors["compose_errors"]:
        with pytest.raises(ferroflake.OutOfRangeError) as info:
            layout_from_spec(case["layout"]).compose(**case["parts"])
        assert info.value.kind == case["error"], case
    for case in vectors["decode_errors"]:
        with pytest.raises(ferroflake.OutOfRangeError) as info:
            layout_from_spec(case["layout"]).decode(int(case["id"]))
        assert info.value.kind == case["error"], case


def test_values_parse_refuses_are_refused_by_encode_too(vectors: dict[str, Any]) -> None:
    assert vectors["encode_errors"]
    for case in vectors["encode_errors"]:
        with pytest.raises(ferroflake.ParseError) as info:
            ferroflake.encode(int(case["id"]), case["format"])
        assert info.value.kind == case["error"], case


def test_strings_parse_or_fail_as_recorded(vectors: dict[str, Any]) -> None:
    for case in vectors["parse_errors"]:
        with pytest.raises(ferroflake.ParseError) as info:
            ferroflake.parse(case["input"], case["format"])
        assert info.value.kind == case["error"], case
    for case in vectors["parse_ok"]:
        assert ferroflake.parse(case["input"], case["format"]) == int(case["id"]), case


def test_layout_spellings_read_print_and_decode_as_recorded(vectors: dict[str, Any]) -> None:
    assert vectors["layout_spellings"], "no layout spellings"
    for case in vectors["layout_spellings"]:
        name = case["name"]
        layout = ferroflake.Layout.from_name(case["spelling"])
        assert layout == layout_from_spec(case["layout"]), name
        assert str(layout) == case["display"], name
        assert ferroflake.Layout.from_name(str(layout)) == layout, name
        assert layout.compose(**case["parts"]) == int(case["id"]), name
        assert layout.decode(int(case["id"])) == ferroflake.Parts(**case["decoded"]), name


def test_bad_layout_spellings_raise_their_kind(vectors: dict[str, Any]) -> None:
    for case in vectors["layout_spelling_errors"]:
        with pytest.raises(ferroflake.LayoutError) as info:
            ferroflake.Layout.from_name(case["spelling"])
        assert info.value.kind == case["error"], case
        assert isinstance(info.value, ValueError)
