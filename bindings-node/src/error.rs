//! The one place where refusals become JavaScript exceptions.
//!
//! Every exception the addon throws carries a stable `code`:
//! `ERR_FERROFLAKE_<name>`, where `<name>` is the core's `ErrorKind::name()` for refusals
//! made by the core, `LEASE_<kind>` for a lease registry's refusals, `SEGMENT_<kind>` for a
//! segment store's or allocator's (`SegmentError::name()`), or one of the [`Misuse`] names
//! for JS values the binding cannot accept. The message carries the details (which limit,
//! by how much, which registry).
//!
//! The class says what kind of mistake it was, as Node's own APIs do: `TypeError` for a
//! value of the wrong type, `RangeError` for a value of the right type that does not fit
//! (bad layout, node id too large, unparsable string, a number past 2^53), and plain
//! `Error` for conditions of the moment (clock went back, clock stalled, lease expired,
//! node id already in use with other options).

use ferroflake_lease::LeaseError;
use ferroflake_segment::SegmentError;
use napi::bindgen_prelude::JavaScriptClassExt;
use napi::{Env, JsValue, Status, Unknown};

/// Refusals made by the binding itself, about JavaScript values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Misuse {
    /// A value of the wrong JS type (a string where a number belongs, a missing option).
    InvalidType,
    /// A number that is NaN, infinite or has a fraction.
    NotAnInteger,
    /// An integer outside what the parameter accepts (negative, a BigInt of 2^64 or more,
    /// a batch too large to allocate).
    OutOfRange,
    /// An integer JavaScript cannot hold exactly as a `number`: given as input above
    /// 2^53 - 1, or an ID that `nextId()` would have to round.
    UnsafeInteger,
    /// An options object with a key this API does not know (usually a typo).
    UnknownOption,
    /// An option with a value outside its allowed set (a clock or format name).
    InvalidOption,
    /// A call on a generator, leased generator or segment allocator after its `close()`.
    Closed,
    /// A leased generator asked for on a registry this process already holds a lease on,
    /// with another layout or other lease settings: one process holds one lease per
    /// registry.
    LeaseInUse,
    /// `MaskKeyring.fromFile` or `fromEnv` found no key text: the file cannot be read, or
    /// the environment variable is not set.
    MaskKeyMissing,
    /// A bug in the addon (a caught panic, a failed napi call). Never expected; reported,
    /// not swallowed.
    Internal,
}

impl Misuse {
    /// Every misuse, for the error table the tests check.
    pub(crate) const ALL: [Misuse; 10] = [
        Misuse::InvalidType,
        Misuse::NotAnInteger,
        Misuse::OutOfRange,
        Misuse::UnsafeInteger,
        Misuse::UnknownOption,
        Misuse::InvalidOption,
        Misuse::Closed,
        Misuse::LeaseInUse,
        Misuse::MaskKeyMissing,
        Misuse::Internal,
    ];

    pub(crate) const fn name(self) -> &'static str {
        match self {
            Misuse::InvalidType => "INVALID_TYPE",
            Misuse::NotAnInteger => "NOT_AN_INTEGER",
            Misuse::OutOfRange => "OUT_OF_RANGE",
            Misuse::UnsafeInteger => "UNSAFE_INTEGER",
            Misuse::UnknownOption => "UNKNOWN_OPTION",
            Misuse::InvalidOption => "INVALID_OPTION",
            Misuse::Closed => "CLOSED",
            Misuse::LeaseInUse => "LEASE_IN_USE",
            Misuse::MaskKeyMissing => "MASK_KEY_MISSING",
            Misuse::Internal => "INTERNAL",
        }
    }

    pub(crate) const fn class(self) -> JsClass {
        match self {
            Misuse::InvalidType | Misuse::UnknownOption => JsClass::TypeError,
            Misuse::NotAnInteger
            | Misuse::OutOfRange
            | Misuse::UnsafeInteger
            | Misuse::InvalidOption => JsClass::RangeError,
            Misuse::Closed | Misuse::LeaseInUse | Misuse::MaskKeyMissing | Misuse::Internal => {
                JsClass::Error
            }
        }
    }
}

/// The JavaScript error class of a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsClass {
    TypeError,
    RangeError,
    Error,
}

impl JsClass {
    pub(crate) const fn name(self) -> &'static str {
        match self {
            JsClass::TypeError => "TypeError",
            JsClass::RangeError => "RangeError",
            JsClass::Error => "Error",
        }
    }
}

/// The kinds of a lease registry's refusals, as `LEASE_<kind>` codes: every
/// `LeaseError::name()` but `GENERATOR`, whose errors carry the core's kind instead.
fn lease_kinds() -> impl Iterator<Item = &'static str> {
    LeaseError::KINDS
        .into_iter()
        .filter(|&kind| kind != "GENERATOR")
}

/// Anything the addon refuses: a core error (with the core's message or a fuller one), a
/// lease or segment refusal by kind, or a binding misuse with its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    Core(ferroflake::Error),
    /// A core error with a message that says more (a leased generator's explanation).
    Explained(ferroflake::Error, String),
    /// A lease refusal: its kind (one of [`lease_kinds`]) and message.
    Lease(&'static str, String),
    /// A segment refusal: its kind (one of `SegmentError::KINDS`) and message.
    Segment(&'static str, String),
    Misuse(Misuse, String),
}

impl From<ferroflake::Error> for Refusal {
    fn from(error: ferroflake::Error) -> Self {
        Refusal::Core(error)
    }
}

impl Refusal {
    pub(crate) fn misuse(kind: Misuse, message: impl Into<String>) -> Self {
        Refusal::Misuse(kind, message.into())
    }

    /// Class, stable name (without the `ERR_FERROFLAKE_` prefix) and message.
    fn parts(&self) -> (JsClass, String, String) {
        match self {
            Refusal::Core(error) => {
                let kind = error.kind();
                (core_class(kind), kind.name().to_owned(), error.to_string())
            }
            Refusal::Explained(error, message) => {
                let kind = error.kind();
                (core_class(kind), kind.name().to_owned(), message.clone())
            }
            Refusal::Lease(kind, message) => {
                (lease_class(kind), format!("LEASE_{kind}"), message.clone())
            }
            Refusal::Segment(kind, message) => (
                segment_class(kind),
                format!("SEGMENT_{kind}"),
                message.clone(),
            ),
            Refusal::Misuse(kind, message) => {
                (kind.class(), kind.name().to_owned(), message.clone())
            }
        }
    }
}

/// The caller's input is a `RangeError`, as the lease crate decides it.
fn lease_class(kind: &str) -> JsClass {
    if LeaseError::kind_is_invalid_input(kind) {
        JsClass::RangeError
    } else {
        JsClass::Error
    }
}

/// The caller's input is a `RangeError`, as the segment crate decides it.
fn segment_class(kind: &str) -> JsClass {
    if SegmentError::kind_is_invalid_input(kind) {
        JsClass::RangeError
    } else {
        JsClass::Error
    }
}

/// Bad layouts and values that do not fit are `RangeError`s; the rest are conditions of the
/// moment.
const fn core_class(kind: ferroflake::ErrorKind) -> JsClass {
    if kind.is_invalid_input() {
        JsClass::RangeError
    } else {
        JsClass::Error
    }
}

/// The stable `code` of an error name.
pub(crate) fn code(name: &str) -> String {
    format!("ERR_FERROFLAKE_{name}")
}

/// Throws `refusal` into `env` and returns the marker error napi expects from a function
/// that has already thrown. The one mapping from refusals to JS exceptions.
pub(crate) fn throw(env: &Env, refusal: impl Into<Refusal>) -> napi::Error {
    let (class, name, message) = refusal.into().parts();
    let code = code(&name);
    // napi takes C strings: a NUL inside would make the throw itself fail.
    let message = message.replace('\0', "\\0");
    let thrown = match class {
        JsClass::TypeError => env.throw_type_error(&message, Some(&code)),
        JsClass::RangeError => env.throw_range_error(&message, Some(&code)),
        JsClass::Error => env.throw_error(&message, Some(&code)),
    };
    match thrown {
        Ok(()) => napi::Error::from_status(Status::PendingException),
        // The env could not throw (it is shutting down): report through napi's own path.
        Err(_) => napi::Error::new(Status::GenericFailure, message),
    }
}

/// A lease refusal by kind; a generator refusal keeps the core's kind.
pub(crate) fn lease_refusal(error: LeaseError) -> Refusal {
    let message = error.to_string();
    if let LeaseError::Generator(core) = error {
        return Refusal::Explained(core, message);
    }
    let kind = error.name();
    Refusal::Lease(kind, message)
}

/// The TypeError of a class called without `new` (`Generator({ nodeId: 5 })`), which napi
/// would otherwise let make its receiver (the module's exports, `globalThis`) the instance,
/// or called on an instance that already is one (`Generator.call(existing, ...)`), which
/// would claim a node id and then fail to wrap, holding the claim as long as `existing`.
pub(crate) fn refuse_without_new<C: JavaScriptClassExt>(
    env: &Env,
    this: &Unknown,
    class: &str,
) -> napi::Result<()> {
    let message = if !C::instance_of(env, this)? {
        format!("{class} is a class: call it with `new {class}(...)`")
    } else if is_wrapped(env, this) {
        format!("this object already is a {class}: make another with `new {class}(...)`")
    } else {
        return Ok(());
    };
    Err(throw(env, Refusal::misuse(Misuse::InvalidType, message)))
}

/// Whether a native object is already attached to `value` (napi refuses to attach another).
fn is_wrapped(env: &Env, value: &Unknown) -> bool {
    let mut native = std::ptr::null_mut();
    // SAFETY: `value` is a live value of this env; napi only reads it and writes `native`.
    let status = unsafe { napi::sys::napi_unwrap(env.raw(), value.raw(), &mut native) };
    status == napi::sys::Status::napi_ok
}

/// The TypeError of `new X()` for classes whose instances come from elsewhere (a factory
/// that works off the event loop, or another object): `how` says where.
pub(crate) fn not_constructible(env: &Env, how: &str) -> napi::Error {
    throw(env, Refusal::misuse(Misuse::InvalidType, how))
}

/// Turns a `Result` whose error is a refusal into a napi result, throwing on the way.
pub(crate) trait OrThrow<T> {
    fn or_throw(self, env: &Env) -> napi::Result<T>;
}

impl<T, E: Into<Refusal>> OrThrow<T> for Result<T, E> {
    #[inline]
    fn or_throw(self, env: &Env) -> napi::Result<T> {
        self.map_err(|refusal| throw(env, refusal))
    }
}

/// One row of the error table: what `code` a refusal has and which class throws it.
#[napi_derive::napi(object, object_from_js = false)]
pub struct ErrorCodeInfo {
    /// `ERR_FERROFLAKE_<name>`.
    pub code: String,
    /// `TypeError`, `RangeError` or `Error`.
    pub class_name: String,
    /// The core's stable number for this kind, or null for the binding's own refusals.
    pub core_code: Option<u32>,
}

/// Every `code` the addon can throw, with its class: the core's kinds, the lease and
/// segment kinds, then the binding's own.
#[napi_derive::napi]
pub fn error_codes() -> Vec<ErrorCodeInfo> {
    let core = ferroflake::ErrorKind::ALL
        .into_iter()
        .map(|kind| ErrorCodeInfo {
            code: code(kind.name()),
            class_name: core_class(kind).name().to_owned(),
            core_code: Some(kind.code()),
        });
    let lease = lease_kinds().map(|kind| ErrorCodeInfo {
        code: code(&format!("LEASE_{kind}")),
        class_name: lease_class(kind).name().to_owned(),
        core_code: None,
    });
    let segment = SegmentError::KINDS.into_iter().map(|kind| ErrorCodeInfo {
        code: code(&format!("SEGMENT_{kind}")),
        class_name: segment_class(kind).name().to_owned(),
        core_code: None,
    });
    let binding = Misuse::ALL.into_iter().map(|kind| ErrorCodeInfo {
        code: code(kind.name()),
        class_name: kind.class().name().to_owned(),
        core_code: None,
    });
    core.chain(lease).chain(segment).chain(binding).collect()
}
