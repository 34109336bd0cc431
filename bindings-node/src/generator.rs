//! The `Generator` class: IDs for one node id under one layout.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use napi::bindgen_prelude::{BigUint64Array, This};
use napi::{Env, JsValue, Unknown};
use napi_derive::napi;

use crate::args::{self, field, options, to_number, MAX_SAFE_INTEGER};
use crate::clock::clock_option;
use crate::decoded::{decode_with, DecodedId};
use crate::dispose;
use crate::error::{refuse_without_new, throw, Misuse, OrThrow, Refusal};
use crate::fast_path::{self, next_number, Issuer};
use crate::layout::{layout_option, Layout};
use crate::numbers::number_array;
use crate::registry::{self, Membership, SharedGenerator};
use crate::text::format_option;

const OPTION_KEYS: [&str; 6] = [
    "nodeId",
    "layout",
    "clock",
    "maxDriftTicks",
    "maxBackwardWaitMs",
    "resumeAfterMs",
];

/// The most IDs one `nextIds` call hands out: bounds the memory a typo can ask for.
pub(crate) const MAX_BATCH: u64 = 1 << 24;

/// Slow-path event counts of a generator (shared by every `Generator` on its node).
#[napi(object, object_from_js = false)]
pub struct Counters {
    /// Calls that waited for the next tick because the sequence was used up.
    pub waits: f64,
    /// Ticks issued ahead of the clock (within `maxDriftTicks`).
    pub borrowed_ticks: f64,
    /// Calls that found the clock behind the last issued tick.
    pub rollbacks: f64,
}

/// What a `Generator` and its bound functions issue from: the shared core generator, the
/// membership that keeps its node id, and whether `close()` was called.
pub(crate) struct Issuing {
    generator: SharedGenerator,
    /// `layout.max_id()` fits a JS number: decided once, so `nextId()` can refuse up front.
    js_safe: bool,
    open: AtomicBool,
    membership: Mutex<Option<Membership>>,
}

impl Issuing {
    /// The core generator, unless this `Generator` was closed.
    #[inline]
    fn live(&self) -> Result<&SharedGenerator, Refusal> {
        // Relaxed: a `Generator` and its functions live on one JS thread, where `close()`
        // also runs.
        if self.open.load(Ordering::Relaxed) {
            Ok(&self.generator)
        } else {
            Err(closed("this Generator"))
        }
    }

    /// Stops issuing and gives the node id's membership back at once.
    fn close(&self) {
        self.open.store(false, Ordering::Relaxed);
        let membership = self
            .membership
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(membership);
    }
}

impl Issuer for Issuing {
    #[inline]
    fn next_id(&self) -> Result<u64, Refusal> {
        Ok(self.live()?.next_id()?)
    }

    fn js_safe(&self) -> bool {
        self.js_safe
    }

    fn refuse_numbers(&self) -> Refusal {
        refuse_numbers(self.generator.layout())
    }
}

/// The refusal for a call after `close()`.
#[cold]
pub(crate) fn closed(what: &str) -> Refusal {
    Refusal::misuse(
        Misuse::Closed,
        format!("{what} was closed: make a new one to issue more IDs"),
    )
}

/// Makes unique, increasing IDs for one node id under one layout.
///
/// Every `Generator` in a process (main thread and `worker_threads` alike) with the same
/// node id, layout, clock and options shares one core generator, so they never repeat each
/// other's IDs; while one is open, a node id with anything else is refused
/// (`ERR_FERROFLAKE_NODE_IN_USE`). `close()` (or `using`, through `Symbol.dispose`) gives
/// the node id back at once; one never closed gives it back when collected.
/// Separate processes (cluster workers, child processes) need distinct node ids.
#[napi]
pub struct Generator {
    issuing: Arc<Issuing>,
    shared: bool,
}

#[napi]
impl Generator {
    /// `nodeId` is required: it must be unique among the processes making IDs with this
    /// layout. `layout` is a `Layout` or preset name (default `js53ms`). `clock` is
    /// `'system'` (default), `'fast'` or a `ManualClock`.
    #[napi(
        constructor,
        ts_args_type = "options: { nodeId: number | bigint; layout?: Layout | string; clock?: 'system' | 'fast' | ManualClock; maxDriftTicks?: number | bigint; maxBackwardWaitMs?: number | bigint; resumeAfterMs?: number | bigint }"
    )]
    pub fn new(env: Env, this: This<Unknown>, options_value: Unknown) -> napi::Result<Self> {
        refuse_without_new::<Generator>(&env, &this, "Generator")?;
        let Some(object) = options(&env, Some(options_value), "options", &OPTION_KEYS)? else {
            return Err(throw(
                &env,
                Refusal::misuse(
                    Misuse::InvalidType,
                    "Generator needs an options object with a nodeId",
                ),
            ));
        };
        let Some(node) = field(&object, "nodeId")? else {
            return Err(throw(
                &env,
                Refusal::misuse(
                    Misuse::InvalidType,
                    "nodeId is required: give each process its own (see the README on leases)",
                ),
            ));
        };
        let node = args::unsigned(&env, node, "nodeId")?;
        let layout = layout_option(&env, field(&object, "layout")?)?;
        let clock = clock_option(&env, field(&object, "clock")?, layout.tick_ms())?;
        let unsigned = |key: &str| {
            field(&object, key)?
                .map(|value| args::unsigned(&env, value, key))
                .transpose()
        };
        let core_options = ferroflake::Options::given(
            unsigned("maxDriftTicks")?,
            unsigned("maxBackwardWaitMs")?,
            unsigned("resumeAfterMs")?,
        );
        let (membership, shared) =
            registry::acquire(layout, node, clock, core_options).or_throw(&env)?;
        let issuing = Arc::new(Issuing {
            generator: membership.generator().clone(),
            js_safe: layout.max_id() <= MAX_SAFE_INTEGER,
            open: AtomicBool::new(true),
            membership: Mutex::new(Some(membership)),
        });
        fast_path::install(&env, this.raw(), &issuing)?;
        dispose::install(&env, this.raw())?;
        Ok(Generator { issuing, shared })
    }

    /// Stops this `Generator` and gives its node id back at once: later calls throw
    /// `ERR_FERROFLAKE_CLOSED`, and once every `Generator` of the node id in this process is
    /// closed, the node id takes another layout, clock or options (continuing after the
    /// IDs already issued). Also `[Symbol.dispose]`, for `using`. Closing twice does nothing.
    #[napi]
    pub fn close(&self) {
        self.issuing.close();
    }

    /// True once `close()` was called.
    #[napi(getter)]
    pub fn is_closed(&self) -> bool {
        !self.issuing.open.load(Ordering::Relaxed)
    }

    /// The next ID as a `number`, always a safe integer. Throws RangeError
    /// `ERR_FERROFLAKE_UNSAFE_INTEGER` on a layout wider than 53 bits: use `nextIdBigInt()`.
    #[napi]
    pub fn next_id(&self, env: Env) -> napi::Result<f64> {
        next_number(&*self.issuing).or_throw(&env)
    }

    /// The next ID as a `bigint` (any layout).
    #[napi]
    pub fn next_id_big_int(&self, env: Env) -> napi::Result<u64> {
        self.issuing.next_id().or_throw(&env)
    }

    /// The next ID as a string: decimal (default), or any other format `encode` takes.
    #[napi(
        ts_args_type = "format?: 'dec' | 'base62' | 'base32' | 'base58-flickr' | 'base32-bwmarrin' | 'base36' | 'base2' | 'base64-decimal' | 'json'"
    )]
    pub fn next_id_string(&self, env: Env, format: Option<Unknown>) -> napi::Result<String> {
        let format = format_option(&env, format)?;
        let id = self.issuing.next_id().or_throw(&env)?;
        Ok(format.encode(id).or_throw(&env)?.to_string())
    }

    /// The next ID carrying `shard` in its low bits, as a `bigint`.
    #[napi(ts_args_type = "shard: number | bigint")]
    pub fn next_id_for_shard(&self, env: Env, shard: Unknown) -> napi::Result<u64> {
        let shard = args::unsigned(&env, shard, "shard")?;
        let generator = self.issuing.live().or_throw(&env)?;
        generator.next_id_for_shard(shard).or_throw(&env)
    }

    /// `count` consecutive IDs as safe-integer numbers (same rule as `nextId()`): at most
    /// what the layout issues in one second (one tick, for a tick longer than that), so a
    /// batch holds the event loop no longer than a second or, like `nextId()`, one tick.
    #[napi(ts_args_type = "count: number", ts_return_type = "Array<number>")]
    pub fn next_ids<'env>(&self, env: &'env Env, count: Unknown) -> napi::Result<Unknown<'env>> {
        if !self.issuing.js_safe {
            return Err(throw(env, refuse_numbers(self.inner().layout())));
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

    /// Splits an ID of this generator's layout into its parts.
    #[napi(ts_args_type = "id: number | bigint | string")]
    pub fn decode<'env>(&self, env: &'env Env, id: Unknown) -> napi::Result<DecodedId<'env>> {
        decode_with(env, self.inner().layout(), id)
    }

    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: *self.inner().layout(),
        }
    }

    #[napi(getter)]
    pub fn node_id(&self, env: Env) -> napi::Result<f64> {
        to_number(&env, self.inner().node(), "nodeId")
    }

    #[napi(getter, ts_return_type = "'system' | 'fast' | 'manual'")]
    pub fn clock(&self) -> &'static str {
        self.inner().clock().kind().name()
    }

    /// True when this `Generator` joined a core generator another `Generator` in this
    /// process made first (same layout, node id, clock and options).
    #[napi(getter)]
    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// True when `nextId()` returns numbers (the layout is at most 53 bits wide).
    #[napi(getter)]
    pub fn is_js_safe(&self) -> bool {
        self.issuing.js_safe
    }

    #[napi]
    pub fn counters(&self) -> Counters {
        let c = self.inner().counters();
        // Counts of slow-path events: far below 2^53 in any real run.
        Counters {
            waits: c.waits as f64,
            borrowed_ticks: c.borrowed_ticks as f64,
            rollbacks: c.rollbacks as f64,
        }
    }

    /// Forbids IDs whose tick starts at or after `ms` (a lease deadline); calls then throw
    /// `ERR_FERROFLAKE_LEASE_EXPIRED`. Applies to every `Generator` sharing this node.
    #[napi(ts_args_type = "ms: number | bigint")]
    pub fn set_fence_ms(&self, env: Env, ms: Unknown) -> napi::Result<()> {
        let ms = args::unsigned(&env, ms, "ms")?;
        self.issuing.live().or_throw(&env)?.set_fence_ms(ms);
        Ok(())
    }

    /// Lifts the fence (for every `Generator` sharing this node).
    #[napi]
    pub fn clear_fence(&self, env: Env) -> napi::Result<()> {
        self.issuing.live().or_throw(&env)?.clear_fence();
        Ok(())
    }

    /// The fence in Unix ms, or null when none is set.
    #[napi(getter)]
    pub fn fence_ms(&self, env: Env) -> napi::Result<Option<f64>> {
        self.inner()
            .fence_ms()
            .map(|ms| to_number(&env, ms, "fenceMs"))
            .transpose()
    }

    /// Start (Unix ms) of the tick of the last ID issued (or of the resume point).
    #[napi(getter)]
    pub fn last_issued_ms(&self, env: Env) -> napi::Result<f64> {
        to_number(&env, self.inner().last_issued_ms(), "lastIssuedMs")
    }

    /// The core generator, for what a closed `Generator` may still answer (its layout,
    /// node id, counters, decode).
    fn inner(&self) -> &SharedGenerator {
        &self.issuing.generator
    }

    fn batch(&self, env: &Env, count: Unknown) -> napi::Result<Vec<u64>> {
        let count = batch_count(env, count, self.inner().layout())?;
        let generator = self.issuing.live().or_throw(env)?;
        let mut ids = vec![0u64; count];
        generator.next_ids(&mut ids).or_throw(env)?;
        Ok(ids)
    }
}

/// The length of a batch asked for: at most what `layout` issues in one second at its cap
/// (one tick's IDs, for a tick longer than a second), so that no batch holds the event loop
/// much longer than a second (2^24 IDs of the js53ms layout would hold it for over a
/// minute) or than one `nextId()` may (a tick), and at most [`MAX_BATCH`].
pub(crate) fn batch_count(
    env: &Env,
    count: Unknown,
    layout: &ferroflake::Layout,
) -> napi::Result<usize> {
    let count = args::bounded(env, count, "count", MAX_BATCH)?;
    let ticks_per_second = (1000 / layout.tick_ms().max(1)).max(1);
    let per_second = layout
        .max_sequence()
        .saturating_add(1)
        .saturating_mul(ticks_per_second);
    if count > per_second {
        return Err(throw(
            env,
            Refusal::misuse(
                Misuse::OutOfRange,
                format!(
                    "count must be at most {per_second} for this layout, got {count}: a batch \
                     takes at most what the layout issues in one second (or in one tick, \
                     if longer), so that it never holds the event loop longer; take more in \
                     several calls"
                ),
            ),
        ));
    }
    Ok(count as usize)
}

#[cold]
pub(crate) fn refuse_numbers(layout: &ferroflake::Layout) -> Refusal {
    Refusal::misuse(
        Misuse::UnsafeInteger,
        format!(
            "this layout's IDs use {} bits and may exceed Number.MAX_SAFE_INTEGER; \
             use nextIdBigInt() or nextIdString(), or a js53 layout",
            layout.total_bits()
        ),
    )
}

/// Splits `id` with `layout` (default `js53ms`, the default generator layout).
#[napi(ts_args_type = "id: number | bigint | string, layout?: Layout | string")]
pub fn decode<'env>(
    env: &'env Env,
    id: Unknown,
    layout: Option<Unknown>,
) -> napi::Result<DecodedId<'env>> {
    let layout = layout_option(env, layout.filter(|v| !args::is_absent(v)))?;
    decode_with(env, &layout, id)
}
