//! A Redis primary fails over to a replica that lags behind it: the replica, promoted,
//! has not seen the latest claims, so it would hand a live holder's node id to a new
//! process at once. A promoted replica takes a new replication id, and the registry,
//! finding records written under another one, makes claims wait out a floor.
//!
//! Runs its own primary and replica (`redis-server` on free loopback ports), so it needs
//! no shared server; `#[ignore]`d with the other server tests.

mod common;

use std::time::{Duration, Instant};

use common::redis_pair::Server;
use ferroflake_lease::{LeaseRequest, Renewal};
use ferroflake_lease_stores::StoreAddress;

const TTL: Duration = Duration::from_secs(2);
const QUARANTINE: Duration = Duration::from_secs(1);

fn request(node_count: u64) -> LeaseRequest {
    LeaseRequest {
        node_count,
        ttl: TTL,
        quarantine: QUARANTINE,
        holder: "redis failover test".into(),
        max_ttl: TTL,
        prefer_node: None,
    }
}

#[test]
#[ignore = "starts its own redis-server pair; run by scripts/test-lease-stores.sh"]
fn a_promoted_lagging_replica_makes_claims_wait() {
    let primary = Server::start(&[]);
    let replica = Server::start(&["--replicaof", "127.0.0.1", &primary.port.to_string()]);
    replica.wait_for("INFO replication", "master_link_status:up");
    let prefix = common::unique("failover");
    let on_primary = ferroflake_lease_stores::connect(&primary.url(&prefix)).unwrap();
    let first = common::settled_claim(on_primary.as_ref(), &request(4));
    on_primary.renew(&first, &Renewal::new(TTL, 0)).unwrap();
    // The replica has the first claim; then it stops following and lags from here on.
    let Ok(StoreAddress::Redis { prefix: keys, .. }) = StoreAddress::parse(&primary.url(&prefix))
    else {
        panic!("a redis address");
    };
    replica.wait_for(&format!("EXISTS {keys}node:{}", first.node_id), "1");
    replica.cli(&["REPLICAOF", "NO", "ONE"]);
    replica.wait_for("INFO replication", "role:master");
    let live = on_primary.acquire(&request(4)).unwrap();
    on_primary.renew(&live, &Renewal::new(TTL, 0)).unwrap();
    // Clients now reach the promoted replica, which never saw `live`'s claim.
    let on_replica = ferroflake_lease_stores::connect(&replica.url(&prefix)).unwrap();
    let asked = Instant::now();
    let newcomer = on_replica.acquire(&request(4)).unwrap();
    assert!(
        asked + newcomer.floor_wait >= Instant::now() + TTL,
        "after a failover to a lagging replica a claim must wait until every holder the \
         replica never saw has stopped (TTL {TTL:?}); node {} (live holder on node {}) \
         waits {:?}",
        newcomer.node_id,
        live.node_id,
        newcomer.floor_wait
    );
}

/// The replication id's record deleted (by hand, or a namespace an earlier version wrote):
/// nothing vouches for the records' history, so claims wait out a floor once.
#[test]
#[ignore = "starts its own redis-server; run by scripts/test-lease-stores.sh"]
fn a_deleted_history_makes_claims_wait() {
    let server = Server::start(&[]);
    let prefix = common::unique("history");
    let registry = ferroflake_lease_stores::connect(&server.url(&prefix)).unwrap();
    let live = common::settled_claim(registry.as_ref(), &request(4));
    let Ok(StoreAddress::Redis { prefix: keys, .. }) = StoreAddress::parse(&server.url(&prefix))
    else {
        panic!("a redis address");
    };
    server.cli(&["DEL", &format!("{keys}history")]);
    let newcomer = registry.acquire(&request(4)).unwrap();
    assert!(
        newcomer.floor_wait + Duration::from_millis(500) >= TTL,
        "a claim with no replication id on record must wait out a floor (live holder on node \
         {}), waits {:?}",
        live.node_id,
        newcomer.floor_wait
    );
}
