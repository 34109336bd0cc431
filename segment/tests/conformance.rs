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
    recover_creates_and_never_lowers,
    set_step_changes_the_step_alone,
);

/// The fault checks: each store with a hand on its table.
mod faults {
    use super::*;
    use ferroflake_segment::conformance::{FreshTampered, Tamper};

    struct OnMemory(Arc<MemoryStore>);

    impl Tamper for OnMemory {
        fn delete_row(&self, key: &str) {
            assert!(self.0.delete_row(key), "no row {key:?} to delete");
        }
        fn set_max_id(&self, key: &str, max_id: u64) {
            self.0.set_max_id(key, max_id);
        }
    }

    /// A second connection to the store's file, as another program or an operator's
    /// `sqlite3` shell would write it.
    struct OnSqlite(std::path::PathBuf);

    impl OnSqlite {
        fn run(&self, sql: &str, params: impl rusqlite::Params) {
            let conn = rusqlite::Connection::open(&self.0).unwrap();
            conn.busy_timeout(std::time::Duration::from_secs(5))
                .unwrap();
            assert_eq!(conn.execute(sql, params).unwrap(), 1, "{sql}");
        }
    }

    impl Tamper for OnSqlite {
        fn delete_row(&self, key: &str) {
            self.run("DELETE FROM leaf_alloc WHERE biz_tag = ?1", [key]);
        }
        fn set_max_id(&self, key: &str, max_id: u64) {
            self.run(
                "UPDATE leaf_alloc SET max_id = ?2 WHERE biz_tag = ?1",
                rusqlite::params![key, max_id as i64],
            );
        }
    }

    fn memory() -> (Arc<dyn SegmentStore>, Box<dyn Tamper>) {
        let store = Arc::new(MemoryStore::new());
        (store.clone(), Box::new(OnMemory(store)))
    }

    fn on_both(check: impl Fn(FreshTampered<'_>)) {
        check(&memory);
        let root = tempfile::tempdir().unwrap();
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let sqlite = || {
            let file = root
                .path()
                .join(format!("f{}.db", NEXT.fetch_add(1, Ordering::Relaxed)));
            let store = Arc::new(SqliteStore::open(&file).unwrap());
            (
                store as Arc<dyn SegmentStore>,
                Box::new(OnSqlite(file)) as Box<dyn Tamper>,
            )
        };
        check(&sqlite);
    }

    #[test]
    fn a_lost_row_is_never_recreated_below_its_mark() {
        on_both(|f| conformance::a_lost_row_is_never_recreated_below_its_mark(f));
    }

    #[test]
    fn a_row_moved_back_is_refused() {
        on_both(|f| conformance::a_row_moved_back_is_refused(f));
    }

    #[test]
    fn recovery_starts_above_the_floor_and_the_mark() {
        on_both(|f| conformance::recovery_starts_above_the_floor_and_the_mark(f));
    }

    #[test]
    fn run_faults_on_memory() {
        conformance::run_faults(&memory);
    }

    /// This host's record around a store changes none of what the store answers.
    #[test]
    fn run_all_and_run_faults_with_this_hosts_record() {
        use ferroflake_segment::host_record::HostRecorded;
        let dir = tempfile::tempdir().unwrap();
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let recorded = |store: Arc<MemoryStore>| {
            let identity = format!("memory {}", NEXT.fetch_add(1, Ordering::Relaxed));
            Arc::new(HostRecorded::in_dir(store, &identity, dir.path()).unwrap())
        };
        conformance::run_all(&|| recorded(Arc::new(MemoryStore::new())) as Arc<dyn SegmentStore>);
        conformance::run_faults(&|| {
            let store = Arc::new(MemoryStore::new());
            (
                recorded(store.clone()) as Arc<dyn SegmentStore>,
                Box::new(OnMemory(store)) as Box<dyn Tamper>,
            )
        });
    }
}

/// `run_all` runs the same checks in one go.
#[test]
fn run_all_on_memory() {
    conformance::run_all(&memory);
}
