//! Snowflake mode: a generator whose node id is leased, kept leased by a supervisor thread.
//!
//! The server answers before it holds a lease (a fresh embedded registry makes the first
//! claim wait about 12 s, a registry may be down): until then snowflake requests get 503
//! and `/readyz` says why. The supervisor claims a node id, retries with backoff while it
//! cannot, and claims a new one if the registry says the lease was lost. Requests read the
//! current generator through an atomic pointer, so the hot path takes no lock.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use ferroflake::{Layout, SystemClock};
use ferroflake_lease::{LeaseConfig, LeaseError, LeaseStatus, LeasedGenerator};
use metrics::Counter;

use crate::config::Config;
use crate::metrics::{
    Metrics, IDS_ISSUED, LEASE_CLOCK_SKEW, LEASE_FENCE_MS, LEASE_MARK_MS, LEASE_NODE, LEASE_STATE,
    LEASE_STATES,
};
use ferroflake_lease_stores::RegistryAddress;

/// The generator type the server runs.
pub type Leased = LeasedGenerator<SystemClock>;

/// How the supervisor waits between failed claims: doubling from the first to the last.
const RETRY_FIRST: Duration = Duration::from_millis(250);
const RETRY_LAST: Duration = Duration::from_secs(10);

/// How often the supervisor looks at the lease's state.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// The leased generator, if there is one, and what the supervisor knows.
pub struct Snowflake {
    current: ArcSwapOption<Leased>,
    layout: Layout,
    layout_name: String,
    registry: RegistryAddress,
    lease_config: LeaseConfig,
    /// Issued-ID counters of the keys named in the config, and of every other key.
    counters: HashMap<String, Counter>,
    other: Counter,
    /// Why there is no lease, while there is none.
    trouble: Mutex<Option<String>>,
    stopping: AtomicBool,
    supervisor: Mutex<Option<JoinHandle<()>>>,
    metrics: Arc<Metrics>,
}

impl Snowflake {
    /// Reads the lease settings; claims nothing yet ([`start`](Self::start) does).
    ///
    /// # Errors
    /// A lease address or timings that cannot work.
    pub fn new(config: &Config, metrics: Arc<Metrics>) -> Result<Self, String> {
        let layout = config.layout()?;
        let registry = config.lease_address()?;
        let lease_config = config.lease_config()?;
        let counters = config
            .snowflake_keys
            .iter()
            .map(|k| {
                let c = metrics.counter(IDS_ISSUED, &[("mode", "snowflake"), ("key", k)]);
                (k.clone(), c)
            })
            .collect();
        let other = metrics.counter(IDS_ISSUED, &[("mode", "snowflake"), ("key", "other")]);
        Ok(Snowflake {
            current: ArcSwapOption::empty(),
            layout,
            layout_name: config.layout.clone(),
            registry,
            lease_config,
            counters,
            other,
            trouble: Mutex::new(Some("the node id is being leased".to_owned())),
            stopping: AtomicBool::new(false),
            supervisor: Mutex::new(None),
            metrics,
        })
    }

    /// Starts the supervisor thread, which claims the node id.
    ///
    /// # Errors
    /// The thread cannot be started.
    pub fn start(self: &Arc<Self>) -> Result<(), String> {
        let me = Arc::clone(self);
        let handle = std::thread::Builder::new()
            .name("ferroflake-serve-lease".into())
            .spawn(move || me.supervise())
            .map_err(|e| format!("cannot start the lease supervisor: {e}"))?;
        *lock(&self.supervisor) = Some(handle);
        Ok(())
    }

    /// The generator, if a node id is leased now.
    #[inline]
    pub fn generator(&self) -> arc_swap::Guard<Option<Arc<Leased>>> {
        self.current.load()
    }

    /// The issued-ID counter for `key`.
    #[inline]
    pub fn counter(&self, key: &str) -> &Counter {
        self.counters.get(key).unwrap_or(&self.other)
    }

    /// The layout's preset name.
    pub fn layout_name(&self) -> &str {
        &self.layout_name
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// How messages name the registry.
    pub fn registry(&self) -> String {
        self.registry.describe()
    }

    /// The registry's node ids as `ferroflake lease list --format json` shows them. Opens
    /// the registry anew and reads it: call it off the async workers.
    ///
    /// # Errors
    /// The registry cannot be reached or holds a garbled record.
    pub fn list_registry(&self) -> Result<serde_json::Value, LeaseError> {
        let registry = self.registry.open()?;
        let view = registry.list()?;
        Ok(view.to_json(&self.registry.describe(), registry.name()))
    }

    /// Whether the lease is held, and if not, why.
    pub fn readiness(&self) -> Result<u64, String> {
        match self.current.load_full() {
            Some(g) => match g.status() {
                LeaseStatus::Held => Ok(g.node()),
                LeaseStatus::Failing { last_error, .. } => Err(format!(
                    "node id {}: renewals are failing ({last_error})",
                    g.node()
                )),
                other => Err(format!(
                    "node id {}: lease {}",
                    g.node(),
                    state_name(&other)
                )),
            },
            None => Err(lock(&self.trouble)
                .clone()
                .unwrap_or_else(|| "no node id is leased".to_owned())),
        }
    }

    /// The lease's state as `/metrics` and `/v1/status` name it.
    pub fn state(&self) -> &'static str {
        match self.current.load_full() {
            Some(g) => state_name(&g.status()),
            None => "none",
        }
    }

    /// Sets the lease gauges.
    pub fn refresh_metrics(&self) {
        let state = self.state();
        for s in LEASE_STATES {
            self.metrics
                .gauge(LEASE_STATE, &[("state", s)])
                .set(if s == state { 1.0 } else { 0.0 });
        }
        if let Some(g) = self.current.load_full() {
            self.metrics.gauge(LEASE_NODE, &[]).set(g.node() as f64);
            let fence = g.generator().fence_ms().unwrap_or(0);
            self.metrics.gauge(LEASE_FENCE_MS, &[]).set(fence as f64);
            self.metrics
                .gauge(LEASE_MARK_MS, &[])
                .set(g.reserved_high_water_ms() as f64);
            if let Some(reading) = g.clock_skew() {
                self.metrics
                    .gauge(LEASE_CLOCK_SKEW, &[])
                    .set(reading.skew_ms as f64 / 1000.0);
            }
        }
    }

    /// Stops the supervisor and releases the node id, recording the final high-water
    /// mark. Waits at most `wait` for the supervisor (a claim in progress, e.g. waiting out
    /// a registry's floor, releases by itself once it completes). Returns the node id
    /// released, if one was held, or the release's error.
    pub fn shutdown(&self, wait: Duration) -> Result<Option<u64>, LeaseError> {
        self.stopping.store(true, Ordering::SeqCst);
        let supervisor = lock(&self.supervisor).take();
        if let Some(handle) = supervisor {
            handle.thread().unpark();
            let until = Instant::now() + wait;
            while !handle.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            if handle.is_finished() {
                let _ = handle.join();
            }
        }
        let Some(generator) = self.current.swap(None) else {
            return Ok(None);
        };
        release(generator, wait)
    }

    /// The supervisor: claim, watch, claim again after a loss; stop when told.
    fn supervise(&self) {
        let mut retry = RETRY_FIRST;
        while !self.stopping.load(Ordering::SeqCst) {
            let lost = self
                .current
                .load_full()
                .filter(|g| g.status() == LeaseStatus::Lost);
            if let Some(old) = lost {
                let node = old.node();
                tracing::warn!(event = "lease_lost", node, registry = %self.registry.describe(),
                    "the registry says the lease is no longer ours; claiming another node id");
                *lock(&self.trouble) = Some(format!("node id {node} was lost; claiming again"));
                self.current.store(None);
                drop(old);
            }
            if self.current.load().is_some() {
                std::thread::park_timeout(WATCH_EVERY);
                continue;
            }
            match self.claim() {
                Ok(generator) => {
                    retry = RETRY_FIRST;
                    let node = generator.node();
                    tracing::info!(
                        event = "lease_acquired",
                        node,
                        epoch = generator.grant().epoch,
                        registry = %self.registry.describe(),
                        layout = %self.layout_name,
                        "node id leased"
                    );
                    *lock(&self.trouble) = None;
                    let generator = Arc::new(generator);
                    if self.stopping.load(Ordering::SeqCst) {
                        let _ = release(generator, Duration::from_secs(1));
                        return;
                    }
                    self.current.store(Some(generator));
                }
                Err(LeaseError::Stopped { node_id }) => {
                    tracing::info!(
                        event = "lease_wait_stopped",
                        node = node_id,
                        "stopped while waiting to issue; the claim was given back"
                    );
                    return;
                }
                Err(e) => {
                    tracing::warn!(event = "lease_failed", registry = %self.registry.describe(),
                        error = %e, retry_ms = retry.as_millis() as u64,
                        "cannot lease a node id; retrying");
                    *lock(&self.trouble) = Some(format!(
                        "cannot lease a node id from {}: {e}",
                        self.registry.describe()
                    ));
                    std::thread::park_timeout(retry);
                    retry = (retry * 2).min(RETRY_LAST);
                }
            }
        }
    }

    fn claim(&self) -> Result<Leased, LeaseError> {
        let registry = self.registry.open_for(&self.lease_config)?;
        let registry_name = self.registry.describe();
        // A stop during a wait (a new registry's floor) gives the claim back at once,
        // rather than holding the id until its TTL.
        LeasedGenerator::start_until(
            self.layout,
            SystemClock,
            registry,
            self.lease_config.clone(),
            &mut |why| {
                tracing::info!(event = "lease_wait", registry = %registry_name, "{why}");
                *lock(&self.trouble) = Some(why.to_owned());
            },
            &|| self.stopping.load(Ordering::SeqCst),
        )
    }
}

/// Releases `generator` once no request holds it any more (they finish within `wait`
/// after the server drained); if one still does, the last holder's drop releases it.
fn release(mut generator: Arc<Leased>, wait: Duration) -> Result<Option<u64>, LeaseError> {
    let node = generator.node();
    let until = Instant::now() + wait;
    loop {
        match Arc::try_unwrap(generator) {
            Ok(owned) => {
                owned.shutdown()?;
                tracing::info!(event = "lease_released", node, "node id released");
                return Ok(Some(node));
            }
            Err(shared) if Instant::now() < until => {
                generator = shared;
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(shared) => {
                // Nothing more is issued under it; the last holder's drop releases it.
                shared.generator().set_fence_ms(0);
                tracing::warn!(
                    event = "lease_release_deferred",
                    node,
                    "requests still hold the generator; it is fenced and released when they end"
                );
                return Ok(None);
            }
        }
    }
}

fn state_name(status: &LeaseStatus) -> &'static str {
    match status {
        LeaseStatus::Held => "held",
        LeaseStatus::Failing { .. } => "failing",
        LeaseStatus::Lost => "lost",
        _ => "released",
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
