//! The store conformance suite of ferroflake-segment, run against each server store by
//! address (`ferroflake_segment_stores::open`), one `#[test]` per check and store so that
//! they run side by side. Every store is opened on a fresh table (`?table=`) or key prefix
//! (`?prefix=`). Needs the servers of scripts/test-segment-stores.sh, hence `#[ignore]`.
//! Besides the suite: each store is used and dropped on an async runtime's thread, as a
//! service dropping it at its stop does.

mod common;

use std::sync::Arc;

use ferroflake_segment::SegmentStore;

/// A factory of stores over fresh tables of `backend`'s test server.
fn fresh(backend: &'static str) -> impl Fn() -> Arc<dyn SegmentStore> {
    let scratch = std::env::temp_dir();
    move || {
        let address = common::fresh_address(backend, &scratch);
        ferroflake_segment_stores::open(Some(&address))
            .unwrap_or_else(|e| panic!("open {address}: {e}"))
    }
}

macro_rules! checks {
    ($backend:ident: $($check:ident),* $(,)?) => {
        mod $backend {
            $(
                #[test]
                #[ignore = "needs the servers of scripts/test-segment-stores.sh"]
                fn $check() {
                    let fresh = super::fresh(stringify!($backend));
                    ferroflake_segment::conformance::$check(&fresh);
                }
            )*
        }
    };
}

macro_rules! all_checks {
    ($($backend:ident),*) => {$(
        checks!($backend:
            leaf_ranges,
            create_refuses_bad_input,
            unknown_keys,
            exhaustion_never_wraps,
            give_back_is_conditional,
            concurrent_allocations_are_disjoint,
            recover_creates_and_never_lowers,
            set_step_changes_the_step_alone,
        );
    )*};
}

all_checks!(postgres, mysql, redis);

/// The fault checks: each store with a plain client on its table, as an operator (or a lost
/// write, or a restored backup) changes it behind the store's back.
mod faults {
    use std::sync::Arc;

    use ::mysql::prelude::Queryable;
    use ferroflake_segment::conformance::Tamper;
    use ferroflake_segment::SegmentStore;

    use super::common;

    struct OnServer {
        backend: &'static str,
        /// The table (SQL) or key prefix (Redis) of the store under test.
        name: String,
    }

    impl OnServer {
        fn sql(&self, sql: &str) {
            let url = common::base_url(self.backend);
            let sql = sql.replace("{table}", &self.name);
            match self.backend {
                "postgres" => {
                    let mut c = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
                    assert_eq!(c.execute(&sql, &[]).unwrap(), 1, "{sql}");
                }
                _ => {
                    let mut c = ::mysql::Conn::new(::mysql::Opts::from_url(&url).unwrap()).unwrap();
                    c.query_drop(&sql).unwrap();
                    assert_eq!(c.affected_rows(), 1, "{sql}");
                }
            }
        }

        fn redis(&self, cmd: &mut ::redis::Cmd) {
            let client = ::redis::Client::open(common::base_url("redis")).unwrap();
            let mut c = client.get_connection().unwrap();
            let changed: i64 = cmd.query(&mut c).unwrap();
            assert!(changed <= 1, "{changed}");
        }
    }

    impl Tamper for OnServer {
        fn delete_row(&self, key: &str) {
            match self.backend {
                "redis" => {
                    self.redis(::redis::cmd("DEL").arg(format!("ferroflake:{}:{key}", self.name)))
                }
                _ => self.sql(&format!("DELETE FROM {{table}} WHERE biz_tag = '{key}'")),
            }
        }

        fn set_max_id(&self, key: &str, max_id: u64) {
            match self.backend {
                "redis" => self.redis(
                    ::redis::cmd("HSET")
                        .arg(format!("ferroflake:{}:{key}", self.name))
                        .arg("max_id")
                        .arg(max_id),
                ),
                _ => self.sql(&format!(
                    "UPDATE {{table}} SET max_id = {max_id} WHERE biz_tag = '{key}'"
                )),
            }
        }
    }

    fn fresh(backend: &'static str) -> impl Fn() -> (Arc<dyn SegmentStore>, Box<dyn Tamper>) {
        move || {
            let name = common::unique("f");
            let address = match backend {
                // The test server runs without an AOF.
                "redis" => format!(
                    "{}?prefix={name}&accept=lost-writes",
                    common::base_url(backend)
                ),
                _ => format!("{}?table={name}", common::base_url(backend)),
            };
            let store = ferroflake_segment_stores::open(Some(&address))
                .unwrap_or_else(|e| panic!("open {address}: {e}"));
            (
                store,
                Box::new(OnServer { backend, name }) as Box<dyn Tamper>,
            )
        }
    }

    macro_rules! fault_checks {
        ($($backend:ident),*) => {$(
            mod $backend {
                #[test]
                #[ignore = "needs the servers of scripts/test-segment-stores.sh"]
                fn run_faults() {
                    ferroflake_segment::conformance::run_faults(&super::fresh(stringify!($backend)));
                }
            }
        )*};
    }

    fault_checks!(postgres, mysql, redis);
}

/// Used and dropped inside a Tokio runtime: no client may block on a runtime of its own
/// there, which panics ("Cannot start a runtime from within a runtime").
fn dropped_on_an_async_worker(backend: &'static str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = fresh(backend)();
        store.create("k", 1, 10).unwrap();
        assert_eq!(store.allocate("k", 10).unwrap().range.start, 1);
        drop(store);
    });
}

#[test]
#[ignore = "needs the servers of scripts/test-segment-stores.sh"]
fn postgres_dropped_on_an_async_worker() {
    dropped_on_an_async_worker("postgres");
}

#[test]
#[ignore = "needs the servers of scripts/test-segment-stores.sh"]
fn mysql_dropped_on_an_async_worker() {
    dropped_on_an_async_worker("mysql");
}

#[test]
#[ignore = "needs the servers of scripts/test-segment-stores.sh"]
fn redis_dropped_on_an_async_worker() {
    dropped_on_an_async_worker("redis");
}
