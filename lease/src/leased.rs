//! A generator that issues only while it can prove it holds its node id.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use ferroflake::{Clock, Generator, Layout};

use crate::{Grant, LeaseConfig, LeaseError, LeaseRequest, Registry};

/// Where a leased generator's lease stands.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseStatus {
    /// The last renewal succeeded; IDs are issued up to the fence it set.
    Held,
    /// Renewals are failing. IDs are issued until the local deadline of the last successful
    /// renewal, then refused; a renewal that succeeds again (same lease) resumes issuing.
    Failing {
        /// Failed renewals in a row.
        failures: u32,
        /// The last failure.
        last_error: LeaseError,
    },
    /// The registry says the lease is no longer ours: nothing is issued again.
    Lost,
    /// Released by [`LeasedGenerator::shutdown`] or drop.
    Released,
}

/// A [`Generator`] whose node id is leased from a [`Registry`], fenced in the hot path.
///
/// # Guarantees
///
/// - **Never a guessed or shared id.** The node id comes from the registry. A registry that
///   cannot be reached at start is an error (fail closed).
/// - **Past the previous holder.** Before issuing, the generator waits (at most
///   [`LeaseConfig::max_start_wait`]) until the clock passes the previous holder's
///   high-water mark plus [`LeaseConfig::skew_allowance`], and it issues only later ticks,
///   so a takeover, or a restart with the clock set back, never re-issues an ID.
/// - **Reserved ahead.** Every renewal records a high-water mark ahead of the clock
///   ([`LeaseConfig::reserve_ahead`]) *before* IDs up to it are issued.
/// - **Fenced.** After each successful renewal the generator's fence is set to the earlier
///   of that mark and the local deadline (renewal send time + TTL − safety margin, on the
///   monotonic clock) expressed on the generator's clock. Past it, calls give
///   [`ferroflake::Error::LeaseExpired`]; the check is one relaxed atomic load. The renewal
///   thread also closes the fence itself when the deadline passes unrenewed.
/// - **Recovers only the same lease.** Failing renewals are retried; issuing resumes only
///   when the registry accepts this lease's token again. [`LeaseError::Lost`] stops
///   issuing for good.
/// - **Released with the true mark.** [`shutdown`](Self::shutdown) or drop stops issuing,
///   then releases the id recording the end of the last issued tick.
///
/// ```
/// use std::sync::Arc;
/// use ferroflake::{Layout, SystemClock};
/// use ferroflake_lease::{EmbeddedRegistry, LeaseConfig, LeasedGenerator};
///
/// let dir = std::env::temp_dir().join(format!("ff-leased-doc-{}", std::process::id()));
/// let registry = Arc::new(EmbeddedRegistry::open(&dir)?);
/// let generator =
///     LeasedGenerator::start(Layout::twitter(), SystemClock, registry, LeaseConfig::default())?;
/// let id = generator.next_id()?;
/// assert_eq!(Layout::twitter().decode(id)?.node, generator.node());
/// generator.shutdown()?;
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LeasedGenerator<C: Clock + Send + Sync + 'static> {
    lease: Arc<Lease<C>>,
    renewer: Option<thread::JoinHandle<()>>,
    released: bool,
}

/// What the caller and the renewal thread share.
struct Lease<C: Clock> {
    generator: Generator<C>,
    registry: Arc<dyn Registry>,
    grant: Grant,
    config: LeaseConfig,
    state: Mutex<RenewalState>,
    wake: Condvar,
}

struct RenewalState {
    /// The mark the registry holds for us (raised by each successful renewal).
    reserved_ms: u64,
    /// The local deadline of the last successful renewal.
    deadline: Instant,
    status: LeaseStatus,
    stop: bool,
}

impl<C: Clock + Send + Sync + 'static> LeasedGenerator<C> {
    /// Leases a node id from `registry` and starts issuing under it, renewing in a
    /// background thread.
    ///
    /// # Errors
    /// [`LeaseError::InvalidConfig`]; the registry's error from the claim or the first
    /// renewal ([`LeaseError::Unavailable`], [`LeaseError::NoFreeNode`], ...);
    /// [`LeaseError::BehindHighWater`] if the clock does not pass the previous holder's
    /// mark in time; [`LeaseError::Generator`] if the layout cannot issue now. On any error
    /// after the claim, the id is released again.
    pub fn start(
        layout: Layout,
        clock: C,
        registry: Arc<dyn Registry>,
        config: LeaseConfig,
    ) -> Result<Self, LeaseError> {
        config.validate()?;
        layout.check_usable_at(clock.now_ms())?;
        let request = LeaseRequest {
            node_count: layout.max_node() + 1,
            ttl: config.ttl,
            quarantine: config.quarantine,
            holder: config.holder.clone(),
        };
        let grant = registry.acquire(&request)?;
        let previous = grant.previous_high_water_ms;
        Self::start_with_grant(layout, clock, Arc::clone(&registry), grant.clone(), config)
            .inspect_err(|_| {
                // Best effort: the claim would otherwise block the id until its TTL.
                let _ = registry.release(&grant, previous);
            })
    }

    fn start_with_grant(
        layout: Layout,
        clock: C,
        registry: Arc<dyn Registry>,
        grant: Grant,
        config: LeaseConfig,
    ) -> Result<Self, LeaseError> {
        let resume_after = wait_past_mark(&clock, registry.as_ref(), &grant, &config)?;
        let mut options = config.options;
        if let Some(mark) = resume_after {
            options.resume_after_ms = Some(options.resume_after_ms.map_or(mark, |m| m.max(mark)));
        }
        let generator = Generator::with_clock(layout, grant.node_id, clock, options)?;
        generator.set_fence_ms(0); // nothing may be issued before the first renewal
        let lease = Arc::new(Lease {
            generator,
            registry,
            state: Mutex::new(RenewalState {
                reserved_ms: grant.previous_high_water_ms,
                deadline: Instant::now(),
                status: LeaseStatus::Held,
                stop: false,
            }),
            grant,
            config,
            wake: Condvar::new(),
        });
        lease.renew_once()?;
        let for_thread = Arc::clone(&lease);
        let renewer = thread::Builder::new()
            .name("ferroflake-lease".into())
            .spawn(move || for_thread.renew_until_stopped())
            .map_err(|e| LeaseError::Store {
                registry: lease.registry.name().to_owned(),
                detail: format!("cannot start the renewal thread: {e}"),
            })?;
        Ok(LeasedGenerator {
            lease,
            renewer: Some(renewer),
            released: false,
        })
    }

    /// The next ID.
    ///
    /// # Errors
    /// [`ferroflake::Error::LeaseExpired`] past the fence; any error of
    /// [`Generator::next_id`].
    #[inline]
    pub fn next_id(&self) -> Result<u64, ferroflake::Error> {
        self.lease.generator.next_id()
    }

    /// The next ID, carrying `shard` in its lowest bits.
    ///
    /// # Errors
    /// As [`Generator::next_id_for_shard`].
    #[inline]
    pub fn next_id_for_shard(&self, shard: u64) -> Result<u64, ferroflake::Error> {
        self.lease.generator.next_id_for_shard(shard)
    }

    /// Fills `ids` with consecutive IDs.
    ///
    /// # Errors
    /// As [`Generator::next_ids`].
    pub fn next_ids(&self, ids: &mut [u64]) -> Result<(), ferroflake::Error> {
        self.lease.generator.next_ids(ids)
    }

    /// The fenced generator (for its layout, counters, fence, ...).
    pub fn generator(&self) -> &Generator<C> {
        &self.lease.generator
    }

    /// The leased node id.
    pub fn node(&self) -> u64 {
        self.lease.grant.node_id
    }

    /// The claim as the registry granted it.
    pub fn grant(&self) -> &Grant {
        &self.lease.grant
    }

    /// Where the lease stands now.
    pub fn status(&self) -> LeaseStatus {
        self.lease.state().status.clone()
    }

    /// The high-water mark the registry holds for this lease (Unix ms).
    pub fn reserved_high_water_ms(&self) -> u64 {
        self.lease.state().reserved_ms
    }

    /// Stops issuing, stops renewing and releases the id with the final high-water mark
    /// (the end of the last issued tick). Dropping does the same, ignoring errors.
    ///
    /// # Errors
    /// The registry's error from the release (the claim then lapses after its TTL).
    pub fn shutdown(mut self) -> Result<(), LeaseError> {
        self.stop_and_release()
    }

    fn stop_and_release(&mut self) -> Result<(), LeaseError> {
        if self.released {
            return Ok(());
        }
        self.released = true;
        self.lease.state().stop = true;
        self.lease.wake.notify_all();
        if let Some(renewer) = self.renewer.take() {
            let _ = renewer.join();
        }
        // We own the generator now (no caller can hold `&self`), so nothing is issued
        // after this fence, and the last issued tick is final.
        let generator = &self.lease.generator;
        generator.set_fence_ms(0);
        let final_mark = (generator.last_issued_ms() + generator.layout().tick_ms())
            .max(self.lease.grant.previous_high_water_ms);
        let was_lost = {
            let mut state = self.lease.state();
            let lost = state.status == LeaseStatus::Lost;
            state.status = LeaseStatus::Released;
            lost
        };
        if was_lost {
            return Ok(());
        }
        self.lease.registry.release(&self.lease.grant, final_mark)
    }
}

impl<C: Clock + Send + Sync + 'static> Drop for LeasedGenerator<C> {
    fn drop(&mut self) {
        let _ = self.stop_and_release();
    }
}

impl<C: Clock + Send + Sync + 'static> std::fmt::Debug for LeasedGenerator<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeasedGenerator")
            .field("registry", &self.lease.registry.name())
            .field("node", &self.node())
            .field("epoch", &self.lease.grant.epoch)
            .field("status", &self.status())
            .field("generator", &self.lease.generator)
            .finish_non_exhaustive()
    }
}

impl<C: Clock + Send + Sync + 'static> Lease<C> {
    fn state(&self) -> MutexGuard<'_, RenewalState> {
        // A panic elsewhere while holding the lock leaves plain data; keep going.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Renews once, reserving the mark ahead, and moves the fence on success.
    fn renew_once(&self) -> Result<(), LeaseError> {
        let clock = self.generator.clock();
        let reserved = self.state().reserved_ms;
        let mark = reserved.max(clock.now_ms().saturating_add(ms(self.config.reserve_ahead)));
        let sent = Instant::now();
        self.registry.renew(&self.grant, self.config.ttl, mark)?;
        let deadline = sent + (self.config.ttl - self.config.safety_margin);
        {
            let mut state = self.state();
            state.reserved_ms = mark;
            state.deadline = deadline;
        }
        self.fence_at(mark, deadline);
        Ok(())
    }

    /// Fence = min(mark, the deadline as a time on the generator's clock); closed if the
    /// deadline has passed.
    fn fence_at(&self, mark: u64, deadline: Instant) {
        let fence = match deadline.checked_duration_since(Instant::now()) {
            Some(left) => mark.min(self.generator.clock().now_ms().saturating_add(ms(left))),
            None => 0,
        };
        self.generator.set_fence_ms(fence);
    }

    /// The renewal thread: renew every `renew_every`; on failure retry every
    /// `retry_every`, waking at the deadline to close the fence; stop on `Lost` or stop.
    fn renew_until_stopped(&self) {
        let mut failures = 0u32;
        loop {
            let mut state = self.state();
            let pause = if failures == 0 {
                self.config.renew_every
            } else {
                match state.deadline.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => self.config.retry_every.min(left),
                    _ => self.config.retry_every,
                }
            };
            let wake_at = Instant::now() + pause;
            while !state.stop {
                let Some(left) = wake_at.checked_duration_since(Instant::now()) else {
                    break;
                };
                if left.is_zero() {
                    break;
                }
                state = self
                    .wake
                    .wait_timeout(state, left)
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0;
            }
            if state.stop {
                return;
            }
            drop(state);
            match self.renew_once() {
                Ok(()) => {
                    failures = 0;
                    self.state().status = LeaseStatus::Held;
                }
                Err(LeaseError::Lost { .. }) => {
                    self.generator.set_fence_ms(0);
                    self.state().status = LeaseStatus::Lost;
                    return;
                }
                Err(error) => {
                    failures = failures.saturating_add(1);
                    let mut state = self.state();
                    if Instant::now() >= state.deadline {
                        // Belt and braces: the fence already stops at the deadline on the
                        // generator's clock; this also holds if that clock was set back.
                        self.generator.set_fence_ms(0);
                    }
                    state.status = LeaseStatus::Failing {
                        failures,
                        last_error: error,
                    };
                }
            }
        }
    }
}

/// Waits (bounded) until `clock` passes the previous holder's mark plus the skew
/// allowance, renewing the claim meanwhile. Returns the mark to resume after, if any.
fn wait_past_mark(
    clock: &impl Clock,
    registry: &dyn Registry,
    grant: &Grant,
    config: &LeaseConfig,
) -> Result<Option<u64>, LeaseError> {
    if grant.previous_high_water_ms == 0 {
        return Ok(None);
    }
    let resume_after = grant
        .previous_high_water_ms
        .saturating_add(ms(config.skew_allowance));
    let began = Instant::now();
    let mut renewed = began;
    loop {
        let now = clock.now_ms();
        if now > resume_after {
            return Ok(Some(resume_after));
        }
        if began.elapsed() >= config.max_start_wait {
            return Err(LeaseError::BehindHighWater {
                resume_after_ms: resume_after,
                now_ms: now,
            });
        }
        if renewed.elapsed() >= config.renew_every {
            registry.renew(grant, config.ttl, grant.previous_high_water_ms)?;
            renewed = Instant::now();
        }
        let step = ms(config.renew_every).max(1);
        clock.wait_until_ms(resume_after.saturating_add(1).min(now.saturating_add(step)));
        if clock.now_ms() == now {
            thread::sleep(Duration::from_millis(1)); // a clock that did not move: no spin
        }
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
