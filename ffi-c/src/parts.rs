//! `ferroflake_parts`: the fields of an id, as a plain C struct.

use ferroflake::Parts;

/// The fields of an id, with time as Unix milliseconds: what `ferroflake_layout_decode`
/// fills and `ferroflake_layout_compose` reads. A plain value; copy it freely.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ferroflake_parts {
    /// Start of the id's tick, in ms since 1970-01-01T00:00:00Z.
    pub timestamp_ms: u64,
    /// The node (worker, machine) id.
    pub node: u64,
    /// The sequence number within the tick.
    pub sequence: u64,
    /// The shard (0 for layouts without shard bits).
    pub shard: u64,
}

impl ferroflake_parts {
    pub(crate) fn to_core(self) -> Parts {
        Parts {
            timestamp_ms: self.timestamp_ms,
            node: self.node,
            sequence: self.sequence,
            shard: self.shard,
        }
    }

    pub(crate) fn from_core(parts: Parts) -> Self {
        ferroflake_parts {
            timestamp_ms: parts.timestamp_ms,
            node: parts.node,
            sequence: parts.sequence,
            shard: parts.shard,
        }
    }
}
