//! A JavaScript `number[]` from many values at once.
//!
//! Why: napi has no bulk array constructor, so napi-rs fills a `Vec<f64>` into an array one
//! `napi_set_element` at a time, about 150 ns per element: a batch of IDs would cost more
//! than calling `nextId()` once per ID. A `Float64Array` is one copy, and V8's own
//! `Array.from` turns it into a plain array at a few ns per element.

use std::ptr;

use napi::bindgen_prelude::{Float64Array, ToNapiValue};
use napi::{sys, Env, Status, Unknown};

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_status(Status::from(status)))
    }
}

/// `Array.from(new Float64Array(values))`.
pub(crate) fn number_array<'env>(env: &'env Env, values: Vec<f64>) -> napi::Result<Unknown<'env>> {
    let raw = env.raw();
    // SAFETY: `raw` is the live env of this call; every out-pointer is valid, and each
    // status is checked before its result is used.
    unsafe {
        let typed = Float64Array::to_napi_value(raw, Float64Array::new(values))?;
        let mut global = ptr::null_mut();
        check(sys::napi_get_global(raw, &mut global))?;
        let mut array = ptr::null_mut();
        check(sys::napi_get_named_property(
            raw,
            global,
            c"Array".as_ptr(),
            &mut array,
        ))?;
        let mut from = ptr::null_mut();
        check(sys::napi_get_named_property(
            raw,
            array,
            c"from".as_ptr(),
            &mut from,
        ))?;
        let mut result = ptr::null_mut();
        check(sys::napi_call_function(
            raw,
            array,
            from,
            1,
            &typed,
            &mut result,
        ))?;
        Ok(Unknown::from_raw_unchecked(raw, result))
    }
}
