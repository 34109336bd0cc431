//! The service's lease registry, through `ferroflake+http://` ([`RemoteRegistry`]), shows
//! the behaviour every registry must: the registry conformance suite, each namespace a
//! service of its own over a fresh embedded registry, its records lost by deleting that
//! registry's directory (or its records file) under the running service.

mod common;

use std::sync::{Arc, Mutex};

use common::{Place, Server};
use ferroflake_lease::conformance::{self, Namespace, Timing};
use ferroflake_lease::Registry;
use ferroflake_remote::RemoteRegistry;

/// A factory of namespaces, each the lease routes of a new service (segment mode only, so
/// that the service holds no node id of its own) over a new embedded registry; the
/// services live as long as the factory.
struct Services(Mutex<Vec<(Server, Place)>>);

impl Services {
    fn fresh(&self) -> Namespace {
        let place = Place::new();
        let mut config = place.config();
        config.snowflake = false;
        let server = place.start(config);
        let registry: Arc<dyn Registry> =
            Arc::new(RemoteRegistry::open(&format!("ferroflake+http://{}/", server.addr)).unwrap());
        let dir = place.lease_dir();
        let records = dir.join("leases.json");
        self.0.lock().unwrap().push((server, place));
        Namespace::new(registry, move || std::fs::remove_dir_all(&dir).unwrap())
            .with_node_loss(move || std::fs::remove_file(&records).unwrap())
    }
}

macro_rules! checks {
    ($($check:ident),* $(,)?) => {$(
        #[test]
        fn $check() {
            let services = Services(Mutex::new(Vec::new()));
            conformance::$check(&|| services.fresh(), Timing::fast());
            for (server, _place) in services.0.into_inner().unwrap() {
                server.stop();
            }
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
    reservations_are_never_claimed,
    reservations_race_claims,
);
