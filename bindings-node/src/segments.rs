//! Segment mode: `SegmentAllocator` (a store and its fetch thread) and `SegmentKey` (one
//! key's IDs), over `ferroflake_segment`.
//!
//! The allocator, its buffers, prefetch and give-back are the segment crate's; this module
//! reads JS values, opens stores and first segments on libuv's thread pool, and hands out
//! numbers only for keys whose limit keeps every ID a safe integer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::{AsyncTask, BigUint64Array, JavaScriptClassExt, Object};
use napi::{sys, Env, JsValue, Unknown};
use napi_derive::napi;

use ferroflake_segment::{
    KeyHandle, KeyStatus, Range, SegmentAllocator as CoreAllocator, SegmentConfig, SegmentError,
    ShutdownReport, LIMIT_I64, LIMIT_JS,
};

use ferroflake_segment_stores::StoreAddress;

use crate::args::{self, field_of, options, to_number, MAX_SAFE_INTEGER};
use crate::dispose;
use crate::error::{not_constructible, throw, Misuse, OrThrow, Refusal};
use crate::fast_path::{self, next_number, Issuer};
use crate::generator::MAX_BATCH;
use crate::numbers::number_array;
use crate::pool::{self, PoolTask};

const OPEN_KEYS: [&str; 4] = ["store", "maxWaitMs", "prefetchShare", "maxStep"];
const CREATE_KEYS: [&str; 2] = ["start", "step"];
const KEY_KEYS: [&str; 1] = ["limit"];

/// A segment refusal by its stable kind.
pub(crate) fn segment_refusal(error: SegmentError) -> Refusal {
    Refusal::Segment(error.name(), error.to_string())
}

/// Segments from one store: open keys with `key()`, add keys with `createKey()`.
///
/// Make one with `await SegmentAllocator.open({ store })`. Each allocator has one fetch
/// thread (a native thread, off the event loop, that keeps nothing alive). `close()` stops
/// every key and gives each key's unissued IDs back to the store where nobody allocated
/// after them.
#[napi]
pub struct SegmentAllocator {
    inner: Arc<CoreAllocator>,
    address: String,
    /// Shared with what is built on the allocator (order numbers), so that after `close()`
    /// they throw `SEGMENT_CLOSED` on the JS thread, before any trip to the thread pool (the
    /// core allocator refuses too, with `SegmentError::Closed`).
    closed: Arc<AtomicBool>,
}

/// What `open` hands back to the JS thread.
pub struct OpenedStore {
    inner: Arc<CoreAllocator>,
    address: String,
}

/// What a key's `open` hands back.
pub struct OpenedKey {
    handle: KeyHandle,
    limit: u64,
}

/// What `close()` did.
#[napi(object, object_from_js = false)]
pub struct SegmentCloseReport {
    /// IDs given back to the store.
    pub given_back: f64,
    /// Keys whose rest was dropped because another allocator allocated after it.
    pub refused: Vec<String>,
    /// Keys whose give-back failed, with the error's message.
    pub failed: Vec<String>,
}

/// The report of a close, made on the JS thread.
fn close_report(env: &Env, report: ShutdownReport) -> napi::Result<sys::napi_value> {
    let report = SegmentCloseReport {
        given_back: to_number(env, report.given_back, "givenBack")?,
        refused: report.refused,
        failed: report
            .failed
            .into_iter()
            .map(|(key, error)| format!("{key}: {error}"))
            .collect(),
    };
    // SAFETY: `env` is the live env of this callback, on the JS thread.
    unsafe { napi::bindgen_prelude::ToNapiValue::to_napi_value(env.raw(), report) }
}

#[napi]
impl SegmentAllocator {
    /// Opens a store and starts the allocator's fetch thread.
    ///
    /// - `store`: an absolute SQLite file path or `sqlite:///abs/file.db`, or
    ///   `postgres://`, `mysql://`, `redis://` URLs. Default: the embedded SQLite file
    ///   `segments.db` in `/var/lib/ferroflake` or `~/.local/state/ferroflake`.
    /// - `maxWaitMs`: how long a call waits for a segment in flight when memory is empty
    ///   (default 500), `prefetchShare` (0 to 1, default 0.1), `maxStep` (default 1,000,000).
    ///
    /// Bad options (a malformed store address, or a store this build leaves out, among them)
    /// throw at once; a store that cannot be opened or reached rejects with
    /// `ERR_FERROFLAKE_SEGMENT_*`.
    #[napi(
        ts_args_type = "options?: { store?: string; maxWaitMs?: number; prefetchShare?: number; maxStep?: number }",
        ts_return_type = "Promise<SegmentAllocator>"
    )]
    pub fn open(
        env: Env,
        options_value: Option<Unknown>,
    ) -> napi::Result<AsyncTask<PoolTask<OpenedStore>>> {
        let object: Option<Object> = options(&env, options_value, "options", &OPEN_KEYS)?;
        let get = |key: &str| field_of(object.as_ref(), key);
        let address = get("store")?
            .map(|v| args::string(&env, v, "store"))
            .transpose()?;
        let parsed = address
            .as_deref()
            .map(|a| StoreAddress::parse(a).and_then(|parsed| parsed.built().map(|()| parsed)))
            .transpose()
            .map_err(segment_refusal)
            .or_throw(&env)?;
        let mut config = SegmentConfig::default();
        if let Some(v) = get("maxWaitMs")? {
            config.max_wait =
                Duration::from_millis(args::bounded(&env, v, "maxWaitMs", MAX_SAFE_INTEGER)?);
        }
        if let Some(v) = get("prefetchShare")? {
            config.prefetch_share = share(&env, v)?;
        }
        if let Some(v) = get("maxStep")? {
            config.max_step = args::unsigned(&env, v, "maxStep")?;
        }
        config.validate().map_err(segment_refusal).or_throw(&env)?;
        let work = move || {
            let store = match &parsed {
                Some(parsed) => ferroflake_segment_stores::open_address(parsed),
                None => ferroflake_segment_stores::open(None),
            }
            .map_err(segment_refusal)?;
            let inner = CoreAllocator::new(store, config).map_err(segment_refusal)?;
            Ok(OpenedStore {
                inner: Arc::new(inner),
                address: StoreAddress::label(address.as_deref()),
            })
        };
        Ok(pool::spawn(work, SegmentAllocator::instance))
    }

    /// Refused: an allocator comes from `SegmentAllocator.open()`.
    #[napi(constructor)]
    pub fn new(env: Env) -> napi::Result<Self> {
        Err(not_constructible(
            &env,
            "use `await SegmentAllocator.open(options)`: a store is opened off the event loop",
        ))
    }

    fn instance(env: &Env, opened: OpenedStore) -> napi::Result<sys::napi_value> {
        let allocator = SegmentAllocator {
            inner: opened.inner,
            address: opened.address,
            closed: Arc::new(AtomicBool::new(false)),
        };
        let instance = allocator.into_instance(env)?;
        let this = instance.as_object(env).raw();
        dispose::install_async(env, this)?;
        Ok(this)
    }

    /// Adds `key` to the store: its first ID is `start` (default 1) and the store hands
    /// out ranges of `step` IDs (1 to 2^31 - 1, default 1,000; allocators grow it while IDs
    /// go fast). Rejects with `ERR_FERROFLAKE_SEGMENT_KEY_EXISTS` if the key is there
    /// already.
    #[napi(
        ts_args_type = "key: string, options?: { start?: number | bigint; step?: number }",
        ts_return_type = "Promise<void>"
    )]
    pub fn create_key(
        &self,
        env: Env,
        key: Unknown,
        options_value: Option<Unknown>,
    ) -> napi::Result<AsyncTask<PoolTask<()>>> {
        let key = args::string(&env, key, "key")?;
        let object = options(&env, options_value, "options", &CREATE_KEYS)?;
        let step = match field_of(object.as_ref(), "step")? {
            Some(v) => args::unsigned(&env, v, "step")?,
            None => ferroflake_segment::DEFAULT_STEP,
        };
        let start = match field_of(object.as_ref(), "start")? {
            Some(v) => args::bounded(&env, v, "start", LIMIT_I64)? as i64,
            None => ferroflake_segment::DEFAULT_START,
        };
        ferroflake_segment::check_create(&key, start, step)
            .map_err(segment_refusal)
            .or_throw(&env)?;
        refuse_if_closed(&self.closed, &key).or_throw(&env)?;
        let inner = self.inner.clone();
        let work = move || inner.create(&key, start, step).map_err(segment_refusal);
        Ok(pool::spawn(work, undefined))
    }

    /// The handle of `key`, loading its first segment from the store. `limit` is the
    /// largest ID the key may issue: default 2^53 - 1, so `nextId()` gives numbers; a
    /// larger one (up to 2^63 - 1, as a bigint) needs the bigint and string methods.
    /// Rejects with `ERR_FERROFLAKE_SEGMENT_UNKNOWN_KEY` for a key the store does not have;
    /// throws `ERR_FERROFLAKE_SEGMENT_CLOSED` after `close()`.
    #[napi(
        ts_args_type = "key: string, options?: { limit?: number | bigint }",
        ts_return_type = "Promise<SegmentKey>"
    )]
    pub fn key(
        &self,
        env: Env,
        key: Unknown,
        options_value: Option<Unknown>,
    ) -> napi::Result<AsyncTask<PoolTask<OpenedKey>>> {
        let key = args::string(&env, key, "key")?;
        let object = options(&env, options_value, "options", &KEY_KEYS)?;
        let limit = match field_of(object.as_ref(), "limit")? {
            Some(v) => args::unsigned(&env, v, "limit")?,
            None => LIMIT_JS,
        };
        if limit > LIMIT_I64 {
            return Err(throw(
                &env,
                Refusal::Segment("INVALID_CONFIG", format!("limit {limit} is above 2^63 - 1")),
            ));
        }
        ferroflake_segment::check_key(&key)
            .map_err(segment_refusal)
            .or_throw(&env)?;
        refuse_if_closed(&self.closed, &key).or_throw(&env)?;
        let inner = self.inner.clone();
        let work = move || {
            let handle = inner.key_with_limit(&key, limit).map_err(segment_refusal)?;
            Ok(OpenedKey { handle, limit })
        };
        Ok(pool::spawn(work, SegmentKey::instance))
    }

    /// The status of every open key, sorted by key.
    #[napi]
    pub fn status(&self, env: Env) -> napi::Result<Vec<SegmentKeyStatus>> {
        self.inner
            .status()
            .into_iter()
            .map(|s| key_status(&env, s))
            .collect()
    }

    /// Which store: `"the SQLite file /srv/ids.db"`, `"the embedded SQLite file ..."`, or
    /// the address as given with any password hidden.
    #[napi(getter)]
    pub fn store(&self) -> String {
        self.address.clone()
    }

    /// Stops every key at once (later calls throw `ERR_FERROFLAKE_SEGMENT_CLOSED`), then
    /// gives each key's unissued IDs back to the store where nobody allocated after them,
    /// off the event loop: the promise resolves with what it did. Also
    /// `[Symbol.asyncDispose]`, for `await using`. Closing twice gives nothing more back.
    #[napi(ts_return_type = "Promise<SegmentCloseReport>")]
    pub fn close(&self) -> AsyncTask<PoolTask<ShutdownReport>> {
        self.closed.store(true, Ordering::Relaxed);
        let inner = self.inner.clone();
        pool::spawn(move || Ok(inner.shutdown()), close_report)
    }

    /// True once `close()` was called.
    #[napi(getter)]
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }
}

impl SegmentAllocator {
    /// The core allocator and the `close()` flag, for what is built on it (order numbers).
    pub(crate) fn core(&self) -> (Arc<CoreAllocator>, Arc<AtomicBool>) {
        (self.inner.clone(), self.closed.clone())
    }
}

/// `SEGMENT_CLOSED` for `key` once the allocator's `close()` was called.
pub(crate) fn refuse_if_closed(closed: &AtomicBool, key: &str) -> Result<(), Refusal> {
    if closed.load(Ordering::Relaxed) {
        return Err(segment_refusal(SegmentError::Closed {
            key: key.to_owned(),
        }));
    }
    Ok(())
}

fn undefined(env: &Env, (): ()) -> napi::Result<sys::napi_value> {
    let mut value = std::ptr::null_mut();
    // SAFETY: a live env on its JS thread; a valid out-pointer.
    let status = unsafe { sys::napi_get_undefined(env.raw(), &mut value) };
    if status == sys::Status::napi_ok {
        Ok(value)
    } else {
        Err(napi::Error::from_status(napi::Status::from(status)))
    }
}

/// A share in (0, 1], given as a number; the allocator checks the range.
fn share(env: &Env, value: Unknown) -> napi::Result<f64> {
    if value.get_type()? != napi::ValueType::Number {
        return Err(throw(
            env,
            Refusal::misuse(Misuse::InvalidType, "prefetchShare must be a number"),
        ));
    }
    // SAFETY: the value was just checked to be a number.
    unsafe { value.cast::<f64>() }
}

/// What a `SegmentKey` and its bound functions issue from.
pub(crate) struct KeyUse {
    handle: KeyHandle,
    limit: u64,
}

impl Issuer for KeyUse {
    #[inline]
    fn next_id(&self) -> Result<u64, Refusal> {
        self.handle.next_id().map_err(segment_refusal)
    }

    fn js_safe(&self) -> bool {
        self.limit <= MAX_SAFE_INTEGER
    }

    fn refuse_numbers(&self) -> Refusal {
        Refusal::misuse(
            Misuse::UnsafeInteger,
            format!(
                "segment key {:?} has limit {}, past Number.MAX_SAFE_INTEGER; use \
                 nextIdBigInt() or nextIdString(), or open the key without a limit",
                self.handle.key(),
                self.limit
            ),
        )
    }
}

/// One key's IDs: increasing integers from the store's ranges, unique across every
/// process that takes them from the same store.
#[napi]
pub struct SegmentKey {
    key_use: Arc<KeyUse>,
}

#[napi]
impl SegmentKey {
    /// Refused: a key comes from `allocator.key(name)`.
    #[napi(constructor)]
    pub fn new(env: Env) -> napi::Result<Self> {
        Err(not_constructible(
            &env,
            "use `await allocator.key(name)`: its first segment is loaded off the event loop",
        ))
    }

    fn instance(env: &Env, opened: OpenedKey) -> napi::Result<sys::napi_value> {
        let key_use = Arc::new(KeyUse {
            handle: opened.handle,
            limit: opened.limit,
        });
        let key = SegmentKey {
            key_use: key_use.clone(),
        };
        let instance = key.into_instance(env)?;
        let this = instance.as_object(env).raw();
        fast_path::install(env, this, &key_use)?;
        Ok(this)
    }

    /// The next ID as a `number` (keys whose limit is at most 2^53 - 1, the default).
    /// Throws `ERR_FERROFLAKE_SEGMENT_NOT_READY` when memory is empty and no segment
    /// arrived within `maxWaitMs`, `..._SEGMENT_EXHAUSTED` at the limit,
    /// `..._SEGMENT_CLOSED` after the allocator's `close()`.
    #[napi]
    pub fn next_id(&self, env: Env) -> napi::Result<f64> {
        next_number(&*self.key_use).or_throw(&env)
    }

    /// The next ID as a `bigint` (any limit).
    #[napi]
    pub fn next_id_big_int(&self, env: Env) -> napi::Result<u64> {
        self.key_use.next_id().or_throw(&env)
    }

    /// The next ID as a string: decimal (default), or any other format `encode` takes.
    #[napi(
        ts_args_type = "format?: 'dec' | 'base62' | 'base32' | 'base58-flickr' | 'base32-bwmarrin' | 'base36' | 'base2' | 'base64-decimal' | 'json'"
    )]
    pub fn next_id_string(&self, env: Env, format: Option<Unknown>) -> napi::Result<String> {
        let format = crate::text::format_option(&env, format)?;
        let id = self.key_use.next_id().or_throw(&env)?;
        Ok(format.encode(id).or_throw(&env)?.to_string())
    }

    /// The next ID without waiting: `null` where `nextId()` would wait for the segment in
    /// flight (memory empty; the fetch has been asked for).
    #[napi(ts_return_type = "number | null")]
    pub fn try_next_id(&self, env: Env) -> napi::Result<Option<f64>> {
        if !self.key_use.js_safe() {
            return Err(throw(&env, self.key_use.refuse_numbers()));
        }
        let id = self
            .key_use
            .handle
            .try_next_id()
            .map_err(segment_refusal)
            .or_throw(&env)?;
        id.map(|id| to_number(&env, id, "id")).transpose()
    }

    /// `count` IDs (1 to 2^24) as increasing safe-integer numbers (same rule as `nextId()`).
    #[napi(ts_args_type = "count: number", ts_return_type = "Array<number>")]
    pub fn next_ids<'env>(&self, env: &'env Env, count: Unknown) -> napi::Result<Unknown<'env>> {
        if !self.key_use.js_safe() {
            return Err(throw(env, self.key_use.refuse_numbers()));
        }
        let numbers = self
            .batch(env, count)?
            .into_iter()
            .map(|id| id as f64)
            .collect();
        number_array(env, numbers)
    }

    /// `count` IDs (1 to 2^24) as an increasing `BigUint64Array` (any limit).
    #[napi(ts_args_type = "count: number")]
    pub fn next_ids_big_int(&self, env: Env, count: Unknown) -> napi::Result<BigUint64Array> {
        Ok(BigUint64Array::new(self.batch(&env, count)?))
    }

    /// The key's runway, step, fetch state and counters.
    #[napi]
    pub fn status(&self, env: Env) -> napi::Result<SegmentKeyStatus> {
        key_status(&env, self.key_use.handle.status())
    }

    /// The key's name.
    #[napi(getter)]
    pub fn key(&self) -> String {
        self.key_use.handle.key().to_owned()
    }

    /// The largest ID the key may issue, as a bigint.
    #[napi(getter)]
    pub fn limit(&self) -> u64 {
        self.key_use.limit
    }

    /// True when `nextId()` returns numbers (the limit is at most 2^53 - 1).
    #[napi(getter)]
    pub fn is_js_safe(&self) -> bool {
        self.key_use.js_safe()
    }

    fn batch(&self, env: &Env, count: Unknown) -> napi::Result<Vec<u64>> {
        let count = args::bounded(env, count, "count", MAX_BATCH)?;
        if count == 0 {
            return Ok(Vec::new());
        }
        let ranges = self
            .key_use
            .handle
            .next_ids(count)
            .map_err(segment_refusal)
            .or_throw(env)?;
        Ok(ranges.iter().flat_map(|r| r.start..r.end).collect())
    }
}

/// A half-open range of IDs as bigints.
#[napi(object, object_from_js = false)]
pub struct SegmentRange {
    pub start: u64,
    pub end: u64,
}

fn range(r: Range) -> SegmentRange {
    SegmentRange {
        start: r.start,
        end: r.end,
    }
}

/// A key's status.
#[napi(object, object_from_js = false)]
pub struct SegmentKeyStatus {
    pub key: String,
    /// The largest ID the key may issue.
    pub limit: u64,
    /// The unissued rest of the current segment.
    pub current: SegmentRange,
    /// The next segment, if fetched.
    pub next: Option<SegmentRange>,
    /// IDs in memory (rest of the current segment plus the next).
    pub runway_ids: f64,
    /// How long the runway lasts at the recent rate, if known.
    pub runway_secs: Option<f64>,
    /// The step of the latest fetch.
    pub step: f64,
    /// Whether a fetch is in flight (or waiting to retry).
    pub fetching: bool,
    /// The latest fetch's error (code and message), until a fetch succeeds.
    pub last_error: Option<String>,
    pub fetches: f64,
    pub fetch_failures: f64,
    pub waits: f64,
    pub not_ready: f64,
    pub switches: f64,
}

fn key_status(env: &Env, s: KeyStatus) -> napi::Result<SegmentKeyStatus> {
    Ok(SegmentKeyStatus {
        key: s.key,
        limit: s.limit,
        current: range(s.current),
        next: s.next.map(range),
        runway_ids: to_number(env, s.runway_ids.min(MAX_SAFE_INTEGER), "runwayIds")?,
        runway_secs: s.runway_secs,
        step: s.step as f64,
        fetching: s.fetching,
        last_error: s
            .last_error
            .map(|e| format!("ERR_FERROFLAKE_SEGMENT_{}: {e}", e.name())),
        fetches: s.counters.fetches as f64,
        fetch_failures: s.counters.fetch_failures as f64,
        waits: s.counters.waits as f64,
        not_ready: s.counters.not_ready as f64,
        switches: s.counters.switches as f64,
    })
}
