"""Layouts from the vectors.json spec shape, built through the public constructor, and the
text formats every suite goes through."""

from __future__ import annotations

from typing import Any, Literal

import ferroflake

Format = Literal[
    "dec",
    "base62",
    "base32",
    "base58-flickr",
    "base32-bwmarrin",
    "base36",
    "base2",
    "base64-decimal",
    "json",
]
# Every format, as the stub's literal type lists them; test_vectors.py checks that
# vectors.json has exactly these.
FORMATS: tuple[Format, ...] = (
    "dec",
    "base62",
    "base32",
    "base58-flickr",
    "base32-bwmarrin",
    "base36",
    "base2",
    "base64-decimal",
    "json",
)


def layout_from_spec(spec: dict[str, Any]) -> ferroflake.Layout:
    """A vectors.json layout spec, built through the public constructor."""
    return ferroflake.Layout.custom(
        spec["time_bits"],
        spec["node_bits"],
        spec["sequence_bits"],
        shard_bits=spec["shard_bits"],
        tick_ms=spec["tick_ms"],
        epoch=spec["epoch_ms"],
        order=spec["order"],
    )
