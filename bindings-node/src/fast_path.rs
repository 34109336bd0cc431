//! Per-instance `nextId`, `nextIdBigInt` and `nextIdString` functions that skip napi-rs's
//! method glue ([`crate::bound`]).
//!
//! Each `Generator`, `LeasedGenerator` and segment `SegmentKey` gets its own three
//! functions whose data is what issues its IDs (an [`Issuer`]): a call is the issuer's
//! check that it is open, the core's CAS loop (or the segment's increment) and one value
//! creation. The prototype methods of the same names (in the .d.ts) run the same code
//! ([`next_number`]); these own properties shadow them.

use std::ptr;
use std::sync::Arc;

use napi::sys;
use napi::Env;

use crate::args::MAX_SAFE_INTEGER;
use crate::bound::{created, define, function, with_data};
use crate::error::{Misuse, OrThrow, Refusal};
use crate::text::format_option;

/// What issues the IDs of one JS object: a generator, a leased generator or a segment key.
pub(crate) trait Issuer: Send + Sync + 'static {
    /// The next ID, or why not (closed, fenced, exhausted, ...).
    fn next_id(&self) -> Result<u64, Refusal>;
    /// Whether every ID fits a JS number, decided once (the layout's or the key's limit).
    fn js_safe(&self) -> bool;
    /// Why `nextId()` refuses numbers when [`js_safe`](Self::js_safe) is false.
    fn refuse_numbers(&self) -> Refusal;
}

/// The next ID as a JS number, refused up front when the issuer's IDs can pass 2^53 - 1,
/// and checked again so that no rounded number can ever leave.
#[inline]
pub(crate) fn next_number(issuer: &impl Issuer) -> Result<f64, Refusal> {
    if !issuer.js_safe() {
        return Err(issuer.refuse_numbers());
    }
    let id = issuer.next_id()?;
    if id > MAX_SAFE_INTEGER {
        return Err(Refusal::misuse(
            Misuse::UnsafeInteger,
            format!("id {id} is beyond Number.MAX_SAFE_INTEGER"),
        ));
    }
    Ok(id as f64)
}

/// Defines `nextId`, `nextIdBigInt` and `nextIdString` on `this`.
pub(crate) fn install<I: Issuer>(
    env: &Env,
    this: sys::napi_value,
    issuer: &Arc<I>,
) -> napi::Result<()> {
    let next_id = function(env, c"nextId", next_id_callback::<I>, issuer)?;
    let next_id_big_int = function(env, c"nextIdBigInt", next_id_big_int_callback::<I>, issuer)?;
    let next_id_string = function(env, c"nextIdString", next_id_string_callback::<I>, issuer)?;
    define(
        env,
        this,
        &[
            (c"nextId", next_id),
            (c"nextIdBigInt", next_id_big_int),
            (c"nextIdString", next_id_string),
        ],
    )
}

unsafe extern "C" fn next_id_callback<I: Issuer>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node as the callback of a function made by `function`.
    unsafe {
        with_data(env, info, |issuer: &I, js_env, []| {
            let id = next_number(issuer).or_throw(js_env)?;
            let mut value = ptr::null_mut();
            // SAFETY: valid env and out-pointer.
            created(sys::napi_create_double(env, id, &mut value), value)
        })
    }
}

unsafe extern "C" fn next_id_big_int_callback<I: Issuer>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node as the callback of a function made by `function`.
    unsafe {
        with_data(env, info, |issuer: &I, js_env, []| {
            let id = issuer.next_id().or_throw(js_env)?;
            let mut value = ptr::null_mut();
            // SAFETY: valid env and out-pointer.
            created(sys::napi_create_bigint_uint64(env, id, &mut value), value)
        })
    }
}

unsafe extern "C" fn next_id_string_callback<I: Issuer>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node as the callback of a function made by `function`.
    unsafe {
        with_data(env, info, |issuer: &I, js_env, [format]| {
            let format = format_option(js_env, Some(format))?;
            let id = issuer.next_id().or_throw(js_env)?;
            let text = format.encode(id).or_throw(js_env)?;
            let mut value = ptr::null_mut();
            // SAFETY: valid env and out-pointer; `text` is ASCII of the given length.
            created(
                sys::napi_create_string_latin1(
                    env,
                    text.as_ptr().cast(),
                    text.len() as isize,
                    &mut value,
                ),
                value,
            )
        })
    }
}
