//! Why a segment operation failed.

use std::fmt;
use std::time::Duration;

/// A segment store's or allocator's failure.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SegmentError {
    /// The store could not be reached, was busy past its timeout, or did not answer in time.
    /// The allocator retries by itself; IDs already in memory are still issued.
    Unavailable {
        /// Which store ("sqlite", "memory", ...).
        store: String,
        /// What went wrong, from the client.
        detail: String,
    },
    /// The key has no row in the table. Keys are created explicitly
    /// ([`SegmentStore::create`](crate::SegmentStore::create)), never on first use.
    UnknownKey {
        /// The key asked for.
        key: String,
    },
    /// [`SegmentStore::create`](crate::SegmentStore::create) for a key that already has a row.
    KeyExists {
        /// The key.
        key: String,
    },
    /// A key that cannot be stored: empty, or longer than 128 bytes (`varchar(128)`).
    InvalidKey {
        /// The key given (cut to 140 bytes in the message).
        key: String,
        /// Why.
        detail: String,
    },
    /// Settings or arguments that cannot work: a step of 0 or above 2^31 - 1 (`int`), a
    /// start below 1, a prefetch share outside (0, 1], ...
    InvalidConfig {
        /// What is wrong.
        detail: String,
    },
    /// A store this build leaves out: its address is read, but the crate that opens it was
    /// built without the cargo feature that carries its client.
    NotBuilt {
        /// The address' scheme (`postgres`, `mysql`, `redis`, `ferroflake+http`).
        scheme: String,
        /// The cargo feature of `ferroflake-segment-stores` that carries it.
        feature: String,
    },
    /// The key's IDs have reached its limit (2^63 - 1, or 2^53 - 1 for JavaScript keys): no
    /// further range fits. IDs never wrap.
    Exhausted {
        /// The key.
        key: String,
        /// The largest ID the key may issue.
        limit: u64,
    },
    /// Both buffers were empty and the fetch in flight did not bring a segment within the
    /// allowed wait. Nothing was issued; calling again is safe.
    NotReady {
        /// The key.
        key: String,
        /// How long the caller waited.
        waited: Duration,
    },
    /// The allocator was shut down; its unissued IDs may have been given back.
    Closed {
        /// The key.
        key: String,
    },
    /// The key's counter went back, or may have: the store handed out (or would hand out) a
    /// range below one already issued, or lost the key's row after issuing from it (a
    /// restored backup or snapshot, a restart or failover that lost recent writes, a flushed
    /// or evicted key, a row edited by hand). Nothing is issued from the key until an
    /// operator raises it above the highest ID issued
    /// ([`SegmentStore::recover`](crate::SegmentStore::recover)); retrying cannot fix it.
    Rewound {
        /// Which store.
        store: String,
        /// The key.
        key: String,
        /// What was seen, and how to recover on this store.
        detail: String,
    },
    /// The allocator was made in another process and inherited through `fork()`: its
    /// ranges in memory are the parent's, which goes on issuing them, so the child may not
    /// issue from them, fetch with them or give them back. Make a new allocator in the
    /// child; it takes ranges of its own.
    Forked {
        /// The process the allocator was made in.
        made_in_pid: u32,
        /// This process.
        pid: u32,
    },
    /// Anything else the store reported (a malformed row, a constraint, a full disk).
    Store {
        /// Which store.
        store: String,
        /// What it said.
        detail: String,
    },
}

impl SegmentError {
    /// Every kind's [`name`](Self::name), in the order of the variants: the list the faces
    /// give their users (Node's `errorCodes()`, the C header's result codes).
    pub const KINDS: [&'static str; 12] = [
        "UNAVAILABLE",
        "UNKNOWN_KEY",
        "KEY_EXISTS",
        "INVALID_KEY",
        "INVALID_CONFIG",
        "NOT_BUILT",
        "EXHAUSTED",
        "NOT_READY",
        "CLOSED",
        "REWOUND",
        "FORKED",
        "STORE",
    ];

    /// Whether errors of the kind named `kind` are the caller's: a key or a setting that
    /// cannot work, or a store this build leaves out, refused the same way however often it
    /// is tried. The service answers
    /// them 400, the CLI exits 2, and the faces raise `ValueError` (Python) or throw
    /// `RangeError` (Node). A key that exists already is not: it is the table's state,
    /// which another caller may have made.
    pub fn kind_is_invalid_input(kind: &str) -> bool {
        matches!(kind, "INVALID_KEY" | "INVALID_CONFIG" | "NOT_BUILT")
    }

    /// Whether this error is the caller's ([`kind_is_invalid_input`](Self::kind_is_invalid_input)).
    pub fn is_invalid_input(&self) -> bool {
        Self::kind_is_invalid_input(self.name())
    }

    /// The kind's stable name, for JSON, logs and the other languages' faces:
    /// `UNAVAILABLE`, `UNKNOWN_KEY`, `KEY_EXISTS`, `INVALID_KEY`, `INVALID_CONFIG`,
    /// `NOT_BUILT`, `EXHAUSTED`, `NOT_READY`, `CLOSED`, `REWOUND`, `FORKED` or `STORE`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Unavailable { .. } => "UNAVAILABLE",
            Self::UnknownKey { .. } => "UNKNOWN_KEY",
            Self::KeyExists { .. } => "KEY_EXISTS",
            Self::InvalidKey { .. } => "INVALID_KEY",
            Self::InvalidConfig { .. } => "INVALID_CONFIG",
            Self::NotBuilt { .. } => "NOT_BUILT",
            Self::Exhausted { .. } => "EXHAUSTED",
            Self::NotReady { .. } => "NOT_READY",
            Self::Closed { .. } => "CLOSED",
            Self::Rewound { .. } => "REWOUND",
            Self::Forked { .. } => "FORKED",
            Self::Store { .. } => "STORE",
        }
    }
}

impl fmt::Display for SegmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unavailable { store, detail } => write!(f, "{store} store unreachable: {detail}"),
            Self::UnknownKey { key } => write!(
                f,
                "no segment key {key:?} in the table: create it if it is new; if the table \
                 lost it, recover it above the highest ID it issued instead (made again from \
                 its old start, it would repeat those IDs)"
            ),
            Self::KeyExists { key } => write!(f, "segment key {key:?} already exists"),
            Self::InvalidKey { key, detail } => {
                let shown: String = key.chars().take(140).collect();
                write!(f, "invalid segment key {shown:?}: {detail}")
            }
            Self::InvalidConfig { detail } => write!(f, "invalid segment settings: {detail}"),
            Self::NotBuilt { scheme, feature } => write!(
                f,
                "{scheme}:// stores are left out of this build (the `{feature}` feature of \
                 ferroflake-segment-stores is off): use a build with them, or a SQLite file \
                 (an absolute path)"
            ),
            Self::Exhausted { key, limit } => write!(
                f,
                "segment key {key:?} is exhausted: no range fits below its limit {limit}"
            ),
            Self::NotReady { key, waited } => write!(
                f,
                "segment key {key:?}: both buffers empty and no segment arrived within {waited:?}"
            ),
            Self::Closed { key } => write!(f, "segment key {key:?}: the allocator is shut down"),
            Self::Rewound { store, key, detail } => write!(
                f,
                "segment key {key:?} went back in the {store} store, or may have: {detail}. \
                 Nothing is issued from it until an operator finds the highest ID ever issued \
                 for it and runs `ferroflake segment recover {key} --above <that ID>` (or \
                 SegmentStore::recover), and the allocators using it restart"
            ),
            Self::Forked { made_in_pid, pid } => write!(
                f,
                "this segment allocator was made in process {made_in_pid} and inherited \
                 through fork(); process {pid} must not use it, since its parent issues the \
                 same ranges: make a new allocator in the child"
            ),
            Self::Store { store, detail } => write!(f, "{store} store error: {detail}"),
        }
    }
}

impl std::error::Error for SegmentError {}

impl SegmentError {
    /// One error of each kind, with placeholder fields: for the tests, here and in the
    /// faces, that check every kind has a name, a code or a class of its own. Not part of
    /// the stable API.
    #[doc(hidden)]
    pub fn one_of_each_kind() -> Vec<SegmentError> {
        vec![
            SegmentError::Unavailable {
                store: "s".into(),
                detail: "d".into(),
            },
            SegmentError::UnknownKey { key: "k".into() },
            SegmentError::KeyExists { key: "k".into() },
            SegmentError::InvalidKey {
                key: "k".into(),
                detail: "d".into(),
            },
            SegmentError::InvalidConfig { detail: "d".into() },
            SegmentError::NotBuilt {
                scheme: "redis".into(),
                feature: "redis".into(),
            },
            SegmentError::Exhausted {
                key: "k".into(),
                limit: 1,
            },
            SegmentError::NotReady {
                key: "k".into(),
                waited: Duration::ZERO,
            },
            SegmentError::Closed { key: "k".into() },
            SegmentError::Rewound {
                store: "s".into(),
                key: "k".into(),
                detail: "d".into(),
            },
            SegmentError::Forked {
                made_in_pid: 1,
                pid: 2,
            },
            SegmentError::Store {
                store: "s".into(),
                detail: "d".into(),
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_name() {
        let errors = SegmentError::one_of_each_kind();
        let names: std::collections::BTreeSet<&str> =
            errors.iter().map(SegmentError::name).collect();
        assert_eq!(
            names.len(),
            errors.len(),
            "two kinds share a name: {names:?}"
        );
        for name in names {
            assert!(
                name.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
                "{name}"
            );
        }
        let listed: Vec<&str> = errors.iter().map(SegmentError::name).collect();
        assert_eq!(listed, SegmentError::KINDS);
    }

    #[test]
    fn only_keys_and_settings_that_cannot_work_are_the_callers() {
        let callers: Vec<&str> = SegmentError::one_of_each_kind()
            .iter()
            .filter(|e| e.is_invalid_input())
            .map(SegmentError::name)
            .collect();
        assert_eq!(callers, ["INVALID_KEY", "INVALID_CONFIG", "NOT_BUILT"]);
    }
}
