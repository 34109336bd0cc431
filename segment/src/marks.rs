//! High-water marks: how far each key ever went, kept beside the table where deleting a row
//! does not delete it.
//!
//! A row that vanishes (deleted by hand, a key flushed from Redis, a day's order-number row
//! lost) would otherwise be created again at its old start by the next process that creates
//! keys at start-up, and hand out every ID of the lost row a second time. Every store keeps,
//! per key, the highest `max_id` it ever reached (its mark), in a table or hash of its own:
//!
//! - [`create`](crate::SegmentStore::create) below a key's mark is refused with
//!   [`SegmentError::Rewound`] (a key that never existed has no mark and is created);
//! - an allocation from a row below its mark (a row restored or edited back) is refused with
//!   [`SegmentError::Rewound`] and leaves the row as it was;
//! - a give-back lowers the mark with the row, in one transaction, so the rest given back is
//!   issued again by the next allocation;
//! - [`recover`](crate::SegmentStore::recover) is the operator's way back: it raises the row
//!   above a floor the operator states (and above the mark), creating it if missing.
//!
//! A Leaf server sharing the table allocates without moving the marks; its rows only ever
//! pass them, which is allowed. What marks cannot see: a store that lost the marks with the
//! rows (a whole database, file or Redis flushed). Only the operator's floor helps there.

use crate::SegmentError;

/// The refusal to create `key` at `start` below its mark.
pub fn recreated_below_mark(store: &str, key: &str, start: u64, mark: u64) -> SegmentError {
    SegmentError::Rewound {
        store: store.into(),
        key: key.into(),
        detail: format!(
            "the key existed before and reached max_id {mark}, and its row is gone: creating \
             it again at {start} would hand out its IDs a second time"
        ),
    }
}

/// The refusal to allocate from a key whose row is gone after it reached `mark`.
pub fn row_gone(store: &str, key: &str, mark: u64) -> SegmentError {
    SegmentError::Rewound {
        store: store.into(),
        key: key.into(),
        detail: format!(
            "the key's row is gone after it reached max_id {mark} (deleted, flushed or lost), \
             and an allocation never recreates it"
        ),
    }
}

/// The refusal to allocate from a row whose `max_id` is below the key's mark.
pub fn row_below_mark(store: &str, key: &str, max_id: u64, mark: u64) -> SegmentError {
    SegmentError::Rewound {
        store: store.into(),
        key: key.into(),
        detail: format!(
            "the row's max_id is {max_id}, below the {mark} it already reached (a restored or \
             edited row): its next range would repeat IDs"
        ),
    }
}

/// Where [`recover`](crate::SegmentStore::recover) puts a key's `max_id`: above the
/// operator's floor, never below the mark, and strictly above a row that is there. The
/// row always moves, so that the give-back of a range taken before the recovery (which
/// expects the row where that range left it) is refused: such a range may hold IDs the
/// operator's floor says were issued elsewhere.
///
/// # Errors
/// [`SegmentError::InvalidConfig`] for a floor at or past the table's last ID.
pub fn recovered_max_id(
    above: u64,
    row: Option<u64>,
    mark: Option<u64>,
) -> Result<u64, SegmentError> {
    if above >= crate::MAX_TABLE_ID {
        return Err(SegmentError::InvalidConfig {
            detail: format!("--above {above}: the table's IDs end at 2^63 - 1"),
        });
    }
    let past_row = row.map_or(0, |max_id| (max_id + 1).min(crate::MAX_TABLE_ID));
    Ok((above + 1).max(past_row).max(mark.unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_never_lowers_anything() {
        assert_eq!(recovered_max_id(100, None, None).unwrap(), 101);
        assert_eq!(recovered_max_id(100, Some(500), None).unwrap(), 501);
        assert_eq!(recovered_max_id(100, Some(50), Some(700)).unwrap(), 700);
        assert_eq!(recovered_max_id(100, Some(700), Some(700)).unwrap(), 701);
        assert!(recovered_max_id(crate::MAX_TABLE_ID, None, None).is_err());
    }
}
