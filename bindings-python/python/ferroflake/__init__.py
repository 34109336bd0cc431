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

A ``LeasedGenerator`` leases its node id from a registry (a directory shared by the
processes of one host, or etcd, Redis, ZooKeeper, PostgreSQL) and stops issuing once it can
no longer prove it holds it. A ``SegmentAllocator`` hands out dense per-key IDs from ranges
taken from a table (SQLite, PostgreSQL, MySQL, Redis). Both are Unix-only, and both are
context managers that give back what they hold. ``SegmentAllocator.order_numbers()``
issues date-prefixed order numbers (``20261122000042``) from the same table.

A ``MaskKeyring`` turns IDs into public IDs that hide their time, node and count, and back,
under a secret key read from a file or ``FERROFLAKE_MASK_KEY``. It hides; it does not
authenticate: any masked ID unmasks to some ID, so look the ID up before trusting it.
"""

from __future__ import annotations

from . import _native
from ._errors import (
    BehindHighWaterError,
    StartWaitTooLongError,
    ClockSkewError,
    StateFileError,
    ClockMovedBackwardsError,
    ClockStalledError,
    FerroflakeError,
    ForkedGeneratorError,
    InvalidInputError,
    InvalidKeyError,
    KeyExistsError,
    LayoutError,
    LeaseClosedError,
    LeaseConfigError,
    LeaseError,
    LeaseExpiredError,
    LeaseLostError,
    MaskError,
    MaskKeyError,
    NoFreeNodeError,
    NodeInUseError,
    OutOfRangeError,
    ParseError,
    RegistryAddressError,
    RegistryError,
    RegistryUnavailableError,
    SegmentClosedError,
    SegmentConfigError,
    SegmentError,
    SegmentExhaustedError,
    SegmentNotReadyError,
    SegmentRewoundError,
    SegmentStoreError,
    StoreUnavailableError,
    UnknownKeyError,
    UnknownMaskKeyVersionError,
)
from ._native import (
    PRESET_NAMES,
    Counters,
    Generator,
    Layout,
    ManualClock,
    MaskKeyring,
    Parts,
    __version__,
    encode,
    error_kinds,
    parse,
)

__all__ = [
    "PRESET_NAMES",
    "BehindHighWaterError",
    "StartWaitTooLongError",
    "ClockSkewError",
    "StateFileError",
    "ClockMovedBackwardsError",
    "ClockStalledError",
    "Counters",
    "FerroflakeError",
    "ForkedGeneratorError",
    "Generator",
    "InvalidInputError",
    "InvalidKeyError",
    "KeyExistsError",
    "Layout",
    "LayoutError",
    "LeaseClosedError",
    "LeaseConfigError",
    "LeaseError",
    "LeaseExpiredError",
    "LeaseLostError",
    "ManualClock",
    "MaskError",
    "MaskKeyError",
    "MaskKeyring",
    "NoFreeNodeError",
    "NodeInUseError",
    "OutOfRangeError",
    "ParseError",
    "Parts",
    "RegistryAddressError",
    "RegistryError",
    "RegistryUnavailableError",
    "SegmentClosedError",
    "SegmentConfigError",
    "SegmentError",
    "SegmentExhaustedError",
    "SegmentNotReadyError",
    "SegmentRewoundError",
    "SegmentStoreError",
    "StoreUnavailableError",
    "UnknownKeyError",
    "UnknownMaskKeyVersionError",
    "__version__",
    "encode",
    "error_kinds",
    "parse",
]

# Leases and segments need flock and a user id: the module has them on Unix only.
if hasattr(_native, "LeasedGenerator"):
    from ._native import (
        LeasedGenerator,
        OrderNumber,
        OrderNumbers,
        SegmentAllocator,
        SegmentKey,
        SegmentStatus,
        lease_error_kinds,
        segment_error_kinds,
    )

    __all__ += [
        "lease_error_kinds",
        "segment_error_kinds",
        "LeasedGenerator",
        "OrderNumber",
        "OrderNumbers",
        "SegmentAllocator",
        "SegmentKey",
        "SegmentStatus",
    ]
