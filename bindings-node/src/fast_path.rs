//! Per-instance `nextId`, `nextIdBigInt` and `nextIdString` functions that skip napi-rs's
//! method glue.
//!
//! Why: a `#[napi]` method taking `&self` goes through napi-rs's native-borrow tracking (a
//! global lock, a hash map entry and an allocation per call) plus `napi_unwrap` and a type
//! tag check, which costs about 300 ns, six times the call itself. Instead, each
//! `Generator` gets its own three functions whose callback data is an `Arc` of the core
//! generator: a call is `napi_get_cb_info`, the core's CAS loop and one value creation.
//! They need no `this`, so a detached `const next = generator.nextId` works too.
//!
//! The prototype methods of the same names (in the .d.ts) run the same code
//! ([`next_number`](crate::generator::next_number)); these own properties shadow them.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::JsError;
use napi::sys;
use napi::{Env, Status, Unknown};

use crate::error::{throw, Misuse, OrThrow, Refusal};
use crate::generator::next_number;
use crate::registry::SharedGenerator;
use crate::text::format_option;

/// What both functions read: the shared core generator and the layout's number safety.
struct Bound {
    generator: SharedGenerator,
    js_safe: bool,
}

/// Defines `nextId`, `nextIdBigInt` and `nextIdString` on `this` (writable and configurable, so tests can
/// stub them; not enumerable, like methods).
pub(crate) fn install(
    env: &Env,
    this: sys::napi_value,
    generator: SharedGenerator,
    js_safe: bool,
) -> napi::Result<()> {
    let bound = Arc::new(Bound { generator, js_safe });
    let next_id = function(env, c"nextId", next_id_callback, &bound)?;
    let next_id_big_int = function(env, c"nextIdBigInt", next_id_big_int_callback, &bound)?;
    let next_id_string = function(env, c"nextIdString", next_id_string_callback, &bound)?;
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

/// A JS function whose data is one strong count of `bound`, released when the function is
/// collected.
fn function(
    env: &Env,
    name: &'static std::ffi::CStr,
    callback: unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value,
    bound: &Arc<Bound>,
) -> napi::Result<sys::napi_value> {
    let data = Arc::into_raw(bound.clone()) as *mut c_void;
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
                Some(release),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        }
    } else {
        created
    };
    if finalized != sys::Status::napi_ok {
        // SAFETY: no finalizer owns the count, so take it back here.
        drop(unsafe { Arc::from_raw(data as *const Bound) });
        return Err(napi::Error::from_status(Status::from(finalized)));
    }
    Ok(value)
}

unsafe extern "C" fn release(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the strong count `function` leaked for this function object.
    drop(unsafe { Arc::from_raw(data as *const Bound) });
}

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_status(Status::from(status)))
    }
}

/// Runs `body` with the callback's `Bound` and, if `with_argument`, its first argument
/// (`None` when not given), turning an error (or, defensively, a panic) into a thrown JS
/// error.
///
/// # Safety
/// `env` and `info` must be the arguments of a call to a function made by [`function`].
unsafe fn with_bound(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    with_argument: bool,
    body: impl FnOnce(&Bound, &Env, Option<Unknown>) -> napi::Result<sys::napi_value>,
) -> sys::napi_value {
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
        return ptr::null_mut();
    }
    // SAFETY: the function object holds a strong count while it can be called.
    let bound = unsafe { &*(data as *const Bound) };
    // SAFETY: napi fills missing arguments with undefined; the value lives for this call.
    let first =
        (with_argument && argc > 0).then(|| unsafe { Unknown::from_raw_unchecked(env, argv[0]) });
    let js_env = Env::from_raw(env);
    match catch_unwind(AssertUnwindSafe(|| body(bound, &js_env, first))) {
        Ok(Ok(value)) => value,
        Ok(Err(error)) => {
            // Refusals were thrown where they happened (status PendingException); this
            // throws anything else, such as a failed value creation.
            // SAFETY: a live env inside its callback.
            unsafe { JsError::from(error).throw_into(env) };
            ptr::null_mut()
        }
        Err(_) => {
            throw(
                &js_env,
                Refusal::misuse(Misuse::Internal, "ferroflake: a bug in the addon (panic)"),
            );
            ptr::null_mut()
        }
    }
}

fn created(status: sys::napi_status, value: sys::napi_value) -> napi::Result<sys::napi_value> {
    check(status).map(|()| value)
}

unsafe extern "C" fn next_id_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node as the callback of a function made by `function`.
    unsafe {
        with_bound(env, info, false, |bound, js_env, _| {
            let id = next_number(&bound.generator, bound.js_safe).or_throw(js_env)?;
            let mut value = ptr::null_mut();
            // SAFETY: valid env and out-pointer.
            created(sys::napi_create_double(env, id, &mut value), value)
        })
    }
}

unsafe extern "C" fn next_id_big_int_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node as the callback of a function made by `function`.
    unsafe {
        with_bound(env, info, false, |bound, js_env, _| {
            let id = bound.generator.next_id().or_throw(js_env)?;
            let mut value = ptr::null_mut();
            // SAFETY: valid env and out-pointer.
            created(sys::napi_create_bigint_uint64(env, id, &mut value), value)
        })
    }
}

unsafe extern "C" fn next_id_string_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node as the callback of a function made by `function`.
    unsafe {
        with_bound(env, info, true, |bound, js_env, format| {
            let format = format_option(js_env, format)?;
            let id = bound.generator.next_id().or_throw(js_env)?;
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
