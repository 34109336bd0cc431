//! Strict readers for JavaScript arguments.
//!
//! napi's own conversions truncate (`1.5` becomes 1, `NaN` becomes 0, `-1` becomes
//! 4294967295), so every integer the addon takes arrives as an untyped value and passes
//! through here. Only the *type* of a JS value is checked here; whether an integer fits a
//! layout is the core's question.

use napi::bindgen_prelude::{BigInt, Object};
use napi::{Env, JsValue, Unknown, ValueType};

use crate::error::{throw, Misuse, Refusal};

/// 2^53 - 1: the largest integer a JS `number` holds exactly, and its neighbours too.
pub(crate) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

fn misuse(env: &Env, kind: Misuse, message: String) -> napi::Error {
    throw(env, Refusal::misuse(kind, message))
}

fn type_name(value: &Unknown) -> &'static str {
    match value.get_type() {
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Boolean) => "a boolean",
        Ok(ValueType::Number) => "a number",
        Ok(ValueType::String) => "a string",
        Ok(ValueType::Symbol) => "a symbol",
        Ok(ValueType::Object) => "an object",
        Ok(ValueType::Function) => "a function",
        Ok(ValueType::BigInt) => "a bigint",
        _ => "an unsupported value",
    }
}

/// True for `undefined` and `null`: an option left out.
pub(crate) fn is_absent(value: &Unknown) -> bool {
    matches!(value.get_type(), Ok(ValueType::Undefined | ValueType::Null))
}

/// A non-negative integer given as a safe-integer `number` or a `bigint` below 2^64.
pub(crate) fn unsigned(env: &Env, value: Unknown, what: &str) -> napi::Result<u64> {
    match value.get_type()? {
        ValueType::Number => {
            // SAFETY: the value was just checked to be a number.
            let n = unsafe { value.cast::<f64>() }?;
            let n = safe_integer(env, n, what)?;
            if n < 0 {
                return Err(misuse(
                    env,
                    Misuse::OutOfRange,
                    format!("{what} must not be negative, got {n}"),
                ));
            }
            Ok(n as u64)
        }
        ValueType::BigInt => {
            // SAFETY: the value was just checked to be a bigint.
            let big = unsafe { value.cast::<BigInt>() }?;
            let (negative, n, lossless) = big.get_u64();
            if negative {
                return Err(misuse(
                    env,
                    Misuse::OutOfRange,
                    format!("{what} must not be negative"),
                ));
            }
            if !lossless {
                return Err(misuse(
                    env,
                    Misuse::OutOfRange,
                    format!("{what} must be below 2n ** 64n"),
                ));
            }
            Ok(n)
        }
        _ => Err(misuse(
            env,
            Misuse::InvalidType,
            format!(
                "{what} must be an integer number or a bigint, got {}",
                type_name(&value)
            ),
        )),
    }
}

/// A signed integer given as a safe-integer `number` or a `bigint` in the i64 range.
pub(crate) fn signed(env: &Env, value: Unknown, what: &str) -> napi::Result<i64> {
    match value.get_type()? {
        ValueType::Number => {
            // SAFETY: the value was just checked to be a number.
            let n = unsafe { value.cast::<f64>() }?;
            safe_integer(env, n, what)
        }
        ValueType::BigInt => {
            // SAFETY: the value was just checked to be a bigint.
            let big = unsafe { value.cast::<BigInt>() }?;
            match big.get_i64() {
                (n, true) => Ok(n),
                (_, false) => Err(misuse(
                    env,
                    Misuse::OutOfRange,
                    format!("{what} must fit in a signed 64-bit integer"),
                )),
            }
        }
        _ => Err(misuse(
            env,
            Misuse::InvalidType,
            format!(
                "{what} must be an integer number or a bigint, got {}",
                type_name(&value)
            ),
        )),
    }
}

/// A `number` that is an integer JavaScript holds exactly.
fn safe_integer(env: &Env, n: f64, what: &str) -> napi::Result<i64> {
    if !n.is_finite() || n.fract() != 0.0 {
        return Err(misuse(
            env,
            Misuse::NotAnInteger,
            format!("{what} must be an integer, got {n}"),
        ));
    }
    if n.abs() > MAX_SAFE_INTEGER as f64 {
        return Err(misuse(
            env,
            Misuse::UnsafeInteger,
            format!("{what} {n} is beyond Number.MAX_SAFE_INTEGER and may have been rounded: pass a bigint or a string"),
        ));
    }
    Ok(n as i64)
}

/// An unsigned integer below `limit`, for sizes and bit widths.
pub(crate) fn bounded(env: &Env, value: Unknown, what: &str, limit: u64) -> napi::Result<u64> {
    let n = unsigned(env, value, what)?;
    if n > limit {
        return Err(misuse(
            env,
            Misuse::OutOfRange,
            format!("{what} must be at most {limit}, got {n}"),
        ));
    }
    Ok(n)
}

/// A JavaScript string.
pub(crate) fn string(env: &Env, value: Unknown, what: &str) -> napi::Result<String> {
    if value.get_type()? != ValueType::String {
        return Err(misuse(
            env,
            Misuse::InvalidType,
            format!("{what} must be a string, got {}", type_name(&value)),
        ));
    }
    // SAFETY: the value was just checked to be a string.
    unsafe { value.cast::<String>() }
}

/// A number that is safe to hand to JavaScript, or a RangeError naming it.
pub(crate) fn to_number(env: &Env, n: u64, what: &str) -> napi::Result<f64> {
    if n > MAX_SAFE_INTEGER {
        return Err(misuse(
            env,
            Misuse::UnsafeInteger,
            format!(
                "{what} {n} is beyond Number.MAX_SAFE_INTEGER: a JavaScript number cannot \
                 hold it exactly"
            ),
        ));
    }
    Ok(n as f64)
}

/// An options object (or nothing), with its keys checked against `known`.
pub(crate) fn options<'env>(
    env: &Env,
    value: Option<Unknown<'env>>,
    what: &str,
    known: &[&str],
) -> napi::Result<Option<Object<'env>>> {
    let Some(value) = value.filter(|v| !is_absent(v)) else {
        return Ok(None);
    };
    if value.get_type()? != ValueType::Object {
        return Err(misuse(
            env,
            Misuse::InvalidType,
            format!("{what} must be an object, got {}", type_name(&value)),
        ));
    }
    // SAFETY: the value was just checked to be an object.
    let object = unsafe { value.cast::<Object>() }?;
    for key in Object::keys(&object)? {
        if !known.contains(&key.as_str()) {
            return Err(misuse(
                env,
                Misuse::UnknownOption,
                format!(
                    "{what} has an unknown key {key:?}; known keys: {}",
                    known.join(", ")
                ),
            ));
        }
    }
    Ok(Some(object))
}

/// One property of an options object, `None` when it is undefined or null.
pub(crate) fn field<'env>(object: &Object<'env>, key: &str) -> napi::Result<Option<Unknown<'env>>> {
    Ok(object.get::<Unknown>(key)?.filter(|v| !is_absent(v)))
}

/// `field` of an options object that may have been left out.
pub(crate) fn field_of<'env>(
    object: Option<&Object<'env>>,
    key: &str,
) -> napi::Result<Option<Unknown<'env>>> {
    object.map_or(Ok(None), |object| field(object, key))
}

/// Raw access for values that need a class check.
pub(crate) fn raw(value: &Unknown) -> napi::sys::napi_value {
    value.raw()
}
