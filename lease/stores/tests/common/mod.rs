//! What the store tests share: server addresses from the environment, fresh namespaces.

#![allow(dead_code)]

// The probe binary exists only with the `probe` feature.
pub mod pg_pair;
#[cfg(feature = "probe")]
pub mod probes;
pub mod redis_pair;
pub mod strikes;

#[allow(unused_imports)] // each test file uses part of it
pub use ferroflake_test_support::{base_url, unique};

/// `base` with a fresh namespace in the form each backend takes.
pub fn namespaced(backend: &str, base: &str, name: &str) -> String {
    match backend {
        "etcd" | "zookeeper" => format!("{}/ferroflake-test/{name}", base.trim_end_matches('/')),
        "redis" => format!("{base}?prefix={name}"),
        "postgres" => format!("{base}?table={}", name.to_lowercase()),
        other => panic!("unknown backend {other}"),
    }
}

/// Deletes every record of the namespace at `url` (made by [`namespaced`]) from outside,
/// as an operator would: `etcdctl del --prefix`, `DEL` of the Redis prefix's keys, a
/// recursive delete of the ZooKeeper base znode, `DELETE FROM` the PostgreSQL table.
pub fn lose_records(backend: &str, url: &str) {
    use std::process::Command;
    let run = |cmd: &mut Command| {
        let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        assert!(
            out.status.success(),
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    match ferroflake_lease_stores::StoreAddress::parse(url).unwrap() {
        ferroflake_lease_stores::StoreAddress::Etcd { endpoint, prefix } => {
            run(Command::new("etcdctl").args([
                "--endpoints",
                &endpoint,
                "del",
                "--prefix",
                &prefix,
            ]))
        }
        ferroflake_lease_stores::StoreAddress::Redis { url, prefix } => {
            run(Command::new("redis-cli")
                .args(["-u", &url, "EVAL"])
                .arg("for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end")
                .args(["0", &format!("{prefix}*")]))
        }
        ferroflake_lease_stores::StoreAddress::ZooKeeper { hosts, root } => {
            zk_delete_all(&hosts, &root)
        }
        ferroflake_lease_stores::StoreAddress::Postgres { url, table } => {
            run(Command::new("psql").args([&url, "-qc", &format!("DELETE FROM {table}")]))
        }
        other => panic!("unknown address {other:?}"),
    }
    let _ = backend;
}

/// Deletes the records of the node ids of the namespace at `url` from outside, keeping
/// the namespace marker and the lost-records window: `etcdctl del` of the per-id key
/// prefixes, `DEL` of the Redis `node:` keys, a delete of the ZooKeeper `nodes/` children,
/// `DELETE FROM` the PostgreSQL table's id rows.
pub fn lose_node_records(url: &str) {
    use std::process::Command;
    let run = |cmd: &mut Command| {
        let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        assert!(
            out.status.success(),
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    match ferroflake_lease_stores::StoreAddress::parse(url).unwrap() {
        ferroflake_lease_stores::StoreAddress::Etcd { endpoint, prefix } => {
            // The claims last: a holder that finds its claim gone before the rest is
            // deleted would stop before a newcomer could meet it.
            for kind in ["holders", "marks", "epochs", "floors", "claims"] {
                run(Command::new("etcdctl").args([
                    "--endpoints",
                    &endpoint,
                    "del",
                    "--prefix",
                    &format!("{prefix}/{kind}/"),
                ]))
            }
        }
        ferroflake_lease_stores::StoreAddress::Redis { url, prefix } => {
            run(Command::new("redis-cli")
                .args(["-u", &url, "EVAL"])
                .arg("for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end")
                .args(["0", &format!("{prefix}node:*")]))
        }
        ferroflake_lease_stores::StoreAddress::ZooKeeper { hosts, root } => {
            let nodes = format!("{root}/nodes");
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let children = runtime.block_on(async {
                let client = zookeeper_client::Client::connect(&hosts).await.unwrap();
                client.list_children(&nodes).await.unwrap()
            });
            for child in children {
                zk_delete_all(&hosts, &format!("{nodes}/{child}"));
            }
        }
        ferroflake_lease_stores::StoreAddress::Postgres { url, table } => run(Command::new("psql")
            .args([
                &url,
                "-qc",
                &format!("DELETE FROM {table} WHERE node_id >= 0"),
            ])),
        other => panic!("unknown address {other:?}"),
    }
}

/// Deletes `root` and everything under it.
pub fn zk_delete_all(hosts: &str, root: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = zookeeper_client::Client::connect(hosts).await.unwrap();
        let mut stack = vec![root.to_owned()];
        let mut order = Vec::new();
        while let Some(path) = stack.pop() {
            match client.list_children(&path).await {
                Ok(children) => {
                    stack.extend(children.iter().map(|c| format!("{path}/{c}")));
                    order.push(path);
                }
                Err(zookeeper_client::Error::NoNode) => {}
                Err(e) => panic!("listing {path}: {e}"),
            }
        }
        for path in order.iter().rev() {
            match client.delete(path, None).await {
                Ok(()) | Err(zookeeper_client::Error::NoNode) => {}
                Err(e) => panic!("deleting {path}: {e}"),
            }
        }
    });
}

/// Claims under `request` until a claim waits out no floor (the new namespace's, and a
/// new server's, have passed), giving back those that would wait; returns that claim,
/// held.
pub fn settled_claim(
    registry: &dyn ferroflake_lease::Registry,
    request: &ferroflake_lease::LeaseRequest,
) -> ferroflake_lease::Grant {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let asked = std::time::Instant::now();
        let grant = registry.acquire(request).unwrap();
        if grant.floor_wait.is_zero() {
            return grant;
        }
        registry.release(&grant, 0).unwrap();
        assert!(asked < give_up, "the floors never ended");
        std::thread::sleep(grant.floor_wait);
    }
}
