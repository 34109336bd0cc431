"""Layouts from the vectors.json spec shape, built through the public constructor."""

from __future__ import annotations

from typing import Any

import ferroflake


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
