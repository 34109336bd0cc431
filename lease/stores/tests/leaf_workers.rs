//! A Leaf fleet's worker ids, read from a ZooKeeper tree this test writes as Leaf's
//! `SnowflakeZookeeperHolder` does (persistent sequential znodes named `IP:PORT-` under
//! `/snowflake/{leaf.name}/forever`, each holding its server's last report), reserved in a
//! registry, and skipped by its claims. Needs the ZooKeeper of
//! scripts/test-lease-stores.sh, hence `#[ignore]`.

mod common;

use std::time::Duration;

use ferroflake_lease::{LeaseError, LeaseRequest, Reservation};
use zookeeper_client::{Acls, Client, CreateMode};

/// Writes Leaf's tree for `servers` under `/snowflake/{name}` (in that order, so each
/// gets the next sequence) and returns the worker id ZooKeeper gave each.
fn write_leaf_tree(hosts: &str, name: &str, servers: &[&str]) -> Vec<u64> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = Client::connect(hosts).await.unwrap();
        let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
        let forever = format!("/snowflake/{name}/forever");
        client.mkdir(&forever, &persistent).await.unwrap();
        let sequential = CreateMode::PersistentSequential.with_acls(Acls::anyone_all());
        let mut ids = Vec::new();
        for server in servers {
            let (ip, port) = server.split_once(':').unwrap();
            let report = format!(r#"{{"ip":"{ip}","port":"{port}","timestamp":1700000000000}}"#);
            let (_, sequence) = client
                .create(
                    &format!("{forever}/{server}-"),
                    report.as_bytes(),
                    &sequential,
                )
                .await
                .unwrap();
            ids.push(sequence.into_i64() as u64);
        }
        ids
    })
}

#[test]
#[ignore = "needs the servers of scripts/test-lease-stores.sh"]
fn leaf_workers_are_read_and_reserved() {
    let base = common::base_url("zookeeper");
    let hosts = base.trim_start_matches("zk://").trim_end_matches('/');
    let name = common::unique("leaf");
    let ids = write_leaf_tree(hosts, &name, &["10.0.0.7:8080", "10.0.0.8:8080"]);
    assert_eq!(ids, [0, 1], "a new tree numbers its workers from 0");

    for address in [
        format!("{base}/snowflake/{name}"),
        format!("{base}/snowflake/{name}/forever"),
    ] {
        let workers = ferroflake_lease_stores::leaf_workers(&address).unwrap();
        let found: Vec<(u64, &str)> = workers
            .iter()
            .map(|w| (w.worker_id, w.server.as_str()))
            .collect();
        assert_eq!(found, [(0, "10.0.0.7:8080"), (1, "10.0.0.8:8080")]);
    }
    match ferroflake_lease_stores::leaf_workers(&format!("{base}/snowflake/{name}-none")) {
        Err(LeaseError::Store { detail, .. }) => assert!(detail.contains("no Leaf workers")),
        other => panic!("a path with no workers must be refused, got {other:?}"),
    }

    // Reserved in a ferroflake registry on the same ZooKeeper, the workers' ids are
    // skipped by every claim.
    let url = common::namespaced("zookeeper", &base, &common::unique("leafres"));
    let registry = ferroflake_lease_stores::connect(&url).unwrap();
    for worker in
        ferroflake_lease_stores::leaf_workers(&format!("{base}/snowflake/{name}")).unwrap()
    {
        let holder = format!("leaf {}", worker.server);
        assert_eq!(
            registry.reserve(worker.worker_id, &holder).unwrap(),
            Reservation::Made
        );
    }
    let request = LeaseRequest {
        node_count: 3,
        ttl: Duration::from_secs(10),
        quarantine: Duration::from_secs(2),
        holder: "new fleet".into(),
        max_ttl: Duration::from_secs(10),
        prefer_node: Some(0),
    };
    assert_eq!(registry.acquire(&request).unwrap().node_id, 2);
    assert!(matches!(
        registry.acquire(&request),
        Err(LeaseError::NoFreeNode { node_count: 3 })
    ));
    let listed = registry.list().unwrap();
    assert_eq!(
        listed.node(1).and_then(|n| n.holder.as_deref()),
        Some("leaf 10.0.0.8:8080")
    );
    common::zk_delete_all(hosts, &format!("/snowflake/{name}"));
}
