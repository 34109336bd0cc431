//! A store restored from a backup while holders run: the restored records have forgotten
//! the claims made since, and must not hand a live holder's node id to a new process
//! with no wait. What a store can tell by itself is tested here; a store restored whole
//! needs `ferroflake lease restored` (the conformance check `restored_starts_a_floor`).
//! Needs the servers of scripts/test-lease-stores.sh (and `FF_SERVERS_DIR`, to stop,
//! restore and start them), hence `#[ignore]`. The etcd and ZooKeeper tests bring their
//! whole server back to an older state: run them with no other test on that server.

mod common;

use std::time::{Duration, Instant};

use common::strikes::{self, ctl};
use ferroflake_lease::{LeaseRequest, Renewal};
use ferroflake_lease_stores::StoreAddress;

const TTL: Duration = Duration::from_secs(2);

/// A TTL that outlasts stopping, restoring and starting a server (and the writes after):
/// a live holder must still be within it when the claims come, or they prove nothing.
const SLOW_RESTORE_TTL: Duration = Duration::from_secs(12);

fn request() -> LeaseRequest {
    request_for(TTL)
}

fn request_for(ttl: Duration) -> LeaseRequest {
    LeaseRequest {
        node_count: 4,
        ttl,
        quarantine: Duration::from_secs(1),
        holder: "restore test".into(),
        max_ttl: ttl,
        prefer_node: None,
    }
}

/// Which connection claims first after a restore (only the first claim's own check
/// counts: the floor it starts covers the second).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum First {
    /// A new process: a connection made after the restore.
    NewConnection,
    /// A process connected since before the backup.
    OldConnection,
}

/// The store holds one claim made after its backup and renewed since; `restore` brings
/// the store back to the backup. A claim through a new connection (a new process), and
/// one through the connection made before, must then wait until that holder has stopped.
/// The live holder has a TTL (and max_ttl) of `ttl`, which must outlast `restore`; the
/// others, before and after, of `others_ttl`: a shorter one makes the claims after the
/// restore floor by a window the restored records no longer know.
fn restored_store_makes_claims_wait(
    backend: &str,
    first: First,
    ttl: Duration,
    others_ttl: Duration,
    backup: impl FnOnce(&StoreAddress),
    restore: impl FnOnce(&StoreAddress),
) {
    let base = common::base_url(backend);
    let url = common::namespaced(backend, &base, &common::unique("restore"));
    let address = StoreAddress::parse(&url).unwrap();
    let registry = ferroflake_lease_stores::connect(&url).unwrap();
    let request = request_for(others_ttl);
    let settled = common::settled_claim(registry.as_ref(), &request);
    backup(&address);
    let live = registry.acquire(&request_for(ttl)).unwrap();
    let renewed = Instant::now();
    registry.renew(&live, &Renewal::new(ttl, 0)).unwrap();
    restore(&address);
    assert!(
        renewed.elapsed() < ttl,
        "restoring {backend} took {:?}, past the holders' TTL {ttl:?}: the test proves nothing",
        renewed.elapsed()
    );
    let newcomer = ferroflake_lease_stores::connect(&url).unwrap();
    let mut order = [
        ("a new connection", newcomer),
        ("the connection made before", registry),
    ];
    if first == First::OldConnection {
        order.reverse();
    }
    for (through, registry) in order {
        let asked = Instant::now();
        let claim = registry.acquire(&request).unwrap();
        assert!(
            asked + claim.floor_wait >= renewed + ttl,
            "after {backend} was restored from a backup a claim through {through} must wait \
             until the holders it forgot have stopped (TTL {ttl:?}); node {} (live holders on \
             nodes {} and {}) waits {:?}, {:?} short",
            claim.node_id,
            settled.node_id,
            live.node_id,
            claim.floor_wait,
            (renewed + ttl).saturating_duration_since(asked + claim.floor_wait)
        );
    }
}

/// What follows an etcd restore before the next claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AfterRestore {
    /// Nothing: the raft index is behind the recorded one.
    Nothing,
    /// Puts, enough to carry the new raft log's index past the recorded one.
    Writes,
    /// Lease grants (entries that write nothing), enough to widen the gap between raft
    /// index and revision past the recorded one; the server was restarted first, so its
    /// raft term had moved past the first ones a restored cluster has.
    LeaseGrants,
}

/// etcd restored with `etcdutl snapshot restore` (or `etcdctl`, before etcd 3.6) from a
/// `etcdctl snapshot save` into a new data directory, under the member's name and peer
/// address as before: the same cluster id, the revision and raft index back where they
/// were (or lower). After writes, the forgotten holder asked for a wider window than any
/// before it (the restored `window` key forgot it).
fn etcd_restored(after: AfterRestore) {
    let writes_after = after != AfterRestore::Nothing;
    // One restore of the server at a time (nextest runs each test alone in its process;
    // the test group in .config/nextest.toml keeps these apart there).
    static SERVER: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _alone = SERVER.lock().unwrap_or_else(|p| p.into_inner());
    let scratch = tempfile::tempdir().unwrap();
    let snapshot = scratch.path().join("snapshot.db");
    let endpoint = |address: &StoreAddress| match address {
        StoreAddress::Etcd { endpoint, .. } => endpoint.clone(),
        other => panic!("not an etcd address: {other:?}"),
    };
    let others_ttl = if writes_after { TTL } else { SLOW_RESTORE_TTL };
    if after == AfterRestore::LeaseGrants {
        // A restart raises the raft term, as any election does, before anything here is
        // recorded: the snapshot's records then name a term a restored cluster is below.
        ctl("stop", "etcd");
        ctl("start", "etcd");
    }
    restored_store_makes_claims_wait(
        "etcd",
        First::NewConnection,
        SLOW_RESTORE_TTL,
        others_ttl,
        |address| strikes::etcd_snapshot_save(&endpoint(address), &snapshot),
        |address| {
            let endpoint = endpoint(address);
            let index_before = etcd_raft_index(&endpoint);
            strikes::etcd_snapshot_restore(&endpoint, &snapshot);
            let index_after = etcd_raft_index(&endpoint);
            assert!(
                index_after < index_before,
                "the restore started a new raft log ({index_after} after, {index_before} before)"
            );
            if after != AfterRestore::Nothing {
                let index = etcd_add_until_index(&endpoint, after, index_before + 10);
                assert!(index > index_before);
            }
        },
    );
}

#[test]
#[ignore = "needs etcd and FF_SERVERS_DIR: run by scripts/test-lease-stores.sh"]
fn etcd_restored_from_a_snapshot_makes_claims_wait() {
    etcd_restored(AfterRestore::Nothing);
}

/// The raft index alone says nothing once the restored log has grown past the index the
/// last claim recorded: the revision, restored with the keys, still tells.
#[test]
#[ignore = "needs etcd and FF_SERVERS_DIR: run by scripts/test-lease-stores.sh"]
fn etcd_restored_from_a_snapshot_makes_claims_wait_after_many_writes() {
    etcd_restored(AfterRestore::Writes);
}

/// Entries that write nothing (lease grants) widen the gap between raft index and
/// revision again, so the gap alone says nothing after enough of them: the raft term,
/// which a restored cluster starts again, still tells.
#[test]
#[ignore = "needs etcd and FF_SERVERS_DIR: run by scripts/test-lease-stores.sh"]
fn etcd_restored_from_a_snapshot_makes_claims_wait_after_many_lease_grants() {
    etcd_restored(AfterRestore::LeaseGrants);
}

fn etcd_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The raft index of the etcd member at `endpoint` (`http://host:port`).
fn etcd_raft_index(endpoint: &str) -> u64 {
    etcd_runtime().block_on(async {
        let mut client = etcd_client::Client::connect([endpoint], None)
            .await
            .unwrap();
        client.status().await.unwrap().raft_index()
    })
}

/// Adds raft entries, puts or lease grants (entries that write no key) as `entries`
/// says, until the member's raft index reaches `index`; returns the index reached.
fn etcd_add_until_index(endpoint: &str, entries: AfterRestore, index: u64) -> u64 {
    etcd_runtime().block_on(async {
        let mut client = etcd_client::Client::connect([endpoint], None)
            .await
            .unwrap();
        loop {
            let reached = client.status().await.unwrap().raft_index();
            if reached >= index {
                return reached;
            }
            for _ in 0..reached.abs_diff(index).min(500) {
                match entries {
                    AfterRestore::Nothing => return reached,
                    AfterRestore::Writes => {
                        client.put("restores-scratch", "x", None).await.unwrap();
                    }
                    AfterRestore::LeaseGrants => {
                        client.lease_grant(60, None).await.unwrap();
                    }
                }
            }
        }
    })
}

/// The lease table dumped with `pg_dump -t` and restored with `psql` (dropped and made
/// again with the old rows) while a holder the dump never saw runs.
#[test]
#[ignore = "needs PostgreSQL: run by scripts/test-lease-stores.sh"]
fn a_table_restored_from_a_dump_makes_claims_wait() {
    let base = common::base_url("postgres");
    let url = common::namespaced("postgres", &base, &common::unique("restore"));
    let registry = ferroflake_lease_stores::connect(&url).unwrap();
    let first = common::settled_claim(registry.as_ref(), &request());
    let dump = tempfile::NamedTempFile::new().unwrap();
    strikes::pg_dump_table(&url, dump.path());
    let live = registry.acquire(&request()).unwrap();
    registry.renew(&live, &Renewal::new(TTL, 0)).unwrap();
    strikes::pg_restore_table(&url, dump.path());
    let asked = Instant::now();
    let newcomer = registry.acquire(&request()).unwrap();
    assert!(
        asked + newcomer.floor_wait >= Instant::now() + TTL,
        "after the table was restored from a dump a claim must wait until the holders it \
         forgot have stopped (TTL {TTL:?}); node {} (live holders on nodes {} and {}) waits \
         {:?}",
        newcomer.node_id,
        first.node_id,
        live.node_id,
        newcomer.floor_wait
    );
}

/// ZooKeeper's data directory copied aside while it runs, more written, the server
/// stopped, the copy put back and the server started: the znodes, and the zxid, go back to
/// the copy.
fn zookeeper_restored(first: First) {
    // One restore of the server at a time (nextest runs each test alone in its process;
    // the test group in .config/nextest.toml keeps these apart there).
    static SERVER: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _alone = SERVER.lock().unwrap_or_else(|p| p.into_inner());
    let scratch = tempfile::tempdir().unwrap();
    let copy = scratch.path().join("zookeeper");
    restored_store_makes_claims_wait(
        "zookeeper",
        first,
        SLOW_RESTORE_TTL,
        SLOW_RESTORE_TTL,
        |_| strikes::zk_copy_data_dir(&copy),
        |_| strikes::zk_put_back_data_dir(&copy, false),
    );
}

#[test]
#[ignore = "needs ZooKeeper and FF_SERVERS_DIR: run by scripts/test-lease-stores.sh"]
fn zookeeper_restored_from_a_copied_data_directory_makes_new_claims_wait() {
    zookeeper_restored(First::NewConnection);
}

/// A session made before the restore, which the restored server still knows, shows the
/// server's earlier start: the claim must not trust it.
#[test]
#[ignore = "needs ZooKeeper and FF_SERVERS_DIR: run by scripts/test-lease-stores.sh"]
fn zookeeper_restored_from_a_copied_data_directory_makes_old_sessions_wait() {
    zookeeper_restored(First::OldConnection);
}
