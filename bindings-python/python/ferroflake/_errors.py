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
    │   ├── ParseError           text is not an ID in the given format (also bad mask key
    │   │                        text, and masked text of another format or width)
    │   └── MaskError            a mask width outside 8 to 64 bits
    │       ├── MaskKeyError     a key version above 31, two secrets for one version, or no
    │       │                    key where one was looked for (MaskKeyring.from_env)
    │       └── UnknownMaskKeyVersionError (also LookupError)  masked text or a version
    │                            naming a key the keyring does not hold
    ├── ClockMovedBackwardsError the clock is behind the last ID beyond what may be waited out
    ├── ClockStalledError        the sequence ran out and the clock did not move
    ├── ForkedGeneratorError (also RuntimeError)  a generator (or segment allocator) used
    │                            in a forked child
    ├── NodeInUseError (also RuntimeError)  another live Generator of this process has the
    │                            node id, or an earlier one issued IDs past this clock
    ├── LeaseError               a node id could not be leased, kept or released
    │   ├── LeaseExpiredError    past the generator's fence: the lease is lost, or renewals
    │   │                        failed past its deadline (the message says which)
    │   ├── RegistryUnavailableError  the registry cannot be reached or did not answer in time
    │   ├── NoFreeNodeError      every node id is leased, quarantined or reserved
    │   ├── LeaseLostError       the registry says the claim is no longer this generator's
    │   ├── BehindHighWaterError the clock did not pass the previous holder's mark in time
    │   ├── StartWaitTooLongError  the registry's floor after lost records is longer than
    │   │                        max_start_wait_ms
    │   ├── ClockSkewError       this clock is further from the registry's than
    │   │                        max_clock_skew_ms
    │   ├── StateFileError       the state file is not the caller's alone, another live
    │   │                        process uses it, or it cannot be read or written
    │   ├── RegistryAddressError (also ValueError)  an address that cannot name a registry,
    │   │                        or a server registry this build leaves out
    │   ├── LeaseConfigError (also ValueError)  lease timings that cannot work together
    │   ├── RegistryError        anything else the registry reported
    │   └── LeaseClosedError     a leased generator used after close()
    └── SegmentError             segment mode: the store, a key or the allocator refused
        ├── StoreUnavailableError  the store cannot be reached (memory is used up meanwhile)
        ├── UnknownKeyError (also LookupError)  the table has no such key (new, or lost)
        ├── KeyExistsError       create_key() for a key that exists
        ├── InvalidKeyError (also ValueError)   an empty key, or one over 128 bytes
        ├── SegmentConfigError (also ValueError)  settings, an address or a batch size that
        │                        cannot work, or a server store this build leaves out
        ├── SegmentExhaustedError  the key reached its limit (IDs never wrap)
        ├── SegmentNotReadyError   no range arrived within max_wait_ms; safe to retry
        ├── SegmentClosedError   the allocator was closed
        ├── SegmentRewoundError  the store's counter went back: an operator must fix it
        └── SegmentStoreError    anything else the store reported

Core kinds carry their stable ``code``; ``"NO_MASK_KEY"`` (an unset key variable) and lease
and segment kinds (``"UNAVAILABLE"``,
``"LOST"``, ``"UNKNOWN_KEY"``, ...) are the lease and segment crates' names, with code 0.
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


class MaskError(InvalidInputError):
    """A mask width, key or masked ID the ID mask refuses."""


class MaskKeyError(MaskError):
    """Mask key text with a version above 31 or two secrets for one version, or no key
    where one was looked for. Messages name where the key came from, never the secret."""


class UnknownMaskKeyVersionError(MaskError, LookupError):
    """A masked text (or an explicit version) names a key version the keyring does not
    hold: it was masked with another key, or it is not a masked ID."""


class ClockMovedBackwardsError(FerroflakeError):
    """The clock is behind the last issued ID by more than may be waited out."""

    behind_ms: int
    """How far behind, in ms."""


class ClockStalledError(FerroflakeError):
    """The sequence of a tick ran out and the clock did not reach the next tick in time."""


class ForkedGeneratorError(FerroflakeError, RuntimeError):
    """A generator (or segment allocator) inherited through ``fork()``: the child must make
    its own."""


class NodeInUseError(FerroflakeError, RuntimeError):
    """Another live ``Generator`` in this process has the node id (share that one between
    threads instead), or an earlier one issued IDs later than this generator's clock reads."""


class LeaseError(FerroflakeError):
    """A node id could not be leased, kept or released."""


class LeaseExpiredError(LeaseError):
    """The generator is past its fence: its lease is lost, or could not be renewed in time."""

    fence_ms: int
    """The Unix ms at and after which the generator may not issue."""


class RegistryUnavailableError(LeaseError):
    """The registry cannot be reached, or did not answer in time (fail closed)."""


class NoFreeNodeError(LeaseError):
    """Every node id of the layout is leased, quarantined or reserved."""


class LeaseLostError(LeaseError):
    """The registry says the claim is no longer held under this generator's token."""


class BehindHighWaterError(LeaseError):
    """The clock did not pass the previous holder's high-water mark within the start wait."""


class StartWaitTooLongError(LeaseError):
    """The registry's floor after lost records would hold the first ID back longer than
    ``max_start_wait_ms``; the claim was given back."""


class ClockSkewError(LeaseError):
    """This clock is further from the registry's than ``max_clock_skew_ms`` allows: a start
    is refused, and a running generator issues nothing until the clocks agree again."""


class StateFileError(LeaseError):
    """The lease's ``state_file`` cannot be used: it or its directory is not the caller's
    alone, another live process holds it, or it cannot be read or written."""


class RegistryAddressError(LeaseError, ValueError):
    """An address that cannot name a registry, or a server registry this build leaves out."""


class LeaseConfigError(LeaseError, ValueError):
    """Lease timings that cannot work together (a TTL above max_ttl_ms, ...)."""


class RegistryError(LeaseError):
    """Anything else the registry reported."""


class LeaseClosedError(LeaseError):
    """A leased generator used after ``close()``: its node id was released."""


class SegmentError(FerroflakeError):
    """Segment mode: the store, a key or the allocator refused."""


class StoreUnavailableError(SegmentError):
    """The store cannot be reached and the key's memory is used up; it is retried in the
    background, and issuing resumes when the store answers."""


class UnknownKeyError(SegmentError, LookupError):
    """The table has no row for the key: create it if it is new (``create_key``); if the
    table lost it, recover it above the highest ID it issued (``ferroflake segment
    recover``), since made again from its old start it would repeat those IDs."""


class KeyExistsError(SegmentError):
    """``create_key`` for a key that already has a row."""


class InvalidKeyError(SegmentError, ValueError):
    """A key that cannot be stored: empty, or longer than 128 bytes."""


class SegmentConfigError(SegmentError, ValueError):
    """Settings, a store address or a batch that cannot work, or a server store this build
    leaves out."""


class SegmentExhaustedError(SegmentError):
    """The key's IDs reached its limit: no further range fits. IDs never wrap."""


class SegmentNotReadyError(SegmentError):
    """No range arrived within ``max_wait_ms``; nothing was issued, calling again is safe."""


class SegmentClosedError(SegmentError):
    """The allocator was closed; its unissued IDs may have been given back."""


class SegmentRewoundError(SegmentError):
    """The key's counter went back in the store; nothing is issued from it until an operator
    sets its max_id above the highest ID issued."""


class SegmentStoreError(SegmentError):
    """Anything else the store reported."""
