//! The registry abstraction: where node ids are claimed, renewed and released.
//!
//! Every backend (the embedded directory, etcd, Redis, ZooKeeper, PostgreSQL) implements
//! [`Registry`] and passes the same conformance suite. Calls are blocking, so the C, Python
//! and Node faces can wrap them without an async runtime of their own.

use std::time::Duration;

use crate::protocol::{lost_records_window, Loss, LONGEST_WINDOW};
use crate::LeaseError;

/// What a process asks a registry for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRequest {
    /// Node ids are `0..node_count` (2^node_bits of the layout).
    pub node_count: u64,
    /// How long a claim lives without renewal.
    pub ttl: Duration,
    /// How long an expired claim stays unclaimable after its TTL, so that a paused holder
    /// has surely stopped (at its local deadline) before anyone else takes the id.
    pub quarantine: Duration,
    /// Who is asking (host, pid, ...), stored for operators.
    pub holder: String,
    /// The longest TTL any holder of this registry uses (all holders of one registry must
    /// agree; default [`DEFAULT_MAX_TTL`](crate::protocol::DEFAULT_MAX_TTL)). When the
    /// registry finds records missing, a holder of the lost records may go on issuing for
    /// this long, so new claims wait that out (see [`Grant::floor_wait`]).
    pub max_ttl: Duration,
}

impl LeaseRequest {
    /// Checks what every registry must refuse before it claims anything.
    ///
    /// # Errors
    /// [`LeaseError::InvalidConfig`] if `ttl` exceeds `max_ttl`, since the lost-records floor
    /// would then be too short to outlast such a holder, or if `max_ttl` + `quarantine`
    /// exceeds [`LONGEST_WINDOW`]; [`LeaseError::NoFreeNode`] for a
    /// request among zero ids.
    pub fn validate(&self) -> Result<(), LeaseError> {
        if self.node_count == 0 {
            return Err(LeaseError::NoFreeNode { node_count: 0 });
        }
        if self.floor_window() > LONGEST_WINDOW {
            return Err(LeaseError::InvalidConfig {
                detail: format!(
                    "max_ttl {:?} + quarantine {:?} exceeds {:?}, the longest any registry \
                     makes claims wait after lost records",
                    self.max_ttl, self.quarantine, LONGEST_WINDOW
                ),
            });
        }
        if self.ttl > self.max_ttl {
            return Err(LeaseError::InvalidConfig {
                detail: format!(
                    "ttl {:?} exceeds max_ttl {:?}: raise max_ttl (for every holder of the \
                     registry) or shorten the ttl",
                    self.ttl, self.max_ttl
                ),
            });
        }
        Ok(())
    }

    /// How long claims wait after the registry finds records missing.
    pub fn floor_window(&self) -> Duration {
        lost_records_window(self.max_ttl, self.quarantine)
    }
}

/// A claimed node id, and what is needed to prove the claim later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The node id now held.
    pub node_id: u64,
    /// A random owner token (at least 128 bits, hex), checked on renew and release.
    pub token: String,
    /// The holder's fencing epoch: above every earlier claim of this node id in the
    /// registry, and at least the registry's clock in microseconds at the claim
    /// ([`next_epoch`](crate::protocol::next_epoch)), so it keeps growing across lost
    /// records as long as the registry's clock does not go back.
    pub epoch: u64,
    /// The previous holder's high-water mark (Unix ms; 0 if none): the new holder issues
    /// nothing until its clock has passed it plus a skew allowance.
    pub previous_high_water_ms: u64,
    /// How long the new holder must wait (on its monotonic clock) before it issues,
    /// because the registry found records missing (a new, deleted, evicted or wiped
    /// namespace, or a lost record of this id) within the last
    /// [`LeaseRequest::floor_window`]: a holder of the lost records may still be issuing
    /// until then. Zero in the common case.
    pub floor_wait: Duration,
}

impl Grant {
    /// The error that says this claim is no longer held, and why.
    pub fn lost(&self, why: Loss) -> LeaseError {
        LeaseError::Lost {
            node_id: self.node_id,
            why,
        }
    }
}

/// A store that hands out node ids under leases.
pub trait Registry: Send + Sync {
    /// Claims a free node id (or one whose holder's TTL plus quarantine has passed).
    ///
    /// A registry that finds no trace of its namespace, or of an id's record, must not
    /// assume that nobody holds it: it reports the rest of the lost-records floor in
    /// [`Grant::floor_wait`].
    ///
    /// Fails closed: an unreachable store is [`LeaseError::Unavailable`]; no free id is
    /// [`LeaseError::NoFreeNode`]; a request that fails [`LeaseRequest::validate`] is
    /// [`LeaseError::InvalidConfig`].
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError>;

    /// Extends the claim to `ttl` from now and raises the recorded high-water mark to
    /// `high_water_ms` (never lowers it). [`LeaseError::Lost`] if the claim is no longer
    /// held under `grant.token`, as [`prove_held`](crate::protocol::prove_held) decides: a
    /// missing record, another token, or a TTL that has passed (even if nobody has taken the
    /// id yet), so issuing resumes only under a live claim.
    fn renew(&self, grant: &Grant, ttl: Duration, high_water_ms: u64) -> Result<(), LeaseError>;

    /// Gives the id back with `high_water_ms` as the final mark, recorded as given. It may
    /// be lower than the mark reserved by renewals: the holder has stopped issuing, so it
    /// is exact, and the next holder starts without waiting out the reserve. Releasing a
    /// claim that is no longer held is not an error (and then changes nothing).
    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError>;

    /// Starts a floor of `window` from now (or of the longest window the registry keeps, if
    /// longer): every claim waits it out before its holder issues. An operator asks for
    /// this when the registry's history moved back (restored from a backup or a snapshot, a
    /// lagging replica promoted), which a registry cannot always tell by itself. The
    /// restored records have forgotten the claims made since; the holders of those stop
    /// within the floor, because their renewals fail. Returns the floor's length.
    ///
    /// # Errors
    /// [`LeaseError::Unavailable`] if the store cannot be reached; nothing changed then.
    fn restored(&self, window: Duration) -> Result<Duration, LeaseError>;

    /// A short name for messages: "embedded", "etcd", "redis", "zookeeper", "postgres".
    fn name(&self) -> &str;
}
