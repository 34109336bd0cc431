//! Date-prefixed order numbers (`20261122000042`) on a `SegmentAllocator`, over
//! `ferroflake_segment::OrderNumbers`: one segment key per day, the day in an IANA zone.
//!
//! Days, keys, widths and exhaustion are the segment crate's; this module reads options
//! and hands each number out as text and bigint (18 digits do not fit a JS `number`).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use napi::bindgen_prelude::{AsyncTask, ToNapiValue};
use napi::{sys, Env, Unknown};
use napi_derive::napi;

use ferroflake_segment::{OrderNumber as CoreNumber, OrderNumberConfig, OrderNumbers as Core};

use crate::args::{self, field_of, options};
use crate::error::{not_constructible, OrThrow};
use crate::pool::{self, PoolTask};
use crate::segments::{refuse_if_closed, segment_refusal, SegmentAllocator};

const ORDER_KEYS: [&str; 4] = ["prefix", "zone", "width", "step"];

#[napi]
impl SegmentAllocator {
    /// Order numbers from this allocator's store: `yyyyMMdd` then a counter of `width`
    /// digits that starts again at 1 each day, e.g. `20261122000042`.
    ///
    /// - `prefix`: day keys are `{prefix}:{yyyyMMdd}` (default `'orders'`), created in the
    ///   store when a day's first number is asked for.
    /// - `zone`: the IANA time zone whose midnight starts a day (default `'UTC'`).
    /// - `width`: counter digits, 1 to 10 (default 6: 999,999 numbers a day).
    /// - `step`: the step of the day keys it creates (default 100).
    ///
    /// Throws RangeError `ERR_FERROFLAKE_SEGMENT_INVALID_CONFIG` for an unknown zone, a
    /// width or step out of range, or a prefix too long for a key.
    #[napi(
        ts_args_type = "options?: { prefix?: string; zone?: string; width?: number; step?: number }"
    )]
    pub fn order_numbers(
        &self,
        env: Env,
        options_value: Option<Unknown>,
    ) -> napi::Result<OrderNumbers> {
        let object = options(&env, options_value, "options", &ORDER_KEYS)?;
        let get = |key: &str| field_of(object.as_ref(), key);
        let mut config = OrderNumberConfig::default();
        if let Some(v) = get("prefix")? {
            config.prefix = args::string(&env, v, "prefix")?;
        }
        if let Some(v) = get("zone")? {
            config.zone = args::string(&env, v, "zone")?;
        }
        if let Some(v) = get("width")? {
            // Past u32 it is refused here; within it, the segment crate checks 1 to 10.
            config.width = args::bounded(&env, v, "width", u64::from(u32::MAX))? as u32;
        }
        if let Some(v) = get("step")? {
            config.step = args::unsigned(&env, v, "step")?;
        }
        let (allocator, closed) = self.core();
        let inner = Core::new(allocator, config.clone())
            .map_err(segment_refusal)
            .or_throw(&env)?;
        let keys = format!("{}:yyyyMMdd", config.prefix);
        refuse_if_closed(&closed, &keys).or_throw(&env)?;
        Ok(OrderNumbers {
            inner: Arc::new(inner),
            config,
            closed,
            keys,
        })
    }
}

/// One order number.
#[napi(object, object_from_js = false)]
pub struct OrderNumber {
    /// `yyyyMMdd` and the zero-padded counter: `'20261122000042'`.
    pub text: String,
    /// The same number as a bigint (up to 18 digits, past `Number.MAX_SAFE_INTEGER`).
    pub value: u64,
    /// The day in the generator's zone, `'2026-11-22'`.
    pub day: String,
    /// The counter within the day, from 1.
    pub counter: f64,
    /// The day's segment key, `'orders:20261122'`.
    pub key: String,
}

fn order_number(env: &Env, number: CoreNumber) -> napi::Result<sys::napi_value> {
    let number = OrderNumber {
        text: number.to_string(),
        value: number.value(),
        day: number.day().to_string(),
        // At most 10 digits: exact in a number.
        counter: number.counter() as f64,
        key: number.key(),
    };
    // SAFETY: a live env on its JS thread.
    unsafe { OrderNumber::to_napi_value(env.raw(), number) }
}

/// Issues date-prefixed order numbers; make one with `allocator.orderNumbers(options)`.
///
/// No number twice across processes sharing the store; days only go forward (a clock
/// stepping back over midnight keeps the later day); a day whose counter would need more
/// than `width` digits is refused, never widened or wrapped.
#[napi]
pub struct OrderNumbers {
    inner: Arc<Core>,
    config: OrderNumberConfig,
    /// The allocator's `close()` flag: a new day's key must not open after it.
    closed: Arc<AtomicBool>,
    /// `{prefix}:yyyyMMdd`, for refusals.
    keys: String,
}

#[napi]
impl OrderNumbers {
    /// Refused: order numbers come from `allocator.orderNumbers(options)`.
    #[napi(constructor)]
    pub fn new(env: Env) -> napi::Result<Self> {
        Err(not_constructible(
            &env,
            "use `allocator.orderNumbers(options)` on an open SegmentAllocator",
        ))
    }

    /// The next order number. A promise, because a day's first number creates that day's
    /// key in the store, off the event loop. Rejects with
    /// `ERR_FERROFLAKE_SEGMENT_EXHAUSTED` when today's counter has used its `width` (the
    /// next day starts at 1 again), `..._SEGMENT_CLOSED` after the allocator's `close()`,
    /// and the store's `SEGMENT_*` errors. Numbers of calls in flight together are unique
    /// but may settle out of order.
    #[napi(ts_return_type = "Promise<OrderNumber>")]
    pub fn next(&self) -> AsyncTask<PoolTask<CoreNumber>> {
        let (inner, closed, keys) = (self.inner.clone(), self.closed.clone(), self.keys.clone());
        let work = move || {
            refuse_if_closed(&closed, &keys)?;
            inner.next().map_err(segment_refusal)
        };
        pool::spawn(work, order_number)
    }

    /// The prefix of the day keys.
    #[napi(getter)]
    pub fn prefix(&self) -> String {
        self.config.prefix.clone()
    }

    /// The time zone whose midnight starts a day.
    #[napi(getter)]
    pub fn zone(&self) -> String {
        self.config.zone.clone()
    }

    /// Digits of the counter.
    #[napi(getter)]
    pub fn width(&self) -> u32 {
        self.config.width
    }

    /// The largest counter of a day: `10 ** width - 1`.
    #[napi(getter)]
    pub fn max_counter(&self) -> f64 {
        self.inner.max_counter() as f64
    }
}
