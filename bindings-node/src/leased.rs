//! The `LeasedGenerator` class: IDs under a node id leased from a registry, one lease per
//! registry per process.
//!
//! Everything about the lease (claim, renewal thread, fence, release) is
//! `ferroflake_lease::LeasedGenerator`. This module is the class; the process's table of
//! leases ([`lease_table`](crate::lease_table)) shares one between every `LeasedGenerator`
//! object in the process and counts its users:
//!
//! - The table is a static, so the main thread and every `worker_threads` worker that ask
//!   for a leased generator on the same registry and layout get the same lease (and the
//!   same node id); a cluster worker or child process is another process with a lease of
//!   its own.
//! - Each JS object is one user. `close()` (or `Symbol.dispose`) gives its use back at once;
//!   an object never closed gives it back when collected or when its thread's environment
//!   is torn down. The last user's release stops issuing and releases the node id with its
//!   high-water mark. A process ended by `process.exit()` releases what is still held on
//!   its way out (`atexit`); one killed by a signal leaves the claim to lapse after its TTL.
//! - Renewal runs on the lease crate's own thread: never on the event loop, and it keeps
//!   no handle open, so a script that opens a lease and ends exits at once.
//! - Opening waits for the registry (and, for a new registry, for its lost-records floor)
//!   on libuv's thread pool, never on the event loop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};

use napi::bindgen_prelude::{AsyncTask, BigUint64Array, JavaScriptClassExt, Object};
use napi::{sys, Env, JsValue, Unknown};
use napi_derive::napi;

use ferroflake::Layout as CoreLayout;
use ferroflake::Options;
use ferroflake_lease::{LeaseSettings, LeaseStatus, LeasedGenerator as CoreLeased};
use ferroflake_lease_stores::RegistryAddress;

use crate::args::{self, field, options, to_number, MAX_SAFE_INTEGER};
use crate::dispose;
use crate::error::{lease_refusal, not_constructible, throw, OrThrow, Refusal};
use crate::fast_path::{self, next_number, Issuer};
use crate::generator::{batch_count, closed, refuse_numbers};
use crate::layout::{layout_option, Layout};
use crate::lease_table::{slot, Key, Slot};
use crate::numbers::number_array;
use crate::pool::{self, PoolTask};
use crate::text::format_option;

const OPTION_KEYS: [&str; 9] = [
    "registry",
    "layout",
    "ttlMs",
    "maxTtlMs",
    "maxStartWaitMs",
    "maxClockSkewMs",
    "maxDriftTicks",
    "maxBackwardWaitMs",
    "stateFile",
];

/// What one `LeasedGenerator` object and its bound functions issue from.
pub(crate) struct LeaseUse {
    slot: Arc<Slot>,
    layout: CoreLayout,
    js_safe: bool,
    open: AtomicBool,
}

impl LeaseUse {
    #[inline]
    fn live(&self) -> Result<&Slot, Refusal> {
        // Relaxed: an object and its functions live on one JS thread, where `close()` runs.
        if self.open.load(Ordering::Relaxed) {
            Ok(&self.slot)
        } else {
            Err(closed("this LeasedGenerator"))
        }
    }

    fn close(&self) {
        if self.open.swap(false, Ordering::Relaxed) {
            self.slot.leave();
        }
    }
}

impl Drop for LeaseUse {
    fn drop(&mut self) {
        self.close();
    }
}

impl Issuer for LeaseUse {
    #[inline]
    fn next_id(&self) -> Result<u64, Refusal> {
        self.live()?.with(CoreLeased::next_id)
    }

    fn js_safe(&self) -> bool {
        self.js_safe
    }

    fn refuse_numbers(&self) -> Refusal {
        refuse_numbers(&self.layout)
    }
}

/// Where a leased generator's lease stands.
#[napi(object, object_from_js = false)]
pub struct LeaseInfo {
    /// `'held'`, `'failing'` (renewals fail; issuing goes on until the local deadline),
    /// `'lost'` (the registry gave the node id to someone else, or it expired: nothing is
    /// issued again) or `'released'`.
    #[napi(ts_type = "'held' | 'failing' | 'lost' | 'released'")]
    pub state: String,
    /// The leased node id.
    pub node_id: f64,
    /// The registry, as messages name it.
    pub registry: String,
    /// The claim's fencing epoch, as a bigint.
    pub epoch: u64,
    /// Failed renewals in a row (0 unless failing).
    pub failures: u32,
    /// The last renewal failure, when failing.
    pub last_error: Option<String>,
    /// The fence (Unix ms): no ID is issued from this instant on until a renewal moves it.
    pub fence_ms: Option<f64>,
    /// This clock minus the registry's at the last renewal, ms (positive: ahead); absent
    /// if the registry reports no clock (etcd). Beyond `maxClockSkewMs` nothing is issued
    /// (`ERR_FERROFLAKE_LEASE_CLOCK_SKEW`).
    pub clock_skew_ms: Option<f64>,
    /// Half the round trip of that reading, ms: the true skew is within this of
    /// `clockSkewMs`.
    pub clock_skew_uncertainty_ms: Option<f64>,
}

/// IDs under a node id leased from a registry: never a guessed or shared node id.
///
/// Make one with `await LeasedGenerator.open(options)`. Every `LeasedGenerator` in a
/// process (main thread and `worker_threads`) on the same registry and layout shares one
/// lease; the last `close()` releases it. Renewal runs on a native thread, off the event
/// loop, and never keeps the process alive. Past the lease's deadline (renewals failing,
/// the process stopped past its TTL) every call throws `ERR_FERROFLAKE_LEASE_EXPIRED`,
/// with a message saying why.
#[napi]
pub struct LeasedGenerator {
    lease_use: Arc<LeaseUse>,
    node: u64,
    registry: String,
    shared: bool,
}

/// A request read on the JS thread, opened on the pool.
struct Request {
    key: Key,
    settings: LeaseSettings,
}

/// What the pool hands back to the JS thread: the use is counted from the moment the lease
/// is joined, so that if no JS object is ever made for it (the thread ended meanwhile),
/// dropping it gives the use back.
pub struct Opened {
    lease_use: Arc<LeaseUse>,
    registry: String,
    shared: bool,
}

#[napi]
impl LeasedGenerator {
    /// Leases a node id and resolves to a generator issuing under it; a lease this process
    /// already holds on that registry and layout is shared (`isShared`).
    ///
    /// - `registry`: an absolute directory or `file:///dir` (the embedded registry, no
    ///   server), or `etcd://`, `redis://`, `zk://`, `postgres://` URLs. Default: the
    ///   embedded registry in `/var/tmp/ferroflake-leases-<uid>`.
    /// - `layout`: a `Layout` or preset name (default `js53ms`).
    /// - `ttlMs` (default 10,000), `maxTtlMs` (the longest TTL any holder of the registry
    ///   uses; default the larger of 10,000 and `ttlMs`; every holder must agree),
    ///   `maxStartWaitMs` (the longest the first ID is held back, for a floor and a previous
    ///   holder's mark together; default 30,000, or the longest the timings ask for if
    ///   longer), `maxClockSkewMs` (how far this clock may be from the registry's, checked
    ///   before the first ID and at each renewal; default and most: half of quarantine +
    ///   safety margin), `maxDriftTicks`, `maxBackwardWaitMs`.
    /// - `stateFile`: a path where the lease keeps its claim, so that a process restarted
    ///   while the registry cannot be reached resumes it until its deadline, and one
    ///   restarted later asks for the same node id first. It must be this user's alone; one
    ///   live process uses it at a time (`ERR_FERROFLAKE_LEASE_STATE_FILE`).
    ///
    /// Bad options throw at once; a registry that cannot be reached, or no free node id,
    /// rejects with `ERR_FERROFLAKE_LEASE_*`. A new registry makes the first lease wait out
    /// `maxTtlMs` plus the quarantine (about 12 s by default), since it cannot tell itself
    /// from one whose records were lost under a running holder.
    #[napi(
        ts_args_type = "options?: { registry?: string; layout?: Layout | string; ttlMs?: number; maxTtlMs?: number; maxStartWaitMs?: number; maxClockSkewMs?: number; maxDriftTicks?: number | bigint; maxBackwardWaitMs?: number | bigint; stateFile?: string }",
        ts_return_type = "Promise<LeasedGenerator>"
    )]
    pub fn open(
        env: Env,
        options_value: Option<Unknown>,
    ) -> napi::Result<AsyncTask<PoolTask<Opened>>> {
        let request = read_request(&env, options_value)?;
        let work = move || {
            let slot = slot(&request.key);
            let shared = slot.join(&request.key, request.settings)?;
            let layout = request.key.layout;
            Ok(Opened {
                lease_use: Arc::new(LeaseUse {
                    slot,
                    layout,
                    js_safe: layout.max_id() <= MAX_SAFE_INTEGER,
                    open: AtomicBool::new(true),
                }),
                registry: request.key.registry.describe(),
                shared,
            })
        };
        Ok(pool::spawn(work, LeasedGenerator::instance))
    }

    /// Refused: a leased generator comes from `LeasedGenerator.open()`, which waits for the
    /// registry off the event loop.
    #[napi(constructor)]
    pub fn new(env: Env) -> napi::Result<Self> {
        Err(not_constructible(
            &env,
            "use `await LeasedGenerator.open(options)`: a lease is taken off the event loop",
        ))
    }

    /// Makes the JS object for an opened lease, with its bound functions.
    fn instance(env: &Env, opened: Opened) -> napi::Result<sys::napi_value> {
        let lease_use = opened.lease_use;
        // The slot holds a started lease while this user is counted.
        let node = lease_use
            .slot
            .with(|leased| Ok(leased.node()))
            .or_throw(env)?;
        let generator = LeasedGenerator {
            lease_use: lease_use.clone(),
            node,
            registry: opened.registry,
            shared: opened.shared,
        };
        let instance = generator.into_instance(env)?;
        let this = instance.as_object(env).raw();
        fast_path::install(env, this, &lease_use)?;
        dispose::install(env, this)?;
        Ok(this)
    }

    /// Gives this object's use of the lease back at once; the last user in the process
    /// stops issuing and releases the node id. Later calls throw `ERR_FERROFLAKE_CLOSED`.
    /// Also `[Symbol.dispose]`, for `using`. Closing twice does nothing.
    #[napi]
    pub fn close(&self) {
        self.lease_use.close();
    }

    /// True once `close()` was called.
    #[napi(getter)]
    pub fn is_closed(&self) -> bool {
        !self.lease_use.open.load(Ordering::Relaxed)
    }

    /// The next ID as a `number`, always a safe integer. Throws RangeError
    /// `ERR_FERROFLAKE_UNSAFE_INTEGER` on a layout wider than 53 bits: use `nextIdBigInt()`.
    #[napi]
    pub fn next_id(&self, env: Env) -> napi::Result<f64> {
        next_number(&*self.lease_use).or_throw(&env)
    }

    /// The next ID as a `bigint` (any layout).
    #[napi]
    pub fn next_id_big_int(&self, env: Env) -> napi::Result<u64> {
        self.lease_use.next_id().or_throw(&env)
    }

    /// The next ID as a string: decimal (default), or any other format `encode` takes.
    #[napi(
        ts_args_type = "format?: 'dec' | 'base62' | 'base32' | 'base58-flickr' | 'base32-bwmarrin' | 'base36' | 'base2' | 'base64-decimal' | 'json'"
    )]
    pub fn next_id_string(&self, env: Env, format: Option<Unknown>) -> napi::Result<String> {
        let format = format_option(&env, format)?;
        let id = self.lease_use.next_id().or_throw(&env)?;
        Ok(format.encode(id).or_throw(&env)?.to_string())
    }

    /// `count` consecutive IDs as safe-integer numbers (same rule as `nextId()`): at most
    /// what the layout issues in one second (one tick, for a tick longer than that), so a
    /// batch holds the event loop no longer than a second or, like `nextId()`, one tick.
    #[napi(ts_args_type = "count: number", ts_return_type = "Array<number>")]
    pub fn next_ids<'env>(&self, env: &'env Env, count: Unknown) -> napi::Result<Unknown<'env>> {
        if !self.lease_use.js_safe {
            return Err(throw(env, refuse_numbers(&self.lease_use.layout)));
        }
        let ids = self.batch(env, count)?;
        let numbers = ids
            .into_iter()
            .map(|id| to_number(env, id, "id"))
            .collect::<napi::Result<Vec<f64>>>()?;
        number_array(env, numbers)
    }

    /// `count` consecutive IDs as a `BigUint64Array` (any layout; as many as `nextIds`).
    #[napi(ts_args_type = "count: number")]
    pub fn next_ids_big_int(&self, env: Env, count: Unknown) -> napi::Result<BigUint64Array> {
        Ok(BigUint64Array::new(self.batch(&env, count)?))
    }

    /// The leased node id.
    #[napi(getter)]
    pub fn node_id(&self, env: Env) -> napi::Result<f64> {
        to_number(&env, self.node, "nodeId")
    }

    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: self.lease_use.layout,
        }
    }

    /// True when this object joined a lease another `LeasedGenerator` in this process
    /// (any thread) opened first.
    #[napi(getter)]
    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// True when `nextId()` returns numbers (the layout is at most 53 bits wide).
    #[napi(getter)]
    pub fn is_js_safe(&self) -> bool {
        self.lease_use.js_safe
    }

    /// Where the lease stands: held, failing, lost or released.
    #[napi]
    pub fn status(&self, env: Env) -> napi::Result<LeaseInfo> {
        let released = || LeaseInfo {
            state: "released".to_owned(),
            node_id: self.node as f64,
            registry: self.registry.clone(),
            epoch: 0,
            failures: 0,
            last_error: None,
            fence_ms: None,
            clock_skew_ms: None,
            clock_skew_uncertainty_ms: None,
        };
        let Ok(slot) = self.lease_use.live() else {
            return Ok(released());
        };
        // What the lease says, read under the lock; JS values are made after it is let go.
        let (status, node, epoch, fence_ms, clock) = {
            let lease = slot.lease.read().unwrap_or_else(PoisonError::into_inner);
            let Some(leased) = lease.as_ref() else {
                return Ok(released());
            };
            (
                leased.status(),
                leased.node(),
                leased.grant().epoch,
                leased.generator().fence_ms(),
                leased.clock_skew(),
            )
        };
        let (state, failures, last_error) = match status {
            LeaseStatus::Held => ("held", 0, None),
            LeaseStatus::Failing {
                failures,
                last_error,
            } => ("failing", failures, Some(last_error.to_string())),
            LeaseStatus::Lost => ("lost", 0, None),
            _ => ("released", 0, None),
        };
        Ok(LeaseInfo {
            state: state.to_owned(),
            node_id: to_number(&env, node, "nodeId")?,
            registry: self.registry.clone(),
            epoch,
            failures,
            last_error,
            fence_ms: fence_ms
                .map(|ms| to_number(&env, ms, "fenceMs"))
                .transpose()?,
            // Far below 2^53 for any clock that issues: a larger one reads approximately.
            clock_skew_ms: clock.map(|r| r.skew_ms as f64),
            clock_skew_uncertainty_ms: clock.map(|r| r.uncertainty_ms as f64),
        })
    }

    fn batch(&self, env: &Env, count: Unknown) -> napi::Result<Vec<u64>> {
        let count = batch_count(env, count, &self.lease_use.layout)?;
        let slot = self.lease_use.live().or_throw(env)?;
        let mut ids = vec![0u64; count];
        slot.with(|leased| leased.next_ids(&mut ids))
            .or_throw(env)?;
        Ok(ids)
    }
}

/// Reads `open`'s options; throws (synchronously) what is wrong with them.
fn read_request(env: &Env, value: Option<Unknown>) -> napi::Result<Request> {
    let object: Option<Object> = options(env, value, "options", &OPTION_KEYS)?;
    let get = |key: &str| -> napi::Result<Option<Unknown>> {
        match &object {
            Some(object) => field(object, key),
            None => Ok(None),
        }
    };
    let registry = match get("registry")? {
        Some(value) => {
            let text = args::string(env, value, "registry")?;
            RegistryAddress::parse(&text)
                .and_then(|address| address.built().map(|()| address))
                .map_err(lease_refusal)
                .or_throw(env)?
        }
        None => RegistryAddress::Default,
    };
    let layout = layout_option(env, get("layout")?)?;
    let ms = |key: &str| -> napi::Result<Option<u64>> {
        get(key)?
            .map(|value| args::bounded(env, value, key, MAX_SAFE_INTEGER))
            .transpose()
    };
    let mut settings = LeaseSettings::default();
    settings.ttl_ms = ms("ttlMs")?;
    settings.max_ttl_ms = ms("maxTtlMs")?;
    settings.max_start_wait_ms = ms("maxStartWaitMs")?;
    settings.max_clock_skew_ms = ms("maxClockSkewMs")?;
    let unsigned = |key: &str| {
        get(key)?
            .map(|value| args::unsigned(env, value, key))
            .transpose()
    };
    settings.options = Options::given(
        unsigned("maxDriftTicks")?,
        unsigned("maxBackwardWaitMs")?,
        None,
    );
    settings.state_file = get("stateFile")?
        .map(|value| args::string(env, value, "stateFile"))
        .transpose()?
        .map(Into::into);
    settings
        .config()
        .validate()
        .map_err(lease_refusal)
        .or_throw(env)?;
    Ok(Request {
        key: Key { registry, layout },
        settings,
    })
}
