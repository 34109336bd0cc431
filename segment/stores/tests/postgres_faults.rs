//! The PostgreSQL store against a server configured against it: `fsync` off, under which
//! a crash may undo commits the server acknowledged, and with them ranges handed out.
//!
//! Needs the test server of scripts/servers/ctl.sh (`FERROFLAKE_TEST_POSTGRES`), hence
//! `#[ignore]`; the suite runs this file alone, as the setting is the server's.

mod common;

use std::time::{Duration, Instant};

use ferroflake_segment_stores::{open_address, StoreAddress};

/// Runs each statement on its own (`ALTER SYSTEM` refuses a transaction).
fn admin(statements: &[&str]) {
    let url = common::base_url("postgres");
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    for sql in statements {
        admin.batch_execute(sql).unwrap();
    }
}

/// `fsync = off` for as long as it lives.
struct FsyncOff;

impl FsyncOff {
    /// Sets it, and waits (at most 10 s) until a new session sees it: the reload reaches
    /// the server's processes by a signal.
    fn set() -> Self {
        admin(&["ALTER SYSTEM SET fsync = off", "SELECT pg_reload_conf()"]);
        let url = common::base_url("postgres");
        let give_up = Instant::now() + Duration::from_secs(10);
        loop {
            let mut session = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            let fsync: String = session.query_one("SHOW fsync", &[]).unwrap().get(0);
            if fsync == "off" {
                return FsyncOff;
            }
            assert!(Instant::now() < give_up, "the server kept fsync {fsync}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for FsyncOff {
    fn drop(&mut self) {
        admin(&["ALTER SYSTEM RESET fsync", "SELECT pg_reload_conf()"]);
    }
}

#[test]
#[ignore = "needs a PostgreSQL server: FERROFLAKE_TEST_POSTGRES"]
fn a_server_that_may_lose_commits_is_refused_unless_accepted() {
    let table = common::unique("fsync");
    let address = format!("{}?table={table}", common::base_url("postgres"));
    let _off = FsyncOff::set();
    let Err(refused) = open_address(&StoreAddress::parse(&address).unwrap()) else {
        panic!("a server that may lose commits was taken");
    };
    assert_eq!(refused.name(), "INVALID_CONFIG", "{refused}");
    assert!(refused.to_string().contains("fsync is off"), "{refused}");
    let accepted = format!("{address}&accept=lost-writes");
    let store = open_address(&StoreAddress::parse(&accepted).unwrap()).unwrap();
    store.create("k", 1, 10).unwrap();
    assert_eq!(store.allocate("k", 10).unwrap().range.start, 1);
}

#[test]
#[ignore = "needs a PostgreSQL server: FERROFLAKE_TEST_POSTGRES"]
fn a_view_over_the_table_is_refused() {
    let (table, alias) = (common::unique("based"), common::unique("alias"));
    let base = common::base_url("postgres");
    let store = open_address(&StoreAddress::parse(&format!("{base}?table={table}")).unwrap());
    store.unwrap().create("k", 1, 10).unwrap();
    admin(&[&format!("CREATE VIEW {alias} AS SELECT * FROM {table}")]);
    let address = format!("{base}?table={alias}");
    let Err(refused) = open_address(&StoreAddress::parse(&address).unwrap()) else {
        panic!("a view was taken for a table of its own");
    };
    assert_eq!(refused.name(), "INVALID_CONFIG", "{refused}");
    assert!(refused.to_string().contains("is a view"), "{refused}");
}
