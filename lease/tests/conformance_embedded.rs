//! The embedded registry passes the registry conformance suite, one check per test so the
//! checks run side by side.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use ferroflake_lease::conformance::{self, Namespace, Timing};
use ferroflake_lease::{EmbeddedRegistry, Registry};

/// Fresh registry directories under one temporary root; losing the records deletes the
/// whole directory, as logind or a tmp cleaner would, losing the node records deletes
/// the records file alone, and connecting again opens the directory again.
fn namespaces() -> (tempfile::TempDir, impl Fn() -> Namespace) {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let root = tempfile::tempdir().unwrap();
    let base: PathBuf = root.path().to_owned();
    let fresh = move || {
        let dir = base.join(format!("ns{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        let registry: Arc<dyn Registry> = Arc::new(EmbeddedRegistry::open(&dir).unwrap());
        let records = dir.join("leases.json");
        let again = dir.clone();
        Namespace::new(registry, move || std::fs::remove_dir_all(&dir).unwrap())
            .with_node_loss(move || std::fs::remove_file(&records).unwrap())
            .with_reconnect(move || Arc::new(EmbeddedRegistry::open(&again).unwrap()))
    };
    (root, fresh)
}

macro_rules! checks {
    ($($check:ident),* $(,)?) => {$(
        #[test]
        fn $check() {
            let (_root, fresh) = namespaces();
            conformance::$check(&fresh, Timing::fast());
        }
    )*};
}

checks!(
    exclusive_claims,
    concurrent_claims_are_exclusive,
    no_free_node,
    renew_and_release,
    lost_after_expiry_and_takeover,
    quarantine_holds_expired_ids,
    high_water_mark_carried,
    fresh_ids_first_then_lowest_mark,
    no_renewal_after_expiry,
    new_namespace_has_a_floor,
    records_lost_under_a_live_holder,
    floor_covers_the_longest_ttl,
    restored_starts_a_floor,
    list_shows_holders_and_states,
    list_shows_claim_and_renewal_times,
    preferred_node_first_if_free,
    wall_clock_is_the_registrys,
    identity_is_kept_in_the_records,
    reservations_are_never_claimed,
    reservations_race_claims,
);
