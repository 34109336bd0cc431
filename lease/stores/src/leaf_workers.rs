//! The worker ids a Leaf snowflake fleet holds in ZooKeeper, read so that they can be
//! reserved ([`Registry::reserve`](ferroflake_lease::Registry::reserve)) while that fleet
//! still runs beside ferroflake.
//!
//! A Leaf server (Meituan's `SnowflakeZookeeperHolder`) keeps one persistent sequential
//! znode per server under `/snowflake/{leaf.name}/forever`, named `IP:PORT-SEQUENCE`: the
//! sequence ZooKeeper appended is the server's worker id, and the node is never deleted, so
//! every worker id the fleet ever used is there. Its data is the server's last report,
//! `{"ip","port","timestamp"}`.

use std::collections::BTreeMap;

use ferroflake_lease::LeaseError;
use zookeeper_client::Error as ZkError;

use crate::blocking::{Blocking, CALL_TIMEOUT, CONNECT_TIMEOUT};
use crate::zookeeper::ZooKeeperRegistry;
use crate::StoreAddress;

/// One Leaf server's znode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafWorker {
    /// Its worker id: the znode's sequence number.
    pub worker_id: u64,
    /// The server's `IP:PORT`, as its znode names it.
    pub server: String,
}

/// The Leaf workers under `address`, `zk://host:port/snowflake/{leaf.name}` (Leaf's
/// `leaf.zk.list` and its name; the path may end in `/forever` too), by worker id.
///
/// # Errors
/// [`LeaseError::BadAddress`] for an address that is not a `zk://` one;
/// [`LeaseError::Unavailable`] if ZooKeeper does not answer; [`LeaseError::Store`] if the
/// path holds no Leaf workers, or a znode whose name is not `IP:PORT-SEQUENCE` (a tree
/// that is not Leaf's, or a server that would be missed).
pub fn leaf_workers(address: &str) -> Result<Vec<LeafWorker>, LeaseError> {
    let StoreAddress::ZooKeeper { hosts, root } = StoreAddress::parse(address)? else {
        return Err(LeaseError::BadAddress {
            address: crate::redact(address),
            detail: "Leaf keeps its workers in ZooKeeper: give zk://host:port/snowflake/NAME"
                .into(),
        });
    };
    let forever = if root.ends_with("/forever") {
        root
    } else {
        format!("{root}/forever")
    };
    let io = Blocking::new("zookeeper")?;
    let client = io.run(
        "connecting to ZooKeeper",
        CONNECT_TIMEOUT,
        ZooKeeperRegistry::open(&io, &hosts),
    )?;
    let names = io.run("listing Leaf's workers", CALL_TIMEOUT, async {
        match client.list_children(&forever).await {
            Ok(names) => Ok(names),
            Err(ZkError::NoNode) => Ok(Vec::new()),
            Err(e) => Err(io.unavailable(format!("listing {forever}: {e}"))),
        }
    })?;
    if names.is_empty() {
        return Err(io.store_error(format!(
            "no Leaf workers under {forever} on {hosts}: give the path Leaf uses, \
             zk://HOST:PORT/snowflake/ and its leaf.name"
        )));
    }
    let mut workers = BTreeMap::new();
    for name in names {
        let worker = parse(&name).ok_or_else(|| {
            io.store_error(format!(
                "znode {forever}/{name} is not a Leaf worker's (IP:PORT-SEQUENCE); \
                 nothing was reserved"
            ))
        })?;
        workers.insert((worker.worker_id, worker.server.clone()), worker);
    }
    Ok(workers.into_values().collect())
}

/// How many digits ZooKeeper gives a sequential znode's number.
const SEQUENCE_DIGITS: usize = 10;

/// A worker from its znode's name, `IP:PORT-SEQUENCE`: the sequence is ZooKeeper's (10
/// digits), after the last `-`.
fn parse(name: &str) -> Option<LeafWorker> {
    let (server, sequence) = name.rsplit_once('-')?;
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    let (host, port) = server.rsplit_once(':')?;
    let server_named = !host.is_empty() && !host.ends_with('-') && digits(port);
    if !(sequence.len() == SEQUENCE_DIGITS && digits(sequence) && server_named) {
        return None;
    }
    Some(LeafWorker {
        worker_id: sequence.parse().ok()?,
        server: server.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_ids_are_the_sequence_after_the_last_dash() {
        assert_eq!(
            parse("10.0.0.7:8080-0000000012"),
            Some(LeafWorker {
                worker_id: 12,
                server: "10.0.0.7:8080".into()
            })
        );
        assert_eq!(
            parse("[fe80::1]:8080-0000000003").map(|w| w.worker_id),
            Some(3)
        );
        for bad in [
            "10.0.0.7:8080",
            "10.0.0.7:8080-",
            "10.0.0.7:8080-12a",
            "10.0.0.7:8080-12",
            "-0000000001",
            "x-1",
            "1.2.3.4:80--0000000001",
            ":-0000000009",
            "1.2.3.4:-0000000009",
            "1.2.3.4:http-0000000009",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
