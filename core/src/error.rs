//! One error type for everything the crate can refuse.
//!
//! [`Error`] carries the details (by how much, which limit); [`ErrorKind`] is the fieldless
//! tag that bindings map to their own error classes and codes. Both are `#[non_exhaustive]`:
//! new kinds may be added, existing ones never change meaning.

use core::fmt;

/// Why an operation was refused. See [`Error::kind`] for the fieldless tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// time + node + sequence + shard bits exceed 63 (the sign bit must stay 0).
    TooManyBits {
        /// The total that was asked for.
        total: u32,
    },
    /// A layout needs at least one time bit.
    NoTimeBits,
    /// A layout needs at least one sequence bit.
    ZeroSequenceBits,
    /// The tick (time unit) must be at least 1 ms.
    ZeroTick,
    /// The epoch is before 1970-01-01T00:00:00Z.
    EpochBeforeUnix {
        /// The epoch that was asked for, in ms since the Unix epoch.
        epoch_ms: i64,
    },
    /// The epoch is later than the clock's current time.
    EpochInFuture {
        /// The layout's epoch, in Unix ms.
        epoch_ms: u64,
        /// What the clock said, in Unix ms.
        now_ms: u64,
    },
    /// The layout's time field has run out: no ID can be made at or after this instant.
    LayoutExhausted {
        /// The first instant the time field cannot hold, in Unix ms.
        exhausts_at_ms: u64,
    },
    /// A node id does not fit the layout's node bits.
    NodeOutOfRange {
        /// The node id given.
        node: u64,
        /// The largest node id the layout holds.
        max: u64,
    },
    /// A shard does not fit the layout's shard bits (a layout without shard bits holds only 0).
    ShardOutOfRange {
        /// The shard given.
        shard: u64,
        /// The largest shard the layout holds.
        max: u64,
    },
    /// A sequence number given to `compose` does not fit the sequence bits.
    SequenceOutOfRange {
        /// The sequence given.
        sequence: u64,
        /// The largest sequence the layout holds.
        max: u64,
    },
    /// A timestamp given to `compose` is before the epoch or past the layout's exhaustion.
    TimestampOutOfRange {
        /// The timestamp given, in Unix ms.
        timestamp_ms: u64,
    },
    /// An ID has bits set above the layout's width, so this layout did not make it.
    IdOutOfRange {
        /// The ID given.
        id: u64,
        /// The layout's total width in bits.
        bits: u32,
    },
    /// The clock is behind the last issued tick by more than the allowed drift, and waiting
    /// the configured maximum would not have closed the gap.
    ClockMovedBackwards {
        /// How far the clock is behind the last issued time, in ms.
        behind_ms: u64,
    },
    /// The sequence for the current tick is used up and the clock did not reach the next
    /// tick within the bounded wait: one tick plus the backward wait, at most
    /// `Options::MAX_WAIT_MS` (a stopped or broken clock, or a tick longer than that).
    ClockStalled {
        /// How long the generator waited, in ms of the clock's own time.
        waited_ms: u64,
    },
    /// The generator may no longer prove it holds its node id: its lease deadline (or
    /// high-water mark) has passed. Issuing resumes only if the lease is renewed.
    LeaseExpired {
        /// The instant (Unix ms) past which this generator may not issue.
        fence_ms: u64,
    },
    /// A layout name that is not one of the presets.
    UnknownLayout,
    /// A layout spelling (`TIME/NODE/SEQUENCE[+SHARD]@EPOCH[,tick=Nms][,order=ORDER]`)
    /// that breaks the grammar. Its kind is [`ErrorKind::UnknownLayout`]: the text names
    /// no layout.
    InvalidLayoutSpelling {
        /// Byte offset where the spelling went wrong.
        index: usize,
        /// What was expected there.
        expected: &'static str,
    },
    /// A string to parse was empty.
    ParseEmpty,
    /// A string to parse starts with `-`: IDs are never negative.
    ParseNegative,
    /// A string to parse has a character outside its alphabet.
    ParseInvalidCharacter {
        /// Byte offset of the first bad character.
        index: usize,
    },
    /// A fixed-width string has the wrong length, or a base64 text is not whole groups of
    /// four characters.
    ParseWrongLength {
        /// The width of the format.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// A decimal string has more digits than any ID can.
    ParseTooLong {
        /// The length found.
        found: usize,
    },
    /// A value above 2^63 - 1, which no ID can be: a string that encodes one (`parse`), or
    /// a number given to `Format::encode`.
    ParseOverflow,
    /// A generator's resume point (`Options::resume_after_ms`) is ahead of the clock by more
    /// than the generator's drift and backward wait can bridge. Make the generator once the
    /// clock has passed the mark.
    ResumeInFuture {
        /// The resume point given, in Unix ms.
        resume_after_ms: u64,
        /// What the clock said, in Unix ms.
        now_ms: u64,
    },
    /// The generator was made in another process and inherited through `fork()`: parent
    /// and child would issue the same IDs. Make a new generator in the child, with a node
    /// id of its own.
    GeneratorForked {
        /// The process the generator was made in.
        made_in_pid: u32,
        /// This process.
        pid: u32,
    },
    /// A mask width outside `Mask::MIN_BITS..=Mask::MAX_BITS` (8 to 64 bits).
    MaskWidthOutOfRange {
        /// The width asked for.
        bits: u32,
    },
    /// A mask key version above `MaskKey::MAX_VERSION` (31): a masked ID names its key's
    /// version in one character of base 32.
    MaskKeyVersionOutOfRange {
        /// The version given.
        version: u32,
        /// The largest version a key may have.
        max: u32,
    },
    /// A masked ID names a key version that the keyring (or the one key) at hand does not
    /// hold: it was masked with another key, or it is not a masked ID.
    UnknownMaskKeyVersion {
        /// The version the masked ID names.
        version: u32,
    },
    /// A keyring was given two different secrets for one key version.
    DuplicateMaskKeyVersion {
        /// The version given twice.
        version: u32,
    },
    /// Another generator in this process holds the node id, or one that held it issued IDs
    /// later than this generator's clock reads (see [`ClaimedGenerator`](crate::ClaimedGenerator)).
    NodeInUse {
        /// The node id asked for.
        node: u64,
        /// `None` while a live generator holds the node id; otherwise the start (Unix ms)
        /// of the last tick an earlier generator of this process issued in, ahead of the
        /// clock.
        issued_until_ms: Option<u64>,
        /// The live generator is the parent's: this process is a `fork()` of one that held
        /// the node id, and nothing it closes gives the node id back.
        held_at_fork: bool,
    },
}

/// The fieldless tag of an [`Error`]: what bindings map to exception classes and codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
#[repr(u32)]
#[allow(missing_docs)] // each kind is documented on the matching `Error` variant
pub enum ErrorKind {
    TooManyBits = 1,
    NoTimeBits = 2,
    ZeroSequenceBits = 3,
    ZeroTick = 4,
    EpochBeforeUnix = 5,
    EpochInFuture = 6,
    LayoutExhausted = 7,
    NodeOutOfRange = 8,
    ShardOutOfRange = 9,
    SequenceOutOfRange = 10,
    TimestampOutOfRange = 11,
    IdOutOfRange = 12,
    ClockMovedBackwards = 13,
    ClockStalled = 14,
    LeaseExpired = 15,
    UnknownLayout = 16,
    ParseEmpty = 17,
    ParseNegative = 18,
    ParseInvalidCharacter = 19,
    ParseWrongLength = 20,
    ParseTooLong = 21,
    ParseOverflow = 22,
    ResumeInFuture = 23,
    GeneratorForked = 24,
    MaskWidthOutOfRange = 25,
    MaskKeyVersionOutOfRange = 26,
    UnknownMaskKeyVersion = 27,
    DuplicateMaskKeyVersion = 28,
    NodeInUse = 29,
}

impl ErrorKind {
    /// Every kind, in code order. Bindings iterate this to prove their mapping is total.
    pub const ALL: [ErrorKind; 29] = [
        Self::TooManyBits,
        Self::NoTimeBits,
        Self::ZeroSequenceBits,
        Self::ZeroTick,
        Self::EpochBeforeUnix,
        Self::EpochInFuture,
        Self::LayoutExhausted,
        Self::NodeOutOfRange,
        Self::ShardOutOfRange,
        Self::SequenceOutOfRange,
        Self::TimestampOutOfRange,
        Self::IdOutOfRange,
        Self::ClockMovedBackwards,
        Self::ClockStalled,
        Self::LeaseExpired,
        Self::UnknownLayout,
        Self::ParseEmpty,
        Self::ParseNegative,
        Self::ParseInvalidCharacter,
        Self::ParseWrongLength,
        Self::ParseTooLong,
        Self::ParseOverflow,
        Self::ResumeInFuture,
        Self::GeneratorForked,
        Self::MaskWidthOutOfRange,
        Self::MaskKeyVersionOutOfRange,
        Self::UnknownMaskKeyVersion,
        Self::DuplicateMaskKeyVersion,
        Self::NodeInUse,
    ];

    /// A stable number for this kind. Numbers are never reused or renumbered.
    pub const fn code(self) -> u32 {
        self as u32
    }

    /// A stable SCREAMING_SNAKE name, used as the error `code` in Node and in vectors.json.
    pub const fn name(self) -> &'static str {
        match self {
            Self::TooManyBits => "TOO_MANY_BITS",
            Self::NoTimeBits => "NO_TIME_BITS",
            Self::ZeroSequenceBits => "ZERO_SEQUENCE_BITS",
            Self::ZeroTick => "ZERO_TICK",
            Self::EpochBeforeUnix => "EPOCH_BEFORE_UNIX",
            Self::EpochInFuture => "EPOCH_IN_FUTURE",
            Self::LayoutExhausted => "LAYOUT_EXHAUSTED",
            Self::NodeOutOfRange => "NODE_OUT_OF_RANGE",
            Self::ShardOutOfRange => "SHARD_OUT_OF_RANGE",
            Self::SequenceOutOfRange => "SEQUENCE_OUT_OF_RANGE",
            Self::TimestampOutOfRange => "TIMESTAMP_OUT_OF_RANGE",
            Self::IdOutOfRange => "ID_OUT_OF_RANGE",
            Self::ClockMovedBackwards => "CLOCK_MOVED_BACKWARDS",
            Self::ClockStalled => "CLOCK_STALLED",
            Self::LeaseExpired => "LEASE_EXPIRED",
            Self::UnknownLayout => "UNKNOWN_LAYOUT",
            Self::ParseEmpty => "PARSE_EMPTY",
            Self::ParseNegative => "PARSE_NEGATIVE",
            Self::ParseInvalidCharacter => "PARSE_INVALID_CHARACTER",
            Self::ParseWrongLength => "PARSE_WRONG_LENGTH",
            Self::ParseTooLong => "PARSE_TOO_LONG",
            Self::ParseOverflow => "PARSE_OVERFLOW",
            Self::ResumeInFuture => "RESUME_IN_FUTURE",
            Self::GeneratorForked => "GENERATOR_FORKED",
            Self::MaskWidthOutOfRange => "MASK_WIDTH_OUT_OF_RANGE",
            Self::MaskKeyVersionOutOfRange => "MASK_KEY_VERSION_OUT_OF_RANGE",
            Self::UnknownMaskKeyVersion => "UNKNOWN_MASK_KEY_VERSION",
            Self::DuplicateMaskKeyVersion => "DUPLICATE_MASK_KEY_VERSION",
            Self::NodeInUse => "NODE_IN_USE",
        }
    }

    /// The kind with this [`name`](Self::name), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// True for kinds caused by a bad layout or a value that does not fit it: bindings make
    /// these a `ValueError`/`RangeError`.
    pub const fn is_invalid_input(self) -> bool {
        !matches!(
            self,
            Self::ClockMovedBackwards
                | Self::ClockStalled
                | Self::LeaseExpired
                | Self::GeneratorForked
                | Self::NodeInUse
        )
    }
}

impl Error {
    /// The fieldless tag of this error.
    pub const fn kind(&self) -> ErrorKind {
        match self {
            Self::TooManyBits { .. } => ErrorKind::TooManyBits,
            Self::NoTimeBits => ErrorKind::NoTimeBits,
            Self::ZeroSequenceBits => ErrorKind::ZeroSequenceBits,
            Self::ZeroTick => ErrorKind::ZeroTick,
            Self::EpochBeforeUnix { .. } => ErrorKind::EpochBeforeUnix,
            Self::EpochInFuture { .. } => ErrorKind::EpochInFuture,
            Self::LayoutExhausted { .. } => ErrorKind::LayoutExhausted,
            Self::NodeOutOfRange { .. } => ErrorKind::NodeOutOfRange,
            Self::ShardOutOfRange { .. } => ErrorKind::ShardOutOfRange,
            Self::SequenceOutOfRange { .. } => ErrorKind::SequenceOutOfRange,
            Self::TimestampOutOfRange { .. } => ErrorKind::TimestampOutOfRange,
            Self::IdOutOfRange { .. } => ErrorKind::IdOutOfRange,
            Self::ClockMovedBackwards { .. } => ErrorKind::ClockMovedBackwards,
            Self::ClockStalled { .. } => ErrorKind::ClockStalled,
            Self::LeaseExpired { .. } => ErrorKind::LeaseExpired,
            Self::UnknownLayout | Self::InvalidLayoutSpelling { .. } => ErrorKind::UnknownLayout,
            Self::ParseEmpty => ErrorKind::ParseEmpty,
            Self::ParseNegative => ErrorKind::ParseNegative,
            Self::ParseInvalidCharacter { .. } => ErrorKind::ParseInvalidCharacter,
            Self::ParseWrongLength { .. } => ErrorKind::ParseWrongLength,
            Self::ParseTooLong { .. } => ErrorKind::ParseTooLong,
            Self::ParseOverflow => ErrorKind::ParseOverflow,
            Self::ResumeInFuture { .. } => ErrorKind::ResumeInFuture,
            Self::GeneratorForked { .. } => ErrorKind::GeneratorForked,
            Self::MaskWidthOutOfRange { .. } => ErrorKind::MaskWidthOutOfRange,
            Self::MaskKeyVersionOutOfRange { .. } => ErrorKind::MaskKeyVersionOutOfRange,
            Self::UnknownMaskKeyVersion { .. } => ErrorKind::UnknownMaskKeyVersion,
            Self::DuplicateMaskKeyVersion { .. } => ErrorKind::DuplicateMaskKeyVersion,
            Self::NodeInUse { .. } => ErrorKind::NodeInUse,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::TooManyBits { total } => write!(
                f,
                "layout uses {total} bits; at most 63 fit below the sign bit"
            ),
            Self::NoTimeBits => f.write_str("layout needs at least 1 time bit"),
            Self::ZeroSequenceBits => f.write_str("layout needs at least 1 sequence bit"),
            Self::ZeroTick => f.write_str("tick must be at least 1 ms"),
            Self::EpochBeforeUnix { epoch_ms } => {
                write!(f, "epoch {epoch_ms} ms is before 1970-01-01T00:00:00Z")
            }
            Self::EpochInFuture { epoch_ms, now_ms } => write!(
                f,
                "epoch {epoch_ms} ms is in the future (clock reads {now_ms} ms)"
            ),
            Self::LayoutExhausted { exhausts_at_ms } => write!(
                f,
                "layout's time field ran out at {exhausts_at_ms} ms since the Unix epoch"
            ),
            Self::NodeOutOfRange { node, max } => {
                write!(f, "node id {node} is out of range 0..={max}")
            }
            Self::ShardOutOfRange { shard, max } => {
                write!(f, "shard {shard} is out of range 0..={max}")
            }
            Self::SequenceOutOfRange { sequence, max } => {
                write!(f, "sequence {sequence} is out of range 0..={max}")
            }
            Self::TimestampOutOfRange {
                timestamp_ms: u64::MAX,
            } => f.write_str("the time is past the last Unix millisecond 64 bits hold"),
            Self::TimestampOutOfRange { timestamp_ms } => write!(
                f,
                "timestamp {timestamp_ms} ms is before the layout's epoch or past its exhaustion"
            ),
            Self::IdOutOfRange { id, bits } => {
                write!(f, "id {id} has bits set above this layout's {bits} bits")
            }
            Self::ClockMovedBackwards { behind_ms } => write!(
                f,
                "clock moved backwards: it is {behind_ms} ms behind the last issued ID"
            ),
            Self::ClockStalled { waited_ms } => write!(
                f,
                "sequence exhausted and the clock did not reach the next tick within the \
                 bounded wait (waited {waited_ms} ms)"
            ),
            Self::LeaseExpired { fence_ms } => write!(
                f,
                "node id lease expired: may not issue at or after {fence_ms} ms; renew the lease"
            ),
            Self::UnknownLayout => f.write_str(
                "unknown layout name (expected twitter, discord, sonyflake, js53, js53ms or sharded)",
            ),
            Self::InvalidLayoutSpelling { index, expected } => write!(
                f,
                "bad layout spelling: expected {expected} at byte {index} (the form is \
                 TIME/NODE/SEQUENCE[+SHARD]@EPOCH[,tick=Nms][,order=ORDER])"
            ),
            Self::ParseEmpty => f.write_str("cannot parse an ID from an empty string"),
            Self::ParseNegative => f.write_str("IDs are never negative"),
            Self::ParseInvalidCharacter { index } => {
                write!(f, "invalid character at byte {index}")
            }
            Self::ParseWrongLength { expected, found } => {
                write!(f, "expected exactly {expected} characters, found {found}")
            }
            Self::ParseTooLong { found } => {
                write!(f, "{found} digits is longer than any ID (at most 19)")
            }
            Self::ParseOverflow => f.write_str("value exceeds 2^63 - 1, the largest ID"),
            Self::ResumeInFuture {
                resume_after_ms,
                now_ms,
            } => write!(
                f,
                "resume point {resume_after_ms} ms is {} ms ahead of the clock ({now_ms} ms), \
                 more than the drift and backward wait bridge; make the generator once the \
                 clock has passed it",
                resume_after_ms.saturating_sub(now_ms)
            ),
            Self::GeneratorForked { made_in_pid, pid } => write!(
                f,
                "this generator was made in process {made_in_pid} and inherited through \
                 fork(); process {pid} must not issue IDs under its parent's node id: make \
                 a new generator in the child, with a node id of its own (lease one with \
                 ferroflake-lease)"
            ),
            Self::MaskWidthOutOfRange { bits } => {
                write!(f, "mask width {bits} bits is outside 8..=64")
            }
            Self::MaskKeyVersionOutOfRange { version, max } => {
                write!(f, "mask key version {version} is out of range 0..={max}")
            }
            Self::UnknownMaskKeyVersion { version } => write!(
                f,
                "no mask key of version {version}: the ID was masked with another key, or is \
                 not a masked ID"
            ),
            Self::DuplicateMaskKeyVersion { version } => write!(
                f,
                "two different mask keys have version {version}; each version names one key"
            ),
            Self::NodeInUse {
                node,
                issued_until_ms: None,
                held_at_fork: true,
            } => write!(
                f,
                "node id {node} was held by the parent process when it forked this one, and \
                 the parent may still issue under it: a forked child must use a node id of \
                 its own"
            ),
            Self::NodeInUse {
                node,
                issued_until_ms: None,
                ..
            } => write!(
                f,
                "node id {node} already has a live generator in this process: share that one \
                 (it is safe across threads), let it go first (drop, close or free it), or use \
                 another node id"
            ),
            Self::NodeInUse {
                node,
                issued_until_ms: Some(until_ms),
                ..
            } => write!(
                f,
                "node id {node} issued IDs up to {until_ms} ms in this process, later than \
                 this generator's clock reads: it could repeat them; use a clock past \
                 {until_ms} ms or another node id"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}
