//! One core generator per node id per process, shared by the `Generator`s that ask alike.
//!
//! A `.node` addon is loaded once per process, so this static is shared by the main thread
//! and every `worker_threads` worker, which cannot share one JavaScript object. The core's
//! [`ClaimedGenerator`] already refuses a second live generator of a node id and makes a later
//! one continue after the IDs an earlier one issued; on top of it, a `Generator` asking for
//! the same layout, clock (the same `ManualClock` object, for a manual clock) and options
//! joins the live one, and the single atomic word keeps the IDs of all of them unique and
//! increasing. Anything else is refused (`ERR_FERROFLAKE_NODE_IN_USE`) while a `Generator`
//! of the first is open.
//!
//! Each `Generator` holds a [`Membership`]; the entry counts them. `close()` (or
//! `Symbol.dispose`) gives the membership back at once, and the last one gives the node id
//! back to the core, not when the garbage collector gets to it (a `Generator` that is never
//! closed gives it back when collected).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use ferroflake::{AnyClock, ClaimedGenerator, Error, Layout, Options};

use crate::error::Refusal;

pub(crate) type SharedGenerator = Arc<ferroflake::Generator<AnyClock>>;

struct Entry {
    claimed: Arc<ClaimedGenerator<AnyClock>>,
    /// Open `Generator`s of this entry: [`Membership`]s not yet given back.
    members: usize,
}

impl Entry {
    fn is_same(&self, layout: &Layout, clock: &AnyClock, options: &Options) -> bool {
        self.claimed.layout() == layout
            && same_clock(self.claimed.clock(), clock)
            && self.claimed.options() == options
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

/// Live entries by node id: an entry goes when its last membership does.
static REGISTRY: LazyLock<Mutex<HashMap<u64, Entry>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// One open `Generator`'s share of a node id's entry. Dropping the last share gives the
/// node id back to the core.
pub(crate) struct Membership {
    node: u64,
    claimed: Arc<ClaimedGenerator<AnyClock>>,
}

impl Membership {
    pub(crate) fn generator(&self) -> &SharedGenerator {
        self.claimed.shared()
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        let mut registry = lock();
        if let Some(entry) = registry.get_mut(&self.node) {
            if Arc::ptr_eq(&entry.claimed, &self.claimed) {
                entry.members = entry.members.saturating_sub(1);
                if entry.members == 0 {
                    // The entry's claim and this membership's are the last two: both go
                    // now, while the lock keeps the node id from being asked for between.
                    registry.remove(&self.node);
                }
            }
        }
    }
}

/// The registry, locked. A panic while holding the lock cannot leave the map half-written:
/// every write is one insert, one removal or one counter change.
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
    if let Some(entry) = registry.get_mut(&node) {
        if entry.is_same(&layout, &clock, &options) {
            entry.members += 1;
            let claimed = entry.claimed.clone();
            return Ok((Membership { node, claimed }, true));
        }
    }
    let claimed = ClaimedGenerator::new(layout, node, clock, options).map_err(|error| {
        match (&error, registry.get(&node)) {
            // Say which generator holds it, as the JavaScript user wrote it.
            (Error::NodeInUse { .. }, Some(entry)) => Refusal::Explained(
                error,
                format!(
                    "{error}. It has {}: a Generator asking for the same ones shares it",
                    describe(entry)
                ),
            ),
            _ => Refusal::from(error),
        }
    })?;
    let claimed = Arc::new(claimed);
    registry.insert(
        node,
        Entry {
            claimed: claimed.clone(),
            members: 1,
        },
    );
    Ok((Membership { node, claimed }, false))
}

/// A registry entry as a JavaScript user wrote it, for error messages.
fn describe(entry: &Entry) -> String {
    let layout = entry.claimed.layout();
    // A custom layout is named by its spelling, which `Layout.preset` reads back.
    let layout = match layout.preset_name() {
        Some(name) => format!("layout '{name}'"),
        None => format!("layout '{layout}'"),
    };
    let options = entry.claimed.options();
    let resume = options
        .resume_after_ms
        .map_or_else(|| "none".to_owned(), |ms| ms.to_string());
    format!(
        "{layout}, the {} clock, maxDriftTicks {}, maxBackwardWaitMs {}, resumeAfterMs {resume}",
        entry.claimed.clock().kind().name(),
        options.max_drift_ticks,
        options.max_backward_wait_ms
    )
}
