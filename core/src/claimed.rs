//! One live generator per node id per process.
//!
//! A node id is one node whatever else differs: two layouts (even two that differ only in
//! their epoch) can give equal IDs on one node id, and so can a manual clock that reads the
//! system clock's time. Two live generators of one node id in one process are therefore a
//! duplicate waiting to happen, and one process is the one place that can see both.
//!
//! The table below holds, for each node id used in this process, whether a generator still
//! holds it and the start of the last tick any of its generators issued in. The C, Python and
//! Node faces make their generators through [`ClaimedGenerator`], so they all refuse the
//! second live generator ([`Error::NodeInUse`]) and continue after the first once it is
//! gone.

use core::ops::Deref;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::{Clock, Error, ForkGuard, Generator, Layout, Options};

/// A node id's history in this process.
struct Slot {
    /// A [`ClaimedGenerator`] of this node id is alive.
    live: bool,
    /// The process that claimed it: in a forked child, a live claim is the parent's.
    claimed_in: ForkGuard,
    /// The start (Unix ms) of the last tick an earlier generator of this node id issued in.
    issued_until_ms: u64,
}

type Table = BTreeMap<u64, Slot>;

static TABLE: Mutex<Table> = Mutex::new(BTreeMap::new());

/// The table, locked. Every write is one insert or one field change, so a lock poisoned by a
/// panic elsewhere still guards a whole table.
fn table() -> MutexGuard<'static, Table> {
    fork_safety::install();
    lock_table()
}

fn lock_table() -> MutexGuard<'static, Table> {
    TABLE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A `fork()` while another thread holds the table's lock would leave it locked for good in
/// the child, whose first generator would then wait for ever. So the thread that forks takes
/// the lock just before, and gives it back just after, in the parent and in the child (the
/// `pthread_atfork` pattern): the child always starts with the lock free.
#[cfg(unix)]
mod fork_safety {
    use core::cell::RefCell;
    use core::mem::ManuallyDrop;
    use std::sync::{MutexGuard, Once};

    use super::{lock_table, Table};

    std::thread_local! {
        /// The lock, held by the forking thread from just before the fork to just after.
        /// `ManuallyDrop`, so the slot needs no destructor at thread exit (a child that
        /// leaves through `_exit` would otherwise keep one registered).
        static HELD_ACROSS_FORK: RefCell<Option<ManuallyDrop<MutexGuard<'static, Table>>>> =
            const { RefCell::new(None) };
    }

    extern "C" fn before_fork() {
        let guard = lock_table();
        HELD_ACROSS_FORK.with(|held| *held.borrow_mut() = Some(ManuallyDrop::new(guard)));
    }

    extern "C" fn after_fork() {
        // In the child this thread is the only one: the unlock wakes nobody.
        if let Some(guard) = HELD_ACROSS_FORK.with(|held| held.borrow_mut().take()) {
            drop(ManuallyDrop::into_inner(guard));
        }
    }

    pub(super) fn install() {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            // SAFETY: registers plain extern "C" fns that capture nothing. If registration
            // fails (only for lack of memory), a fork at the wrong instant can still leave
            // the child's table locked.
            unsafe { libc::pthread_atfork(Some(before_fork), Some(after_fork), Some(after_fork)) };
        });
    }
}

#[cfg(not(unix))]
mod fork_safety {
    pub(super) fn install() {}
}

/// A [`Generator`] that holds its node id in this process for as long as it lives.
///
/// While one lives, another for the same node id (whatever its layout, clock or options) is
/// refused with [`Error::NodeInUse`]: share the one generator instead, it is safe across
/// threads. Once it is dropped, the next generator of the node id starts after the last tick
/// it issued in, as if given that tick's start as [`Options::resume_after_ms`]; one whose
/// clock is behind that by more than its drift and backward wait is refused, also with
/// [`Error::NodeInUse`]. (This keeps a later generator of the same layout above every ID
/// the earlier one issued. IDs of two different layouts are not ordered by time at all, so
/// a node id's layout is best kept for the process's life.)
///
/// A child process made by `fork()` inherits the parent's claims: a node id the parent held
/// at the fork is never free in the child, which must use a node id of its own.
///
/// ```
/// use ferroflake::{AnyClock, ClaimedGenerator, ErrorKind, Layout, Options};
///
/// let first = ClaimedGenerator::new(Layout::twitter(), 7, AnyClock::system(), Options::default())?;
/// let id = first.next_id()?;
///
/// let second = ClaimedGenerator::new(Layout::js53(), 7, AnyClock::system(), Options::default());
/// assert_eq!(second.unwrap_err().kind(), ErrorKind::NodeInUse);
///
/// drop(first);
/// let again = ClaimedGenerator::new(Layout::twitter(), 7, AnyClock::system(), Options::default())?;
/// assert!(again.next_id()? > id);
/// # Ok::<(), ferroflake::Error>(())
/// ```
pub struct ClaimedGenerator<C: Clock> {
    generator: Arc<Generator<C>>,
}

/// As the generator's (any clock).
impl<C: Clock> core::fmt::Debug for ClaimedGenerator<C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("ClaimedGenerator")
            .field(&self.generator)
            .finish()
    }
}

impl<C: Clock> ClaimedGenerator<C> {
    /// Claims `node` for this process and makes its generator.
    ///
    /// # Errors
    /// [`Error::NodeInUse`], or anything [`Generator::with_clock`] refuses.
    pub fn new(layout: Layout, node: u64, clock: C, options: Options) -> Result<Self, Error> {
        // What is wrong with the request itself comes first: it would be refused anyway.
        let mut generator = Generator::with_clock(layout, node, clock, options)?;
        let mut table = table();
        let earlier = match table.get(&node) {
            Some(slot) if slot.live => {
                return Err(Error::NodeInUse {
                    node,
                    issued_until_ms: None,
                    held_at_fork: slot.claimed_in.is_forked(),
                })
            }
            Some(slot) => Some(slot.issued_until_ms),
            None => None,
        };
        if let Some(until) = earlier {
            generator.resume_after(until).map_err(|error| match error {
                Error::ResumeInFuture { .. } => Error::NodeInUse {
                    node,
                    issued_until_ms: Some(until),
                    held_at_fork: false,
                },
                other => other,
            })?;
        }
        table.insert(
            node,
            Slot {
                live: true,
                claimed_in: ForkGuard::here(),
                issued_until_ms: earlier.unwrap_or(0),
            },
        );
        Ok(ClaimedGenerator {
            generator: Arc::new(generator),
        })
    }

    /// The generator, shared: a clone outlives the claim, and may not issue once the claim
    /// is dropped (a binding checks its own "closed" flag before every call).
    pub fn shared(&self) -> &Arc<Generator<C>> {
        &self.generator
    }
}

impl<C: Clock> Deref for ClaimedGenerator<C> {
    type Target = Generator<C>;

    fn deref(&self) -> &Generator<C> {
        &self.generator
    }
}

impl<C: Clock> Drop for ClaimedGenerator<C> {
    fn drop(&mut self) {
        // In a forked child the claim is the parent's, which still runs: keep it held.
        if self.generator.is_forked() {
            return;
        }
        let generator = &self.generator;
        if let Some(slot) = table().get_mut(&generator.node()) {
            slot.live = false;
            slot.issued_until_ms = slot.issued_until_ms.max(generator.last_issued_ms());
        }
    }
}
