//! A store in memory: for tests, benches and single-process use where losing the table on
//! exit is fine (IDs restart from the created start).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::store::{check_create, check_give_back, check_key, check_step, range_after};
use crate::{Allocation, KeyRecord, Range, SegmentError, SegmentStore, MAX_TABLE_ID};

/// A [`SegmentStore`] held in a map behind a mutex.
#[derive(Debug, Default)]
pub struct MemoryStore {
    rows: Mutex<HashMap<String, KeyRecord>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn rows(&self) -> std::sync::MutexGuard<'_, HashMap<String, KeyRecord>> {
        self.rows.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SegmentStore for MemoryStore {
    fn create(&self, key: &str, start: i64, step: u64) -> Result<(), SegmentError> {
        let max_id = check_create(key, start, step)?;
        let mut rows = self.rows();
        if rows.contains_key(key) {
            return Err(SegmentError::KeyExists { key: key.into() });
        }
        rows.insert(key.into(), KeyRecord { max_id, step });
        Ok(())
    }

    fn allocate(&self, key: &str, step: u64) -> Result<Allocation, SegmentError> {
        check_key(key)?;
        check_step(step)?;
        let mut rows = self.rows();
        let row = rows
            .get_mut(key)
            .ok_or_else(|| SegmentError::UnknownKey { key: key.into() })?;
        if row.max_id > MAX_TABLE_ID - step {
            return Err(SegmentError::Exhausted {
                key: key.into(),
                limit: MAX_TABLE_ID,
            });
        }
        row.max_id += step;
        Ok(Allocation {
            range: range_after(row.max_id, step),
            table_step: row.step,
        })
    }

    fn give_back(
        &self,
        key: &str,
        rest: Range,
        expected_max_id: u64,
    ) -> Result<bool, SegmentError> {
        check_give_back(key, rest, expected_max_id)?;
        let mut rows = self.rows();
        let row = rows
            .get_mut(key)
            .ok_or_else(|| SegmentError::UnknownKey { key: key.into() })?;
        if row.max_id != expected_max_id {
            return Ok(false);
        }
        row.max_id = rest.start;
        Ok(true)
    }

    fn peek(&self, key: &str) -> Result<Option<KeyRecord>, SegmentError> {
        check_key(key)?;
        Ok(self.rows().get(key).copied())
    }

    fn name(&self) -> &str {
        "memory"
    }
}
