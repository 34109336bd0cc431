//! The lease conformance suite of ferroflake-lease, run against each real server.
//! Needs the servers of scripts/test-lease-stores.sh, hence `#[ignore]`.

mod common;

use std::sync::Arc;
use std::time::Duration;

use ferroflake_lease::conformance::{run_all, Timing};
use ferroflake_lease::Registry;

fn check(backend: &str, timing: Timing) {
    let base = common::base_url(backend);
    let fresh = || -> Arc<dyn Registry> {
        let url = common::namespaced(backend, &base, &common::unique("conf"));
        ferroflake_lease_stores::connect(&url).unwrap_or_else(|e| panic!("connect {url}: {e}"))
    };
    run_all(&fresh, timing);
}

#[test]
#[ignore = "needs the etcd server of scripts/test-lease-stores.sh"]
fn etcd_conforms() {
    // etcd counts lease TTLs in whole seconds and raises short ones to about 2 s; it
    // sweeps expired leases every 500 ms.
    check(
        "etcd",
        Timing {
            ttl: Duration::from_secs(2),
            quarantine: Duration::from_secs(3),
            slack: Duration::from_millis(1200),
        },
    );
}

#[test]
#[ignore = "needs the Redis server of scripts/test-lease-stores.sh"]
fn redis_conforms() {
    check("redis", Timing::fast());
}

#[test]
#[ignore = "needs the ZooKeeper server of scripts/test-lease-stores.sh"]
fn zookeeper_conforms() {
    check(
        "zookeeper",
        Timing {
            // Expiry is judged on the server's clock from the claim's own write, which may
            // land a few hundred ms after the check's start on a loaded machine.
            ttl: Duration::from_millis(800),
            quarantine: Duration::from_millis(1000),
            slack: Duration::from_millis(400),
        },
    );
}

#[test]
#[ignore = "needs the PostgreSQL server of scripts/test-lease-stores.sh"]
fn postgres_conforms() {
    check("postgres", Timing::fast());
}
