//! Segment mode: one allocator over the configured store, its key handles cached for the
//! hot path, and the preloaded keys that readiness waits for.
//!
//! Reading a key's state never waits for the store: the status of every open key comes
//! from this server's own map of open keys, each read under that key's short lock, never
//! under the allocator's lock, which a key opening against a slow store holds for as long
//! as the store takes. A key not open yet has no status and is not opened to give one.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use ferroflake_segment::{
    KeyHandle, KeyStatus, SegmentAllocator, SegmentConfig, SegmentError, SegmentStore,
    ShutdownReport, LIMIT_JS,
};
use metrics::Counter;

use axum::http::StatusCode;

use crate::config::Config;
use crate::metered_store::MeteredStore;
use crate::metrics::{Metrics, IDS_ISSUED, KEY_LOADED, RUNWAY_IDS, RUNWAY_SECONDS, STEP};
use crate::refusal::Refusal;

/// How long a key the store refused (one the table does not have, or a spelling its
/// collation folds onto another row's) is answered from memory before the store is asked
/// again, and how many such keys are remembered (then forgotten all at once): a caller
/// looping over made-up keys costs one store read per key per second, not one per request,
/// and at most this many short entries, never a key handle or a metric series.
const UNKNOWN_FOR: Duration = Duration::from_secs(1);
const UNKNOWN_MAX: usize = 4096;

/// A key's handle and its issued-ID counter.
pub struct OpenKey {
    /// The allocator's handle.
    pub handle: KeyHandle,
    /// `ferroflake_ids_issued_total{mode="segment",key=..}`.
    pub issued: Counter,
}

/// What readiness knows about one preloaded key.
#[derive(Debug, Clone)]
pub struct KeyReadiness {
    /// The key.
    pub key: String,
    /// Whether it can issue now: loaded, and IDs in memory or a store that answers.
    pub ready: bool,
    /// Why not, if not.
    pub why: Option<String>,
}

/// The allocator and its open keys.
pub struct Segments {
    allocator: SegmentAllocator,
    /// The allocator's store, metered, for the admin routes.
    store: Arc<dyn SegmentStore>,
    label: String,
    /// Read on every request without a lock; replaced whole, under `opened`, when a key
    /// opens (rarely: at most `max_keys` times).
    keys: ArcSwap<HashMap<String, Arc<OpenKey>>>,
    opened: Mutex<()>,
    /// The most keys open at once (`max_keys`).
    max_keys: usize,
    unknown: Mutex<HashMap<String, (Instant, SegmentError)>>,
    preload: Vec<String>,
    js_keys: HashSet<String>,
    /// The last error per preloaded key that has not loaded yet.
    preload_errors: Mutex<HashMap<String, String>>,
    /// Keys whose first segment is being loaded now, and by how many callers.
    opening: Mutex<HashMap<String, usize>>,
    /// One shared open per key for the requests that find it closed: they wait together,
    /// on no thread, for a single call on the blocking pool.
    flights: Mutex<HashMap<String, Arc<Flight>>>,
    metrics: Arc<Metrics>,
}

impl Segments {
    /// Opens the store (failing if it cannot be opened) and an allocator over it.
    ///
    /// # Errors
    /// The store address cannot work or the store cannot be opened.
    pub fn open(config: &Config, metrics: Arc<Metrics>) -> Result<Self, String> {
        let address = config.store.as_deref();
        let label = ferroflake_segment_stores::StoreAddress::label(address);
        let store = ferroflake_segment_stores::open(address)
            .map_err(|e| format!("cannot open the segment store ({label}): {e}"))?;
        let store = Arc::new(MeteredStore::new(store, Arc::clone(&metrics)));
        let segment_config = SegmentConfig {
            max_wait: Duration::from_millis(config.segment_max_wait_ms),
            ..SegmentConfig::default()
        };
        let allocator =
            SegmentAllocator::new(Arc::clone(&store) as Arc<dyn SegmentStore>, segment_config)
                .map_err(|e| e.to_string())?;
        let preload_errors = config
            .preload
            .iter()
            .map(|k| (k.clone(), "not loaded yet".to_owned()))
            .collect();
        Ok(Segments {
            allocator,
            store,
            label,
            keys: ArcSwap::default(),
            opened: Mutex::new(()),
            max_keys: config.max_keys,
            unknown: Mutex::new(HashMap::new()),
            preload: config.preload.clone(),
            js_keys: config.js_keys.iter().cloned().collect(),
            preload_errors: Mutex::new(preload_errors),
            opening: Mutex::new(HashMap::new()),
            flights: Mutex::new(HashMap::new()),
            metrics,
        })
    }

    /// The store, as the allocator calls it (metered).
    pub fn store(&self) -> &Arc<dyn SegmentStore> {
        &self.store
    }

    /// How messages name the store.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The key's handle if it is open: a map lookup, no lock and no store call.
    #[inline]
    pub fn cached(&self, key: &str) -> Option<Arc<OpenKey>> {
        self.keys.load().get(key).cloned()
    }

    /// The next ID of `key` if it is open and has one in memory; `None` for every other
    /// case, which [`crate::issue::segment_one`] then takes the long way. Shares nothing
    /// written between the workers but the key's own cursor and counter.
    #[inline]
    pub fn next_id_now(&self, key: &str) -> Option<u64> {
        let keys = self.keys.load();
        let open = keys.get(key)?;
        let id = open.handle.try_next_id().ok()??;
        open.issued.increment(1);
        Some(id)
    }

    /// Opens `key`, loading its first segment from the store. Blocks on the store: call it
    /// off the async workers.
    ///
    /// # Errors
    /// 503 `TOO_MANY_KEYS` with `max_keys` keys open or opening; the store's refusals
    /// (404 [`SegmentError::UnknownKey`], 400 [`SegmentError::InvalidKey`] for a spelling
    /// the table folds onto another row's: both remembered for a second) and errors.
    pub fn open_key(&self, key: &str) -> Result<Arc<OpenKey>, Refusal> {
        if let Some(open) = self.cached(key) {
            return Ok(open);
        }
        {
            let mut unknown = lock(&self.unknown);
            match unknown.get(key) {
                Some((at, e)) if at.elapsed() < UNKNOWN_FOR => {
                    return Err(Refusal::segment(e));
                }
                Some(_) => {
                    unknown.remove(key);
                }
                None => {}
            }
        }
        let _opening = self.reserve(key)?;
        let handle = if self.js_keys.contains(key) {
            self.allocator.key_with_limit(key, LIMIT_JS)
        } else {
            self.allocator.key(key)
        };
        let handle = match handle {
            Ok(handle) => handle,
            Err(e @ (SegmentError::UnknownKey { .. } | SegmentError::InvalidKey { .. })) => {
                let mut unknown = lock(&self.unknown);
                if unknown.len() >= UNKNOWN_MAX {
                    unknown.clear();
                }
                unknown.insert(key.to_owned(), (Instant::now(), e.clone()));
                return Err(Refusal::segment(&e));
            }
            Err(e) => return Err(Refusal::segment(&e)),
        };
        // Inserted while the key still counts as opening, so that the count of open and
        // opening keys never dips below the truth between the two.
        let _opened = lock(&self.opened);
        if let Some(open) = self.cached(key) {
            return Ok(open);
        }
        tracing::info!(event = "segment_key_opened", key, "segment key opened");
        let open = Arc::new(OpenKey {
            issued: self
                .metrics
                .counter(IDS_ISSUED, &[("mode", "segment"), ("key", key)]),
            handle,
        });
        let mut keys = HashMap::clone(&self.keys.load());
        keys.insert(key.to_owned(), Arc::clone(&open));
        self.keys.store(Arc::new(keys));
        Ok(open)
    }

    /// Marks `key` as opening, if the keys open and opening leave room for one more.
    fn reserve<'a>(&'a self, key: &'a str) -> Result<Opening<'a>, Refusal> {
        let mut opening = lock(&self.opening);
        if !opening.contains_key(key) && self.keys.load().len() + opening.len() >= self.max_keys {
            return Err(Refusal {
                status: StatusCode::SERVICE_UNAVAILABLE,
                kind: "TOO_MANY_KEYS",
                message: format!(
                    "this server holds its limit of {} open segment keys (max_keys) and \
                     opens no other until it restarts with a higher limit",
                    self.max_keys
                ),
                retry: false,
            });
        }
        *opening.entry(key.to_owned()).or_default() += 1;
        Ok(Opening {
            keys: &self.opening,
            key,
        })
    }

    /// Loads every preloaded key, retrying each with backoff until it loads or `stop` is
    /// set. Blocks: run it on a thread of its own.
    pub fn preload(&self, stop: &AtomicBool) {
        let mut retry = Duration::from_millis(100);
        loop {
            let mut missing = 0;
            for key in &self.preload {
                if self.cached(key).is_some() {
                    continue;
                }
                match self.open_key(key) {
                    Ok(_) => {
                        lock(&self.preload_errors).remove(key);
                    }
                    Err(refusal) => {
                        missing += 1;
                        tracing::warn!(event = "preload_failed", key, kind = refusal.kind,
                            error = %refusal.message, "cannot load a preloaded key; retrying");
                        lock(&self.preload_errors).insert(key.clone(), refusal.message);
                    }
                }
            }
            if missing == 0 || stop.load(Ordering::SeqCst) {
                if missing == 0 && !self.preload.is_empty() {
                    tracing::info!(
                        event = "preload_done",
                        keys = self.preload.len(),
                        "every preloaded key has its first segment"
                    );
                }
                return;
            }
            let until = Instant::now() + retry;
            while Instant::now() < until && !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
            retry = (retry * 2).min(Duration::from_secs(5));
        }
    }

    /// Each preloaded key's readiness: loaded, and able to issue (IDs in memory, or no
    /// store error since the last fetch).
    pub fn readiness(&self) -> Vec<KeyReadiness> {
        let errors = lock(&self.preload_errors).clone();
        self.preload
            .iter()
            .map(|key| match self.cached(key) {
                None => KeyReadiness {
                    key: key.clone(),
                    ready: false,
                    why: Some(
                        errors
                            .get(key)
                            .cloned()
                            .unwrap_or_else(|| "not loaded yet".to_owned()),
                    ),
                },
                Some(open) => {
                    let status = open.handle.status();
                    let ready = status.runway_ids > 0 || status.last_error.is_none();
                    KeyReadiness {
                        key: key.clone(),
                        ready,
                        why: (!ready).then(|| {
                            status.last_error.map_or_else(
                                || "no IDs in memory".to_owned(),
                                |e| format!("no IDs in memory and the store fails: {e}"),
                            )
                        }),
                    }
                }
            })
            .collect()
    }

    /// The status of every open key, sorted by key. Never waits for a key that is
    /// opening (see the module docs).
    pub fn status(&self) -> Vec<KeyStatus> {
        let open: Vec<Arc<OpenKey>> = self.keys.load().values().cloned().collect();
        let mut all: Vec<KeyStatus> = open.iter().map(|k| k.handle.status()).collect();
        all.sort_by(|a, b| a.key.cmp(&b.key));
        all
    }

    /// The keys whose first segment is being loaded from the store now, sorted.
    pub fn opening(&self) -> Vec<String> {
        let mut keys: Vec<String> = lock(&self.opening).keys().cloned().collect();
        keys.sort();
        keys
    }

    /// The shared open of `key` that requests finding it closed wait on together.
    pub(crate) fn flight(&self, key: &str) -> Arc<Flight> {
        Arc::clone(lock(&self.flights).entry(key.to_owned()).or_default())
    }

    /// Forgets `flight` once it has an outcome: the next request finds the key open, or
    /// (after a failure) tries afresh.
    pub(crate) fn landed(&self, key: &str, flight: &Arc<Flight>) {
        let mut flights = lock(&self.flights);
        if flights.get(key).is_some_and(|f| Arc::ptr_eq(f, flight)) {
            flights.remove(key);
        }
    }

    /// Sets the runway, step and loaded gauges.
    pub fn refresh_metrics(&self) {
        for status in self.status() {
            let key = [("key", status.key.as_str())];
            self.metrics
                .gauge(RUNWAY_IDS, &key)
                .set(status.runway_ids as f64);
            if let Some(secs) = status.runway_secs {
                self.metrics.gauge(RUNWAY_SECONDS, &key).set(secs);
            }
            self.metrics.gauge(STEP, &key).set(status.step as f64);
        }
        for key in &self.preload {
            let loaded = self.cached(key).is_some();
            self.metrics
                .gauge(KEY_LOADED, &[("key", key)])
                .set(if loaded { 1.0 } else { 0.0 });
        }
    }

    /// Stops issuing and gives each key's unissued IDs back where nobody allocated since.
    pub fn shutdown(&self) -> ShutdownReport {
        let report = self.allocator.shutdown();
        tracing::info!(
            event = "segments_closed",
            given_back = report.given_back,
            refused = report.refused.len(),
            failed = report.failed.len(),
            "segment allocator shut down"
        );
        report
    }
}

/// The outcome of one shared open.
pub(crate) type Flight = tokio::sync::OnceCell<Result<Arc<OpenKey>, Refusal>>;

/// Marks a key as opening for as long as it lives.
struct Opening<'a> {
    keys: &'a Mutex<HashMap<String, usize>>,
    key: &'a str,
}

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        let mut keys = lock(self.keys);
        if let Some(count) = keys.get_mut(self.key) {
            *count -= 1;
            if *count == 0 {
                keys.remove(self.key);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
