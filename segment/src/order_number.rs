//! Date-prefixed order numbers on top of segment mode.

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::Timestamp;

use crate::{KeyHandle, SegmentAllocator, SegmentError, MAX_STEP};

/// Where an order-number generator reads the time.
pub trait WallClock: Send + Sync {
    /// Now, in ms since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The system's real-time clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemWallClock;

impl WallClock for SystemWallClock {
    fn now_ms(&self) -> i64 {
        Timestamp::now().as_millisecond()
    }
}

/// A clock that moves only when told: for tests.
#[derive(Debug)]
pub struct ManualWallClock(AtomicI64);

impl ManualWallClock {
    /// A clock reading `ms` since the Unix epoch.
    pub fn new(ms: i64) -> Self {
        ManualWallClock(AtomicI64::new(ms))
    }

    /// Sets the time.
    pub fn set_ms(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `ms` (back, if negative).
    pub fn advance_ms(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl WallClock for ManualWallClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// How order numbers look and where their days begin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderNumberConfig {
    /// The keys' prefix: day keys are `{prefix}:{yyyyMMdd}`. Default `orders`.
    pub prefix: String,
    /// The IANA time zone whose midnight starts a new day. Default `UTC`.
    pub zone: String,
    /// Digits of the counter, 1 to 10 (so that the whole number, 18 digits at most, fits a
    /// signed 64-bit integer). Default 6: up to 999,999 numbers a day.
    pub width: u32,
    /// The step of day keys this generator creates (the table's step, the least one
    /// allocation takes). Default 100.
    pub step: u64,
}

impl Default for OrderNumberConfig {
    fn default() -> Self {
        OrderNumberConfig {
            prefix: "orders".to_owned(),
            zone: "UTC".to_owned(),
            width: 6,
            step: 100,
        }
    }
}

/// The widest counter: `yyyyMMdd` and 10 digits is 18 digits, below 2^63.
pub const MAX_ORDER_WIDTH: u32 = 10;

/// One order number: a day and that day's counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OrderNumber {
    day: Date,
    counter: u64,
    width: u32,
    key: String,
}

impl OrderNumber {
    /// The day, in the generator's time zone.
    pub fn day(&self) -> Date {
        self.day
    }

    /// The counter within the day, from 1.
    pub fn counter(&self) -> u64 {
        self.counter
    }

    /// The segment key it came from, `{prefix}:{yyyyMMdd}`.
    pub fn key(&self) -> String {
        self.key.clone()
    }

    /// The number as an integer: `yyyyMMdd * 10^width + counter` (at most 18 digits).
    pub fn value(&self) -> u64 {
        let day = day_number(self.day);
        day * 10u64.pow(self.width) + self.counter
    }
}

impl fmt::Display for OrderNumber {
    /// `yyyyMMdd` and the counter, zero-padded to the width: `20261122000042`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self.width as usize;
        write!(f, "{}{:0width$}", day_number(self.day), self.counter)
    }
}

fn day_number(day: Date) -> u64 {
    let year = u64::try_from(day.year()).unwrap_or(0);
    year * 10_000
        + u64::try_from(day.month()).unwrap_or(0) * 100
        + u64::try_from(day.day()).unwrap_or(0)
}

/// The day in use and its key's handle.
struct Today {
    day: Date,
    key: String,
    handle: KeyHandle,
}

/// Issues date-prefixed order numbers; see below. Share it between
/// threads (an `Arc`): one lock is taken per number, to read the current day.
///
/// Date-prefixed order numbers: `yyyyMMdd` and a zero-padded counter that starts again at 1
/// each day, on top of segment mode.
///
/// Each day has its own segment key, `{prefix}:{yyyyMMdd}` (`orders:20261122`), created in
/// the table the first time a number of that day is asked for. The day is the date in a
/// configured IANA time zone (daylight saving time included), read from a clock that tests
/// can set.
///
/// ```
/// use std::sync::Arc;
/// use ferroflake_segment::{
///     ManualWallClock, MemoryStore, OrderNumberConfig, OrderNumbers, SegmentAllocator,
///     SegmentConfig,
/// };
///
/// let store = Arc::new(MemoryStore::new());
/// let allocator = Arc::new(SegmentAllocator::new(store, SegmentConfig::default())?);
/// // 2026-11-22 23:59:59 in Shanghai (UTC+8).
/// let clock = Arc::new(ManualWallClock::new(1_795_363_199_000));
/// let config = OrderNumberConfig { zone: "Asia/Shanghai".into(), width: 6, ..OrderNumberConfig::default() };
/// let orders = OrderNumbers::with_clock(allocator, config, clock.clone())?;
/// assert_eq!(orders.next()?.to_string(), "20261122000001");
/// assert_eq!(orders.next()?.to_string(), "20261122000002");
/// clock.advance_ms(1_000); // midnight in Shanghai: a new day, a new key, from 1 again
/// let first = orders.next()?;
/// assert_eq!((first.key(), first.to_string()), ("orders:20261123".to_owned(), "20261123000001".to_owned()));
/// # Ok::<(), ferroflake_segment::SegmentError>(())
/// ```
///
/// Guarantees, on top of [`SegmentAllocator`]'s:
///
/// - **No number twice.** Numbers of one day come from that day's key, whose ranges the
///   table hands out atomically, so processes sharing the table never repeat each other. A
///   day's key is created on demand; a create that races another process's is not an error.
/// - **Days only go forward.** A clock that steps back across midnight does not reopen the
///   previous day: numbers keep the latest day this generator has issued under, so its
///   numbers increase (per thread), and the old day's key is never touched again.
/// - **No overflow.** When a day's counter would need more digits than `width`, the answer is
///   [`SegmentError::Exhausted`] (with the day's key and the largest counter), never a
///   wider or wrapped number; nothing is issued. The next day starts again at 1.
/// - **Gaps, not repeats.** As with any segment key, numbers a process took but did not issue
///   before it stopped are skipped (a clean [`SegmentAllocator::shutdown`] gives them back
///   when it can), and several processes interleave. Keep the allocator's
///   [`max_step`](crate::SegmentConfig::max_step) well below `10^width` so a busy day's
///   growing segments do not use up a narrow counter.
///
/// Why jiff: it is maintained, it does time-zone arithmetic with the IANA rules (so a
/// date is right across DST changes), and it reads the system's zoneinfo with the IANA
/// database bundled as a fallback, so the day is right in a container without tzdata.
pub struct OrderNumbers {
    allocator: Arc<SegmentAllocator>,
    config: OrderNumberConfig,
    zone: TimeZone,
    clock: Arc<dyn WallClock>,
    today: Mutex<Option<Today>>,
}

impl fmt::Debug for OrderNumbers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OrderNumbers")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl OrderNumbers {
    /// Order numbers from `allocator`'s store, on the system clock.
    ///
    /// # Errors
    /// As [`with_clock`](Self::with_clock).
    pub fn new(
        allocator: Arc<SegmentAllocator>,
        config: OrderNumberConfig,
    ) -> Result<Self, SegmentError> {
        Self::with_clock(allocator, config, Arc::new(SystemWallClock))
    }

    /// Order numbers on `clock`.
    ///
    /// # Errors
    /// [`SegmentError::InvalidConfig`] for an unknown time zone, a width outside
    /// 1..=[`MAX_ORDER_WIDTH`], a step outside 1..=2^31 - 1, or a prefix that makes keys
    /// longer than the table holds; then [`SegmentError::Closed`] after the allocator's
    /// [`shutdown`](SegmentAllocator::shutdown).
    pub fn with_clock(
        allocator: Arc<SegmentAllocator>,
        config: OrderNumberConfig,
        clock: Arc<dyn WallClock>,
    ) -> Result<Self, SegmentError> {
        let bad = |detail: String| Err(SegmentError::InvalidConfig { detail });
        let zone = match jiff::tz::db().get(&config.zone) {
            Ok(zone) => zone,
            Err(e) => return bad(format!("time zone {:?}: {e}", config.zone)),
        };
        if !(1..=MAX_ORDER_WIDTH).contains(&config.width) {
            return bad(format!(
                "order number width {} is outside 1..={MAX_ORDER_WIDTH}",
                config.width
            ));
        }
        if config.step == 0 || config.step > MAX_STEP {
            return bad(format!("step {} is outside 1..=2^31 - 1", config.step));
        }
        crate::check_key(&format!("{}:20261122", config.prefix))?;
        // As for a key: a shut-down allocator makes nothing new, not even a day's key later.
        allocator.refuse_if_closed(&format!("{}:yyyyMMdd", config.prefix))?;
        Ok(OrderNumbers {
            allocator,
            config,
            zone,
            clock,
            today: Mutex::new(None),
        })
    }

    /// The largest counter a day holds: `10^width - 1`.
    pub fn max_counter(&self) -> u64 {
        10u64.pow(self.config.width) - 1
    }

    /// The next order number.
    ///
    /// # Errors
    /// [`SegmentError::Exhausted`] when today's counter has used its width;
    /// [`SegmentError::InvalidConfig`] for a clock outside the years 0001 to 9999; the
    /// allocator's and the store's errors (creating a new day's key talks to the store).
    /// Nothing is issued on an error.
    pub fn next(&self) -> Result<OrderNumber, SegmentError> {
        let now = Timestamp::from_millisecond(self.clock.now_ms()).map_err(|e| {
            SegmentError::InvalidConfig {
                detail: format!("the clock reads an instant out of range: {e}"),
            }
        })?;
        let date = now.to_zoned(self.zone.clone()).date();
        if date.year() < 1 {
            return Err(SegmentError::InvalidConfig {
                detail: format!("the clock reads a day before year 1: {date}"),
            });
        }
        let (day, key, handle) = self.day_handle(date)?;
        let counter = handle.next_id()?;
        Ok(OrderNumber {
            day,
            counter,
            width: self.config.width,
            key,
        })
    }

    /// The handle of `date`'s key, or of a later day already in use (days never go back).
    fn day_handle(&self, date: Date) -> Result<(Date, String, KeyHandle), SegmentError> {
        let mut today = self.today.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = today.as_ref() {
            if date <= t.day {
                return Ok((t.day, t.key.clone(), t.handle.clone()));
            }
        }
        let key = format!("{}:{}", self.config.prefix, day_number(date));
        let step = self.config.step;
        let handle = self
            .allocator
            .key_or_create(&key, self.max_counter(), 1, step)?;
        *today = Some(Today {
            day: date,
            key: key.clone(),
            handle: handle.clone(),
        });
        Ok((date, key, handle))
    }
}
