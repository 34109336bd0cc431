//! The MySQL/MariaDB store against a server configured against it: `autocommit` off for
//! every session (`SET GLOBAL autocommit = 0`, or `autocommit=0` in the server's options),
//! under which a plain `INSERT` or `UPDATE` stays uncommitted and is rolled back when the
//! connection closes; and a log not flushed at each commit, which a crash undoes.
//!
//! Needs the test server of scripts/servers/ctl.sh (`FERROFLAKE_TEST_MYSQL`), hence
//! `#[ignore]`; the suite runs this file alone, as the setting is the server's.

mod common;

use ferroflake_segment::Range;
use ferroflake_segment_stores::{open_address, StoreAddress};
use mysql::prelude::Queryable;

fn admin() -> mysql::Conn {
    let url = common::base_url("mysql");
    mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap()
}

/// `SET GLOBAL autocommit = 0` for as long as it lives.
struct AutocommitOff;

impl AutocommitOff {
    fn set() -> Self {
        admin().query_drop("SET GLOBAL autocommit = 0").unwrap();
        AutocommitOff
    }
}

impl Drop for AutocommitOff {
    fn drop(&mut self) {
        admin().query_drop("SET GLOBAL autocommit = 1").unwrap();
    }
}

#[test]
#[ignore = "needs a MySQL or MariaDB server: FERROFLAKE_TEST_MYSQL"]
fn autocommit_off_server_wide_loses_no_key_and_no_give_back() {
    let table = common::unique("autocommit");
    let address = format!("{}?table={table}", common::base_url("mysql"));
    let address = StoreAddress::parse(&address).unwrap();
    let off = AutocommitOff::set();
    let count = |admin: &mut mysql::Conn| -> i64 {
        // Another session, with autocommit off too: it sees only what was committed.
        let sql = format!("SELECT COUNT(*) FROM {table} WHERE biz_tag = 'k'");
        let seen = admin.query_first(sql).unwrap().unwrap();
        admin.query_drop("ROLLBACK").unwrap();
        seen
    };

    let store = open_address(&address).unwrap();
    store.create("k", 1, 10).unwrap();
    assert_eq!(count(&mut admin()), 1, "the created key is committed");
    drop(store);

    let store = open_address(&address).unwrap();
    let taken = store.allocate("k", 10).unwrap().range;
    let rest = Range {
        start: taken.start + 3,
        end: taken.end,
    };
    assert!(store.give_back("k", rest, taken.end).unwrap());
    drop(store);
    drop(off);
    let sql = format!("SELECT max_id FROM {table} WHERE biz_tag = 'k'");
    let max_id: u64 = admin().query_first(sql).unwrap().unwrap();
    assert_eq!(max_id, rest.start, "the give-back is committed");
}

/// `SET GLOBAL innodb_flush_log_at_trx_commit = 0` for as long as it lives.
struct FlushedEverySecond;

impl Drop for FlushedEverySecond {
    fn drop(&mut self) {
        admin()
            .query_drop("SET GLOBAL innodb_flush_log_at_trx_commit = 1")
            .unwrap();
    }
}

/// A server that flushes its log once a second, not at each commit, loses the last
/// second's ranges to a crash and hands them out again: refused, unless the address
/// accepts it by name.
#[test]
#[ignore = "needs a MySQL or MariaDB server: FERROFLAKE_TEST_MYSQL"]
fn a_server_that_may_lose_commits_is_refused_unless_accepted() {
    let table = common::unique("flush");
    let address = format!("{}?table={table}", common::base_url("mysql"));
    admin()
        .query_drop("SET GLOBAL innodb_flush_log_at_trx_commit = 0")
        .unwrap();
    let _restore = FlushedEverySecond;
    let Err(refused) = open_address(&StoreAddress::parse(&address).unwrap()) else {
        panic!("a server that may lose commits was taken");
    };
    assert_eq!(refused.name(), "INVALID_CONFIG", "{refused}");
    assert!(
        refused
            .to_string()
            .contains("innodb_flush_log_at_trx_commit = 0"),
        "{refused}"
    );
    let accepted = format!("{address}&accept=lost-writes");
    let store = open_address(&StoreAddress::parse(&accepted).unwrap()).unwrap();
    store.create("k", 1, 10).unwrap();
    assert_eq!(store.allocate("k", 10).unwrap().range.start, 1);
}

#[test]
#[ignore = "needs a MySQL or MariaDB server: FERROFLAKE_TEST_MYSQL"]
fn a_view_over_the_table_is_refused() {
    let (table, alias) = (common::unique("based"), common::unique("alias"));
    let base = common::base_url("mysql");
    let store = open_address(&StoreAddress::parse(&format!("{base}?table={table}")).unwrap());
    store.unwrap().create("k", 1, 10).unwrap();
    admin()
        .query_drop(format!("CREATE VIEW {alias} AS SELECT * FROM {table}"))
        .unwrap();
    let address = format!("{base}?table={alias}");
    let Err(refused) = open_address(&StoreAddress::parse(&address).unwrap()) else {
        panic!("a view was taken for a table of its own");
    };
    assert_eq!(refused.name(), "INVALID_CONFIG", "{refused}");
    assert!(refused.to_string().contains("is a view"), "{refused}");
}
