//! The segment quickstart of docs/segments.md, compiled and run by the segment suite.
//! `lease/tests/readme.rs` checks that docs/segments.md shows exactly the lines between
//! the markers.

#[rustfmt::skip] // laid out as docs/segments.md shows it
fn main() -> Result<(), Box<dyn std::error::Error>> {
    // README begin
    use std::sync::Arc;
    use ferroflake_segment::{SegmentAllocator, SegmentConfig, SqliteStore};

    // The key was created once, apart from this program: `ferroflake segment create orders
    // --start 1 --step 1000`. A program that creates its keys at every start would make a
    // key again at 1 after a store lost everything.
    let store = Arc::new(SqliteStore::open_default()?); // or ferroflake_segment_stores::open(Some(url))?
    let allocator = SegmentAllocator::new(store, SegmentConfig::default())?;
    let orders = allocator.key("orders")?; // keep the handle: no lookup per call
    let id = orders.next_id()?;            // one atomic increment; fetches run in the background
    println!("{id}, runway {} IDs", orders.status().runway_ids);
    allocator.shutdown();                  // gives the unissued rest back, unless someone took a range since
    // README end
    Ok(())
}
