//! One core generator per node id per process.
//!
//! A `.node` addon is loaded once per process, so this static is shared by the main thread
//! and every `worker_threads` worker. A node id is one node whatever else differs: two
//! layouts (even two that differ only in their epoch) can give equal IDs on one node id, and
//! so can a `ManualClock` that reads the system clock's time. So a node id has at most one
//! live core generator. A `Generator` asking for the same layout, clock (the same
//! `ManualClock` object, for a manual clock) and options joins it, and the single atomic word
//! keeps the IDs of all of them unique and increasing. Anything else is refused
//! (`ERR_FERROFLAKE_NODE_IN_USE`) while a `Generator` of the first is open.
//!
//! Each `Generator` holds a [`Membership`]; the entry counts them. `close()` (or
//! `Symbol.dispose`) gives the membership back at once, so a node id is free for another
//! layout, clock or options as soon as its last `Generator` is closed, not when the garbage
//! collector gets to it (a `Generator` that is never closed gives it back when collected).
//!
//! Entries are kept after their last `Generator` is closed, so a generator built later
//! for the same node id continues after the IDs already issued instead of starting its tick
//! over. A dormant entry may be replaced with another layout, clock or options; the new
//! generator resumes after the old one's last tick.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use ferroflake::{AnyClock, Error, Layout, Options};

use crate::error::{Misuse, Refusal};

pub(crate) type SharedGenerator = Arc<ferroflake::Generator<AnyClock>>;

struct Entry {
    generator: SharedGenerator,
    /// The options as asked for (before the resume point a replacement adds).
    options: Options,
    /// Open `Generator`s of this entry: [`Membership`]s not yet given back.
    members: usize,
}

impl Entry {
    /// Whether an open `Generator` still uses the core generator.
    fn is_live(&self) -> bool {
        self.members > 0
    }

    fn is_same(&self, layout: &Layout, clock: &AnyClock, options: &Options) -> bool {
        self.generator.layout() == layout
            && same_clock(self.generator.clock(), clock)
            && self.options == *options
    }
}

/// The same source: the same kind, and for manual clocks the same `ManualClock` object.
fn same_clock(a: &AnyClock, b: &AnyClock) -> bool {
    match (a, b) {
        (AnyClock::System(_), AnyClock::System(_)) | (AnyClock::Fast(_), AnyClock::Fast(_)) => true,
        (AnyClock::Manual(a), AnyClock::Manual(b)) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

static REGISTRY: LazyLock<Mutex<HashMap<u64, Entry>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// One open `Generator`'s share of a node id's entry. Dropping it gives the share back:
/// once none is left, the node id takes other options.
pub(crate) struct Membership {
    node: u64,
    generator: SharedGenerator,
}

impl Membership {
    pub(crate) fn generator(&self) -> &SharedGenerator {
        &self.generator
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        let mut registry = lock();
        // The entry is this membership's unless a replacement took the node id, which
        // happens only once no member is left: then there is nothing to give back.
        if let Some(entry) = registry.get_mut(&self.node) {
            if Arc::ptr_eq(&entry.generator, &self.generator) {
                entry.members = entry.members.saturating_sub(1);
            }
        }
    }
}

/// The registry, locked. A panic while holding the lock cannot leave the map half-written:
/// every write is one insert or one counter change. So a poisoned lock is still a good map.
fn lock() -> std::sync::MutexGuard<'static, HashMap<u64, Entry>> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The process's generator for `node`, made on first use, with a membership in it.
///
/// Returns the membership and whether the generator already existed.
pub(crate) fn acquire(
    layout: Layout,
    node: u64,
    clock: AnyClock,
    options: Options,
) -> Result<(Membership, bool), Refusal> {
    let mut registry = lock();
    let Some(entry) = registry.get_mut(&node) else {
        let generator = Arc::new(ferroflake::Generator::with_clock(
            layout, node, clock, options,
        )?);
        registry.insert(node, entry_for(&generator, options));
        return Ok((Membership { node, generator }, false));
    };
    if entry.is_same(&layout, &clock, &options) {
        entry.members += 1;
        let generator = entry.generator.clone();
        return Ok((Membership { node, generator }, true));
    }
    // What is wrong with the request itself comes first: it would be refused anyway.
    let candidate = ferroflake::Generator::with_clock(layout, node, clock.clone(), options)?;
    if entry.is_live() {
        return Err(Refusal::misuse(
            Misuse::NodeInUse,
            format!(
                "node id {node} already has a live generator in this process ({}); a node \
                 id is one node whatever the layout, clock or options: use the same ones to \
                 share it, or another node id",
                describe(entry)
            ),
        ));
    }
    // Dormant: the new generator continues after the IDs the old one issued.
    let last = entry.generator.last_issued_ms();
    let generator = if options.resume_after_ms.is_some_and(|ms| ms >= last) {
        candidate
    } else {
        let mut effective = options;
        effective.resume_after_ms = Some(last);
        ferroflake::Generator::with_clock(layout, node, clock, effective).map_err(|error| {
            match error {
                Error::ResumeInFuture { now_ms, .. } => Refusal::misuse(
                    Misuse::NodeInUse,
                    format!(
                        "node id {node} issued IDs up to {last} ms in this process (with {}), \
                         and this generator's clock reads {now_ms} ms: it could repeat them; \
                         use a clock past {last} ms or another node id",
                        describe(entry)
                    ),
                ),
                other => Refusal::from(other),
            }
        })?
    };
    let generator = Arc::new(generator);
    registry.insert(node, entry_for(&generator, options));
    Ok((Membership { node, generator }, false))
}

/// A new entry with its first member.
fn entry_for(generator: &SharedGenerator, options: Options) -> Entry {
    Entry {
        generator: generator.clone(),
        options,
        members: 1,
    }
}

/// A registry entry as a JavaScript user wrote it, for error messages.
fn describe(entry: &Entry) -> String {
    let layout = entry.generator.layout();
    // A custom layout is named by its spelling, which `Layout.preset` reads back.
    let layout = match layout.preset_name() {
        Some(name) => format!("layout '{name}'"),
        None => format!("layout '{layout}'"),
    };
    let options = &entry.options;
    let resume = options
        .resume_after_ms
        .map_or_else(|| "none".to_owned(), |ms| ms.to_string());
    format!(
        "{layout}, the {} clock, maxDriftTicks {}, maxBackwardWaitMs {}, resumeAfterMs {resume}",
        entry.generator.clock().kind().name(),
        options.max_drift_ticks,
        options.max_backward_wait_ms
    )
}
