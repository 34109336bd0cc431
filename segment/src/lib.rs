//! # ferroflake-segment
//!
//! Segment mode: IDs from a table of per-key counters (Meituan's Leaf calls it
//! `leaf_alloc`), taken a whole range at a time and handed out from memory. Unlike
//! snowflake IDs they need no node id and no clock: they are dense, small and increase per
//! key, at the price of a store that must be reachable once per segment.
//!
//! - [`SegmentStore`]: the table. [`MemoryStore`] for tests and benches, [`SqliteStore`]
//!   (feature `sqlite`, default) for one host with no server: a file in
//!   ferroflake's [`state_dir`] that several processes share.
//! - [`SegmentAllocator`]: per-key [`KeyHandle`]s with a lock-free hot path, a double
//!   buffer filled in the background, an adaptive step and bounded failure. Its guarantees
//!   are listed on the type.
//! - `conformance` (feature `conformance`): the checks every store passes.
//! - [`OrderNumbers`]: date-prefixed order numbers (`20261122000042`), one key per day in a
//!   configured time zone.
//!
//! ```
//! use std::sync::Arc;
//! use ferroflake_segment::{MemoryStore, SegmentAllocator, SegmentConfig, SegmentStore};
//!
//! let store = Arc::new(MemoryStore::new());
//! store.create("orders", 1, 1000)?; // keys are created explicitly: first ID 1, step 1000
//! let allocator = SegmentAllocator::new(store.clone(), SegmentConfig::default())?;
//! let orders = allocator.key("orders")?; // keep the handle: no lookup per call
//! let a = orders.next_id()?;
//! let b = orders.next_id()?;
//! assert_eq!((a, b), (1, 2));
//! let batch = orders.next_ids(5)?; // increasing ranges: here 3..8
//! assert_eq!((batch[0].start, batch[0].end), (3, 8));
//! let report = allocator.shutdown(); // the unissued rest goes back to the table
//! assert_eq!(store.peek("orders")?.unwrap().max_id, 8);
//! # assert!(report.refused.is_empty());
//! # Ok::<(), ferroflake_segment::SegmentError>(())
//! ```
//!
//! ## What is kept from Leaf and CosId, and what is fixed
//!
//! Kept from Leaf (`SegmentIDGenImpl`): the table and its range convention unchanged (a
//! Leaf server and ferroflake can share one table), the double buffer, the prefetch at 10%
//! of a segment, the step rule (a segment used up in under 15 minutes doubles the next step
//! up to 1,000,000, one lasting 30 minutes or more halves it, never below the table's step).
//! Kept from CosId (`SegmentChainId`): a caller that had to wait makes the next fetch
//! bigger (CosId grows its prefetch distance with hunger; we double the step).
//!
//! Fixed:
//!
//! - Leaf takes a read lock on every call and a write lock to switch; here the hot path is
//!   three plain loads of the current segment's bounds, one `fetch_add` on the key's
//!   cursor (the next ID itself) and a bounds check. A switch resets the cursor before it
//!   publishes the new bounds, so an increment that overshot the old segment is never
//!   checked against the new one; see `src/segment.rs` for the protocol.
//! - Leaf answers "both segments not ready" at once after a short spin; here a caller
//!   waits a bounded, configurable time for the fetch in flight, then gets a typed error.
//! - Leaf creates keys it finds in the table and serves unknown keys as error codes; here an
//!   unknown key, an exhausted key (a limit per key, 2^53 - 1 for JavaScript, never a wrap),
//!   bad input and a store outage are typed errors, and a store outage is retried with
//!   backoff and jitter until it heals, while memory lasts.
//! - Leaf drops its unissued IDs on restart; here a clean shutdown gives them back when
//!   nobody allocated after us (a conditional update).
//! - Leaf's pool may start a thread per key; here one worker per allocator fetches for all
//!   keys, at most one fetch per key in flight.
//!
//! ## How it is checked
//!
//! The conformance suite runs on both stores; the allocator's tests break each guarantee
//! on purpose (threads on a step of 10, a store switched off, a slow store, limits, four
//! processes on one SQLite file, SIGKILL then restart). `tests/loom.rs` model-checks the
//! hot path, the switch and the seal under the `ferroflake_loom` cfg (build.rs), and fails on two
//! mutants: an increment split into a read and a write, and a switch that publishes the
//! new bounds before it resets the cursor.
//!
//! ## Features
//!
//! - `sqlite` (default): [`SqliteStore`], with SQLite compiled in.
//! - `conformance`: the store conformance suite, for stores' tests.
#![warn(missing_docs)]

mod allocator;
mod config;
#[cfg(feature = "conformance")]
pub mod conformance;
mod error;
pub mod host_record;
mod journal;
pub mod marks;
mod memory;
mod order_number;
mod private_dir;
mod segment;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
mod sqlite_log;
#[cfg(feature = "sqlite")]
mod sqlite_name;
mod state_dir;
mod store;
mod sync;

pub use allocator::{Counters, KeyHandle, KeyStatus, SegmentAllocator, ShutdownReport};
pub use config::{SegmentConfig, LIMIT_I64, LIMIT_JS, MAX_BATCH};
pub use error::SegmentError;
pub use memory::MemoryStore;
pub use order_number::{
    ManualWallClock, OrderNumber, OrderNumberConfig, OrderNumbers, SystemWallClock, WallClock,
    MAX_ORDER_WIDTH,
};
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteStore, DEFAULT_BUSY_TIMEOUT};
pub use state_dir::state_dir;
pub use store::{
    check_create, check_give_back, check_key, check_step, range_after, Allocation, KeyRecord,
    Range, SegmentStore, StoreHistory, DEFAULT_START, DEFAULT_STEP, MAX_KEY_BYTES, MAX_STEP,
    MAX_TABLE_ID,
};

/// The double buffer alone, for the loom model (`tests/loom.rs`): a key's current segment
/// and its next one, switched as the allocator switches them, without a store or a worker.
#[cfg(ferroflake_loom)]
#[doc(hidden)]
pub mod loom_model {
    use crate::segment::{Advance, Buffers, Segment, Taken};
    use crate::Range;

    /// A key with `current` in use and `next` already fetched.
    pub struct Model(Buffers<()>);

    impl Model {
        /// The two segments.
        pub fn new(current: Range, next: Range) -> Self {
            let buffers = Buffers::new(Segment::new(current, current.end, 0.5), ());
            buffers.slow().next = Some(Segment::new(next, next.end, 0.5));
            Model(buffers)
        }

        /// Closes the key as shutdown does; returns the first ID of the rest it would give
        /// back (IDs from there on were never issued).
        pub fn seal(&self) -> u64 {
            self.0.seal().map_or(u64::MAX, |(rest, _)| rest.start)
        }

        /// One ID as `next_id` takes it, or `None` once both segments are used up.
        pub fn next_id(&self) -> Option<u64> {
            self.taking(|b| b.take(1)).map(|t| t.first)
        }

        /// Up to `n` IDs as one step of `next_ids` takes them, as `(first, count)`, or
        /// `None` once both segments are used up.
        pub fn next_ids(&self, n: u64) -> Option<(u64, u64)> {
            self.taking(|b| b.take_batch(n)).map(|t| (t.first, t.count))
        }

        fn taking(&self, take: impl Fn(&Buffers<()>) -> Option<Taken>) -> Option<Taken> {
            loop {
                if let Some(taken) = take(&self.0) {
                    return Some(taken);
                }
                let mut slow = self.0.slow();
                match self.0.advance(&mut slow) {
                    Advance::Retry | Advance::Switched(_) => {}
                    Advance::Empty | Advance::Closed => return None,
                }
            }
        }
    }
}
