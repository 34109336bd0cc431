//! The lease quickstart of docs/leases.md, compiled and run by the lease suite.
//! `tests/readme.rs` checks that docs/leases.md shows exactly the lines marked below.

#[rustfmt::skip] // laid out as docs/leases.md shows it
fn main() -> Result<(), Box<dyn std::error::Error>> {
    // README begin
    use std::sync::Arc;
    use ferroflake::{Layout, SystemClock};
    use ferroflake_lease::{EmbeddedRegistry, LeaseConfig, LeasedGenerator};

    let registry = Arc::new(EmbeddedRegistry::open_default()?);   // or any `Arc<dyn Registry>`
    let ids = LeasedGenerator::start(Layout::twitter(), SystemClock, registry, LeaseConfig::default())?;
    let id = ids.next_id()?;   // Err(Error::LeaseExpired { .. }) once the lease cannot be proven
    ids.shutdown()?;           // stop, then release the id with the final high-water mark
    // README end
    println!("{id}");
    Ok(())
}
