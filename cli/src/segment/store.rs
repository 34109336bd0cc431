//! `--store URL`: which segment table a command uses, read and opened.

use std::sync::Arc;

use ferroflake_segment::SegmentStore;
use ferroflake_segment_stores::StoreAddress;

use super::refusal::{explain, Refusal};

/// An open store and how messages name it.
pub struct Opened {
    pub store: Arc<dyn SegmentStore>,
    /// "the SQLite file /srv/s.db", or the URL with any password hidden.
    pub label: String,
}

/// Opens the store at `address`, or the embedded SQLite default for `None`. A refusal
/// names the store once the address could be read.
pub fn open(address: Option<&str>) -> Result<Opened, Refusal> {
    if let Some(address) = address {
        StoreAddress::parse(address).map_err(|e| Refusal::of(&e, explain(&e, None)))?;
    }
    let label = StoreAddress::label(address);
    match ferroflake_segment_stores::open(address) {
        Ok(store) => Ok(Opened { store, label }),
        Err(e) => Err(Refusal::of(&e, explain(&e, Some(&label)))),
    }
}
