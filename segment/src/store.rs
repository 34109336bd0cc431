//! The store abstraction: the table that hands out whole ranges per key.
//!
//! Every store (in-memory, embedded SQLite; PostgreSQL, MySQL and Redis later) implements
//! [`SegmentStore`] and passes the same conformance suite. Calls are blocking, so the C,
//! Python and Node faces can wrap them without a runtime of their own; a store with an async
//! client runs it on a small runtime of its own, each call bounded in time, and answers
//! [`SegmentError::Unavailable`] past the bound.
//!
//! The table is Leaf's, unchanged:
//!
//! ```sql
//! CREATE TABLE leaf_alloc (
//!     biz_tag     varchar(128) PRIMARY KEY,
//!     max_id      bigint,
//!     step        int,
//!     description varchar(256),
//!     update_time timestamp
//! );
//! ```
//!
//! and so is its range convention: an allocation runs `UPDATE leaf_alloc SET max_id =
//! max_id + step` and owns `[new max_id - step, new max_id)`. A Leaf server and ferroflake
//! can therefore share one table without overlap.

use crate::SegmentError;

/// The longest key the table holds (`varchar(128)`), in bytes.
pub const MAX_KEY_BYTES: usize = 128;

/// The largest step the table holds (`int`).
pub const MAX_STEP: u64 = i32::MAX as u64;

/// The largest `max_id` the table holds (`bigint`): 2^63 - 1.
pub const MAX_TABLE_ID: u64 = i64::MAX as u64;

/// A half-open range of IDs, `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Range {
    /// The first ID.
    pub start: u64,
    /// One past the last ID.
    pub end: u64,
}

impl Range {
    /// How many IDs the range holds.
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// Whether the range holds no ID.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `id` lies in the range.
    pub fn contains(&self, id: u64) -> bool {
        self.start <= id && id < self.end
    }
}

/// What one allocation returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    /// The IDs now owned by the caller: `[max_id - step, max_id)` after the update.
    pub range: Range,
    /// The step stored in the table for the key (the allocator never steps below it).
    pub table_step: u64,
}

/// A key's row, as [`SegmentStore::peek`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRecord {
    /// The highest ID handed out so far, plus one (Leaf's `max_id`).
    pub max_id: u64,
    /// The table's step.
    pub step: u64,
}

/// Where a store's server stands in its own history, as [`SegmentStore::history`] reads
/// it: which history (`system`, `timeline`) and how far along it (`position`).
///
/// Within one `system`, `timeline` and `position` only grow while the server keeps its
/// history, across clean restarts and crashes alike. A server restored from a copy of its
/// data, or put back to an earlier point, answers a smaller position (or an earlier
/// timeline); another server answers another system. [`HostRecorded`](crate::host_record)
/// keeps the furthest history this host saw of each store and takes anything behind it as
/// the store having gone back, for every key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoreHistory {
    /// The server's lasting identity (PostgreSQL's system identifier); empty if it has
    /// none. Positions of two systems are never compared.
    pub system: String,
    /// A history branch that only grows (PostgreSQL's timeline); 0 where there is none.
    pub timeline: u64,
    /// How far the server's durable history reaches (a write-ahead-log position).
    pub position: u64,
}

impl StoreHistory {
    /// Whether `self`, read later, continues `earlier`: the same system, not an earlier
    /// timeline, and not behind its position. The reason it does not, if it does not.
    pub fn behind(&self, earlier: &StoreHistory) -> Option<String> {
        if self.system != earlier.system {
            Some(format!(
                "the server is another system ({:?}, where {:?} was seen)",
                self.system, earlier.system
            ))
        } else if self.timeline < earlier.timeline {
            Some(format!(
                "the server is on timeline {}, before the timeline {} seen",
                self.timeline, earlier.timeline
            ))
        } else if self.position < earlier.position {
            Some(format!(
                "the server's history reaches {}, behind the {} seen",
                self.position, earlier.position
            ))
        } else {
            None
        }
    }
}

/// A table of per-key ranges.
///
/// A key is one string: a store whose table would match it to a row spelled otherwise (a
/// MySQL collation that ignores case or trailing spaces) refuses it with
/// [`SegmentError::InvalidKey`] naming the row's spelling, so that two spellings never act
/// as two keys over one row.
pub trait SegmentStore: Send + Sync {
    /// Adds `key` with `max_id = start` and `step`, so that the first allocation of `step`
    /// IDs returns `[start, start + step)`.
    ///
    /// [`SegmentError::KeyExists`] if the key has a row; [`SegmentError::Rewound`] if it has
    /// none but once reached above `start` ([`marks`](crate::marks)); [`SegmentError::InvalidKey`] or
    /// [`SegmentError::InvalidConfig`] for what [`check_key`] and [`check_step`] refuse,
    /// or a start below 1.
    fn create(&self, key: &str, start: i64, step: u64) -> Result<(), SegmentError>;

    /// Takes the next `step` IDs of `key` in one atomic update (`max_id = max_id + step`)
    /// and returns them. The table's own step is not changed.
    ///
    /// [`SegmentError::UnknownKey`] if the key has no row (and never had one);
    /// [`SegmentError::Rewound`] if the row is below the key's mark, or gone after the key
    /// was used; [`SegmentError::Exhausted`] if
    /// `max_id + step` would pass 2^63 - 1 (the row is then left as it was; nothing wraps).
    fn allocate(&self, key: &str, step: u64) -> Result<Allocation, SegmentError>;

    /// Gives the unissued top of the caller's last range back: sets `max_id = rest.start`,
    /// but only if `max_id` is still `expected_max_id` (nobody allocated after the caller)
    /// and `rest.end == expected_max_id`. Returns whether it did. Giving back is an
    /// optimisation (less waste on restart), so a refusal is `Ok(false)`, not an error.
    fn give_back(&self, key: &str, rest: Range, expected_max_id: u64)
        -> Result<bool, SegmentError>;

    /// Reads the key's row without changing it; `None` if there is none (and never was:
    /// [`SegmentError::Rewound`] if it is gone after the key was used).
    fn peek(&self, key: &str) -> Result<Option<KeyRecord>, SegmentError>;

    /// The operator's way back after a loss: raises the key's `max_id` to at least `above +
    /// 1`, never below the row or the key's mark ([`marks`](crate::marks)), creating the row
    /// with `step` if it is missing, and returns the row as it now is. Only for a person
    /// who has found the highest ID issued for the key: nothing checks the floor given.
    ///
    /// [`SegmentError::InvalidKey`] or [`SegmentError::InvalidConfig`] for what
    /// [`check_key`] and [`check_step`] refuse, or `above` at the table's last ID.
    fn recover(&self, key: &str, above: u64, step: u64) -> Result<KeyRecord, SegmentError>;

    /// Sets the key's stored step (the table's `step`), the least the allocators take per
    /// fetch, and returns the row as it now is. `max_id` is left alone, so no range moves.
    /// Allocators already running learn the new step from their next fetch (which each
    /// allocation reports as [`Allocation::table_step`]) and size the fetches after it by
    /// it.
    ///
    /// [`SegmentError::UnknownKey`] if the key has no row (and never had one);
    /// [`SegmentError::Rewound`] if the row is gone after the key was used;
    /// [`SegmentError::InvalidKey`] or [`SegmentError::InvalidConfig`] for what
    /// [`check_key`] and [`check_step`] refuse.
    fn set_step(&self, key: &str, step: u64) -> Result<KeyRecord, SegmentError>;

    /// Where the store's server stands in its own history, for a host to notice the whole
    /// store going back (restored from a copy, put back to an earlier point, replaced by
    /// another server), keys it never used included. `None` (the default) for a store
    /// that cannot tell; the call may cost a round trip.
    ///
    /// # Errors
    /// As any call that reaches the store.
    fn history(&self) -> Result<Option<StoreHistory>, SegmentError> {
        Ok(None)
    }

    /// The store's own lasting identity, kept in its data (a SQLite file's random id): the
    /// same for a copy of the store put back under another name, on another disk or at
    /// another address, so that a host knows the store by what it holds as well as by
    /// where it is reached. `None` (the default) for a store that keeps none.
    fn identity(&self) -> Option<String> {
        None
    }

    /// A short name for messages: "memory", "sqlite", "postgres", ...
    fn name(&self) -> &str;
}

/// Refuses an empty key, one longer than [`MAX_KEY_BYTES`], or one with a NUL byte.
pub fn check_key(key: &str) -> Result<(), SegmentError> {
    let detail = if key.is_empty() {
        "empty"
    } else if key.len() > MAX_KEY_BYTES {
        "longer than 128 bytes (the table's biz_tag is varchar(128))"
    } else if key.contains('\0') {
        "holds a NUL byte, which PostgreSQL's varchar and C strings cannot carry"
    } else {
        return Ok(());
    };
    Err(SegmentError::InvalidKey {
        key: key.into(),
        detail: detail.into(),
    })
}

/// The first ID of a key created without one.
pub const DEFAULT_START: i64 = 1;

/// The step of a key created without one: the least one allocation takes. Allocators grow
/// it while IDs go fast, so a small default costs a busy key only its first fetches.
pub const DEFAULT_STEP: u64 = 1000;

/// Refuses a step of 0 or above [`MAX_STEP`].
pub fn check_step(step: u64) -> Result<(), SegmentError> {
    if step == 0 || step > MAX_STEP {
        return Err(SegmentError::InvalidConfig {
            detail: format!("step {step} is outside 1..=2^31 - 1 (the table's step is an int)"),
        });
    }
    Ok(())
}

/// Checks what [`SegmentStore::create`] must refuse and returns the start as an ID.
pub fn check_create(key: &str, start: i64, step: u64) -> Result<u64, SegmentError> {
    check_key(key)?;
    check_step(step)?;
    // 0 is refused too: many languages, ORMs and columns read it as "no ID".
    u64::try_from(start)
        .ok()
        .filter(|&first| first >= 1)
        .ok_or_else(|| SegmentError::InvalidConfig {
            detail: format!("start {start} is below 1: IDs are positive"),
        })
}

/// Checks a give-back's arguments: the rest must end at the expected `max_id`.
pub fn check_give_back(key: &str, rest: Range, expected_max_id: u64) -> Result<(), SegmentError> {
    check_key(key)?;
    if rest.end != expected_max_id || rest.start > rest.end {
        return Err(SegmentError::InvalidConfig {
            detail: format!(
                "give-back of {}..{} must end at the expected max_id {expected_max_id}",
                rest.start, rest.end
            ),
        });
    }
    Ok(())
}

/// The range an allocation owns, from the row after the update (Leaf's convention).
pub fn range_after(new_max_id: u64, step: u64) -> Range {
    Range {
        start: new_max_id - step,
        end: new_max_id,
    }
}
