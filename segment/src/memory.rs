//! A store in memory: for tests, benches and single-process use where losing the table on
//! exit is fine (IDs restart from the created start).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::marks::{recovered_max_id, recreated_below_mark, row_below_mark, row_gone};
use crate::store::{check_create, check_give_back, check_key, check_step, range_after};
use crate::{Allocation, KeyRecord, Range, SegmentError, SegmentStore, MAX_TABLE_ID};

/// A [`SegmentStore`] held in a map behind a mutex.
#[derive(Debug, Default)]
pub struct MemoryStore {
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    rows: HashMap<String, KeyRecord>,
    /// Each key's mark ([`crate::marks`]), kept when its row is deleted.
    marks: HashMap<String, u64>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Deletes `key`'s row as an operator or a lost write might, keeping its mark; whether
    /// it had one. For tests of what the stores do after a loss.
    pub fn delete_row(&self, key: &str) -> bool {
        self.table().rows.remove(key).is_some()
    }

    /// Sets `key`'s `max_id` as a restored backup or a hand edit might, leaving its mark.
    /// For tests of what the stores do after a loss.
    pub fn set_max_id(&self, key: &str, max_id: u64) {
        if let Some(row) = self.table().rows.get_mut(key) {
            row.max_id = max_id;
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SegmentStore for MemoryStore {
    fn create(&self, key: &str, start: i64, step: u64) -> Result<(), SegmentError> {
        let max_id = check_create(key, start, step)?;
        let mut table = self.table();
        if table.rows.contains_key(key) {
            return Err(SegmentError::KeyExists { key: key.into() });
        }
        if let Some(&mark) = table.marks.get(key).filter(|&&mark| mark > max_id) {
            return Err(recreated_below_mark("memory", key, max_id, mark));
        }
        table.rows.insert(key.into(), KeyRecord { max_id, step });
        table.marks.insert(key.into(), max_id);
        Ok(())
    }

    fn allocate(&self, key: &str, step: u64) -> Result<Allocation, SegmentError> {
        check_key(key)?;
        check_step(step)?;
        let mut table = self.table();
        let Table { rows, marks } = &mut *table;
        let mark = marks.get(key).copied();
        let Some(row) = rows.get_mut(key) else {
            return Err(match mark {
                Some(mark) => row_gone("memory", key, mark),
                None => SegmentError::UnknownKey { key: key.into() },
            });
        };
        if let Some(mark) = mark.filter(|&mark| mark > row.max_id) {
            return Err(row_below_mark("memory", key, row.max_id, mark));
        }
        if row.max_id > MAX_TABLE_ID - step {
            return Err(SegmentError::Exhausted {
                key: key.into(),
                limit: MAX_TABLE_ID,
            });
        }
        row.max_id += step;
        marks.insert(key.into(), row.max_id);
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
        let mut table = self.table();
        let Table { rows, marks } = &mut *table;
        let row = rows
            .get_mut(key)
            .ok_or_else(|| SegmentError::UnknownKey { key: key.into() })?;
        if row.max_id != expected_max_id {
            return Ok(false);
        }
        row.max_id = rest.start;
        if marks.get(key) == Some(&expected_max_id) {
            marks.insert(key.into(), rest.start);
        }
        Ok(true)
    }

    fn peek(&self, key: &str) -> Result<Option<KeyRecord>, SegmentError> {
        check_key(key)?;
        let table = self.table();
        match (table.rows.get(key), table.marks.get(key)) {
            (None, Some(&mark)) => Err(row_gone("memory", key, mark)),
            (row, _) => Ok(row.copied()),
        }
    }

    fn recover(&self, key: &str, above: u64, step: u64) -> Result<KeyRecord, SegmentError> {
        check_key(key)?;
        check_step(step)?;
        let mut table = self.table();
        let row = table.rows.get(key).copied();
        let max_id = recovered_max_id(above, row.map(|r| r.max_id), table.marks.get(key).copied())?;
        let record = KeyRecord {
            max_id,
            step: row.map_or(step, |r| r.step),
        };
        table.rows.insert(key.into(), record);
        table.marks.insert(key.into(), max_id);
        Ok(record)
    }

    fn set_step(&self, key: &str, step: u64) -> Result<KeyRecord, SegmentError> {
        check_key(key)?;
        check_step(step)?;
        let mut table = self.table();
        let mark = table.marks.get(key).copied();
        match table.rows.get_mut(key) {
            Some(row) => {
                row.step = step;
                Ok(*row)
            }
            None => Err(match mark {
                Some(mark) => row_gone("memory", key, mark),
                None => SegmentError::UnknownKey { key: key.into() },
            }),
        }
    }

    fn name(&self) -> &str {
        "memory"
    }
}
