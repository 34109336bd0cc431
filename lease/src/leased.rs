//! A generator that issues only while it can prove it holds its node id.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use ferroflake::{ClaimedGenerator, Clock, Generator, Layout};

use crate::error::iso_ms;
use crate::protocol::{self, ms, ClockReading};
use crate::state_file::{self, local_ahead, local_every, Resumable, Saved, SavedClaim, StateFile};
use crate::{Grant, LeaseConfig, LeaseError, LeaseRequest, Registry, Renewal};

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
/// - **Past the previous holder.** Before issuing, the generator waits (within
///   [`LeaseConfig::max_start_wait`]) until the clock passes the previous holder's
///   high-water mark plus [`LeaseConfig::skew_allowance`], and it issues only later ticks,
///   so a takeover, or a restart with the clock set back, never re-issues an ID.
/// - **Past lost records.** When the registry found records missing (a new, deleted or
///   wiped namespace), it reports a floor ([`Grant::floor_wait`]); the generator waits it
///   out, renewing its claim, before it issues, since a holder of the lost records may
///   still be issuing until then. A floor longer than
///   [`LeaseConfig::max_start_wait`] fails the start at once
///   ([`LeaseError::StartWaitTooLong`]): the limit bounds both waits together.
/// - **Reserved ahead.** Every renewal records a high-water mark ahead of the clock
///   ([`LeaseConfig::reserve_ahead`]) *before* IDs up to it are issued.
/// - **Fenced.** After each successful renewal the generator's fence is set to the earlier
///   of that mark and the local deadline (renewal send time + TTL − safety margin, on the
///   monotonic clock) expressed on the generator's clock. Past it, calls give
///   [`ferroflake::Error::LeaseExpired`]; the check is one relaxed atomic load. The renewal
///   thread also wakes at the deadline and closes the fence itself if it passed unrenewed
///   (or, if a renewal call is in progress then, when that call returns: store calls are
///   bounded in time), so a wall clock set back cannot stretch the lease.
/// - **A clock that jumps ahead does not end a healthy lease.** A call that meets the
///   reserved mark while the lease is held (the wall clock stepped forward past it) asks
///   for a renewal at once and retries; only if that renewal fails is it refused.
///   [`explain`](Self::explain) says which of these stopped a call.
/// - **Recovers only the same lease.** Failing renewals are retried; issuing resumes only
///   when the registry accepts this lease's token again. [`LeaseError::Lost`] stops
///   issuing for good; a renewal refused as the caller's setting
///   ([`LeaseError::is_invalid_input`]) stops it until a renewal succeeds.
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
    /// With a state file: the thread that keeps its local mark ahead of the clock, apart
    /// from renewals, so that a registry call that hangs does not hold issuing back.
    keeper: Option<thread::JoinHandle<()>>,
    released: bool,
}

/// What the caller and the renewal thread share.
struct Lease<C: Clock> {
    generator: ClaimedGenerator<C>,
    registry: Arc<dyn Registry>,
    grant: Grant,
    config: LeaseConfig,
    state: Mutex<RenewalState>,
    wake: Condvar,
    /// The claim kept on disk ([`LeaseConfig::state_file`]), if asked for.
    state_file: Option<Mutex<StateFile>>,
}

struct RenewalState {
    /// The mark the registry holds for us (raised by each successful renewal).
    reserved_ms: u64,
    /// The local deadline of the last successful renewal.
    deadline: Instant,
    status: LeaseStatus,
    /// Why the lease was lost, once it was.
    loss: Option<LeaseError>,
    stop: bool,
    /// A caller met the fence while the lease was held: renew without waiting.
    renew_now: bool,
    /// Renewal attempts finished by the renewal thread, so a caller can wait for the next.
    attempts: u64,
    /// The last reading of the generator's clock against the registry's, if both have one.
    clock: Option<ClockReading>,
    /// With a state file: nothing above this (issuing time) is issued until the file says
    /// so, so that a process that resumes the claim issues above it. `u64::MAX` without one.
    local_mark_ms: u64,
    /// The fence is shut (a clock too far off, a lost lease, a stop) until a renewal on an
    /// agreeing clock opens it again: moving the local mark on must not open it.
    shut: bool,
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
        Self::start_reporting(layout, clock, registry, config, &mut |_| {})
    }

    /// As [`start`](Self::start), telling `report` in words why and how long the start
    /// waits, if it has to: for a previous holder's high-water mark, or for the floor after
    /// lost records. A command-line tool prints these, so that a wait is never silent.
    ///
    /// # Errors
    /// As [`start`](Self::start).
    pub fn start_reporting(
        layout: Layout,
        clock: C,
        registry: Arc<dyn Registry>,
        config: LeaseConfig,
        report: &mut dyn FnMut(&str),
    ) -> Result<Self, LeaseError> {
        Self::start_until(layout, clock, registry, config, report, &|| false)
    }

    /// As [`start_reporting`](Self::start_reporting), giving up a wait as soon as `stop`
    /// says so (it is asked every few tens of milliseconds while the start waits): a
    /// command-line tool passes "a signal arrived", so that SIGTERM ends a long wait for a
    /// floor or a mark at once. The claim is released again.
    ///
    /// # Errors
    /// As [`start`](Self::start); [`LeaseError::Stopped`] if `stop` said so.
    pub fn start_until(
        layout: Layout,
        clock: C,
        registry: Arc<dyn Registry>,
        config: LeaseConfig,
        report: &mut dyn FnMut(&str),
        stop: &dyn Fn() -> bool,
    ) -> Result<Self, LeaseError> {
        config.validate()?;
        layout.check_usable_at(clock.now_ms())?;
        let node_count = layout.max_node() + 1;
        let mut state_file = None;
        if let Some(path) = &config.state_file {
            let (file, saved) = StateFile::open(path, report)?;
            if let Some(claim) = saved.and_then(|saved| {
                saved
                    .resumable(&registry.locator(), node_count)
                    .map_err(|why| {
                        report(&format!(
                            "state file {}: not resuming its claim on node id {}: {why}",
                            path.display(),
                            saved.node_id
                        ))
                    })
                    .ok()
            }) {
                match Self::resume(layout, clock, &registry, config, file, claim, report, stop)? {
                    Resumed::Started(generator) => return Ok(generator),
                    Resumed::Gone(afresh) => {
                        let Afresh {
                            layout,
                            clock,
                            config,
                            file,
                        } = *afresh;
                        return Self::claim_afresh(
                            layout,
                            clock,
                            registry,
                            config,
                            Some(file),
                            report,
                            stop,
                        );
                    }
                }
            }
            state_file = Some(file);
        }
        Self::claim_afresh(layout, clock, registry, config, state_file, report, stop)
    }

    /// Claims a node id from the registry and starts under it.
    fn claim_afresh(
        layout: Layout,
        clock: C,
        registry: Arc<dyn Registry>,
        config: LeaseConfig,
        state_file: Option<StateFile>,
        report: &mut dyn FnMut(&str),
        stop: &dyn Fn() -> bool,
    ) -> Result<Self, LeaseError> {
        let request = LeaseRequest {
            node_count: layout.max_node() + 1,
            ttl: config.ttl,
            quarantine: config.quarantine,
            holder: config.holder.clone(),
            max_ttl: config.max_ttl,
            prefer_node: state_file.as_ref().and_then(StateFile::node_id),
        };
        let grant = registry.acquire(&request)?;
        let previous = grant.previous_high_water_ms;
        Self::start_with_grant(
            layout,
            clock,
            Arc::clone(&registry),
            grant.clone(),
            config,
            state_file,
            report,
            stop,
        )
        .inspect_err(|_| {
            // Best effort: the claim would otherwise block the id until its TTL.
            let _ = registry.release(&grant, previous);
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn start_with_grant(
        layout: Layout,
        clock: C,
        registry: Arc<dyn Registry>,
        grant: Grant,
        config: LeaseConfig,
        state_file: Option<StateFile>,
        report: &mut dyn FnMut(&str),
        stop: &dyn Fn() -> bool,
    ) -> Result<Self, LeaseError> {
        let waits = StartWaits {
            registry: registry.as_ref(),
            grant: &grant,
            config: &config,
            stop,
            began: Instant::now(),
        };
        waits.out_floor(report)?;
        let resume_after = waits.past_mark(&clock, report)?;
        let mut options = config.options;
        if let Some(mark) = resume_after {
            options.resume_after_ms = Some(options.resume_after_ms.map_or(mark, |m| m.max(mark)));
        }
        let generator = ClaimedGenerator::new(layout, grant.node_id, clock, options)?;
        generator.set_fence_ms(0); // nothing may be issued before the first renewal
        let lease = Arc::new(Lease {
            generator,
            registry,
            state: Mutex::new(RenewalState {
                reserved_ms: grant.previous_high_water_ms,
                deadline: Instant::now(),
                status: LeaseStatus::Held,
                loss: None,
                stop: false,
                renew_now: false,
                attempts: 0,
                clock: None,
                local_mark_ms: if state_file.is_some() { 0 } else { u64::MAX },
                shut: false,
            }),
            grant,
            config,
            wake: Condvar::new(),
            state_file: state_file.map(Mutex::new),
        });
        lease.renew_once()?;
        crate::peer_clocks::check(
            lease.registry.as_ref(),
            lease.generator.clock(),
            lease.grant.node_id,
            lease.config.clock_skew_limit(),
        )?;
        Self::run(lease)
    }

    /// Resumes the claim a state file kept, as if the process had never stopped: it issues
    /// from the file's marks until the claim's deadline, renewing meanwhile. The registry is
    /// asked first, for at most [`RESUME_ANSWER`]: if it says the claim is gone, the file
    /// is handed back for a fresh claim instead.
    #[allow(clippy::too_many_arguments)]
    fn resume(
        layout: Layout,
        clock: C,
        registry: &Arc<dyn Registry>,
        config: LeaseConfig,
        mut file: StateFile,
        resumable: Resumable,
        report: &mut dyn FnMut(&str),
        stop: &dyn Fn() -> bool,
    ) -> Result<Resumed<C>, LeaseError> {
        let Resumable {
            node_id,
            claim,
            mut deadline,
        } = resumable;
        let path = file.path().display().to_string();
        let grant = Grant {
            node_id,
            token: claim.token.clone(),
            epoch: claim.epoch,
            // Nothing above the local mark was issued: a release records at least it.
            previous_high_water_ms: claim.local_mark_ms,
            floor_wait: Duration::ZERO,
        };
        let status = match ask_within(registry, &grant, &config, claim.reserved_ms) {
            Answer::Renewed(sent) => {
                deadline = deadline.max(sent + (config.ttl - config.safety_margin));
                LeaseStatus::Held
            }
            Answer::Refused(LeaseError::Lost { why, .. }) => {
                report(&format!(
                    "state file {path}: the {} registry says the claim on node id {node_id} \
                     is gone ({}); claiming afresh",
                    registry.name(),
                    why.describe()
                ));
                let node_count = layout.max_node() + 1;
                file.save(&mut Saved::released(
                    &registry.locator(),
                    node_count,
                    node_id,
                ))?;
                return Ok(Resumed::Gone(Box::new(Afresh {
                    layout,
                    clock,
                    config,
                    file,
                })));
            }
            Answer::Refused(error) => LeaseStatus::Failing {
                failures: 1,
                last_error: error,
            },
            Answer::Silent => LeaseStatus::Failing {
                failures: 0,
                last_error: LeaseError::Unavailable {
                    registry: registry.name().to_owned(),
                    detail: format!("no answer within {RESUME_ANSWER:?} of the restart"),
                },
            },
        };
        if status == LeaseStatus::Held {
            // Before waiting for the mark: a clock set far back is the clock's fault, and
            // the registry can say so now.
            read_clocks(&clock, registry.as_ref(), &config)?;
            report(&format!(
                "state file {path}: resumed the claim on node id {node_id} (the {} registry \
                 renewed it)",
                registry.name()
            ));
        }
        if let LeaseStatus::Failing { last_error, .. } = &status {
            report(&format!(
                "state file {path}: resuming node id {node_id} without the {} registry \
                 ({last_error}); issuing until the claim's deadline in {} unless a renewal \
                 succeeds first",
                registry.name(),
                humantime::format_duration(round_ms(
                    deadline.saturating_duration_since(Instant::now())
                )),
            ));
        }
        // Issue above everything the last process may have issued: its local mark.
        let began = Instant::now();
        let limit = config.start_wait_limit();
        let behind = claim.local_mark_ms.saturating_sub(clock.now_ms());
        if behind > ms(local_ahead(config.ttl)) {
            report(&format!(
                "state file {path}: this clock reads {} behind the mark the last run of this \
                 claim reached ({}), further than it keeps ahead: the clock appears to have \
                 been set back since; waiting for it to pass the mark (at most {})",
                humantime::format_duration(Duration::from_millis(behind)),
                iso_ms(claim.local_mark_ms),
                humantime::format_duration(limit),
            ));
        }
        while clock.now_ms() <= claim.local_mark_ms {
            if stop() {
                return Err(LeaseError::Stopped { node_id });
            }
            if began.elapsed() >= limit {
                return Err(LeaseError::BehindHighWater {
                    node_id,
                    resume_after_ms: claim.local_mark_ms,
                    now_ms: clock.now_ms(),
                });
            }
            let now = clock.now_ms();
            clock.wait_until_ms(
                claim
                    .local_mark_ms
                    .saturating_add(1)
                    .min(now + ms(STOP_POLL)),
            );
            if clock.now_ms() == now {
                thread::sleep(Duration::from_millis(1)); // a clock that did not move: no spin
            }
        }
        let mut options = config.options;
        options.resume_after_ms = Some(
            options
                .resume_after_ms
                .map_or(claim.local_mark_ms, |m| m.max(claim.local_mark_ms)),
        );
        let generator = ClaimedGenerator::new(layout, node_id, clock, options)?;
        generator.set_fence_ms(0);
        let lease = Arc::new(Lease {
            generator,
            registry: Arc::clone(registry),
            state: Mutex::new(RenewalState {
                reserved_ms: claim.reserved_ms,
                deadline,
                status,
                loss: None,
                stop: false,
                renew_now: false,
                attempts: 0,
                clock: None,
                local_mark_ms: claim.local_mark_ms,
                shut: false,
            }),
            grant,
            config,
            wake: Condvar::new(),
            state_file: Some(Mutex::new(file)),
        });
        if lease.state().status == LeaseStatus::Held {
            lease.renew_once()?; // the clock check before the first ID, and the fence
        } else {
            lease.keep_local_mark()?;
        }
        Self::run(lease).map(Resumed::Started)
    }

    /// Starts the renewal thread of a lease whose first renewal is done (and, with a state
    /// file, the thread that keeps its local mark ahead).
    fn run(lease: Arc<Lease<C>>) -> Result<Self, LeaseError> {
        let spawn = |name: &str, work: fn(&Lease<C>)| {
            let for_thread = Arc::clone(&lease);
            thread::Builder::new()
                .name(name.into())
                .spawn(move || work(&for_thread))
                .map_err(|e| LeaseError::Store {
                    registry: lease.registry.name().to_owned(),
                    detail: format!("cannot start the {name} thread: {e}"),
                })
        };
        let renewer = spawn("ferroflake-lease", Lease::renew_until_stopped).inspect_err(|_| {
            // The claim will be given back: the file must not keep it.
            let _ = lease.save_gone();
        })?;
        let mut generator = LeasedGenerator {
            lease: Arc::clone(&lease),
            renewer: Some(renewer),
            keeper: None,
            released: false,
        };
        if lease.state_file.is_some() {
            // On failure, dropping `generator` stops the renewal thread and releases.
            generator.keeper = Some(spawn("ferroflake-lease-state", Lease::keep_until_stopped)?);
        }
        Ok(generator)
    }

    /// The next ID.
    ///
    /// # Errors
    /// [`ferroflake::Error::LeaseExpired`] past the fence; any error of
    /// [`Generator::next_id`].
    #[inline]
    pub fn next_id(&self) -> Result<u64, ferroflake::Error> {
        self.lease.generator.next_id().or_else(|e| {
            self.lease
                .after_refusal(e, || self.lease.generator.next_id())
        })
    }

    /// The next ID, carrying `shard` in its lowest bits.
    ///
    /// # Errors
    /// As [`Generator::next_id_for_shard`].
    #[inline]
    pub fn next_id_for_shard(&self, shard: u64) -> Result<u64, ferroflake::Error> {
        let generator = &self.lease.generator;
        generator.next_id_for_shard(shard).or_else(|e| {
            self.lease
                .after_refusal(e, || generator.next_id_for_shard(shard))
        })
    }

    /// Fills `ids` with consecutive IDs.
    ///
    /// # Errors
    /// As [`Generator::next_ids`].
    pub fn next_ids(&self, ids: &mut [u64]) -> Result<(), ferroflake::Error> {
        let generator = &self.lease.generator;
        match generator.next_ids(ids) {
            Ok(()) => Ok(()),
            Err(e) => self.lease.after_refusal(e, || generator.next_ids(ids)),
        }
    }

    /// Why calls are refused, in words that name the node id, the registry and the cause:
    /// the claim was lost (and why), renewals are failing, or the clock jumped ahead past
    /// the reserved mark. For any error other than a refused lease, its own text.
    pub fn explain(&self, error: &ferroflake::Error) -> String {
        if !matches!(error, ferroflake::Error::LeaseExpired { .. }) {
            return error.to_string();
        }
        let node = self.node();
        let registry = self.lease.registry.name();
        let state = self.lease.state();
        match &state.status {
            LeaseStatus::Lost => match &state.loss {
                Some(LeaseError::Lost { why, .. }) => format!(
                    "node id {node} was lost: the {registry} registry says {}; this process \
                     issues nothing more under it",
                    why.describe()
                ),
                _ => format!("node id {node} was lost at the {registry} registry"),
            },
            LeaseStatus::Failing {
                last_error: skew @ LeaseError::ClockSkew { .. },
                ..
            } => format!("node id {node}: {skew}"),
            LeaseStatus::Failing {
                failures,
                last_error,
            } => format!(
                "node id {node}: {failures} renewals with the {registry} registry failed in a \
                 row (last: {last_error}), and the lease's local deadline has passed, so \
                 issuing stopped; it resumes if a renewal succeeds under the same claim"
            ),
            LeaseStatus::Released => format!("node id {node}: the lease was released"),
            _ if Instant::now() >= state.deadline => format!(
                "node id {node}: the lease's local deadline passed before a renewal with the \
                 {registry} registry succeeded (the process was paused or starved for longer \
                 than its TTL allows), so issuing stopped; it resumes if a renewal succeeds \
                 under the same claim"
            ),
            _ => format!(
                "node id {node}: the clock jumped ahead past the reserved high-water mark \
                 ({}) and an immediate renewal with the {registry} registry did not succeed",
                iso_ms(state.reserved_ms)
            ),
        }
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

    /// The generator's clock against the registry's, as the last renewal read it: `None`
    /// if the registry reports no clock (etcd) or the generator's clock does not follow
    /// real time (a `ManualClock`). Beyond
    /// [`LeaseConfig::max_clock_skew`](crate::LeaseConfig::max_clock_skew), nothing is
    /// issued and the status says why ([`LeaseError::ClockSkew`]).
    pub fn clock_skew(&self) -> Option<ClockReading> {
        self.lease.state().clock
    }

    /// The high-water mark the registry holds for this lease (Unix ms).
    pub fn reserved_high_water_ms(&self) -> u64 {
        self.lease.state().reserved_ms
    }

    /// Stops issuing, stops renewing and releases the id with the final high-water mark
    /// (the end of the last issued tick). Dropping does the same, ignoring errors. In a
    /// process forked after the lease was taken it does nothing: the lease is the parent's.
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
        if self.lease.generator.is_forked() {
            // A child of the process that holds the lease: the lease and its renewal
            // thread are the parent's (the thread was not copied by fork, so it cannot be
            // joined), and the parent still issues under it. Releasing it here would let
            // another process claim the node id while the parent issues.
            std::mem::forget(self.renewer.take());
            std::mem::forget(self.keeper.take());
            return Ok(());
        }
        self.lease.state().stop = true;
        self.lease.wake.notify_all();
        for thread in [self.renewer.take(), self.keeper.take()]
            .into_iter()
            .flatten()
        {
            let _ = thread.join();
        }
        // We own the generator now (no caller can hold `&self`), so nothing is issued
        // after this fence, and the last issued tick is final.
        let generator = &self.lease.generator;
        generator.set_fence_ms(0);
        let final_mark = protocol::final_mark(
            generator.last_issued_ms(),
            generator.layout().tick_ms(),
            self.lease.grant.previous_high_water_ms,
        );
        let status = std::mem::replace(&mut self.lease.state().status, LeaseStatus::Released);
        match status {
            LeaseStatus::Lost => return Ok(()),
            LeaseStatus::Failing { last_error, .. } if self.lease.state_file.is_some() => {
                // Renewals were failing: the registry is likely away, and a release sent
                // now could be applied with its answer lost. None is sent: the file keeps
                // the claim with the exact final mark, for a restart to resume, even
                // without the registry; unless one does, the claim lapses at its TTL.
                self.lease.save_kept(final_mark)?;
                return Err(last_error);
            }
            _ => {}
        }
        // With a state file, the file gives the claim up first, for good: a restart must
        // never resume a claim the registry may have handed on, and a release that failed
        // may still have been applied (its answer lost). If the file cannot be written, the
        // claim is left to lapse instead, so that the next holder waits out the whole
        // reserved mark.
        self.lease.save_gone()?;
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
        // The clocks first: a mark reserved on a clock far from the registry's (years
        // ahead) would hold the id back from every later holder for as long.
        let (skewed, read) = match self.read_clocks() {
            Ok(read) => {
                self.state().clock = read.map(|(reading, _)| reading);
                (None, read)
            }
            Err(skew @ LeaseError::ClockSkew { .. }) => (Some(skew), None),
            Err(other) => return Err(other),
        };
        let skew_ms = match &skewed {
            Some(LeaseError::ClockSkew { skew_ms, .. }) => Some(*skew_ms),
            _ => read.map(|(reading, _)| reading.skew_ms),
        };
        let clock = self.generator.clock();
        let read_at = (Instant::now(), clock.now_ms());
        let reserved = self.state().reserved_ms;
        let mark = match skewed {
            None => protocol::reserve_mark(reserved, clock.now_ms(), self.config.reserve_ahead),
            Some(_) => reserved,
        };
        let sent = Instant::now();
        let renewal = Renewal {
            clock_skew_ms: skew_ms,
            ..Renewal::new(self.config.ttl, mark)
        };
        self.registry.renew(&self.grant, &renewal)?;
        let deadline = sent + (self.config.ttl - self.config.safety_margin);
        // The fence is set on the clock as it reads now: it must still agree.
        let skewed = skewed.or_else(|| self.stepped_since(read?, read_at));
        {
            let mut state = self.state();
            state.reserved_ms = mark;
            state.deadline = deadline;
            if let Some(skew) = skewed {
                // Renewed, keeping the mark, but issuing on this clock is not covered:
                // stopped until it agrees.
                state.shut = true;
                self.generator.set_fence_ms(0);
                return Err(skew);
            }
            state.shut = false;
        }
        // With a state file, the fence follows the local mark once it is on disk.
        self.keep_local_mark()?;
        self.open_fence(&self.state());
        Ok(())
    }

    /// With a state file: moves the local mark on to [`local_ahead`] past the clock (never
    /// past the reserved mark), writes the claim, and only then lets the fence follow.
    /// Nothing to do past the deadline, with the fence shut, or without a state file.
    ///
    /// # Errors
    /// [`LeaseError::StateFile`] if the file cannot be written; the fence stays where it
    /// was.
    fn keep_local_mark(&self) -> Result<(), LeaseError> {
        let Some(file) = &self.state_file else {
            return Ok(());
        };
        // Held throughout, so that the file's mark and the one in memory only grow.
        let mut file = lock(file);
        let (reserved, deadline, local) = {
            let state = self.state();
            if state.shut {
                return Ok(());
            }
            (state.reserved_ms, state.deadline, state.local_mark_ms)
        };
        let Some(left) = deadline
            .checked_duration_since(Instant::now())
            .filter(|left| !left.is_zero())
        else {
            return Ok(());
        };
        let ahead = self
            .generator
            .clock()
            .now_ms()
            .saturating_add(ms(local_ahead(self.config.ttl)));
        let mark = local.max(ahead.min(reserved));
        file.save(&mut self.saved_claim(reserved, left, mark))?;
        let mut state = self.state();
        state.local_mark_ms = state.local_mark_ms.max(mark);
        self.open_fence(&state);
        Ok(())
    }

    /// The state file's contents for this claim.
    fn saved_claim(&self, reserved_ms: u64, left: Duration, local_mark_ms: u64) -> Saved {
        Saved {
            generation: 0,
            lock_file: (0, 0),
            lock_changed_ns: 0,
            registry: self.registry.locator(),
            node_count: self.generator.layout().max_node() + 1,
            node_id: self.grant.node_id,
            claim: Some(SavedClaim {
                token: self.grant.token.clone(),
                epoch: self.grant.epoch,
                boot_id: String::new(),
                deadline_boot_ms: state_file::boot_deadline_ms(left),
                reserved_ms,
                local_mark_ms,
            }),
        }
    }

    /// With a state file, after the last issue, when no release is sent: the claim kept
    /// with the exact final mark, so that a restart resumes it without waiting (or given up,
    /// past its deadline).
    fn save_kept(&self, final_mark: u64) -> Result<(), LeaseError> {
        let Some(file) = &self.state_file else {
            return Ok(());
        };
        let (reserved, deadline) = {
            let state = self.state();
            (state.reserved_ms, state.deadline)
        };
        match deadline_left(deadline).filter(|left| !left.is_zero()) {
            Some(left) => lock(file).save(&mut self.saved_claim(reserved, left, final_mark)),
            None => self.save_gone(),
        }
    }

    /// Reads the generator's clock against the registry's: `Ok(None)` if either has none
    /// to compare, [`LeaseError::ClockSkew`] beyond the limit.
    fn read_clocks(&self) -> Result<Option<(ClockReading, u64)>, LeaseError> {
        read_clocks(self.generator.clock(), self.registry.as_ref(), &self.config).inspect_err(
            |skewed| {
                if let LeaseError::ClockSkew {
                    skew_ms,
                    uncertainty_ms,
                    ..
                } = skewed
                {
                    self.state().clock = Some(ClockReading {
                        skew_ms: *skew_ms,
                        uncertainty_ms: *uncertainty_ms,
                    });
                }
            },
        )
    }

    /// The reading `read` (with the registry's clock then), carried forward to now: the
    /// generator's clock must have moved by the monotonic time that passed since `read_at`
    /// (an instant and the clock then). `Some` refusal if the skew it then implies is past
    /// the limit: the clock stepped after it was checked.
    fn stepped_since(
        &self,
        (reading, registry_ms): (ClockReading, u64),
        (at, clock_then_ms): (Instant, u64),
    ) -> Option<LeaseError> {
        let moved = i128::from(self.generator.clock().now_ms()) - i128::from(clock_then_ms);
        let passed = i128::try_from(at.elapsed().as_millis()).unwrap_or(i128::MAX);
        let stepped = i64::try_from(moved - passed).unwrap_or(i64::MAX);
        let now = ClockReading {
            skew_ms: reading.skew_ms.saturating_add(stepped),
            ..reading
        };
        now.beyond(self.config.clock_skew_limit())
            .then(|| self.skewed(now, registry_ms))
    }

    /// The refusal of a clock `reading` shows past the limit, kept as the last reading.
    fn skewed(&self, reading: ClockReading, registry_ms: u64) -> LeaseError {
        self.state().clock = Some(reading);
        skewed(self.registry.as_ref(), &self.config, reading, registry_ms)
    }

    /// Sets the fence from `state`: min(reserved mark, local mark, the deadline as a time
    /// on the generator's clock); closed if the deadline has passed or the fence is shut.
    fn open_fence(&self, state: &RenewalState) {
        let left = deadline_left(state.deadline).filter(|_| !state.shut);
        let mark = state.reserved_ms.min(state.local_mark_ms);
        let fence = protocol::fence_ms(mark, left, self.generator.clock().now_ms());
        self.generator.set_fence_ms(fence);
    }

    /// The cold path of a refused call: if the lease is held and only the reserved mark
    /// stopped it (the clock jumped ahead), renew now and try once more.
    #[cold]
    fn after_refusal<T>(
        &self,
        error: ferroflake::Error,
        retry: impl FnOnce() -> Result<T, ferroflake::Error>,
    ) -> Result<T, ferroflake::Error> {
        if !matches!(error, ferroflake::Error::LeaseExpired { .. }) || !self.renew_now() {
            return Err(error);
        }
        retry()
    }

    /// Asks the renewal thread for an immediate renewal and waits (at most until the local
    /// deadline) for it; `true` if it succeeded.
    fn renew_now(&self) -> bool {
        let mut state = self.state();
        let now = Instant::now();
        if state.status != LeaseStatus::Held || state.stop || now >= state.deadline {
            return false;
        }
        let give_up = state.deadline;
        let seen = state.attempts;
        state.renew_now = true;
        self.wake.notify_all();
        while state.attempts == seen && !state.stop {
            let Some(left) = give_up.checked_duration_since(Instant::now()) else {
                return false;
            };
            state = self
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
        state.attempts != seen && state.status == LeaseStatus::Held
    }

    /// The renewal thread: renew every `renew_every`; on failure retry every
    /// `retry_every`, waking at the deadline to close the fence; stop on `Lost` or stop.
    fn renew_until_stopped(&self) {
        let mut failures = match self.state().status {
            LeaseStatus::Failing { failures, .. } => failures,
            _ => 0,
        };
        loop {
            let state = self.state();
            let every = if failures == 0 {
                self.config.renew_every
            } else {
                self.config.retry_every
            };
            // Wake at the deadline at the latest, to close the fence there if unrenewed.
            let pause = match deadline_left(state.deadline) {
                Some(left) if !left.is_zero() => jitter(every).min(left),
                _ => jitter(every),
            };
            let mut state =
                self.wait_until(state, Instant::now() + pause, |s| s.stop || s.renew_now);
            if state.stop {
                return;
            }
            state.renew_now = false;
            if Instant::now() >= state.deadline {
                // Unrenewed at the deadline: the fence already stops issuing there on the
                // generator's clock; closing it also holds if that clock was set back.
                self.generator.set_fence_ms(0);
            }
            drop(state);
            let outcome = self.renew_once();
            let mut state = self.state();
            state.attempts += 1;
            self.wake.notify_all();
            match outcome {
                Ok(()) => {
                    failures = 0;
                    state.status = LeaseStatus::Held;
                }
                Err(lost @ LeaseError::Lost { .. }) => {
                    state.shut = true;
                    self.generator.set_fence_ms(0);
                    state.status = LeaseStatus::Lost;
                    state.loss = Some(lost);
                    drop(state);
                    // Best effort: the claim is gone; keep only the node id to ask for.
                    let _ = self.save_gone();
                    return;
                }
                Err(error) => {
                    failures = failures.saturating_add(1);
                    // A renewal refused as a setting that cannot work (a service address
                    // whose servers turned out to serve two registries) proves nothing of
                    // the claim: issuing stops now, not at the deadline, and resumes if a
                    // renewal succeeds.
                    if error.is_invalid_input() || Instant::now() >= state.deadline {
                        // At the deadline, belt and braces: the fence already stops there
                        // on the generator's clock; this also holds if that clock was set
                        // back.
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

    /// Waits on the lease's condition until `wake_at`, or until `done` holds of the state.
    fn wait_until<'a>(
        &self,
        mut state: MutexGuard<'a, RenewalState>,
        wake_at: Instant,
        done: impl Fn(&RenewalState) -> bool,
    ) -> MutexGuard<'a, RenewalState> {
        while !done(&state) {
            let Some(left) = deadline_left(wake_at).filter(|left| !left.is_zero()) else {
                break;
            };
            state = self
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
        state
    }

    /// The state file's thread: every [`local_every`], moves the local mark on (and the
    /// fence with it), whatever the registry calls are doing; stops with the lease.
    fn keep_until_stopped(&self) {
        let every = local_every(self.config.ttl);
        loop {
            {
                let state = self.wait_until(self.state(), Instant::now() + every, |s| s.stop);
                if state.stop || state.status == LeaseStatus::Lost {
                    return;
                }
            }
            if let Err(error) = self.keep_local_mark() {
                // Issuing stops at the mark already on disk; the status says why.
                let mut state = self.state();
                if state.status == LeaseStatus::Held {
                    state.status = LeaseStatus::Failing {
                        failures: 0,
                        last_error: error,
                    };
                }
            }
        }
    }

    /// With a state file: the claim is gone; only the node id is kept, to be asked for
    /// first.
    fn save_gone(&self) -> Result<(), LeaseError> {
        let Some(file) = &self.state_file else {
            return Ok(());
        };
        let node_count = self.generator.layout().max_node() + 1;
        lock(file).save(&mut Saved::released(
            &self.registry.locator(),
            node_count,
            self.grant.node_id,
        ))
    }
}

/// What resuming a saved claim came to.
enum Resumed<C: Clock + Send + Sync + 'static> {
    /// Issuing under the saved claim.
    Started(LeasedGenerator<C>),
    /// The registry says the claim is gone: what a fresh claim needs back.
    Gone(Box<Afresh<C>>),
}

/// What a fresh claim needs, handed back by a resume that found its claim gone.
struct Afresh<C> {
    layout: Layout,
    clock: C,
    config: LeaseConfig,
    file: StateFile,
}

/// Reads `clock` against `registry`'s: `Ok(None)` if either has none to compare (the
/// registry's reading with it otherwise), [`LeaseError::ClockSkew`] beyond the limit.
fn read_clocks(
    clock: &impl Clock,
    registry: &dyn Registry,
    config: &LeaseConfig,
) -> Result<Option<(ClockReading, u64)>, LeaseError> {
    if !clock.tracks_real_time() {
        return Ok(None);
    }
    let before_ms = clock.now_ms();
    let Some(registry_ms) = registry.wall_clock_ms()? else {
        return Ok(None);
    };
    let reading = ClockReading::new(before_ms, registry_ms, clock.now_ms());
    if reading.beyond(config.clock_skew_limit()) {
        return Err(skewed(registry, config, reading, registry_ms));
    }
    Ok(Some((reading, registry_ms)))
}

/// The refusal of a clock `reading` shows past the limit.
fn skewed(
    registry: &dyn Registry,
    config: &LeaseConfig,
    reading: ClockReading,
    registry_ms: u64,
) -> LeaseError {
    LeaseError::ClockSkew {
        registry: registry.name().to_owned(),
        ours_ms: registry_ms.saturating_add_signed(reading.skew_ms),
        registry_ms,
        skew_ms: reading.skew_ms,
        uncertainty_ms: reading.uncertainty_ms,
        limit: config.clock_skew_limit(),
        peers_skew_ms: None,
    }
}

/// What the registry said to a resumed claim's first renewal.
enum Answer {
    /// Renewed; the renewal was sent then.
    Renewed(Instant),
    /// Refused or failed.
    Refused(LeaseError),
    /// No answer in time (the call goes on, and its answer is dropped).
    Silent,
}

/// Renews `grant` with `mark`, waiting at most [`RESUME_ANSWER`] for the answer: a registry
/// that hangs must not hold back a claim that can be resumed without it.
fn ask_within(
    registry: &Arc<dyn Registry>,
    grant: &Grant,
    config: &LeaseConfig,
    mark: u64,
) -> Answer {
    let (tell, answer) = std::sync::mpsc::channel();
    let (registry, grant, ttl) = (Arc::clone(registry), grant.clone(), config.ttl);
    let asked = thread::Builder::new()
        .name("ferroflake-resume".into())
        .spawn(move || {
            let sent = Instant::now();
            let _ = tell.send(
                registry
                    .renew(&grant, &Renewal::new(ttl, mark))
                    .map(|()| sent),
            );
        });
    if let Err(e) = asked {
        return Answer::Refused(LeaseError::Store {
            registry: String::new(),
            detail: format!("cannot start a thread: {e}"),
        });
    }
    match answer.recv_timeout(RESUME_ANSWER) {
        Ok(Ok(sent)) => Answer::Renewed(sent),
        Ok(Err(e)) => Answer::Refused(e),
        Err(_) => Answer::Silent,
    }
}

/// `mutex` locked, as plain data even if a panic elsewhere poisoned it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How long a resumed claim waits for the registry's first answer before it issues without
/// it: long enough for a registry that answers, short enough to ride out one that hangs.
const RESUME_ANSWER: Duration = Duration::from_millis(1_000);

/// How often a waiting start asks whether it should stop.
const STOP_POLL: Duration = Duration::from_millis(50);

/// The waits of a start, between the claim and the first issue: each renews the claim
/// meanwhile and ends early when `stop` says so.
struct StartWaits<'a> {
    registry: &'a dyn Registry,
    grant: &'a Grant,
    config: &'a LeaseConfig,
    stop: &'a dyn Fn() -> bool,
    /// When the waits began: `max_start_wait` bounds them together.
    began: Instant,
}

impl StartWaits<'_> {
    /// Renews the claim if `renewed` is a renewal period ago, and says whether to stop.
    fn keep(&self, renewed: &mut Instant) -> Result<(), LeaseError> {
        if (self.stop)() {
            return Err(LeaseError::Stopped {
                node_id: self.grant.node_id,
            });
        }
        if renewed.elapsed() >= self.config.renew_every {
            let renewal = Renewal::new(self.config.ttl, self.grant.previous_high_water_ms);
            self.registry.renew(self.grant, &renewal)?;
            *renewed = Instant::now();
        }
        Ok(())
    }

    /// Waits out the floor the registry reported (the floor can outlast the TTL), or
    /// refuses at once if it is longer than the start may wait.
    fn out_floor(&self, report: &mut dyn FnMut(&str)) -> Result<(), LeaseError> {
        let grant = self.grant;
        if grant.floor_wait.is_zero() {
            return Ok(());
        }
        let limit = self.config.start_wait_limit();
        if grant.floor_wait > limit {
            return Err(LeaseError::StartWaitTooLong {
                node_id: grant.node_id,
                floor_wait: grant.floor_wait,
                max_start_wait: limit,
            });
        }
        report(&format!(
            "node id {}: the {} registry cannot rule out that a holder it lost track of is \
             still issuing (its records are new, were lost, replaced or restored, or its \
             server restarted without them); waiting {} (the longest TTL its holders asked \
             for, plus quarantine) before issuing",
            grant.node_id,
            self.registry.name(),
            humantime::format_duration(round_ms(grant.floor_wait)),
        ));
        let until = Instant::now() + grant.floor_wait;
        let mut renewed = Instant::now();
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            if left.is_zero() {
                break;
            }
            self.keep(&mut renewed)?;
            thread::sleep(left.min(STOP_POLL));
        }
        Ok(())
    }

    /// Waits (bounded) until `clock` passes the previous holder's mark plus the skew
    /// allowance. Returns the mark to resume after, if any.
    fn past_mark(
        &self,
        clock: &impl Clock,
        report: &mut dyn FnMut(&str),
    ) -> Result<Option<u64>, LeaseError> {
        let (grant, config) = (self.grant, self.config);
        let Some(resume_after) =
            protocol::resume_after(grant.previous_high_water_ms, config.skew_allowance)
        else {
            return Ok(None);
        };
        let mut renewed = Instant::now();
        let mut reported = false;
        loop {
            let now = clock.now_ms();
            if now > resume_after {
                return Ok(Some(resume_after));
            }
            if !reported && resume_after - now > 100 {
                reported = true;
                report(&format!(
                    "node id {}: a previous holder reserved IDs up to {} (with the skew \
                     allowance), {} ahead of this clock; waiting for the clock to pass it (at \
                     most {}){}",
                    grant.node_id,
                    iso_ms(resume_after),
                    humantime::format_duration(Duration::from_millis(resume_after - now)),
                    humantime::format_duration(round_ms(
                        config
                            .start_wait_limit()
                            .saturating_sub(self.began.elapsed())
                    )),
                    if resume_after - now > ms(config.reserve_ahead) + ms(config.skew_allowance) {
                        "; that is further ahead than a holder reserves, so its clock appears \
                         to have been ahead of this one"
                    } else {
                        ""
                    },
                ));
            }
            if self.began.elapsed() >= config.start_wait_limit() {
                return Err(LeaseError::BehindHighWater {
                    node_id: grant.node_id,
                    resume_after_ms: resume_after,
                    now_ms: now,
                });
            }
            self.keep(&mut renewed)?;
            let step = ms(config.renew_every.min(STOP_POLL)).max(1);
            clock.wait_until_ms(resume_after.saturating_add(1).min(now.saturating_add(step)));
            if clock.now_ms() == now {
                thread::sleep(Duration::from_millis(1)); // a clock that did not move: no spin
            }
        }
    }
}

/// Writes a start's report (see [`LeasedGenerator::start_reporting`]) as one line on
/// standard error, `ferroflake: ` first: for callers with no log of their own, such as
/// the C library and the Node addon, so that a start that waits is never silent.
pub fn report_to_stderr(text: &str) {
    use std::io::Write;
    // Never `eprintln!`: a closed or broken stderr must not turn a report into a panic.
    let _ = writeln!(std::io::stderr().lock(), "ferroflake: {text}");
}

/// How long until `deadline`, `None` once it has passed.
fn deadline_left(deadline: Instant) -> Option<Duration> {
    deadline.checked_duration_since(Instant::now())
}

/// `d` shortened at random by up to a fifth ([`ferroflake::shortened_at_random`]).
fn jitter(d: Duration) -> Duration {
    ferroflake::shortened_at_random(d, getrandom::u32().unwrap_or(0))
}

/// `d` to whole milliseconds, for display.
fn round_ms(d: Duration) -> Duration {
    Duration::from_millis(ms(d))
}

#[cfg(test)]
mod tests {
    use super::jitter;
    use std::collections::BTreeSet;
    use std::time::Duration;

    #[test]
    fn retries_are_spread_but_never_later() {
        let base = Duration::from_millis(1_000);
        let pauses: BTreeSet<Duration> = (0..200).map(|_| jitter(base)).collect();
        assert!(pauses.iter().all(|p| *p <= base && *p >= base * 80 / 100));
        assert!(pauses.len() > 5, "pauses must differ: {pauses:?}");
    }
}
