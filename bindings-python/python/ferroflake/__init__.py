"""ferroflake: lock-free snowflake-family 64-bit unique IDs, from a Rust core.

>>> import ferroflake
>>> gen = ferroflake.Generator(7)                    # node id 7 under Layout.twitter()
>>> a, b = gen.next_id(), gen.next_id()
>>> a < b and gen.decode(b).node == 7
True
>>> ferroflake.parse(ferroflake.encode(b, "base62"), "base62") == b
True

A ``Generator`` is safe to share between threads (one atomic word, no lock; no GIL needed
on free-threaded Python). It is not carried across ``fork()``: in a child process an
inherited generator raises ``ForkedGeneratorError``, because the child would issue the
parent's IDs. Give each process its own node id: lease one with ferroflake-lease (the
way to hand out node ids without collisions), or derive a distinct one per worker, and make
the generator after the fork (e.g. in gunicorn's ``post_fork`` or a multiprocessing
``initializer``).
"""

from __future__ import annotations

from ._errors import (
    ClockMovedBackwardsError,
    ClockStalledError,
    FerroflakeError,
    ForkedGeneratorError,
    InvalidInputError,
    LayoutError,
    LeaseExpiredError,
    OutOfRangeError,
    ParseError,
)
from ._native import (
    PRESET_NAMES,
    Counters,
    Generator,
    Layout,
    ManualClock,
    Parts,
    __version__,
    encode,
    error_kinds,
    parse,
)

__all__ = [
    "PRESET_NAMES",
    "ClockMovedBackwardsError",
    "ClockStalledError",
    "Counters",
    "FerroflakeError",
    "ForkedGeneratorError",
    "Generator",
    "InvalidInputError",
    "Layout",
    "LayoutError",
    "LeaseExpiredError",
    "ManualClock",
    "OutOfRangeError",
    "ParseError",
    "Parts",
    "__version__",
    "encode",
    "error_kinds",
    "parse",
]
