//! `[Symbol.dispose]` on the classes that hold something (a node id, a lease), so that
//! `using generator = ...` closes them at the end of the block, and
//! `[Symbol.asyncDispose]` on the one whose `close()` returns a promise (a segment
//! allocator gives its segments back to a store), for `await using`.
//!
//! napi-rs names methods by strings only, so the constructors define the symbol-keyed
//! property themselves: the object's own `close` method under the symbol. Where the
//! runtime has no such symbol (Node before 20), nothing is defined; `close()` works
//! everywhere.

use std::ptr;

use napi::{sys, Env, Status};

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_status(Status::from(status)))
    }
}

/// Defines `this[Symbol.dispose] = this.close` (writable and configurable, not enumerable,
/// like a method), if the runtime has `Symbol.dispose`.
pub(crate) fn install(env: &Env, this: sys::napi_value) -> napi::Result<()> {
    install_as(env, this, c"dispose")
}

/// Defines `this[Symbol.asyncDispose] = this.close`, for a `close` that returns a promise,
/// if the runtime has `Symbol.asyncDispose`.
pub(crate) fn install_async(env: &Env, this: sys::napi_value) -> napi::Result<()> {
    install_as(env, this, c"asyncDispose")
}

fn install_as(env: &Env, this: sys::napi_value, symbol: &std::ffi::CStr) -> napi::Result<()> {
    let raw = env.raw();
    // SAFETY: `raw` is the live env of this call and `this` one of its objects; every
    // out-pointer is valid, and each status is checked before its result is used.
    unsafe {
        let mut global = ptr::null_mut();
        check(sys::napi_get_global(raw, &mut global))?;
        let mut symbol_class = ptr::null_mut();
        check(sys::napi_get_named_property(
            raw,
            global,
            c"Symbol".as_ptr(),
            &mut symbol_class,
        ))?;
        let mut dispose = ptr::null_mut();
        check(sys::napi_get_named_property(
            raw,
            symbol_class,
            symbol.as_ptr(),
            &mut dispose,
        ))?;
        let mut kind = sys::ValueType::napi_undefined;
        check(sys::napi_typeof(raw, dispose, &mut kind))?;
        if kind != sys::ValueType::napi_symbol {
            return Ok(());
        }
        let mut close = ptr::null_mut();
        check(sys::napi_get_named_property(
            raw,
            this,
            c"close".as_ptr(),
            &mut close,
        ))?;
        let property = sys::napi_property_descriptor {
            utf8name: ptr::null(),
            name: dispose,
            method: None,
            getter: None,
            setter: None,
            value: close,
            attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        };
        check(sys::napi_define_properties(raw, this, 1, &property))
    }
}
