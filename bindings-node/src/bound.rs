//! Native functions bound to one object's Rust data, for the calls that must cost little.
//!
//! Why: a `#[napi]` method taking `&self` goes through napi-rs's native-borrow tracking (a
//! global lock, a hash map entry and an allocation per call) plus `napi_unwrap` and a type
//! tag check, which costs about 300 ns, six times the call itself. A function made here
//! holds an `Arc` of the data as its callback data instead: a call is `napi_get_cb_info`,
//! the body and one value creation. Such functions are installed as own properties of the
//! object ([`define`]) and shadow the prototype methods of the same names, which run the
//! same code. They need no `this`, so a detached `const next = generator.nextId` works too.
//!
//! Every call either returns a value or leaves a JS exception pending with an
//! `ERR_FERROFLAKE_*` code: a refusal throws its own; anything else that fails here (napi
//! could not read the call, could not make the value, a panic) throws
//! `ERR_FERROFLAKE_INTERNAL` ([`finish`]). A native function that returns nothing without
//! an exception reads as `undefined` in JavaScript, an ID-shaped hole.

use std::ffi::{c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use napi::sys;
use napi::{Env, Status, Unknown};

use crate::error::{throw, Misuse, Refusal};

/// The native side of a bound function: Node's callback signature.
pub(crate) type Callback =
    unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// A JS function named `name` whose callback data is one strong count of `data`, released
/// when the function is collected.
pub(crate) fn function<T: Send + Sync + 'static>(
    env: &Env,
    name: &'static CStr,
    callback: Callback,
    data: &Arc<T>,
) -> napi::Result<sys::napi_value> {
    let raw = Arc::into_raw(data.clone()) as *mut c_void;
    let mut value = ptr::null_mut();
    // SAFETY: valid env and out-pointer; `raw` stays alive until the finalizer below.
    let created = unsafe {
        sys::napi_create_function(
            env.raw(),
            name.as_ptr(),
            name.to_bytes().len() as isize,
            Some(callback),
            raw,
            &mut value,
        )
    };
    let finalized = if created == sys::Status::napi_ok {
        // SAFETY: `value` was just created; the finalizer takes back the strong count.
        unsafe {
            sys::napi_add_finalizer(
                env.raw(),
                value,
                raw,
                Some(release::<T>),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        }
    } else {
        created
    };
    if finalized != sys::Status::napi_ok {
        // SAFETY: no finalizer owns the count, so take it back here.
        drop(unsafe { Arc::from_raw(raw as *const T) });
        return Err(napi::Error::from_status(Status::from(finalized)));
    }
    Ok(value)
}

unsafe extern "C" fn release<T>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the strong count `function` leaked for this function object.
    drop(unsafe { Arc::from_raw(data as *const T) });
}

/// Defines each `(name, function)` on `this`, writable and configurable (so tests can stub
/// them) and not enumerable, like methods.
pub(crate) fn define(
    env: &Env,
    this: sys::napi_value,
    functions: &[(&'static CStr, sys::napi_value)],
) -> napi::Result<()> {
    let properties: Vec<sys::napi_property_descriptor> = functions
        .iter()
        .map(|&(name, value)| sys::napi_property_descriptor {
            utf8name: name.as_ptr(),
            name: ptr::null_mut(),
            method: None,
            getter: None,
            setter: None,
            value,
            attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        })
        .collect();
    // SAFETY: `this` is a live object of this env; the descriptors point at 'static names.
    check(unsafe {
        sys::napi_define_properties(env.raw(), this, properties.len(), properties.as_ptr())
    })
}

pub(crate) fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_status(Status::from(status)))
    }
}

/// `value` once napi said `status` was ok.
pub(crate) fn created(
    status: sys::napi_status,
    value: sys::napi_value,
) -> napi::Result<sys::napi_value> {
    check(status).map(|()| value)
}

/// Runs `body` with the callback's data and its first `N` arguments (undefined for those
/// not given), and hands Node its value or a pending exception ([`finish`]).
///
/// # Safety
/// `env` and `info` must be the arguments of a call to a function made by [`function`]
/// with data of type `T`.
pub(crate) unsafe fn with_data<T, const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    body: impl FnOnce(&T, &Env, [Unknown; N]) -> napi::Result<sys::napi_value>,
) -> sys::napi_value {
    let js_env = Env::from_raw(env);
    let mut data = ptr::null_mut();
    let mut argc = N;
    let mut argv = [ptr::null_mut(); N];
    // SAFETY: per this function's contract; room for `N` arguments.
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
    // A function made with napi_create_function is also a constructor: `new f()` would
    // run the call and hand back an empty object in place of its value.
    let mut new_target = ptr::null_mut();
    // SAFETY: per this function's contract, and a valid out-pointer.
    let status = unsafe { sys::napi_get_new_target(env, info, &mut new_target) };
    if status != sys::Status::napi_ok || !new_target.is_null() {
        let refused = throw(
            &js_env,
            Refusal::misuse(
                Misuse::InvalidType,
                "a method, not a class: call it without `new`",
            ),
        );
        // SAFETY: a live env inside its callback.
        return unsafe { finish(env, &js_env, Err(refused)) };
    }
    // SAFETY: the function object holds a strong count while it can be called.
    let data = unsafe { &*(data as *const T) };
    // SAFETY: napi fills the slots past the arguments given with undefined; each value
    // lives for this call.
    let arguments: [Unknown; N] =
        std::array::from_fn(|i| unsafe { Unknown::from_raw_unchecked(env, argv[i]) });
    let outcome =
        catch_unwind(AssertUnwindSafe(|| body(data, &js_env, arguments))).unwrap_or_else(|_| {
            Err(napi::Error::new(
                Status::GenericFailure,
                "ferroflake: a bug in the addon (panic)",
            ))
        });
    // SAFETY: a live env inside its callback.
    unsafe { finish(env, &js_env, outcome) }
}

/// What a bound function returns to Node: the value, or null with an exception pending.
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
