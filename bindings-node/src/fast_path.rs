//! Per-instance `nextId`, `nextIdBigInt` and `nextIdString` functions that skip napi-rs's
//! method glue.
//!
//! Why: a `#[napi]` method taking `&self` goes through napi-rs's native-borrow tracking (a
//! global lock, a hash map entry and an allocation per call) plus `napi_unwrap` and a type
//! tag check, which costs about 300 ns, six times the call itself. Instead, each
//! `Generator`, `LeasedGenerator` and segment `SegmentKey` gets its own three functions
//! whose callback data is an `Arc` of what issues its IDs (an [`Issuer`]): a call is
//! `napi_get_cb_info`, the issuer's check that it is open, the core's CAS loop (or the
//! segment's increment) and one value creation. They need no `this`, so a detached
//! `const next = generator.nextId` works too.
//!
//! Every call either returns a value or leaves a JS exception pending with an
//! `ERR_FERROFLAKE_*` code: a refusal throws its own; anything else that fails here (napi
//! could not read the call, could not make the value, a panic) throws
//! `ERR_FERROFLAKE_INTERNAL` ([`finish`]). A native function that returns nothing without
//! an exception reads as `undefined` in JavaScript, an ID-shaped hole.
//!
//! The prototype methods of the same names (in the .d.ts) run the same code
//! ([`next_number`]); these own properties shadow them.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use napi::sys;
use napi::{Env, Status, Unknown};

use crate::args::MAX_SAFE_INTEGER;
use crate::error::{throw, Misuse, OrThrow, Refusal};
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

/// Defines `nextId`, `nextIdBigInt` and `nextIdString` on `this` (writable and
/// configurable, so tests can stub them; not enumerable, like methods).
pub(crate) fn install<I: Issuer>(
    env: &Env,
    this: sys::napi_value,
    issuer: &Arc<I>,
) -> napi::Result<()> {
    let next_id = function(env, c"nextId", next_id_callback::<I>, issuer)?;
    let next_id_big_int = function(env, c"nextIdBigInt", next_id_big_int_callback::<I>, issuer)?;
    let next_id_string = function(env, c"nextIdString", next_id_string_callback::<I>, issuer)?;
    let property = |name: &'static std::ffi::CStr, value| sys::napi_property_descriptor {
        utf8name: name.as_ptr(),
        name: ptr::null_mut(),
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    };
    let properties = [
        property(c"nextId", next_id),
        property(c"nextIdBigInt", next_id_big_int),
        property(c"nextIdString", next_id_string),
    ];
    // SAFETY: `this` is a live object of this env; the descriptors point at 'static names.
    check(unsafe {
        sys::napi_define_properties(env.raw(), this, properties.len(), properties.as_ptr())
    })
}

/// A JS function whose data is one strong count of `issuer`, released when the function is
/// collected.
fn function<I: Issuer>(
    env: &Env,
    name: &'static std::ffi::CStr,
    callback: unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value,
    issuer: &Arc<I>,
) -> napi::Result<sys::napi_value> {
    let data = Arc::into_raw(issuer.clone()) as *mut c_void;
    let mut value = ptr::null_mut();
    // SAFETY: valid env and out-pointer; `data` stays alive until the finalizer below.
    let created = unsafe {
        sys::napi_create_function(
            env.raw(),
            name.as_ptr(),
            name.to_bytes().len() as isize,
            Some(callback),
            data,
            &mut value,
        )
    };
    let finalized = if created == sys::Status::napi_ok {
        // SAFETY: `value` was just created; the finalizer takes back the strong count.
        unsafe {
            sys::napi_add_finalizer(
                env.raw(),
                value,
                data,
                Some(release::<I>),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        }
    } else {
        created
    };
    if finalized != sys::Status::napi_ok {
        // SAFETY: no finalizer owns the count, so take it back here.
        drop(unsafe { Arc::from_raw(data as *const I) });
        return Err(napi::Error::from_status(Status::from(finalized)));
    }
    Ok(value)
}

unsafe extern "C" fn release<I: Issuer>(
    _env: sys::napi_env,
    data: *mut c_void,
    _hint: *mut c_void,
) {
    // SAFETY: `data` is the strong count `function` leaked for this function object.
    drop(unsafe { Arc::from_raw(data as *const I) });
}

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_status(Status::from(status)))
    }
}

/// Runs `body` with the callback's issuer and, if `with_argument`, its first argument
/// (`None` when not given), and hands Node its value or a pending exception ([`finish`]).
///
/// # Safety
/// `env` and `info` must be the arguments of a call to a function made by [`function`]
/// with an issuer of type `I`.
unsafe fn with_issuer<I: Issuer>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    with_argument: bool,
    body: impl FnOnce(&I, &Env, Option<Unknown>) -> napi::Result<sys::napi_value>,
) -> sys::napi_value {
    let js_env = Env::from_raw(env);
    let mut data = ptr::null_mut();
    let mut argc = usize::from(with_argument);
    let mut argv = [ptr::null_mut(); 1];
    // SAFETY: per this function's contract; room for `argc` (0 or 1) arguments.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            &mut data,
        )
    };
    if status != sys::Status::napi_ok || data.is_null() {
        let error = napi::Error::new(
            Status::from(status),
            "ferroflake: napi could not read this call's arguments",
        );
        // SAFETY: a live env inside its callback.
        return unsafe { finish(env, &js_env, Err(error)) };
    }
    // SAFETY: the function object holds a strong count while it can be called.
    let issuer = unsafe { &*(data as *const I) };
    // SAFETY: napi fills missing arguments with undefined; the value lives for this call.
    let first =
        (with_argument && argc > 0).then(|| unsafe { Unknown::from_raw_unchecked(env, argv[0]) });
    let outcome =
        catch_unwind(AssertUnwindSafe(|| body(issuer, &js_env, first))).unwrap_or_else(|_| {
            Err(napi::Error::new(
                Status::GenericFailure,
                "ferroflake: a bug in the addon (panic)",
            ))
        });
    // SAFETY: a live env inside its callback.
    unsafe { finish(env, &js_env, outcome) }
}

/// What a fast-path callback returns to Node: the value, or null with an exception pending.
///
/// A refusal has already thrown its coded error (its `napi::Error` only marks that). Any
/// other error (a failed napi call, a panic) becomes `ERR_FERROFLAKE_INTERNAL` carrying
/// napi's status and text. Whatever happened, the call never ends with neither a value nor
/// an exception: Node would hand the caller `undefined` as if it were an ID.
///
/// # Safety
/// `env` must be the live env of the callback that calls this, and `js_env` its wrapper.
unsafe fn finish(
    env: sys::napi_env,
    js_env: &Env,
    outcome: napi::Result<sys::napi_value>,
) -> sys::napi_value {
    let error = match outcome {
        Ok(value) if !value.is_null() => return value,
        Ok(_) => napi::Error::new(Status::GenericFailure, "ferroflake: napi made no value"),
        Err(error) => error,
    };
    if !exception_pending(env) {
        let message = format!("{} ({})", error.reason, error.status);
        let _ = throw(js_env, Refusal::misuse(Misuse::Internal, message));
    }
    ptr::null_mut()
}

/// Whether `env` has an exception pending (true when napi cannot tell: nothing more can be
/// thrown into an env that cannot answer).
fn exception_pending(env: sys::napi_env) -> bool {
    let mut pending = false;
    // SAFETY: a live env and a valid out-pointer.
    let status = unsafe { sys::napi_is_exception_pending(env, &mut pending) };
    status != sys::Status::napi_ok || pending
}

fn created(status: sys::napi_status, value: sys::napi_value) -> napi::Result<sys::napi_value> {
    check(status).map(|()| value)
}

unsafe extern "C" fn next_id_callback<I: Issuer>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node as the callback of a function made by `function`.
    unsafe {
        with_issuer(env, info, false, |issuer: &I, js_env, _| {
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
        with_issuer(env, info, false, |issuer: &I, js_env, _| {
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
        with_issuer(env, info, true, |issuer: &I, js_env, format| {
            let format = format_option(js_env, format)?;
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
