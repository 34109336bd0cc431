//! (being written)

use ferroflake_segment::{Allocation, KeyRecord, Range, SegmentError, SegmentStore};

/// (being written)
#[derive(Debug)]
pub struct PostgresStore;

impl PostgresStore {
    /// (being written)
    pub fn connect(_url: &str, _table_or_prefix: &str) -> Result<Self, SegmentError> {
        Err(SegmentError::InvalidConfig { detail: "not yet".into() })
    }
}

impl SegmentStore for PostgresStore {
    fn create(&self, _key: &str, _start: i64, _step: u64) -> Result<(), SegmentError> { unimplemented!() }
    fn allocate(&self, _key: &str, _step: u64) -> Result<Allocation, SegmentError> { unimplemented!() }
    fn give_back(&self, _key: &str, _rest: Range, _expected_max_id: u64) -> Result<bool, SegmentError> { unimplemented!() }
    fn peek(&self, _key: &str) -> Result<Option<KeyRecord>, SegmentError> { unimplemented!() }
    fn name(&self) -> &str { "postgres" }
}
