//! The registry conformance suite: the behaviour every [`Registry`] backend must show.
//!
//! Enabled by the `conformance` feature. A backend's tests call [`run_all`] (or one check
//! per `#[test]`) with a factory that returns a registry over a *fresh, empty* namespace
//! each time it is called (a new directory, key prefix, table or znode), and with the
//! [`Timing`] that suits the backend. Each check panics with a message naming what broke.
//!
//! ```no_run
//! # #[cfg(feature = "conformance")] {
//! use std::sync::Arc;
//! use ferroflake_lease::conformance::{run_all, Timing};
//! use ferroflake_lease::{EmbeddedRegistry, Registry};
//!
//! let root = tempfile_like_dir();
//! let counter = std::sync::atomic::AtomicU32::new(0);
//! let fresh = || -> Arc<dyn Registry> {
//!     let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
//!     Arc::new(EmbeddedRegistry::open(root.join(n.to_string())).unwrap())
//! };
//! run_all(&fresh, Timing::fast());
//! # fn tempfile_like_dir() -> std::path::PathBuf { std::env::temp_dir() }
//! # }
//! ```

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use crate::{Grant, LeaseError, LeaseRequest, Registry};

/// A factory for registries over fresh, empty namespaces.
pub type Fresh<'a> = &'a dyn Fn() -> Arc<dyn Registry>;

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
        }
    }
}

/// Runs every check below, in order.
pub fn run_all(fresh: Fresh<'_>, timing: Timing) {
    exclusive_claims(fresh, timing);
    concurrent_claims_are_exclusive(fresh, timing);
    no_free_node(fresh, timing);
    renew_and_release(fresh, timing);
    lost_after_expiry_and_takeover(fresh, timing);
    quarantine_holds_expired_ids(fresh, timing);
    high_water_mark_carried(fresh, timing);
}

/// Claims get distinct ids in range, distinct ≥128-bit tokens, and distinct epochs.
pub fn exclusive_claims(fresh: Fresh<'_>, timing: Timing) {
    let registry = fresh();
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
    let registry = fresh();
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

/// No ids at all, or all held: `NoFreeNode` with the count asked for.
pub fn no_free_node(fresh: Fresh<'_>, timing: Timing) {
    let registry = fresh();
    match registry.acquire(&timing.request(0, "conformance none")) {
        Err(LeaseError::NoFreeNode { node_count: 0 }) => {}
        other => panic!("a claim among 0 ids must be NoFreeNode, got {other:?}"),
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
    let registry = fresh();
    let request = timing.request(1, "conformance renew");
    let grant = registry.acquire(&request).expect("free id");
    // Renew at a third of the TTL for 2 TTLs: the claim must survive.
    let until = Instant::now() + timing.ttl * 2;
    while Instant::now() < until {
        thread::sleep(timing.ttl / 3);
        registry
            .renew(&grant, timing.ttl, 0)
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
    match registry.renew(&forged, timing.ttl, 0) {
        Err(LeaseError::Lost { node_id: 0 }) => {}
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
    match registry.renew(&grant, timing.ttl, 0) {
        Err(LeaseError::Lost { node_id: 0 }) => {}
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
    let registry = fresh();
    let request = timing.request(1, "conformance takeover");
    let old = registry.acquire(&request).expect("free id");
    thread::sleep(timing.ttl + timing.quarantine + timing.slack);
    let new = registry
        .acquire(&request)
        .unwrap_or_else(|e| panic!("an id past TTL + quarantine must be claimable: {e}"));
    assert_eq!(new.node_id, old.node_id);
    assert!(new.epoch > old.epoch, "takeover must raise the epoch");
    match registry.renew(&old, timing.ttl, 0) {
        Err(LeaseError::Lost { node_id }) if node_id == old.node_id => {}
        other => panic!("the old holder's renew after takeover must be Lost, got {other:?}"),
    }
    registry
        .release(&old, 0)
        .expect("the old holder's release is a no-op");
    registry
        .renew(&new, timing.ttl, 0)
        .unwrap_or_else(|e| panic!("the old holder's release must not touch the new claim: {e}"));
}

/// An expired claim stays unclaimable during its quarantine, and claimable after it.
pub fn quarantine_holds_expired_ids(fresh: Fresh<'_>, timing: Timing) {
    assert!(
        timing.quarantine > timing.slack * 2,
        "Timing: quarantine must exceed 2 × slack"
    );
    let registry = fresh();
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

/// The mark reached by renewals (never lowered) and by release goes to the next holder,
/// whether the previous one released or expired.
pub fn high_water_mark_carried(fresh: Fresh<'_>, timing: Timing) {
    const T: u64 = 1_700_000_000_000;
    let registry = fresh();
    let request = timing.request(1, "conformance mark");
    let first = registry.acquire(&request).expect("free id");
    assert_eq!(
        first.previous_high_water_ms, 0,
        "a fresh namespace has no mark"
    );
    registry
        .renew(&first, timing.ttl, T + 5_000)
        .expect("renew");
    registry
        .renew(&first, timing.ttl, T + 3_000)
        .expect("renew with a lower mark");
    registry.release(&first, T + 6_000).expect("release");
    let second = registry.acquire(&request).expect("released id");
    assert!(
        second.previous_high_water_ms >= T + 6_000,
        "release at mark {} must carry it to the next holder, got {}",
        T + 6_000,
        second.previous_high_water_ms
    );
    registry
        .renew(&second, timing.ttl, T + 9_000)
        .expect("renew");
    registry
        .renew(&second, timing.ttl, T + 8_000)
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

fn sleep_until(when: Instant) {
    if let Some(left) = when.checked_duration_since(Instant::now()) {
        thread::sleep(left);
    }
}
