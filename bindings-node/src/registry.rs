//! One core generator per (layout, node id) per process.
//!
//! A `.node` addon is loaded once per process, so this static is shared by the main thread
//! and every `worker_threads` worker. Two `Generator`s built anywhere in the process with
//! the same layout, node id, clock kind and options get the same core generator, whose
//! single atomic word keeps their IDs unique and increasing. Asking for the same layout and
//! node id with a different clock or options while the first is alive is refused
//! (`ERR_FERROFLAKE_NODE_IN_USE`): two generators for one node would repeat IDs.
//!
//! Entries are kept after their last `Generator` is collected, so a generator built later
//! for the same node continues after the IDs already issued instead of starting its tick
//! over. A dormant entry may be replaced with other options; the new generator resumes
//! after the old one's last tick.
//!
//! Generators on a `ManualClock` live outside the registry: their time is the test's own.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use ferroflake::{AnyClock, Layout, Options};

use crate::clock::ClockKind;
use crate::error::{Misuse, Refusal};

pub(crate) type SharedGenerator = Arc<ferroflake::Generator<AnyClock>>;

struct Entry {
    generator: SharedGenerator,
    clock: ClockKind,
    /// The options as asked for (before the resume point a replacement adds).
    options: Options,
}

static REGISTRY: LazyLock<Mutex<HashMap<(Layout, u64), Entry>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The process's generator for (`layout`, `node`), made on first use.
///
/// Returns the generator and whether it already existed.
pub(crate) fn acquire(
    layout: Layout,
    node: u64,
    clock_kind: ClockKind,
    clock: AnyClock,
    options: Options,
) -> Result<(SharedGenerator, bool), Refusal> {
    if clock_kind == ClockKind::Manual {
        let generator = ferroflake::Generator::with_clock(layout, node, clock, options)?;
        return Ok((Arc::new(generator), false));
    }
    // A panic while holding the lock cannot leave the map half-written: every write below
    // is one insert. So a poisoned lock is still a good map.
    let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    let mut effective = options;
    if let Some(entry) = registry.get(&(layout, node)) {
        if entry.clock == clock_kind && entry.options == options {
            return Ok((entry.generator.clone(), true));
        }
        if Arc::strong_count(&entry.generator) > 1 {
            return Err(Refusal::misuse(
                Misuse::NodeInUse,
                format!(
                    "node id {node} already has a live generator in this process for this layout, \
                     with the {} clock, {}; use the same clock and options to share it, or another node id",
                    entry.clock.name(),
                    describe(&entry.options)
                ),
            ));
        }
        let last = entry.generator.last_issued_ms();
        effective.resume_after_ms = Some(options.resume_after_ms.map_or(last, |ms| ms.max(last)));
    }
    let generator = Arc::new(ferroflake::Generator::with_clock(
        layout, node, clock, effective,
    )?);
    registry.insert(
        (layout, node),
        Entry {
            generator: generator.clone(),
            clock: clock_kind,
            options,
        },
    );
    Ok((generator, false))
}

/// Options as a JavaScript user wrote them, for error messages.
fn describe(options: &Options) -> String {
    let resume = options
        .resume_after_ms
        .map_or_else(|| "none".to_owned(), |ms| ms.to_string());
    format!(
        "maxDriftTicks {}, maxBackwardWaitMs {}, resumeAfterMs {resume}",
        options.max_drift_ticks, options.max_backward_wait_ms
    )
}
