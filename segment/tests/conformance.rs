//! The in-memory and SQLite stores pass the store conformance suite, one check per test so
//! the checks run side by side.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use ferroflake_segment::conformance;
use ferroflake_segment::{MemoryStore, SegmentStore, SqliteStore};

fn memory() -> Arc<dyn SegmentStore> {
    Arc::new(MemoryStore::new())
}

/// A fresh SQLite file per call, under one temporary directory per test.
fn sqlite_files() -> (tempfile::TempDir, impl Fn() -> Arc<dyn SegmentStore>) {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let root = tempfile::tempdir().unwrap();
    let base = root.path().to_owned();
    let fresh = move || {
        let file = base.join(format!("t{}.db", NEXT.fetch_add(1, Ordering::Relaxed)));
        Arc::new(SqliteStore::open(file).unwrap()) as Arc<dyn SegmentStore>
    };
    (root, fresh)
}

macro_rules! checks {
    ($($check:ident),* $(,)?) => {
        mod memory_store {
            $(
                #[test]
                fn $check() {
                    super::conformance::$check(&super::memory);
                }
            )*
        }
        mod sqlite_store {
            $(
                #[test]
                fn $check() {
                    let (_root, fresh) = super::sqlite_files();
                    super::conformance::$check(&fresh);
                }
            )*
        }
    };
}

checks!(
    leaf_ranges,
    create_refuses_bad_input,
    unknown_keys,
    exhaustion_never_wraps,
    give_back_is_conditional,
    concurrent_allocations_are_disjoint,
);

/// `run_all` runs the same checks in one go.
#[test]
fn run_all_on_memory() {
    conformance::run_all(&memory);
}
