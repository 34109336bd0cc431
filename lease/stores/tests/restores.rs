//! A store restored from a backup while holders run: the restored records have forgotten
//! the claims made since, and must not hand a live holder's node id to a new process
//! with no wait. What a store can tell by itself is tested here; a store restored whole
//! needs `ferroflake lease restored` (the conformance check `restored_starts_a_floor`).
//! Needs the servers of scripts/test-lease-stores.sh, hence `#[ignore]`.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use ferroflake_lease::LeaseRequest;
use ferroflake_lease_stores::StoreAddress;

const TTL: Duration = Duration::from_secs(2);

fn request() -> LeaseRequest {
    LeaseRequest {
        node_count: 4,
        ttl: TTL,
        quarantine: Duration::from_secs(1),
        holder: "restore test".into(),
        max_ttl: TTL,
    }
}

fn run(command: &mut Command) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The lease table dumped with `pg_dump -t` and restored with `psql` (dropped and made
/// again with the old rows) while a holder the dump never saw runs.
#[test]
#[ignore = "needs PostgreSQL: run by scripts/test-lease-stores.sh"]
fn a_table_restored_from_a_dump_makes_claims_wait() {
    let base = common::base_url("postgres");
    let url = common::namespaced("postgres", &base, &common::unique("restore"));
    let Ok(StoreAddress::Postgres { url: db, table }) = StoreAddress::parse(&url) else {
        panic!("a postgres address");
    };
    let registry = ferroflake_lease_stores::connect(&url).unwrap();
    let first = common::settled_claim(registry.as_ref(), &request());
    let dump = tempfile::NamedTempFile::new().unwrap();
    run(Command::new("pg_dump")
        .args(["-d", &db, "-t", &table, "--clean", "--if-exists", "-f"])
        .arg(dump.path()));
    let live = registry.acquire(&request()).unwrap();
    registry.renew(&live, TTL, 0).unwrap();
    run(Command::new("psql")
        .args(["-d", &db, "-q", "-v", "ON_ERROR_STOP=1", "-f"])
        .arg(dump.path()));
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
