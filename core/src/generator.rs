//! The lock-free generator: one `AtomicU64` holding (tick, sequence), one CAS loop.

use crossbeam_utils::CachePadded;

use crate::fork_guard::ForkGuard;
use crate::sync::{AtomicU64, Ordering};
use crate::{Clock, Error, Layout};

/// Settings for a [`Generator`] beyond its layout, node id and clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// How many ticks the generator may run ahead of the clock, by borrowing future ticks
    /// when a tick's sequence is used up, or by riding out a clock that went back. Default 0.
    pub max_drift_ticks: u64,
    /// How long (ms) the generator waits for a clock that went back beyond the drift before
    /// it returns [`Error::ClockMovedBackwards`]. Default 5, as in Meituan's Leaf.
    ///
    /// Every value is accepted and the arithmetic saturates, but no call waits longer than
    /// [`Options::MAX_WAIT_MS`] (one day) for a clock that does not arrive: a larger value,
    /// up to `u64::MAX`, means "wait as long as the clock takes to come back, up to a day".
    pub max_backward_wait_ms: u64,
    /// Issue only ticks after the one containing this Unix ms: the high-water mark of a
    /// previous holder of the node id, or of this process before a restart. Default none.
    ///
    /// The generator treats it as its own last issued tick, and refuses at construction a
    /// resume point it could never issue after, or not without waiting for the clock longer
    /// than a call may: [`Error::LayoutExhausted`] if no tick of the layout follows it, and
    /// [`Error::ResumeInFuture`] if the clock is behind it by more than the drift and the
    /// backward wait bridge (so pass a mark once the clock has passed it, as
    /// `ferroflake-lease` does). A resume point before the layout's epoch changes nothing.
    pub resume_after_ms: Option<u64>,
}

impl Options {
    /// The longest a call waits for a clock that does not arrive, in ms of the clock's time:
    /// one day. It bounds [`max_backward_wait_ms`](Self::max_backward_wait_ms) and the wait
    /// for the next tick, so no option and no tick length can make a call block for good,
    /// even on a clock that never moves. (A call whose clock did arrive may wait again when
    /// other threads took the new tick first; see [`Generator`].)
    pub const MAX_WAIT_MS: u64 = 86_400_000;

    /// Options from the settings a caller gave; each one left out (`None`) keeps its
    /// default. The faces build their options through this, so no face restates a default.
    ///
    /// ```
    /// use ferroflake::Options;
    ///
    /// let options = Options::given(Some(2), None, Some(1_700_000_000_000));
    /// assert_eq!(options.max_drift_ticks, 2);
    /// assert_eq!(options.max_backward_wait_ms, Options::default().max_backward_wait_ms);
    /// assert_eq!(options.resume_after_ms, Some(1_700_000_000_000));
    /// ```
    pub fn given(
        max_drift_ticks: Option<u64>,
        max_backward_wait_ms: Option<u64>,
        resume_after_ms: Option<u64>,
    ) -> Self {
        let defaults = Self::default();
        Options {
            max_drift_ticks: max_drift_ticks.unwrap_or(defaults.max_drift_ticks),
            max_backward_wait_ms: max_backward_wait_ms.unwrap_or(defaults.max_backward_wait_ms),
            resume_after_ms: resume_after_ms.or(defaults.resume_after_ms),
        }
    }

    /// The backward wait a call may spend: the option, capped at [`Self::MAX_WAIT_MS`].
    const fn backward_wait_ms(&self) -> u64 {
        if self.max_backward_wait_ms < Self::MAX_WAIT_MS {
            self.max_backward_wait_ms
        } else {
            Self::MAX_WAIT_MS
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_drift_ticks: 0,
            max_backward_wait_ms: 5,
            resume_after_ms: None,
        }
    }
}

/// Slow-path event counts; see [`Generator::counters`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Times a call waited for the next tick because the sequence was used up.
    pub waits: u64,
    /// Ticks issued ahead of the clock (borrowed within `max_drift_ticks`).
    pub borrowed_ticks: u64,
    /// Calls that found the clock behind the last issued tick by more than the drift
    /// (whether they then waited it out or refused with `ClockMovedBackwards`).
    pub rollbacks: u64,
}

/// Issues unique, increasing IDs for one node under one layout.
///
/// # Guarantees
///
/// - **Unique and strictly increasing.** Every ID is greater than every ID issued before
///   it, in the order the calls take effect (the modification order of one atomic word),
///   across any number of threads sharing one generator (`Generator` is `Send + Sync`).
/// - **No wrap.** When a tick's sequence is used up, the call waits for the next tick. A
///   wait lasts at most one tick plus [`Options::max_backward_wait_ms`], and never more
///   than [`Options::MAX_WAIT_MS`] (one day); a clock that does not reach the next tick
///   within that (or a tick longer than a day) gives [`Error::ClockStalled`]. (Under
///   contention a call may wait again if other threads use up the new tick first:
///   lock-free, each retry means others progressed.) With [`Options::max_drift_ticks`] = N,
///   the generator instead borrows up to N ticks ahead of the clock, and no further.
/// - **No re-issue when the clock goes back.** A rollback within the drift is ridden out by
///   continuing from the last issued tick. Beyond it, the call waits up to
///   [`Options::max_backward_wait_ms`] (at most a day) for the clock to return, then gives
///   [`Error::ClockMovedBackwards`] with the distance. A resume point is a last issued
///   tick too: one the clock could not reach within that wait is refused at construction.
/// - **No overflow.** When the time field runs out, calls give [`Error::LayoutExhausted`];
///   the sign bit is never set.
/// - **Fenced.** Once a fence is set ([`set_fence_ms`](Self::set_fence_ms)), no ID whose
///   tick starts at or after it is issued: calls give [`Error::LeaseExpired`]. The check is
///   one relaxed atomic load.
/// - **Not across `fork()`.** In a process forked after the generator was made, calls give
///   [`Error::GeneratorForked`] (with `std`, on Unix): parent and child would otherwise
///   issue the same IDs. The check is one relaxed atomic load.
/// - **Observable.** [`counters`](Self::counters) reports waits, borrowed ticks and
///   rollbacks; they are counted only on slow paths.
pub struct Generator<C: Clock> {
    /// `tick << sequence_bits | sequence` of the last issued ID.
    state: CachePadded<AtomicU64>,
    /// Ticks at or above this may not be issued (u64::MAX: no fence).
    fence_tick: AtomicU64,
    layout: Layout,
    node: u64,
    options: Options,
    clock: C,
    counters: CachePadded<[AtomicU64; 3]>,
    /// The process this generator was made in: a forked child gets errors, not IDs.
    fork_guard: ForkGuard,
}

const WAITS: usize = 0;
const BORROWED: usize = 1;
const ROLLBACKS: usize = 2;

#[cfg(feature = "std")]
impl Generator<crate::SystemClock> {
    /// A generator on the system clock with default [`Options`].
    ///
    /// # Errors
    /// [`Error::NodeOutOfRange`], [`Error::EpochInFuture`] or [`Error::LayoutExhausted`].
    pub fn new(layout: Layout, node: u64) -> Result<Self, Error> {
        Self::with_clock(layout, node, crate::SystemClock, Options::default())
    }
}

impl<C: Clock> Generator<C> {
    /// A generator on any clock, with options.
    ///
    /// # Errors
    /// [`Error::NodeOutOfRange`], [`Error::EpochInFuture`] or [`Error::LayoutExhausted`]
    /// (judged by the clock now); [`Error::LayoutExhausted`] or [`Error::ResumeInFuture`]
    /// for a resume point the generator could not issue after (see
    /// [`Options::resume_after_ms`]).
    pub fn with_clock(
        layout: Layout,
        node: u64,
        clock: C,
        options: Options,
    ) -> Result<Self, Error> {
        layout.check_node(node)?;
        let now_ms = clock.now_ms();
        layout.check_usable_at(now_ms)?;
        // State 0 marks (tick 0, sequence 0) as used: at most one ID, in the epoch's first
        // tick, is never issued. A resume point marks its whole tick as used.
        let initial = match options.resume_after_ms {
            Some(resume_ms) => resumed_state(&layout, &options, resume_ms, now_ms)?,
            None => 0,
        };
        Ok(Generator {
            state: CachePadded::new(AtomicU64::new(initial)),
            fence_tick: AtomicU64::new(u64::MAX),
            layout,
            node,
            options,
            clock,
            counters: CachePadded::new([AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)]),
            fork_guard: ForkGuard::here(),
        })
    }

    /// Moves a generator that has issued nothing yet past `resume_ms`, as if it had been
    /// made with that resume point, unless it already resumes at or after it.
    #[cfg(all(feature = "std", not(ferroflake_loom)))]
    pub(crate) fn resume_after(&mut self, resume_ms: u64) -> Result<(), Error> {
        let now_ms = self.clock.now_ms();
        let state = resumed_state(&self.layout, &self.options, resume_ms, now_ms)?;
        let current = self.state.get_mut();
        *current = (*current).max(state);
        Ok(())
    }

    /// The layout IDs are made with.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// This generator's node id.
    pub fn node(&self) -> u64 {
        self.node
    }
    /// Whether this process is a fork of the one the generator was made in (then every
    /// call gives [`Error::GeneratorForked`]). Always false without `std` or off Unix.
    /// What wraps a generator uses it to leave the parent's resources alone in a child,
    /// such as a lease the parent still holds.
    pub fn is_forked(&self) -> bool {
        self.fork_guard.is_forked()
    }
    /// The options given at construction.
    pub fn options(&self) -> &Options {
        &self.options
    }
    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The next ID.
    ///
    /// # Errors
    /// [`Error::ClockMovedBackwards`], [`Error::ClockStalled`], [`Error::LayoutExhausted`],
    /// [`Error::LeaseExpired`], or [`Error::GeneratorForked`] in a process forked after the
    /// generator was made; see the type's guarantees.
    #[inline]
    pub fn next_id(&self) -> Result<u64, Error> {
        let (tick, sequence, _) = self.reserve(1)?;
        Ok(self.layout.pack(tick, self.node, sequence, 0))
    }

    /// The next ID if it can be had without waiting; `Ok(None)` where
    /// [`next_id`](Self::next_id) would wait (the tick's sequence is used up, or the clock
    /// went back beyond the drift). For callers that must not block, such as an async
    /// worker: on `None`, call `next_id` where waiting is allowed.
    ///
    /// # Errors
    /// As [`next_id`](Self::next_id), except the errors that only a wait can give
    /// ([`Error::ClockMovedBackwards`], [`Error::ClockStalled`]).
    #[inline]
    pub fn try_next_id(&self) -> Result<Option<u64>, Error> {
        Ok(self
            .reserve_or_not::<false>(1)?
            .map(|(tick, sequence, _)| self.layout.pack(tick, self.node, sequence, 0)))
    }

    /// The next ID, carrying `shard` in its lowest bits.
    ///
    /// # Errors
    /// [`Error::ShardOutOfRange`], or any error of [`next_id`](Self::next_id).
    #[inline]
    pub fn next_id_for_shard(&self, shard: u64) -> Result<u64, Error> {
        self.layout.check_shard(shard)?;
        let (tick, sequence, _) = self.reserve(1)?;
        Ok(self.layout.pack(tick, self.node, sequence, shard))
    }

    /// Fills `ids` with consecutive IDs, reserving a run of sequence numbers per CAS.
    ///
    /// # Errors
    /// Any error of [`next_id`](Self::next_id). The IDs reserved before the error are
    /// skipped, never re-issued, and the buffer's contents are then unspecified.
    pub fn next_ids(&self, ids: &mut [u64]) -> Result<(), Error> {
        let mut filled = 0;
        while filled < ids.len() {
            let (tick, first, count) = self.reserve((ids.len() - filled) as u64)?;
            for (slot, sequence) in ids[filled..].iter_mut().zip(first..first + count) {
                *slot = self.layout.pack(tick, self.node, sequence, 0);
            }
            filled += count as usize;
        }
        Ok(())
    }

    /// Forbids issuing any ID whose tick starts at or after `fence_ms` (Unix ms). A lease
    /// holder moves the fence forward on each renewal; see `ferroflake-lease`.
    pub fn set_fence_ms(&self, fence_ms: u64) {
        let tick = match self.layout.tick_at(fence_ms) {
            // The first tick that starts at or after fence_ms: ceil((fence - epoch) / tick).
            Some(t) if self.layout.tick_start_ms(t) == fence_ms => t,
            Some(t) => t + 1,
            None => 0,
        };
        self.fence_tick.store(tick, Ordering::Relaxed);
    }

    /// Removes the fence.
    pub fn clear_fence(&self) {
        self.fence_tick.store(u64::MAX, Ordering::Relaxed);
    }

    /// The fence as Unix ms (the first tick start that may not be issued), if one is set.
    pub fn fence_ms(&self) -> Option<u64> {
        match self.fence_tick.load(Ordering::Relaxed) {
            u64::MAX => None,
            tick => Some(self.layout.tick_start_ms(tick)),
        }
    }

    /// The start (Unix ms) of the tick of the last issued ID, or of the resume point.
    pub fn last_issued_ms(&self) -> u64 {
        let state = self.state.load(Ordering::Relaxed);
        self.layout
            .tick_start_ms(state >> self.layout.sequence_bits)
    }

    /// Slow-path counts so far.
    pub fn counters(&self) -> Counters {
        let read = |i: usize| self.counters[i].load(Ordering::Relaxed);
        Counters {
            waits: read(WAITS),
            borrowed_ticks: read(BORROWED),
            rollbacks: read(ROLLBACKS),
        }
    }

    #[cold]
    fn count(&self, which: usize) {
        self.counters[which].fetch_add(1, Ordering::Relaxed);
    }

    /// The one step that must be atomic: advance the state from `current` to `next`.
    #[inline(always)]
    fn swap_state(&self, current: u64, next: u64) -> Result<u64, u64> {
        #[cfg(not(ferroflake_loom_mutant))]
        {
            self.state
                .compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed)
        }
        // A deliberately broken step (a store where the CAS belongs), compiled only for
        // scripts/test-rust.sh to show that the loom models catch it.
        #[cfg(ferroflake_loom_mutant)]
        {
            self.state.store(next, Ordering::Relaxed);
            Ok(current)
        }
    }

    /// Claims up to `want` (≥ 1) consecutive sequence numbers in one tick and returns
    /// `(tick, first_sequence, count)`.
    ///
    /// Relaxed ordering is enough: uniqueness and order come from the modification order of
    /// the one state word, which every CAS on it observes; IDs publish no other memory.
    // Always inlined: through the C ABI a call otherwise costs ~1 ns more than from Rust.
    #[inline(always)]
    fn reserve(&self, want: u64) -> Result<(u64, u64, u64), Error> {
        // With WAIT the slow path waits and never gives `None`.
        self.reserve_or_not::<true>(want)?
            .ok_or(Error::ClockStalled { waited_ms: 0 })
    }

    /// [`reserve`](Self::reserve); without `WAIT`, `None` where it would wait.
    #[inline(always)]
    fn reserve_or_not<const WAIT: bool>(
        &self,
        want: u64,
    ) -> Result<Option<(u64, u64, u64)>, Error> {
        self.fork_guard.check()?;
        let layout = &self.layout;
        let sequence_bits = layout.sequence_bits;
        let max_sequence = layout.max_sequence();
        let drift = self.options.max_drift_ticks;
        let mut waited_ms = 0u64;
        let mut now_ms = self.clock.now_ms();
        let mut current = self.state.load(Ordering::Relaxed);
        // Whether `now_ms` was read after `current` was loaded. Only such a reading may
        // condemn the clock: an older one can predate ticks other threads issued meanwhile.
        let mut clock_read_after_state = false;
        let mut rollback_counted = false;
        loop {
            let now_tick = layout.tick_at(now_ms);
            let last_tick = current >> sequence_bits;
            let last_sequence = current & max_sequence;
            let (tick, first) = match now_tick {
                Some(now) if now > last_tick => (now, 0),
                _ if last_sequence < max_sequence => (last_tick, last_sequence + 1),
                _ => (last_tick + 1, 0),
            };
            // The highest tick we may issue now; none if the clock reads before the epoch.
            let horizon = now_tick.map(|now| now.saturating_add(drift));
            if horizon.is_some_and(|h| tick <= h) {
                if tick > layout.max_tick() {
                    return Err(Error::LayoutExhausted {
                        exhausts_at_ms: layout.exhausts_at(),
                    });
                }
                let fence = self.fence_tick.load(Ordering::Relaxed);
                if tick >= fence {
                    return Err(Error::LeaseExpired {
                        fence_ms: layout.tick_start_ms(fence),
                    });
                }
                let count = want.min(max_sequence - first + 1);
                let next = tick << sequence_bits | (first + count - 1);
                match self.swap_state(current, next) {
                    Ok(_) => {
                        if first == 0 && now_tick.is_some_and(|now| tick > now) {
                            self.count(BORROWED);
                        }
                        return Ok(Some((tick, first, count)));
                    }
                    Err(actual) => {
                        current = actual;
                        clock_read_after_state = false;
                        continue;
                    }
                }
            }
            // Slow path: `tick` is beyond the horizon. Either the sequence ran out (wait for
            // the next tick: at most one tick plus the backward wait) or the clock went back
            // (wait at most the backward wait). Both budgets saturate and are capped at
            // MAX_WAIT_MS, so no option or tick length overflows them or waits for good.
            let rolled_back = horizon.map_or(true, |h| last_tick > h);
            if rolled_back && !clock_read_after_state {
                // A caller preempted between reading the clock and loading the state (or
                // losing CAS races) sees other threads' later ticks: not a rollback. Read
                // the clock again before judging it.
                now_ms = self.clock.now_ms();
                clock_read_after_state = true;
                continue;
            }
            if !WAIT {
                return Ok(None);
            }
            let target_ms = layout.tick_start_ms(tick.saturating_sub(drift));
            let gap_ms = target_ms.saturating_sub(now_ms).max(1);
            // A clock that falls back while we wait for the next tick gets the same
            // allowance as one that had fallen back before.
            let budget_ms = if rolled_back {
                self.options.backward_wait_ms()
            } else {
                layout
                    .tick_ms
                    .saturating_add(self.options.backward_wait_ms())
                    .min(Options::MAX_WAIT_MS)
            };
            if rolled_back && !rollback_counted {
                self.count(ROLLBACKS);
                rollback_counted = true;
            }
            if waited_ms.saturating_add(gap_ms) > budget_ms {
                return Err(if rolled_back {
                    Error::ClockMovedBackwards {
                        behind_ms: layout.tick_start_ms(last_tick).saturating_sub(now_ms),
                    }
                } else {
                    Error::ClockStalled { waited_ms }
                });
            }
            if !rolled_back {
                self.count(WAITS);
            }
            self.clock.wait_until_ms(target_ms);
            now_ms = self.clock.now_ms();
            // The budget bounds waiting for a clock that does not arrive. Once it has,
            // losing the new tick to other threads is progress, not a stall: start afresh.
            waited_ms = if now_ms >= target_ms {
                0
            } else {
                waited_ms.saturating_add(gap_ms)
            };
            current = self.state.load(Ordering::Relaxed);
            clock_read_after_state = false;
        }
    }
}

/// The state of a generator whose last issued tick is the one holding `resume_ms`, or an
/// error for a resume point it could not issue after (see [`check_resume_point`]).
fn resumed_state(
    layout: &Layout,
    options: &Options,
    resume_ms: u64,
    now_ms: u64,
) -> Result<u64, Error> {
    match layout.tick_at(resume_ms) {
        Some(tick) => {
            check_resume_point(layout, options, resume_ms, tick, now_ms)?;
            Ok(tick << layout.sequence_bits | layout.max_sequence())
        }
        // Before the epoch: nothing to skip.
        None => Ok(0),
    }
}

/// Refuses a resume point in `tick` that the generator could never issue after, or only
/// after waiting for the clock longer than a call may. Mirrors the first call's decision in
/// `reserve`, which treats the resume point as the last issued tick.
fn check_resume_point(
    layout: &Layout,
    options: &Options,
    resume_ms: u64,
    tick: u64,
    now_ms: u64,
) -> Result<(), Error> {
    if tick >= layout.max_tick() {
        return Err(Error::LayoutExhausted {
            exhausts_at_ms: layout.exhausts_at(),
        });
    }
    // The caller checked that the epoch has begun, so the clock's tick exists.
    let now_tick = layout.tick_at(now_ms).unwrap_or(0);
    let drift = options.max_drift_ticks;
    if tick > now_tick.saturating_add(drift) {
        // Beyond the drift and the next tick: the clock must catch up, as after a rollback.
        let target_ms = layout.tick_start_ms((tick + 1).saturating_sub(drift));
        if target_ms.saturating_sub(now_ms) > options.backward_wait_ms() {
            return Err(Error::ResumeInFuture {
                resume_after_ms: resume_ms,
                now_ms,
            });
        }
    }
    Ok(())
}

impl<C: Clock> core::fmt::Debug for Generator<C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Generator")
            .field("layout", &self.layout)
            .field("node", &self.node)
            .field("options", &self.options)
            .field("last_issued_ms", &self.last_issued_ms())
            .field("fence_ms", &self.fence_ms())
            .field("counters", &self.counters())
            .finish_non_exhaustive()
    }
}
