//! Why a lease operation failed.

use std::fmt;

/// A lease operation's failure.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseError {
    /// The store could not be reached or did not answer in time.
    Unavailable {
        /// Which registry ("etcd", ...).
        registry: String,
        /// What went wrong, from the client.
        detail: String,
    },
    /// Every node id is held (or quarantined).
    NoFreeNode {
        /// How many ids the layout has.
        node_count: u64,
    },
    /// The claim is no longer held under this token (expired and taken, or released).
    Lost {
        /// The node id that was held.
        node_id: u64,
    },
    /// The clock did not pass the previous holder's high-water mark within the start wait.
    BehindHighWater {
        /// The mark plus skew allowance that must pass, Unix ms.
        resume_after_ms: u64,
        /// What the clock said, Unix ms.
        now_ms: u64,
    },
    /// A registry address that cannot be used.
    BadAddress {
        /// The address given.
        address: String,
        /// Why it cannot be used.
        detail: String,
    },
    /// The generator refused its configuration.
    Generator(ferroflake::Error),
    /// Lease settings that cannot work together (a safety margin not below the TTL, ...).
    InvalidConfig {
        /// What is wrong, and how to fix it.
        detail: String,
    },
    /// Anything else the store reported.
    Store {
        /// Which registry.
        registry: String,
        /// What it said.
        detail: String,
    },
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unavailable { registry, detail } => {
                write!(f, "{registry} registry unreachable: {detail}")
            }
            Self::NoFreeNode { node_count } => {
                write!(f, "all {node_count} node ids are leased or quarantined")
            }
            Self::Lost { node_id } => write!(f, "lease on node id {node_id} was lost"),
            Self::BehindHighWater {
                resume_after_ms,
                now_ms,
            } => write!(
                f,
                "clock ({now_ms} ms) has not passed the previous holder's high-water mark \
                 ({resume_after_ms} ms incl. skew allowance)"
            ),
            Self::BadAddress { address, detail } => {
                write!(f, "bad registry address {address:?}: {detail}")
            }
            Self::Generator(e) => write!(f, "generator refused: {e}"),
            Self::InvalidConfig { detail } => write!(f, "invalid lease settings: {detail}"),
            Self::Store { registry, detail } => write!(f, "{registry} registry error: {detail}"),
        }
    }
}

impl std::error::Error for LeaseError {}

impl From<ferroflake::Error> for LeaseError {
    fn from(e: ferroflake::Error) -> Self {
        LeaseError::Generator(e)
    }
}
