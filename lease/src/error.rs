//! Why a lease operation failed.

use std::fmt;
use std::time::{Duration, UNIX_EPOCH};

use crate::protocol::Loss;

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
    /// The claim is no longer held under this token.
    Lost {
        /// The node id that was held.
        node_id: u64,
        /// Why: the record is missing, taken, expired or released.
        why: Loss,
    },
    /// The clock did not pass the previous holder's high-water mark within the start wait.
    BehindHighWater {
        /// The node id whose mark it is.
        node_id: u64,
        /// The mark plus skew allowance that must pass, Unix ms.
        resume_after_ms: u64,
        /// What the clock said, Unix ms.
        now_ms: u64,
    },
    /// The registry's floor after lost records is longer than
    /// [`LeaseConfig::max_start_wait`](crate::LeaseConfig::max_start_wait) allows: the
    /// start gave its claim back at once rather than wait past the limit.
    StartWaitTooLong {
        /// The node id that was claimed.
        node_id: u64,
        /// How long the floor would have held the first ID back.
        floor_wait: Duration,
        /// The limit the start was given.
        max_start_wait: Duration,
    },
    /// The generator's clock is further from the registry's than
    /// [`LeaseConfig::max_clock_skew`](crate::LeaseConfig::max_clock_skew) allows: the
    /// protocol's safety after lost records no longer covers it. Refuses a start; a
    /// running holder stops issuing until its clock is back within the limit.
    ///
    /// Also the peer check's refusal of a start (`peers_skew_ms` is then set): the
    /// generator's skew from the registry's clock is further than the limit from the
    /// average skew the registry's other live holders recorded
    /// ([`protocol::peer_clock_skew`](crate::protocol::peer_clock_skew)), which catches a
    /// registry whose own clock is off while the fleet agrees.
    ClockSkew {
        /// Which registry.
        registry: String,
        /// The generator's clock, Unix ms, in the middle of the reading.
        ours_ms: u64,
        /// The registry's clock, Unix ms.
        registry_ms: u64,
        /// Ours minus the registry's, ms (positive: ours is ahead).
        skew_ms: i64,
        /// Half the reading's round trip, ms: the true skew is within this of `skew_ms`.
        uncertainty_ms: u64,
        /// The limit in force.
        limit: Duration,
        /// The average skew of the registry's other live holders, ms, when the peer check
        /// refused the start for being further than `limit` from it; `None` when the
        /// skew from the registry's clock itself is beyond `limit`.
        peers_skew_ms: Option<i64>,
    },
    /// A registry address that cannot be used.
    BadAddress {
        /// The address given.
        address: String,
        /// Why it cannot be used.
        detail: String,
    },
    /// A registry this build leaves out: its address is read, but the crate that opens it
    /// was built without the cargo feature that carries its client.
    NotBuilt {
        /// The address' scheme (`etcd`, `redis`, `zk`, `postgres`, `ferroflake+http`).
        scheme: String,
        /// The cargo feature of `ferroflake-lease-stores` that carries it.
        feature: String,
    },
    /// The generator refused its configuration.
    Generator(ferroflake::Error),
    /// Lease settings that cannot work together (a safety margin not below the TTL, ...).
    InvalidConfig {
        /// What is wrong, and how to fix it.
        detail: String,
    },
    /// The holder's state file ([`LeaseConfig::state_file`](crate::LeaseConfig::state_file))
    /// cannot be used: its directory or the file is not the caller's alone, another live
    /// process holds it, or it cannot be read or written.
    StateFile {
        /// The file.
        path: String,
        /// What is wrong, and how to fix it.
        detail: String,
    },
    /// The start was told to stop while it waited (a signal arrived), and released its
    /// claim again.
    Stopped {
        /// The node id that was claimed.
        node_id: u64,
    },
    /// Anything else the store reported.
    Store {
        /// Which registry.
        registry: String,
        /// What it said.
        detail: String,
    },
}

impl LeaseError {
    /// Every kind's [`name`](Self::name), in the order of the variants: the list the faces
    /// give their users (Node's `errorCodes()`). A `GENERATOR` error is reported by the
    /// core's kind it carries.
    pub const KINDS: [&'static str; 13] = [
        "UNAVAILABLE",
        "NO_FREE_NODE",
        "LOST",
        "BEHIND_HIGH_WATER",
        "START_WAIT_TOO_LONG",
        "CLOCK_SKEW",
        "BAD_ADDRESS",
        "NOT_BUILT",
        "GENERATOR",
        "INVALID_CONFIG",
        "STATE_FILE",
        "STOPPED",
        "STORE",
    ];

    /// Whether errors of the kind named `kind` are the caller's: an address or a setting
    /// that cannot work (or a registry this build leaves out), refused the same way however often it is tried. The service
    /// answers them 400, the CLI exits 2, and the faces raise `ValueError` (Python) or
    /// throw `RangeError` (Node). For `GENERATOR`, the core's kind decides
    /// ([`is_invalid_input`](Self::is_invalid_input)).
    pub fn kind_is_invalid_input(kind: &str) -> bool {
        matches!(kind, "BAD_ADDRESS" | "NOT_BUILT" | "INVALID_CONFIG")
    }

    /// Whether this error is the caller's ([`kind_is_invalid_input`](Self::kind_is_invalid_input);
    /// a generator's refusal by [`ferroflake::ErrorKind::is_invalid_input`]).
    pub fn is_invalid_input(&self) -> bool {
        match self {
            Self::Generator(core) => core.kind().is_invalid_input(),
            other => Self::kind_is_invalid_input(other.name()),
        }
    }

    /// The kind's stable name, for JSON, logs and the other languages' faces:
    /// `UNAVAILABLE`, `NO_FREE_NODE`, `LOST`, `BEHIND_HIGH_WATER`, `START_WAIT_TOO_LONG`,
    /// `CLOCK_SKEW`, `BAD_ADDRESS`, `NOT_BUILT`, `GENERATOR`, `INVALID_CONFIG`, `STATE_FILE`, `STOPPED` or
    /// `STORE`. A `GENERATOR` error carries the core's
    /// own kind ([`ferroflake::ErrorKind::name`]), which faces report instead.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Unavailable { .. } => "UNAVAILABLE",
            Self::NoFreeNode { .. } => "NO_FREE_NODE",
            Self::Lost { .. } => "LOST",
            Self::BehindHighWater { .. } => "BEHIND_HIGH_WATER",
            Self::StartWaitTooLong { .. } => "START_WAIT_TOO_LONG",
            Self::ClockSkew { .. } => "CLOCK_SKEW",
            Self::BadAddress { .. } => "BAD_ADDRESS",
            Self::NotBuilt { .. } => "NOT_BUILT",
            Self::Generator(_) => "GENERATOR",
            Self::InvalidConfig { .. } => "INVALID_CONFIG",
            Self::StateFile { .. } => "STATE_FILE",
            Self::Stopped { .. } => "STOPPED",
            Self::Store { .. } => "STORE",
        }
    }
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unavailable { registry, detail } => {
                write!(f, "{registry} registry unreachable: {detail}")
            }
            Self::NoFreeNode { node_count } => {
                write!(
                    f,
                    "all {node_count} node ids are leased, quarantined or reserved"
                )
            }
            Self::Lost { node_id, why } => {
                write!(f, "lease on node id {node_id} was lost: {}", why.describe())
            }
            Self::BehindHighWater {
                node_id,
                resume_after_ms,
                now_ms,
            } => write!(
                f,
                "node id {node_id}: a previous holder reserved IDs up to {} (with the skew \
                 allowance), {} ahead of this clock ({}); its clock appears to have been \
                 ahead. Check the clocks, or wait until then",
                iso_ms(*resume_after_ms),
                humantime::format_duration(Duration::from_millis(
                    resume_after_ms.saturating_sub(*now_ms)
                )),
                iso_ms(*now_ms),
            ),
            Self::StartWaitTooLong {
                node_id,
                floor_wait,
                max_start_wait,
            } => write!(
                f,
                "node id {node_id}: the registry cannot rule out that a holder it lost track \
                 of is still issuing, so the first ID must wait {} (the longest TTL its \
                 holders asked for, plus quarantine), longer than max_start_wait {}; the \
                 claim was given back. Raise max_start_wait, or start again later: the floor \
                 stays in the registry and shortens as time passes",
                humantime::format_duration(Duration::from_millis(crate::protocol::ms(*floor_wait))),
                humantime::format_duration(*max_start_wait),
            ),
            Self::ClockSkew {
                registry,
                ours_ms,
                registry_ms,
                skew_ms,
                uncertainty_ms,
                limit,
                peers_skew_ms: None,
            } => write!(
                f,
                "this clock reads {} and the {registry} registry's {}: {} (± {uncertainty_ms} \
                 ms), beyond max_clock_skew {}; the registry cannot keep holders this far \
                 apart from issuing one ID twice, so nothing is issued until the clocks \
                 agree. Fix the clock (NTP), or the registry's",
                iso_ms(*ours_ms),
                iso_ms(*registry_ms),
                skew_words(*skew_ms),
                humantime::format_duration(*limit),
            ),
            Self::ClockSkew {
                registry,
                skew_ms,
                uncertainty_ms,
                limit,
                peers_skew_ms: Some(peers),
                ..
            } => write!(
                f,
                "this clock is {} (± {uncertainty_ms} ms) of the {registry} registry's, and \
                 the registry's other live holders are on average {} of it: this clock is {} \
                 from theirs, beyond max_clock_skew {}. Either this clock is off, or the \
                 registry's is and the fleet agrees without it; nothing is issued. Fix this \
                 clock (NTP), or the registry's",
                skew_words(*skew_ms),
                skew_words(*peers),
                humantime::format_duration(Duration::from_millis(
                    u64::try_from((i128::from(*skew_ms) - i128::from(*peers)).unsigned_abs())
                        .unwrap_or(u64::MAX)
                )),
                humantime::format_duration(*limit),
            ),
            Self::BadAddress { address, detail } => {
                write!(f, "bad registry address {address:?}: {detail}")
            }
            Self::NotBuilt { scheme, feature } => write!(
                f,
                "{scheme}:// registries are left out of this build (the `{feature}` feature of \
                 ferroflake-lease-stores is off): use a build with them, or the embedded \
                 registry (an absolute directory path)"
            ),
            Self::Generator(e) => write!(f, "generator refused: {e}"),
            Self::InvalidConfig { detail } => write!(f, "invalid lease settings: {detail}"),
            Self::StateFile { path, detail } => write!(f, "lease state file {path}: {detail}"),
            Self::Stopped { node_id } => write!(
                f,
                "stopped while waiting to issue under node id {node_id}; the claim was \
                 given back"
            ),
            Self::Store { registry, detail } => write!(f, "{registry} registry error: {detail}"),
        }
    }
}

impl std::error::Error for LeaseError {}

/// A skew in words: "1s 500ms ahead", "20ms behind".
fn skew_words(skew_ms: i64) -> String {
    format!(
        "{} {}",
        humantime::format_duration(Duration::from_millis(skew_ms.unsigned_abs())),
        if skew_ms >= 0 { "ahead" } else { "behind" }
    )
}

/// Unix ms as RFC 3339 UTC text, for messages.
pub(crate) fn iso_ms(unix_ms: u64) -> String {
    // RFC 3339 has four-digit years: past 9999 say so rather than wrap.
    const YEAR_10000_MS: u64 = 253_402_300_800_000;
    if unix_ms >= YEAR_10000_MS {
        return "after 9999-12-31T23:59:59.999Z".to_owned();
    }
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(unix_ms)).to_string()
}

impl From<ferroflake::Error> for LeaseError {
    fn from(e: ferroflake::Error) -> Self {
        LeaseError::Generator(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One error of each kind, in the order of the variants.
    fn one_of_each_kind() -> Vec<LeaseError> {
        let registry = || "r".to_owned();
        vec![
            LeaseError::Unavailable {
                registry: registry(),
                detail: "d".into(),
            },
            LeaseError::NoFreeNode { node_count: 1 },
            LeaseError::Lost {
                node_id: 1,
                why: Loss::Missing,
            },
            LeaseError::BehindHighWater {
                node_id: 1,
                resume_after_ms: 2,
                now_ms: 1,
            },
            LeaseError::StartWaitTooLong {
                node_id: 1,
                floor_wait: Duration::from_secs(2),
                max_start_wait: Duration::from_secs(1),
            },
            LeaseError::ClockSkew {
                registry: registry(),
                ours_ms: 2,
                registry_ms: 1,
                skew_ms: 1,
                uncertainty_ms: 0,
                limit: Duration::ZERO,
                peers_skew_ms: None,
            },
            LeaseError::BadAddress {
                address: "a".into(),
                detail: "d".into(),
            },
            LeaseError::NotBuilt {
                scheme: "zk".into(),
                feature: "zookeeper".into(),
            },
            LeaseError::Generator(ferroflake::Error::ClockStalled { waited_ms: 1 }),
            LeaseError::InvalidConfig { detail: "d".into() },
            LeaseError::StateFile {
                path: "p".into(),
                detail: "d".into(),
            },
            LeaseError::Stopped { node_id: 1 },
            LeaseError::Store {
                registry: registry(),
                detail: "d".into(),
            },
        ]
    }

    #[test]
    fn every_kind_is_listed_once() {
        let names: Vec<&str> = one_of_each_kind().iter().map(LeaseError::name).collect();
        assert_eq!(names, LeaseError::KINDS);
    }

    #[test]
    fn only_addresses_settings_and_layouts_are_the_callers() {
        let callers: Vec<&str> = one_of_each_kind()
            .iter()
            .filter(|e| e.is_invalid_input())
            .map(LeaseError::name)
            .collect();
        assert_eq!(callers, ["BAD_ADDRESS", "NOT_BUILT", "INVALID_CONFIG"]);
        let layout = ferroflake::Error::NodeOutOfRange { node: 9, max: 1 };
        assert!(LeaseError::Generator(layout).is_invalid_input());
    }
}
