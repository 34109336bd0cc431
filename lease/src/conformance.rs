//! The registry conformance suite: the behaviour every [`Registry`] backend must show.
//!
//! Enabled by the `conformance` feature. A backend's tests call [`run_all`] (or one check
//! per `#[test]`) with a factory that returns a [`Namespace`]: a registry over a *fresh,
//! empty* namespace each time it is called (a new directory, key prefix, table or znode),
//! and a way to lose that namespace's records as an operator, an eviction or a wiped
//! restart would (and one to lose only the node ids' records, keeping what the registry
//! keeps beside them, and one to connect another registry to the same namespace). With it
//! goes the [`Timing`] that suits the backend. Each check panics with a message naming what
//! broke.
//!
//! ```no_run
//! # #[cfg(feature = "conformance")] {
//! use std::sync::Arc;
//! use ferroflake_lease::conformance::{run_all, Namespace, Timing};
//! use ferroflake_lease::{EmbeddedRegistry, Registry};
//!
//! let root = tempfile_like_dir();
//! let counter = std::sync::atomic::AtomicU32::new(0);
//! let fresh = || {
//!     let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
//!     let dir = root.join(n.to_string());
//!     let registry: Arc<dyn Registry> = Arc::new(EmbeddedRegistry::open(&dir).unwrap());
//!     let records = dir.join("leases.json");
//!     let again = dir.clone();
//!     Namespace::new(registry, move || std::fs::remove_dir_all(&dir).unwrap())
//!         .with_node_loss(move || std::fs::remove_file(&records).unwrap())
//!         .with_reconnect(move || Arc::new(EmbeddedRegistry::open(&again).unwrap()))
//! };
//! run_all(&fresh, Timing::fast());
//! # fn tempfile_like_dir() -> std::path::PathBuf { std::env::temp_dir() }
//! # }
//! ```

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use crate::protocol::{Reservation, MOST_NODE_IDS};
use crate::{Grant, LeaseError, LeaseRequest, NodeState, NodeView, Registry, Renewal};

/// A registry over a fresh, empty namespace, and ways to lose its records.
pub struct Namespace {
    /// The registry.
    pub registry: Arc<dyn Registry>,
    lose: Box<dyn Fn() + Send + Sync>,
    lose_nodes: Option<Box<dyn Fn() + Send + Sync>>,
    reconnect: Option<Box<dyn Fn() -> Arc<dyn Registry> + Send + Sync>>,
}

impl Namespace {
    /// `registry`, with `lose_records` that deletes every record of its namespace (the
    /// directory, the key prefix, the table's rows, the znodes).
    pub fn new(
        registry: Arc<dyn Registry>,
        lose_records: impl Fn() + Send + Sync + 'static,
    ) -> Self {
        Namespace {
            registry,
            lose: Box::new(lose_records),
            lose_nodes: None,
            reconnect: None,
        }
    }

    /// With `lose_node_records`, which deletes the records of the node ids but keeps what
    /// the registry keeps beside them (the embedded registry's lock file, a store's
    /// namespace marker and lost-records window), as losing only the records file, or a
    /// `DEL` of the id keys, would. [`floor_covers_the_longest_ttl`] needs it.
    pub fn with_node_loss(mut self, lose_node_records: impl Fn() + Send + Sync + 'static) -> Self {
        self.lose_nodes = Some(Box::new(lose_node_records));
        self
    }

    /// With `reconnect`, which opens another registry on the same namespace, as another
    /// process given the same address would (it may make the namespace's base again, if
    /// its records were lost). [`identity_is_kept_in_the_records`] needs it.
    pub fn with_reconnect(
        mut self,
        reconnect: impl Fn() -> Arc<dyn Registry> + Send + Sync + 'static,
    ) -> Self {
        self.reconnect = Some(Box::new(reconnect));
        self
    }

    /// Another registry on the same namespace (see [`Namespace::with_reconnect`]).
    ///
    /// # Panics
    /// If the namespace was made without [`Namespace::with_reconnect`].
    pub fn reconnect(&self) -> Arc<dyn Registry> {
        let reconnect = self
            .reconnect
            .as_ref()
            .expect("Namespace::with_reconnect was not given: this check needs it");
        reconnect()
    }

    /// Loses every record of the namespace.
    pub fn lose_records(&self) {
        (self.lose)();
    }

    /// Loses the node ids' records only (see [`Namespace::with_node_loss`]).
    ///
    /// # Panics
    /// If the namespace was made without [`Namespace::with_node_loss`].
    pub fn lose_node_records(&self) {
        let lose = self
            .lose_nodes
            .as_ref()
            .expect("Namespace::with_node_loss was not given: this check needs it");
        lose();
    }
}

/// A factory for fresh, empty namespaces.
pub type Fresh<'a> = &'a dyn Fn() -> Namespace;

/// How long claims live in the checks, and how much lateness the backend needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// The TTL claims are made with. Use the smallest TTL the backend honours exactly
    /// (etcd raises 1 s to 2 s, for example).
    pub ttl: Duration,
    /// The quarantine claims are made with. Must exceed `2 × slack`.
    pub quarantine: Duration,
    /// How late past an instant the backend may still act as before it (expiry sweeps,
    /// clock granularity, round trips).
    pub slack: Duration,
}

impl Timing {
    /// A TTL of 600 ms, quarantine 600 ms and slack 200 ms: for backends that judge expiry
    /// to the millisecond (the embedded registry), with room for a loaded machine.
    pub const fn fast() -> Timing {
        Timing {
            ttl: Duration::from_millis(600),
            quarantine: Duration::from_millis(600),
            slack: Duration::from_millis(200),
        }
    }

    fn request(&self, node_count: u64, holder: &str) -> LeaseRequest {
        LeaseRequest {
            node_count,
            ttl: self.ttl,
            quarantine: self.quarantine,
            holder: holder.into(),
            max_ttl: self.ttl,
            prefer_node: None,
        }
    }
}

/// Runs every check below, in order: `fresh` must give namespaces made with
/// [`Namespace::with_node_loss`] and [`Namespace::with_reconnect`].
pub fn run_all(fresh: Fresh<'_>, timing: Timing) {
    exclusive_claims(fresh, timing);
    concurrent_claims_are_exclusive(fresh, timing);
    no_free_node(fresh, timing);
    renew_and_release(fresh, timing);
    lost_after_expiry_and_takeover(fresh, timing);
    quarantine_holds_expired_ids(fresh, timing);
    high_water_mark_carried(fresh, timing);
    fresh_ids_first_then_lowest_mark(fresh, timing);
    no_renewal_after_expiry(fresh, timing);
    new_namespace_has_a_floor(fresh, timing);
    records_lost_under_a_live_holder(fresh, timing);
    floor_covers_the_longest_ttl(fresh, timing);
    restored_starts_a_floor(fresh, timing);
    list_shows_holders_and_states(fresh, timing);
    list_shows_claim_and_renewal_times(fresh, timing);
    preferred_node_first_if_free(fresh, timing);
    wall_clock_is_the_registrys(fresh, timing);
    identity_is_kept_in_the_records(fresh, timing);
    reservations_are_never_claimed(fresh, timing);
    reservations_race_claims(fresh, timing);
}

/// Claims get distinct ids in range, distinct ≥128-bit tokens, and distinct epochs.
pub fn exclusive_claims(fresh: Fresh<'_>, timing: Timing) {
    let registry = fresh().registry;
    let request = timing.request(4, "conformance exclusive");
    let grants: Vec<Grant> = (0..4)
        .map(|i| {
            registry
                .acquire(&request)
                .unwrap_or_else(|e| panic!("claim {i} of 4 free ids failed: {e}"))
        })
        .collect();
    let ids: BTreeSet<u64> = grants.iter().map(|g| g.node_id).collect();
    assert_eq!(
        ids,
        (0..4).collect(),
        "4 claims of 4 ids must get each id once"
    );
    let tokens: BTreeSet<&str> = grants.iter().map(|g| g.token.as_str()).collect();
    assert_eq!(tokens.len(), 4, "owner tokens must differ");
    for g in &grants {
        assert!(
            g.token.len() >= 32 && g.token.chars().all(|c| c.is_ascii_hexdigit()),
            "token {:?} is not ≥128 bits of hex",
            g.token
        );
    }
    match registry.acquire(&request) {
        Err(LeaseError::NoFreeNode { node_count: 4 }) => {}
        other => {
            panic!("a 5th claim of 4 ids must be NoFreeNode {{ node_count: 4 }}, got {other:?}")
        }
    }
}

/// Threads racing for fewer ids than there are threads: exactly as many winners as ids.
pub fn concurrent_claims_are_exclusive(fresh: Fresh<'_>, timing: Timing) {
    const IDS: u64 = 4;
    const RACERS: usize = 12;
    let registry = fresh().registry;
    let barrier = Arc::new(Barrier::new(RACERS));
    let results: Vec<Result<Grant, LeaseError>> = thread::scope(|s| {
        let handles: Vec<_> = (0..RACERS)
            .map(|i| {
                let (registry, barrier) = (Arc::clone(&registry), Arc::clone(&barrier));
                s.spawn(move || {
                    barrier.wait();
                    registry.acquire(&timing.request(IDS, &format!("racer {i}")))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("racer panicked"))
            .collect()
    });
    let won: Vec<u64> = results
        .iter()
        .filter_map(|r| r.as_ref().ok().map(|g| g.node_id))
        .collect();
    let distinct: BTreeSet<u64> = won.iter().copied().collect();
    assert_eq!(
        won.len() as u64,
        IDS,
        "exactly {IDS} of {RACERS} racers must win: {results:?}"
    );
    assert_eq!(
        distinct.len() as u64,
        IDS,
        "winners must hold distinct ids: {won:?}"
    );
    for r in results.iter().filter_map(|r| r.as_ref().err()) {
        assert!(
            matches!(r, LeaseError::NoFreeNode { node_count: IDS }),
            "losers must get NoFreeNode, got {r:?}"
        );
    }
}

/// No ids at all, or all held: `NoFreeNode` with the count asked for; more ids than a
/// registry hands out among, or a holder name operators cannot read: `InvalidConfig`.
pub fn no_free_node(fresh: Fresh<'_>, timing: Timing) {
    let registry = fresh().registry;
    match registry.acquire(&timing.request(0, "conformance none")) {
        Err(LeaseError::NoFreeNode { node_count: 0 }) => {}
        other => panic!("a claim among 0 ids must be NoFreeNode, got {other:?}"),
    }
    let too_long = LeaseRequest {
        max_ttl: timing.ttl / 2,
        ..timing.request(1, "conformance too long")
    };
    match registry.acquire(&too_long) {
        Err(LeaseError::InvalidConfig { .. }) => {}
        other => panic!("a TTL above max_ttl must be InvalidConfig, got {other:?}"),
    }
    // Kept in the record and shown to operators: a terminal escape, or a right-to-left
    // override that makes the name read as another, never gets there.
    for holder in ["web-1\u{1b}[2J", "web-\u{202e}1-bew", " "] {
        match registry.acquire(&timing.request(1, holder)) {
            Err(LeaseError::InvalidConfig { detail }) => {
                let shown = !holder.trim().is_empty() && detail.contains(holder);
                assert!(!shown, "the name is shown back: {detail}");
            }
            other => panic!("a claim by holder {holder:?} must be InvalidConfig, got {other:?}"),
        }
    }
    // Refused before the registry looks through them for a free one.
    for node_count in [crate::protocol::MOST_NODE_IDS + 1, u64::MAX] {
        match registry.acquire(&timing.request(node_count, "conformance too many")) {
            Err(LeaseError::InvalidConfig { .. }) => {}
            other => panic!("a claim among {node_count} ids must be InvalidConfig, got {other:?}"),
        }
    }
    let held = registry
        .acquire(&timing.request(1, "conformance one"))
        .expect("the only id is free");
    assert_eq!(held.node_id, 0);
    match registry.acquire(&timing.request(1, "conformance two")) {
        Err(LeaseError::NoFreeNode { node_count: 1 }) => {}
        other => panic!("the only id is held: expected NoFreeNode, got {other:?}"),
    }
}

/// Renew keeps a claim past its TTL; a wrong token is `Lost`; release frees the id at once;
/// release of a claim not held is `Ok`; renew after release is `Lost`.
pub fn renew_and_release(fresh: Fresh<'_>, timing: Timing) {
    let registry = fresh().registry;
    let request = timing.request(1, "conformance renew");
    let grant = registry.acquire(&request).expect("free id");
    // Renew at a third of the TTL for 2 TTLs: the claim must survive.
    let until = Instant::now() + timing.ttl * 2;
    while Instant::now() < until {
        thread::sleep(timing.ttl / 3);
        registry
            .renew(&grant, &Renewal::new(timing.ttl, 0))
            .unwrap_or_else(|e| panic!("renewing a held claim failed: {e}"));
    }
    match registry.acquire(&request) {
        Err(LeaseError::NoFreeNode { .. }) => {}
        other => panic!("a renewed claim must stay held past its first TTL, got {other:?}"),
    }
    let forged = Grant {
        token: "0".repeat(32),
        ..grant.clone()
    };
    match registry.renew(&forged, &Renewal::new(timing.ttl, 0)) {
        Err(LeaseError::Lost { node_id: 0, .. }) => {}
        other => panic!("renew under a wrong token must be Lost, got {other:?}"),
    }
    registry
        .release(&forged, 0)
        .expect("release under a wrong token is a no-op, not an error");
    match registry.acquire(&request) {
        Err(LeaseError::NoFreeNode { .. }) => {}
        other => panic!("release under a wrong token must not free the id, got {other:?}"),
    }
    registry
        .release(&grant, 0)
        .expect("release of a held claim");
    match registry.renew(&grant, &Renewal::new(timing.ttl, 0)) {
        Err(LeaseError::Lost { node_id: 0, .. }) => {}
        other => panic!("renew after release must be Lost, got {other:?}"),
    }
    registry
        .release(&grant, 0)
        .expect("a second release is not an error");
    let again = registry
        .acquire(&request)
        .unwrap_or_else(|e| panic!("a released id must be free at once (no quarantine): {e}"));
    assert_eq!(again.node_id, 0);
    assert_ne!(again.token, grant.token, "a new claim gets a new token");
    assert!(
        again.epoch > grant.epoch,
        "the epoch must grow with each claim of an id"
    );
}

/// A claim left to expire is taken over after TTL + quarantine; the old holder's renew is
/// then `Lost`, and its release does not free the new holder's claim.
pub fn lost_after_expiry_and_takeover(fresh: Fresh<'_>, timing: Timing) {
    let registry = fresh().registry;
    let request = timing.request(1, "conformance takeover");
    let old = registry.acquire(&request).expect("free id");
    thread::sleep(timing.ttl + timing.quarantine + timing.slack);
    let new = registry
        .acquire(&request)
        .unwrap_or_else(|e| panic!("an id past TTL + quarantine must be claimable: {e}"));
    assert_eq!(new.node_id, old.node_id);
    assert!(new.epoch > old.epoch, "takeover must raise the epoch");
    match registry.renew(&old, &Renewal::new(timing.ttl, 0)) {
        Err(LeaseError::Lost { node_id, .. }) if node_id == old.node_id => {}
        other => panic!("the old holder's renew after takeover must be Lost, got {other:?}"),
    }
    registry
        .release(&old, 0)
        .expect("the old holder's release is a no-op");
    registry
        .renew(&new, &Renewal::new(timing.ttl, 0))
        .unwrap_or_else(|e| panic!("the old holder's release must not touch the new claim: {e}"));
}

/// An expired claim stays unclaimable during its quarantine, and claimable after it.
pub fn quarantine_holds_expired_ids(fresh: Fresh<'_>, timing: Timing) {
    assert!(
        timing.quarantine > timing.slack * 2,
        "Timing: quarantine must exceed 2 × slack"
    );
    let registry = fresh().registry;
    let request = timing.request(1, "conformance quarantine");
    let start = Instant::now();
    let _old = registry.acquire(&request).expect("free id");
    sleep_until(start + timing.ttl + timing.slack);
    match registry.acquire(&request) {
        Err(LeaseError::NoFreeNode { node_count: 1 }) => {}
        other => {
            panic!("an id past its TTL but within quarantine must not be claimable, got {other:?}")
        }
    }
    sleep_until(start + timing.ttl + timing.quarantine + timing.slack);
    registry
        .acquire(&request)
        .unwrap_or_else(|e| panic!("an id past TTL + quarantine must be claimable: {e}"));
}

/// The mark reached by renewals (never lowered) goes to the next holder when the previous
/// one expired; the final mark of a release goes as given (even below what renewals
/// reserved: the holder has stopped, so the next one need not wait out the reserve).
pub fn high_water_mark_carried(fresh: Fresh<'_>, timing: Timing) {
    const T: u64 = 1_700_000_000_000;
    let registry = fresh().registry;
    let request = timing.request(1, "conformance mark");
    let first = registry.acquire(&request).expect("free id");
    assert_eq!(
        first.previous_high_water_ms, 0,
        "a fresh namespace has no mark"
    );
    registry
        .renew(&first, &Renewal::new(timing.ttl, T + 5_000))
        .expect("renew");
    registry
        .renew(&first, &Renewal::new(timing.ttl, T + 3_000))
        .expect("renew with a lower mark");
    registry.release(&first, T + 4_000).expect("release");
    let second = registry.acquire(&request).expect("released id");
    assert_eq!(
        second.previous_high_water_ms,
        T + 4_000,
        "release at final mark {} (below the reserved {}) must carry that mark, so the next \
         holder starts without waiting out the reserve",
        T + 4_000,
        T + 5_000
    );
    registry
        .renew(&second, &Renewal::new(timing.ttl, T + 9_000))
        .expect("renew");
    registry
        .renew(&second, &Renewal::new(timing.ttl, T + 8_000))
        .expect("renew with a lower mark");
    // The second holder dies without releasing: its mark must survive expiry.
    thread::sleep(timing.ttl + timing.quarantine + timing.slack);
    let third = registry.acquire(&request).expect("expired id");
    assert_eq!(
        third.previous_high_water_ms,
        T + 9_000,
        "an expired holder's highest renewed mark (renew never lowers it) must carry over"
    );
}

/// Claims take an id never claimed while there is one, then the free id whose previous
/// holder left the lowest mark ([`pick_node`](crate::protocol::pick_node)), so that a new
/// holder rarely waits for a previous one: two short runs back to back start at once.
pub fn fresh_ids_first_then_lowest_mark(fresh: Fresh<'_>, timing: Timing) {
    const T: u64 = 1_700_000_000_000;
    let registry = fresh().registry;
    let request = timing.request(3, "conformance pick");
    let claim = |what: &str| {
        registry
            .acquire(&request)
            .unwrap_or_else(|e| panic!("{what}: {e}"))
    };
    let a = claim("first claim");
    assert_eq!(a.node_id, 0);
    registry.release(&a, T + 9_000).expect("release");
    let b = claim("second claim");
    assert_eq!(
        (b.node_id, b.previous_high_water_ms),
        (1, 0),
        "an id never claimed goes before a released one"
    );
    registry.release(&b, T + 5_000).expect("release");
    let c = claim("third claim");
    assert_eq!(c.node_id, 2, "the last id never claimed");
    let d = claim("fourth claim");
    assert_eq!(
        (d.node_id, d.previous_high_water_ms),
        (1, T + 5_000),
        "then the free id with the lowest mark"
    );
}

/// A renewal that arrives after the claim's TTL (a holder paused past it, a message
/// delayed) is `Lost` even though nobody has taken the id: it must not revive the claim.
pub fn no_renewal_after_expiry(fresh: Fresh<'_>, timing: Timing) {
    let registry = fresh().registry;
    let request = timing.request(1, "conformance stale renewal");
    let grant = registry.acquire(&request).expect("free id");
    thread::sleep(timing.ttl + timing.slack);
    match registry.renew(&grant, &Renewal::new(timing.ttl, 0)) {
        Err(LeaseError::Lost { node_id: 0, .. }) => {}
        other => panic!("a renewal after the TTL must be Lost, got {other:?}"),
    }
    thread::sleep(timing.quarantine);
    registry
        .acquire(&request)
        .unwrap_or_else(|e| panic!("the expired id must be claimable after its quarantine: {e}"));
}

/// A namespace with no records may be one whose records were lost while holders went on:
/// its first claims report a floor as long as the longest TTL, and once that has passed,
/// claims report none.
pub fn new_namespace_has_a_floor(fresh: Fresh<'_>, timing: Timing) {
    let registry = fresh().registry;
    let request = timing.request(2, "conformance floor");
    let asked = Instant::now();
    let first = registry.acquire(&request).expect("free id");
    assert!(
        first.floor_wait >= timing.ttl,
        "the first claim in an empty namespace must wait at least max_ttl ({:?}), got {:?}",
        timing.ttl,
        first.floor_wait
    );
    assert!(
        first.floor_wait <= timing.ttl + timing.quarantine + timing.slack * 2,
        "the floor must end after max_ttl + quarantine, got {:?}",
        first.floor_wait
    );
    sleep_until(asked + first.floor_wait + timing.slack);
    let second = registry.acquire(&request).expect("second id");
    assert!(
        second.floor_wait <= timing.slack,
        "once the floor has passed, claims must not wait for it, got {:?}",
        second.floor_wait
    );
}

/// The records vanish under a live holder (deleted, evicted, wiped): its next renewal is
/// `Lost` with [`Loss::Missing`](crate::Loss::Missing); a new claim of the same id must
/// not let its holder issue before the old holder's deadline; its epoch is above the old
/// one; the old holder cannot disturb the new claim.
pub fn records_lost_under_a_live_holder(fresh: Fresh<'_>, timing: Timing) {
    let namespace = fresh();
    let registry = &namespace.registry;
    let request = timing.request(1, "conformance lost records");
    let old = registry.acquire(&request).expect("free id");
    let renewed = Instant::now();
    registry
        .renew(&old, &Renewal::new(timing.ttl, 1_700_000_000_000))
        .expect("renew before the loss");
    namespace.lose_records();
    match registry.renew(&old, &Renewal::new(timing.ttl, 1_700_000_000_000)) {
        Err(LeaseError::Lost {
            node_id: 0,
            why: crate::Loss::Missing,
        }) => {}
        other => panic!(
            "a renewal after the records were lost must be Lost {{ why: Missing }}, got {other:?}"
        ),
    }
    let asked = Instant::now();
    let new = registry
        .acquire(&request)
        .unwrap_or_else(|e| panic!("after the loss the id can be claimed (with a floor): {e}"));
    assert_eq!(new.node_id, old.node_id);
    assert!(
        asked + new.floor_wait >= renewed + timing.ttl,
        "the new holder must not issue before the old holder's deadline: it may issue \
         {:?} after the claim, but the old holder may issue until {:?} after the claim",
        new.floor_wait,
        (renewed + timing.ttl).saturating_duration_since(asked)
    );
    assert!(
        new.epoch > old.epoch,
        "epochs must grow across lost records: old {}, new {}",
        old.epoch,
        new.epoch
    );
    match registry.renew(&old, &Renewal::new(timing.ttl, 0)) {
        Err(LeaseError::Lost { node_id: 0, .. }) => {}
        other => panic!("the old holder's renewal after a new claim must be Lost, got {other:?}"),
    }
    registry
        .release(&old, 0)
        .expect("the old holder's release is a no-op");
    registry
        .renew(&new, &Renewal::new(timing.ttl, 0))
        .unwrap_or_else(|e| panic!("the old holder must not disturb the new claim: {e}"));
}

/// Holders of one registry with different TTLs (and `max_ttl`s): after the node ids'
/// records are lost, a claimant with a short TTL must wait out the longest TTL any holder
/// was granted, not only its own, since that holder may still be issuing until its
/// deadline.
pub fn floor_covers_the_longest_ttl(fresh: Fresh<'_>, timing: Timing) {
    let namespace = fresh();
    let registry = &namespace.registry;
    // The namespace is made by a short claim, so its own floor is a short one.
    let short = timing.request(2, "conformance short ttl");
    let first = registry.acquire(&short).expect("free id");
    let long_ttl = timing.ttl * 4;
    let long = LeaseRequest {
        ttl: long_ttl,
        max_ttl: long_ttl,
        ..timing.request(2, "conformance long ttl")
    };
    let holder = registry.acquire(&long).expect("second free id");
    let renewed = Instant::now();
    registry
        .renew(&holder, &Renewal::new(long_ttl, 1_700_000_000_000))
        .expect("renew before the loss");
    namespace.lose_node_records();
    match registry.renew(&holder, &Renewal::new(long_ttl, 1_700_000_000_000)) {
        Err(LeaseError::Lost {
            why: crate::Loss::Missing,
            ..
        }) => {}
        other => panic!(
            "a renewal after the records were lost must be Lost {{ why: Missing }}, got {other:?}"
        ),
    }
    let asked = Instant::now();
    let claim = registry
        .acquire(&short)
        .unwrap_or_else(|e| panic!("after the loss an id can be claimed (with a floor): {e}"));
    assert!(
        asked + claim.floor_wait >= renewed + long_ttl,
        "a claimant with a {:?} TTL must not issue before the deadline of a holder granted \
         {long_ttl:?}: it may issue {:?} after the claim, the holder (node {}) until {:?} \
         after it (the short holder was on node {})",
        timing.ttl,
        claim.floor_wait,
        holder.node_id,
        (renewed + long_ttl).saturating_duration_since(asked),
        first.node_id
    );
    assert!(
        claim.floor_wait <= long.floor_window() + timing.slack * 2,
        "the floor must end after the longest window asked for ({:?}), got {:?}",
        long.floor_window(),
        claim.floor_wait
    );
}

/// An operator's [`Registry::restored`] makes every claim from then on wait out a floor
/// of at least the window asked for, though the registry's records look intact.
pub fn restored_starts_a_floor(fresh: Fresh<'_>, timing: Timing) {
    let registry = fresh().registry;
    let request = timing.request(2, "conformance restored");
    let window = timing.ttl + timing.quarantine;
    // First a claim with no floor at all: the new namespace's floor (and any floor of the
    // backend's own, such as a store server's restart) has passed.
    let give_up = Instant::now() + window * 3 + Duration::from_secs(2);
    loop {
        let asked = Instant::now();
        let claim = registry.acquire(&request).expect("free id");
        registry.release(&claim, 0).expect("release");
        if claim.floor_wait <= timing.slack {
            break;
        }
        assert!(
            asked < give_up,
            "the floors never ended: {:?}",
            claim.floor_wait
        );
        sleep_until(asked + claim.floor_wait + timing.slack);
    }
    let floor = registry
        .restored(window)
        .unwrap_or_else(|e| panic!("restored: {e}"));
    assert!(
        floor >= window,
        "the floor covers the window asked for: {floor:?}"
    );
    let claim = registry.acquire(&request).expect("free id");
    assert!(
        claim.floor_wait + timing.slack >= window,
        "a claim after `restored` must wait out the floor ({window:?}), got {:?}",
        claim.floor_wait
    );
}

fn sleep_until(when: Instant) {
    if let Some(left) = when.checked_duration_since(Instant::now()) {
        thread::sleep(left);
    }
}

/// [`Registry::list`]: an empty namespace lists no ids and no floor (listing starts none);
/// after two claims and one release it lists both ids by node id, with their holders'
/// names, epochs, states (held with an expiry ahead, released), and the marks renewed and
/// released with; a floor started by [`Registry::restored`] shows.
pub fn list_shows_holders_and_states(fresh: Fresh<'_>, timing: Timing) {
    let registry = fresh().registry;
    for _ in 0..2 {
        let empty = registry
            .list()
            .unwrap_or_else(|e| panic!("listing an empty namespace: {e}"));
        assert_eq!(empty.nodes, [], "an empty namespace lists no ids");
        assert_eq!(
            empty.floor_until_ms, None,
            "an empty namespace has no floor, and listing starts none"
        );
    }
    let window = timing.ttl + timing.quarantine;
    let claimed_at = Instant::now();
    let first = registry
        .acquire(&timing.request(4, "conformance list one"))
        .expect("free id");
    let second = registry
        .acquire(&timing.request(4, "conformance list two"))
        .expect("free id");
    let (released_mark, renewed_mark) = (1_700_000_000_123, 1_700_000_000_456);
    registry
        .renew(&second, &Renewal::new(timing.ttl, renewed_mark))
        .unwrap_or_else(|e| panic!("renewing a fresh claim: {e}"));
    registry
        .release(&first, released_mark)
        .expect("release of a held claim");
    let view = registry.list().unwrap_or_else(|e| panic!("listing: {e}"));
    let ids: Vec<u64> = view.nodes.iter().map(|n| n.node_id).collect();
    let mut expected = vec![first.node_id, second.node_id];
    expected.sort_unstable();
    assert_eq!(ids, expected, "both ids, by node id, and nothing else");
    let entry = |id: u64| -> &NodeView { view.nodes.iter().find(|n| n.node_id == id).unwrap() };
    let (released, held) = (entry(first.node_id), entry(second.node_id));
    assert_eq!(released.holder.as_deref(), Some("conformance list one"));
    assert_eq!(released.state, NodeState::Released, "{released:?}");
    assert_eq!(released.epoch, first.epoch);
    assert_eq!(released.expires_ms, None, "a released id has no expiry");
    assert_eq!(
        released.high_water_ms, released_mark,
        "the final mark as released"
    );
    assert_eq!(held.holder.as_deref(), Some("conformance list two"));
    assert_eq!(held.state, NodeState::Held, "{held:?}");
    assert_eq!(held.epoch, second.epoch);
    assert_eq!(held.high_water_ms, renewed_mark, "the mark renewed with");
    let expires = held.expires_ms.expect("a held claim has an expiry");
    assert!(
        expires > view.now_ms && expires <= view.now_ms + crate::protocol::ms(window),
        "a held claim expires ahead, within TTL + quarantine: {expires} at {}",
        view.now_ms
    );
    for n in &view.nodes {
        assert!(n.since_ms.is_some(), "every claim records its time: {n:?}");
    }
    assert_eq!(
        released.last_renewal_ms, None,
        "never renewed: {released:?}"
    );
    assert!(held.last_renewal_ms.is_some(), "renewed: {held:?}");
    if claimed_at.elapsed() + timing.slack < window {
        assert!(
            view.floor_until_ms.is_some(),
            "the new namespace's floor runs for {window:?} after the first claim"
        );
    }
    registry
        .restored(window)
        .unwrap_or_else(|e| panic!("restored: {e}"));
    let after = registry.list().unwrap_or_else(|e| panic!("listing: {e}"));
    let floor = after
        .floor_until_ms
        .expect("a floor started by `restored` shows");
    assert!(
        floor + crate::protocol::ms(timing.slack) >= after.now_ms + crate::protocol::ms(window),
        "the floor lasts the window asked for: ends {floor}, now {}",
        after.now_ms
    );
    assert_eq!(after.nodes.len(), 2, "`restored` changes no record");
}

/// [`Registry::list`] shows when a claim was made and last renewed, on the registry's
/// clock (between the listings before and after, give or take the slack), and the clock
/// skew the holder gave at its last renewal: none before the first renewal; each renewal's
/// own, `None` included; a new claim of the id starts afresh.
pub fn list_shows_claim_and_renewal_times(fresh: Fresh<'_>, timing: Timing) {
    let registry = fresh().registry;
    let slack = crate::protocol::ms(timing.slack);
    let request = timing.request(1, "conformance times");
    let node = |view: &crate::RegistryView| -> NodeView {
        view.node(0)
            .unwrap_or_else(|| panic!("node 0 is listed: {view:?}"))
            .clone()
    };
    let within = |what: &str, at: Option<u64>, before: u64, after: u64| {
        let at = at.unwrap_or_else(|| panic!("{what} is recorded"));
        assert!(
            before.saturating_sub(slack) <= at && at <= after + slack,
            "{what} at {at}, outside the listings' {before}..={after} (± {slack} ms)"
        );
        at
    };
    let list = || registry.list().unwrap_or_else(|e| panic!("listing: {e}"));

    let before = list().now_ms;
    let grant = registry.acquire(&request).expect("free id");
    let claimed = list();
    let since = within("the claim", node(&claimed).since_ms, before, claimed.now_ms);
    assert_eq!(
        (node(&claimed).last_renewal_ms, node(&claimed).clock_skew_ms),
        (None, None),
        "no renewal yet"
    );

    let skewed = Renewal {
        clock_skew_ms: Some(-37),
        ..Renewal::new(timing.ttl, 0)
    };
    registry
        .renew(&grant, &skewed)
        .unwrap_or_else(|e| panic!("renewing: {e}"));
    let renewed = list();
    let n = node(&renewed);
    assert_eq!(n.since_ms, Some(since), "a renewal keeps the claim's time");
    let first_renewal = within(
        "the renewal",
        n.last_renewal_ms,
        claimed.now_ms,
        renewed.now_ms,
    );
    assert_eq!(n.clock_skew_ms, Some(-37), "the skew the holder gave");

    registry
        .renew(&grant, &Renewal::new(timing.ttl, 0))
        .unwrap_or_else(|e| panic!("renewing: {e}"));
    let again = list();
    let n = node(&again);
    within(
        "the second renewal",
        n.last_renewal_ms,
        first_renewal.max(renewed.now_ms),
        again.now_ms,
    );
    assert_eq!(n.clock_skew_ms, None, "no skew read at the last renewal");

    registry.release(&grant, 0).expect("release");
    let reclaimed = registry.acquire(&request).expect("the released id");
    let view = list();
    let n = node(&view);
    within("the new claim", n.since_ms, again.now_ms, view.now_ms);
    assert_eq!(
        (n.last_renewal_ms, n.clock_skew_ms),
        (None, None),
        "a new claim is not renewed yet"
    );
    registry.release(&reclaimed, 0).expect("release");
}

/// [`LeaseRequest::prefer_node`]: a claim takes the preferred id when it is free (before
/// an id never claimed, and before a lower mark); a held one, or one out of range, is
/// passed over as if none were preferred; an id never claimed is not taken out of turn.
pub fn preferred_node_first_if_free(fresh: Fresh<'_>, timing: Timing) {
    const T: u64 = 1_700_000_000_000;
    let registry = fresh().registry;
    let prefer = |id: Option<u64>| LeaseRequest {
        prefer_node: id,
        ..timing.request(5, "conformance prefer")
    };
    let claim = |id: Option<u64>| {
        registry
            .acquire(&prefer(id))
            .unwrap_or_else(|e| panic!("claim preferring {id:?}: {e}"))
    };
    assert_eq!(
        claim(Some(3)).node_id,
        0,
        "an id never claimed is not taken out of turn"
    );
    let one = claim(None);
    let two = claim(None);
    assert_eq!((one.node_id, two.node_id), (1, 2));
    registry.release(&one, T + 9_000).expect("release");
    registry.release(&two, T + 1_000).expect("release");
    let again = claim(Some(1));
    assert_eq!(
        (again.node_id, again.previous_high_water_ms),
        (1, T + 9_000),
        "the preferred free id, before one never claimed and a lower mark"
    );
    assert_eq!(
        claim(Some(0)).node_id,
        3,
        "a held id preferred: as if none were"
    );
    assert_eq!(
        claim(Some(7)).node_id,
        4,
        "an id out of range preferred: as if none were"
    );
    assert_eq!(claim(Some(0)).node_id, 2, "then the last free id");
}

/// [`Registry::wall_clock_ms`]: every registry but etcd (which keeps no clock it reports)
/// answers its clock, Unix ms, and on one host it agrees with this process's wall clock to
/// within the round trip and a few ms of the clock's grain.
pub fn wall_clock_is_the_registrys(fresh: Fresh<'_>, _timing: Timing) {
    let registry = fresh().registry;
    for _ in 0..3 {
        let before = unix_ms();
        let answer = registry
            .wall_clock_ms()
            .unwrap_or_else(|e| panic!("reading the registry's clock: {e}"));
        let after = unix_ms();
        let Some(registry_ms) = answer else {
            assert_eq!(registry.name(), "etcd", "only etcd reports no clock");
            return;
        };
        assert!(
            before.saturating_sub(20) <= registry_ms && registry_ms <= after + 20,
            "the {} registry's clock reads {registry_ms}, outside this host's {before}..={after}",
            registry.name()
        );
    }
}

/// [`Registry::identity`]: every registry keeps an id in its namespace's records. Two
/// registries on one namespace report the same, one connected again reports it again,
/// and another namespace's reports another: a client pinned to one registry's id refuses
/// the answers of any other, whatever its locator says. Asking for it reaches no store: a
/// running registry whose records were lost still reports its own. A registry connected
/// after the loss reports one too (the same, or a new one where the id went with the
/// records), and the id it finds or makes does not pass for the lost records: its first
/// claim waits out a floor.
pub fn identity_is_kept_in_the_records(fresh: Fresh<'_>, timing: Timing) {
    let namespace = fresh();
    let registry = &namespace.registry;
    let name = registry.name().to_owned();
    let id = registry.identity().unwrap_or_else(|| {
        panic!("the {name} registry keeps no id in its records (identity() is None)")
    });
    assert!(!id.is_empty(), "the {name} registry's id is empty");
    let request = timing.request(2, "conformance identity");
    let grant = registry.acquire(&request).expect("free id");
    let again = namespace.reconnect();
    assert_eq!(
        again.locator(),
        registry.locator(),
        "a registry connected again to the namespace has its locator"
    );
    assert_eq!(
        again.identity().as_deref(),
        Some(id.as_str()),
        "a registry connected again to the namespace must report its id"
    );
    let listed = again
        .list()
        .expect("list through the registry connected again");
    assert!(
        listed.node(grant.node_id).is_some(),
        "the registry connected again must see the first one's claim: {listed:?}"
    );
    assert_eq!(
        registry.identity().as_deref(),
        Some(id.as_str()),
        "claims and other registries must not change a registry's id"
    );
    let other = fresh().registry;
    let other_id = other.identity().unwrap_or_else(|| {
        panic!("the {name} registry of another namespace keeps no id in its records")
    });
    assert_ne!(
        other_id, id,
        "two namespaces must keep two ids: clients could not tell them apart"
    );

    namespace.lose_records();
    assert_eq!(
        registry.identity().as_deref(),
        Some(id.as_str()),
        "a running registry reports the id it read when it connected"
    );
    let after = namespace.reconnect();
    assert!(
        after.identity().is_some(),
        "a registry connected after its records were lost keeps an id too"
    );
    let claim = after
        .acquire(&request)
        .unwrap_or_else(|e| panic!("after the loss an id can be claimed (with a floor): {e}"));
    assert!(
        claim.floor_wait >= timing.ttl,
        "the first claim after the records (the id's too, or not) were lost must wait at \
         least max_ttl ({:?}), got {:?}: the id must not pass for the lost records",
        timing.ttl,
        claim.floor_wait
    );
}

/// This process's wall clock, Unix ms.
/// [`Registry::reserve`]: a reserved id is skipped by every claim (preferred or not,
/// never claimed or not) and never lapses; reserving again changes nothing; an id a claim
/// holds is refused; a claim's token neither renews nor releases a reservation; the list
/// shows it; [`Registry::unreserve`] frees it with the mark given, which the next holder
/// inherits, and leaves an id that is not reserved alone.
pub fn reservations_are_never_claimed(fresh: Fresh<'_>, timing: Timing) {
    const T: u64 = 1_700_000_000_000;
    let registry = fresh().registry;
    let reserve = |id: u64| {
        registry
            .reserve(id, "old fleet")
            .unwrap_or_else(|e| panic!("reserving node {id}: {e}"))
    };
    assert_eq!(reserve(1), Reservation::Made, "a free id is reserved");
    assert_eq!(
        reserve(1),
        Reservation::Already,
        "reserving twice changes nothing"
    );
    match registry.reserve(MOST_NODE_IDS, "old fleet") {
        Err(LeaseError::InvalidConfig { .. }) => {}
        other => {
            panic!("reserving an id no registry hands out must be InvalidConfig, got {other:?}")
        }
    }
    let request = LeaseRequest {
        prefer_node: Some(1),
        ..timing.request(3, "conformance beside a reservation")
    };
    let claim_all = |why: &str| {
        let mut ids: Vec<u64> = (0..2)
            .map(|_| {
                registry
                    .acquire(&request)
                    .unwrap_or_else(|e| panic!("{why}: two of 3 ids are free: {e}"))
                    .node_id
            })
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, [0, 2], "{why}: claims must skip the reserved id 1");
        match registry.acquire(&request) {
            Err(LeaseError::NoFreeNode { node_count: 3 }) => {}
            other => {
                panic!("{why}: only the reserved id is left, expected NoFreeNode, got {other:?}")
            }
        }
    };
    claim_all("first claims");
    assert_eq!(
        reserve(0),
        Reservation::Refused,
        "a held id must not be reserved"
    );
    let listed = registry.list().expect("list");
    let node = |id: u64| {
        listed
            .node(id)
            .cloned()
            .unwrap_or_else(|| panic!("node {id} listed"))
    };
    assert_eq!(
        node(0).state,
        NodeState::Held,
        "a refused reservation changes nothing"
    );
    assert_eq!(node(1).state, NodeState::Reserved);
    assert_eq!(node(1).holder.as_deref(), Some("old fleet"));
    assert_eq!(node(1).expires_ms, None, "a reservation never expires");
    // The claims lapse; the reservation does not.
    thread::sleep(timing.ttl + timing.quarantine + timing.slack);
    claim_all("claims after the first ones lapsed");
    let stranger = Grant {
        node_id: 1,
        token: "0123456789abcdef0123456789abcdef".into(),
        epoch: u64::MAX,
        previous_high_water_ms: 0,
        floor_wait: Duration::ZERO,
    };
    assert!(
        matches!(
            registry.renew(&stranger, &Renewal::new(timing.ttl, 0)),
            Err(LeaseError::Lost { node_id: 1, .. })
        ),
        "a claim's token must not renew a reservation"
    );
    registry
        .release(&stranger, 0)
        .expect("releasing what one does not hold is a no-op");
    registry
        .unreserve(0, T)
        .expect("unreserving a held id is a no-op");
    let listed = registry.list().expect("list");
    assert_eq!(
        listed.node(1).map(|n| n.state),
        Some(NodeState::Reserved),
        "a claim's release must not free a reservation"
    );
    assert_eq!(
        listed.node(0).map(|n| n.state),
        Some(NodeState::Held),
        "unreserving a claimed id must not free it"
    );
    registry.unreserve(1, T).expect("unreserve");
    let listed = registry.list().expect("list");
    assert_eq!(
        listed.node(1).map(|n| (n.state, n.high_water_ms)),
        Some((NodeState::Released, T))
    );
    let next = registry
        .acquire(&request)
        .unwrap_or_else(|e| panic!("an unreserved id must be claimable: {e}"));
    assert_eq!(next.node_id, 1);
    assert_eq!(
        next.previous_high_water_ms, T,
        "the next holder must wait past the mark given at unreserve"
    );
}

/// Reservations of one id race claims among ids that include it: the id ends up either
/// claimed (every reservation refused) or reserved once (then no claim got it), never both.
pub fn reservations_race_claims(fresh: Fresh<'_>, timing: Timing) {
    const IDS: u64 = 4;
    const RACERS: usize = 12;
    let registry = fresh().registry;
    let barrier = Arc::new(Barrier::new(RACERS));
    let (claims, reservations): (Vec<_>, Vec<_>) = thread::scope(|s| {
        let handles: Vec<_> = (0..RACERS)
            .map(|i| {
                let (registry, barrier) = (Arc::clone(&registry), Arc::clone(&barrier));
                s.spawn(move || {
                    barrier.wait();
                    if i % 2 == 0 {
                        Ok(registry.acquire(&timing.request(IDS, &format!("racer {i}"))))
                    } else {
                        Err(registry.reserve(IDS - 1, &format!("reserver {i}")))
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("racer panicked"))
            .partition(Result::is_ok)
    });
    let won: Vec<u64> = claims
        .into_iter()
        .filter_map(|c| c.ok()?.ok().map(|g| g.node_id))
        .collect();
    let outcomes: Vec<Reservation> = reservations
        .into_iter()
        .map(|r| match r {
            Err(Ok(outcome)) => outcome,
            other => panic!("a reservation failed: {other:?}"),
        })
        .collect();
    let distinct: BTreeSet<u64> = won.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        won.len(),
        "claims must hold distinct ids: {won:?}"
    );
    let made = outcomes.iter().filter(|&&o| o == Reservation::Made).count();
    if won.contains(&(IDS - 1)) {
        assert_eq!(
            made,
            0,
            "id {} was claimed and reserved: {outcomes:?}",
            IDS - 1
        );
        assert!(
            outcomes.iter().all(|&o| o == Reservation::Refused),
            "{outcomes:?}"
        );
    } else {
        assert_eq!(
            made,
            1,
            "id {} was neither claimed nor reserved once: {outcomes:?}",
            IDS - 1
        );
        assert_eq!(
            won.len() as u64,
            IDS - 1,
            "every other id must be claimed: {won:?}"
        );
    }
}

fn unix_ms() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970");
    crate::protocol::ms(since)
}
