//! Clocks: the `ManualClock` class for deterministic tests, and the `clock` option.

use std::sync::Arc;

use napi::bindgen_prelude::{ClassInstance, FromNapiValue, This};
use napi::{Env, Unknown, ValueType};
use napi_derive::napi;

use ferroflake::{AnyClock, Clock, ClockKind};

use crate::args::{self, to_number};
use crate::error::{refuse_without_new, throw, Misuse, Refusal};
use crate::names::{one_of, quoted};

/// A clock that moves only when told to. A generator waiting on it (sequence used up)
/// advances it to the next tick at once, so tests never sleep.
#[napi]
pub struct ManualClock {
    pub(crate) inner: Arc<ferroflake::ManualClock>,
}

#[napi]
impl ManualClock {
    /// A clock reading `nowMs` (Unix ms) until moved.
    #[napi(constructor, ts_args_type = "nowMs: number | bigint")]
    pub fn new(env: Env, this: This<Unknown>, now_ms: Unknown) -> napi::Result<Self> {
        refuse_without_new::<ManualClock>(&env, &this, "ManualClock")?;
        let now_ms = args::unsigned(&env, now_ms, "nowMs")?;
        Ok(ManualClock {
            inner: Arc::new(ferroflake::ManualClock::new(now_ms)),
        })
    }

    /// The current reading in Unix ms.
    #[napi(getter)]
    pub fn now_ms(&self, env: Env) -> napi::Result<f64> {
        to_number(&env, self.inner.now_ms(), "nowMs")
    }

    /// Sets the time, forwards or backwards.
    #[napi(ts_args_type = "ms: number | bigint")]
    pub fn set_ms(&self, env: Env, ms: Unknown) -> napi::Result<()> {
        self.inner.set_ms(args::unsigned(&env, ms, "ms")?);
        Ok(())
    }

    /// Moves the time forward by `ms` (stopping at 2^64 - 1, as in every other language).
    #[napi(ts_args_type = "ms: number | bigint")]
    pub fn advance_ms(&self, env: Env, ms: Unknown) -> napi::Result<()> {
        self.inner.advance_ms(args::unsigned(&env, ms, "ms")?);
        Ok(())
    }

    /// Moves the time back by `ms` (stopping at 0).
    #[napi(ts_args_type = "ms: number | bigint")]
    pub fn rewind_ms(&self, env: Env, ms: Unknown) -> napi::Result<()> {
        self.inner.rewind_ms(args::unsigned(&env, ms, "ms")?);
        Ok(())
    }
}

/// The clock option: `'system'` (default), `'fast'` or a `ManualClock`.
pub(crate) fn clock_option(
    env: &Env,
    value: Option<Unknown>,
    tick_ms: u64,
) -> napi::Result<AnyClock> {
    let Some(value) = value else {
        return Ok(AnyClock::system());
    };
    match value.get_type()? {
        ValueType::String => {
            let name = args::string(env, value, "clock")?;
            match ClockKind::from_name(&name) {
                Some(ClockKind::System) => Ok(AnyClock::system()),
                Some(ClockKind::Fast) => Ok(AnyClock::fast(tick_ms)),
                // A manual clock is a `ManualClock` object: it needs a start and a handle.
                Some(ClockKind::Manual) | None => Err(throw(
                    env,
                    Refusal::misuse(
                        Misuse::InvalidOption,
                        format!("clock must be {}, got {name:?}", clock_choices()),
                    ),
                )),
            }
        }
        ValueType::Object => {
            // SAFETY: a live JS object from this call; the type tag check refuses other classes.
            match unsafe {
                ClassInstance::<ManualClock>::from_napi_value(env.raw(), args::raw(&value))
            } {
                Ok(clock) => Ok(AnyClock::Manual(clock.inner.clone())),
                Err(_) => Err(not_a_clock(env)),
            }
        }
        _ => Err(not_a_clock(env)),
    }
}

/// What the clock option accepts, in words: the core's names of the clocks that need no
/// object, or a `ManualClock`.
fn clock_choices() -> String {
    let named = ClockKind::ALL
        .into_iter()
        .filter(|kind| *kind != ClockKind::Manual)
        .map(ClockKind::name);
    let mut choices = quoted(named);
    choices.push("a ManualClock".to_owned());
    one_of(&choices)
}

fn not_a_clock(env: &Env) -> napi::Error {
    throw(
        env,
        Refusal::misuse(
            Misuse::InvalidType,
            format!("clock must be {}", clock_choices()),
        ),
    )
}
