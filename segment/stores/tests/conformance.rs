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

    use ferroflake_segment::conformance::Tamper;
    use ferroflake_segment::SegmentStore;

    use super::common;

    fn fresh(backend: &'static str) -> impl Fn() -> (Arc<dyn SegmentStore>, Box<dyn Tamper>) {
        move || {
            let (address, tamper) = common::fresh_tampered(backend, &std::env::temp_dir());
            let store = ferroflake_segment_stores::open(Some(&address))
                .unwrap_or_else(|e| panic!("open {address}: {e}"));
            (store, Box::new(tamper) as Box<dyn Tamper>)
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
