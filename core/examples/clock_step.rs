//! Issues IDs on the system clock for a few seconds and reports what happened, for
//! scripts/test-rust.sh, which runs it under libfaketime and steps the process's wall clock
//! back and forth meanwhile: a real clock fault, not a manual clock.
//!
//! Prints one line: `ids=N before=A after=Z errors=E max_behind_ms=B other_errors=X
//! duplicates=D order_breaks=O`, where A and Z count the IDs issued before the first error and
//! after the last one.
//! Exits 1 if any ID repeats or goes down.

use std::time::{Duration, Instant};

use ferroflake::{Error, Generator, Layout};

fn main() {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let generator = Generator::new(Layout::twitter(), 1).expect("generator");
    let stop = Instant::now() + Duration::from_secs(seconds);
    let mut ids = Vec::new();
    let (mut behind_errors, mut max_behind, mut other_errors) = (0u64, 0u64, 0u64);
    let (mut before, mut last_error_at) = (None, 0usize);
    while Instant::now() < stop {
        match generator.next_id() {
            Ok(id) => ids.push(id),
            Err(Error::ClockMovedBackwards { behind_ms }) => {
                before.get_or_insert(ids.len());
                last_error_at = ids.len();
                behind_errors += 1;
                max_behind = max_behind.max(behind_ms);
            }
            Err(_) => other_errors += 1,
        }
        // A clock read through libfaketime costs microseconds; no need to hammer it.
        std::thread::sleep(Duration::from_micros(200));
    }
    let order_breaks = ids.windows(2).filter(|w| w[1] <= w[0]).count();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    let duplicates = ids.len() - sorted.len();
    let after = if before.is_some() {
        ids.len() - last_error_at
    } else {
        0
    };
    println!(
        "ids={} before={} after={after} errors={behind_errors} max_behind_ms={max_behind} other_errors={other_errors} \
         duplicates={duplicates} order_breaks={order_breaks}",
        ids.len(),
        before.unwrap_or(ids.len()),
    );
    std::process::exit(i32::from(duplicates > 0 || order_breaks > 0));
}
