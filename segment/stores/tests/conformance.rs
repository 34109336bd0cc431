//! The store conformance suite of ferroflake-segment, run against each server store by
//! address (`ferroflake_segment_stores::open`), one `#[test]` per check and store so that
//! they run side by side. Every store is opened on a fresh table (`?table=`) or key prefix
//! (`?prefix=`). Needs the servers of scripts/test-segment-stores.sh, hence `#[ignore]`.

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
        );
    )*};
}

all_checks!(postgres, mysql, redis);
