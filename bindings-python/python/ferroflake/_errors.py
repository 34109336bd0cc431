"""The exceptions ferroflake raises.

Every error the core can refuse with carries ``kind`` (a stable name such as
``"NODE_OUT_OF_RANGE"``, the same in Rust, C, Python, Node and testdata/vectors.json) and
``code`` (its stable number). ``ferroflake.error_kinds()`` lists them all.

Hierarchy::

    FerroflakeError
    ├── InvalidInputError (also ValueError)
    │   ├── LayoutError          bad widths, tick or epoch; epoch in the future; layout used up
    │   ├── OutOfRangeError      node, shard, sequence, timestamp or id does not fit the layout;
    │   │                        a resume point too far ahead of the clock
    │   └── ParseError           text is not an ID in the given format
    ├── ClockMovedBackwardsError the clock is behind the last ID beyond what may be waited out
    ├── ClockStalledError        the sequence ran out and the clock did not move
    ├── LeaseExpiredError        past the generator's fence: renew the node id's lease
    └── ForkedGeneratorError (also RuntimeError)  a generator used in a forked child
"""

from __future__ import annotations


class FerroflakeError(Exception):
    """Base class of every ferroflake error."""

    kind: str
    """Stable name of the error kind, e.g. ``"CLOCK_MOVED_BACKWARDS"``."""
    code: int
    """Stable number of the error kind (0 for errors that are not core kinds)."""

    def __init__(self, message: str, kind: str = "", code: int = 0) -> None:
        super().__init__(message)
        self.kind = kind
        self.code = code


class InvalidInputError(FerroflakeError, ValueError):
    """A layout, value or string the core refuses."""


class LayoutError(InvalidInputError):
    """A layout that cannot be built, or cannot issue IDs now."""


class OutOfRangeError(InvalidInputError):
    """A node, shard, sequence, timestamp or ID that does not fit the layout, or a
    ``resume_after_ms`` further ahead of the clock than the generator may wait."""


class ParseError(InvalidInputError):
    """Text that is not an ID in the given format."""


class ClockMovedBackwardsError(FerroflakeError):
    """The clock is behind the last issued ID by more than may be waited out."""

    behind_ms: int
    """How far behind, in ms."""


class ClockStalledError(FerroflakeError):
    """The sequence of a tick ran out and the clock did not reach the next tick in time."""


class LeaseExpiredError(FerroflakeError):
    """The generator is past its fence: the node id's lease must be renewed."""

    fence_ms: int
    """The Unix ms at and after which the generator may not issue."""


class ForkedGeneratorError(FerroflakeError, RuntimeError):
    """A generator inherited through ``fork()``: the child must make its own."""
