//! The lease conformance suite of ferroflake-lease, run against each real server, one
//! `#[test]` per check and store so that they run side by side. Losing records deletes
//! the namespace from outside (see `common::lose_records`); connecting again connects to
//! the namespace's address anew.
//! Needs the servers of scripts/test-lease-stores.sh, hence `#[ignore]`.

mod common;

use std::sync::Arc;
use std::time::Duration;

use ferroflake_lease::conformance::{Namespace, Timing};
use ferroflake_lease::Registry;

fn fresh(backend: &'static str) -> impl Fn() -> Namespace {
    let base = common::base_url(backend);
    move || {
        let url = common::namespaced(backend, &base, &common::unique("conf"));
        let registry: Arc<dyn Registry> =
            ferroflake_lease_stores::connect(&url).unwrap_or_else(|e| panic!("connect {url}: {e}"));
        let nodes_url = url.clone();
        let again = url.clone();
        Namespace::new(registry, move || common::lose_records(backend, &url))
            .with_node_loss(move || common::lose_node_records(&nodes_url))
            .with_reconnect(move || {
                ferroflake_lease_stores::connect(&again)
                    .unwrap_or_else(|e| panic!("connect {again} again: {e}"))
            })
    }
}

fn timing(backend: &str) -> Timing {
    match backend {
        // etcd counts lease TTLs in whole seconds and raises short ones to about 2 s; it
        // sweeps expired leases every 500 ms.
        "etcd" => Timing {
            ttl: Duration::from_secs(2),
            quarantine: Duration::from_secs(3),
            slack: Duration::from_millis(1200),
        },
        // Expiry is judged on the server's clock from the claim's own write, which may
        // land a few hundred ms after the check's start on a loaded machine.
        "zookeeper" => Timing {
            ttl: Duration::from_millis(800),
            quarantine: Duration::from_millis(1000),
            slack: Duration::from_millis(400),
        },
        // A round trip must fit in half the TTL (the renewal's time limit) on a loaded
        // machine: 1 s rather than Timing::fast's 600 ms.
        _ => Timing {
            ttl: Duration::from_secs(1),
            quarantine: Duration::from_secs(1),
            slack: Duration::from_millis(300),
        },
    }
}

macro_rules! checks {
    ($backend:ident: $($check:ident),* $(,)?) => {
        mod $backend {
            use super::*;
            $(
                #[test]
                #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
                fn $check() {
                    let name = stringify!($backend);
                    ferroflake_lease::conformance::$check(&fresh(name), timing(name));
                }
            )*
        }
    };
}

macro_rules! all_checks {
    ($($backend:ident),*) => {$(
        checks!($backend:
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
    )*};
}

all_checks!(etcd, redis, zookeeper, postgres);
