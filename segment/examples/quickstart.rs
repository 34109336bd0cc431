//! The README's segment quickstart, compiled and run by the segment suite.
//! `lease/tests/readme.rs` checks that the README shows exactly the lines between the markers.

#[rustfmt::skip] // laid out as the README shows it
fn main() -> Result<(), Box<dyn std::error::Error>> {
    // README begin
    use std::sync::Arc;
    use ferroflake_segment::{SegmentAllocator, SegmentConfig, SegmentError, SegmentStore, SqliteStore};

    let store = Arc::new(SqliteStore::open_default()?); // or ferroflake_segment_stores::open(Some(url))?
    match store.create("orders", 1, 1000) {              // once; an existing key is fine
        Ok(()) | Err(SegmentError::KeyExists { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    let allocator = SegmentAllocator::new(store, SegmentConfig::default())?;
    let orders = allocator.key("orders")?; // keep the handle: no lookup per call
    let id = orders.next_id()?;            // one atomic increment; fetches run in the background
    println!("{id}, runway {} IDs", orders.status().runway_ids);
    allocator.shutdown();                  // gives the unissued rest back, unless someone took a range since
    // README end
    Ok(())
}
