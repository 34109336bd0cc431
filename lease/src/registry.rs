//! The registry abstraction: where node ids are claimed, renewed and released.
//!
//! Every backend (the embedded directory, etcd, Redis, ZooKeeper, PostgreSQL) implements
//! [`Registry`] and passes the same conformance suite. Calls are blocking, so the C, Python
//! and Node faces can wrap them without an async runtime of their own.

use std::time::Duration;

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
}

/// A claimed node id, and what is needed to prove the claim later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The node id now held.
    pub node_id: u64,
    /// A random owner token (at least 128 bits, hex), checked on renew and release.
    pub token: String,
    /// A number that grows with every new claim of this node id (etcd revision, row
    /// version, ...): the holder's fencing epoch.
    pub epoch: u64,
    /// The previous holder's high-water mark (Unix ms; 0 if none): the new holder issues
    /// nothing until its clock has passed it plus a skew allowance.
    pub previous_high_water_ms: u64,
}

/// A store that hands out node ids under leases.
pub trait Registry: Send + Sync {
    /// Claims a free node id (or one whose holder's TTL plus quarantine has passed).
    ///
    /// Fails closed: an unreachable store is [`LeaseError::Unavailable`]; no free id is
    /// [`LeaseError::NoFreeNode`].
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError>;

    /// Extends the claim to `ttl` from now and raises the recorded high-water mark to
    /// `high_water_ms` (never lowers it). [`LeaseError::Lost`] if the claim is no longer
    /// held under `grant.token`; a claim whose TTL has passed is no longer held, even if
    /// nobody has taken it yet, so issuing resumes only under a live claim.
    fn renew(&self, grant: &Grant, ttl: Duration, high_water_ms: u64) -> Result<(), LeaseError>;

    /// Gives the id back with `high_water_ms` as the final mark. It may be lower than the
    /// mark reserved by renewals, because the holder has stopped issuing: a registry may
    /// record it as given (the next holder waits less) or keep the higher mark. Both are
    /// safe; the next holder must see at least `high_water_ms`. Releasing a claim that is no longer held is
    /// not an error (and then changes nothing).
    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError>;

    /// A short name for messages: "embedded", "etcd", "redis", "zookeeper", "postgres".
    fn name(&self) -> &str;
}
