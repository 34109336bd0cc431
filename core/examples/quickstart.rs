//! The README's Rust quickstart, run by scripts/test-rust.sh, which checks what it prints.
//! `lease/tests/readme.rs` checks that the README shows exactly the lines between the markers.
//!
//! Prints one line: the ID in decimal, the ID in base62, and its timestamp in Unix ms.

#[rustfmt::skip] // laid out as the README shows it
fn main() -> Result<(), Box<dyn std::error::Error>> {
    // README begin
    use ferroflake::{Format, Generator, Layout};

    let generator = Generator::new(Layout::twitter(), 7)?; // node 7: given, never guessed
    let id = generator.next_id()?;
    let parts = Layout::twitter().decode(id)?;              // timestamp_ms, node, sequence, shard
    println!("{id} {} {}", Format::Base62.encode(id)?, parts.timestamp_ms);
    // README end
    Ok(())
}
