//! The one mapping from the core's [`Error`] to the exception classes of
//! `ferroflake/_errors.py` (written in Python so the hierarchy, with its multiple bases and
//! docstrings, reads as Python).

use ferroflake::{Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;

static ERRORS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The class (in `ferroflake._errors`) that errors of `kind` raise.
fn class_name(kind: ErrorKind) -> &'static str {
    use ErrorKind::*;
    match kind {
        TooManyBits | NoTimeBits | ZeroSequenceBits | ZeroTick | EpochBeforeUnix
        | EpochInFuture | LayoutExhausted | UnknownLayout => "LayoutError",
        NodeOutOfRange | ShardOutOfRange | SequenceOutOfRange | TimestampOutOfRange
        | IdOutOfRange | ResumeInFuture => "OutOfRangeError",
        ParseEmpty
        | ParseNegative
        | ParseInvalidCharacter
        | ParseWrongLength
        | ParseTooLong
        | ParseOverflow => "ParseError",
        ClockMovedBackwards => "ClockMovedBackwardsError",
        ClockStalled => "ClockStalledError",
        LeaseExpired => "LeaseExpiredError",
        GeneratorForked => "ForkedGeneratorError",
        NodeInUse => "NodeInUseError",
        MaskWidthOutOfRange => "MaskError",
        MaskKeyVersionOutOfRange | DuplicateMaskKeyVersion => "MaskKeyError",
        UnknownMaskKeyVersion => "UnknownMaskKeyVersionError",
        // Kinds added to the core later still land in the right branch of the hierarchy.
        other if other.is_invalid_input() => "InvalidInputError",
        _ => "FerroflakeError",
    }
}

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS_MODULE
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("ferroflake._errors")?.unbind())
        })
        .map(|module| module.bind(py))
}

/// An exception instance of `ferroflake._errors.<class>` with its stable kind and code.
pub fn new_error<'py>(
    py: Python<'py>,
    class: &str,
    message: String,
    kind: &str,
    code: u32,
) -> PyResult<Bound<'py, PyAny>> {
    errors_module(py)?
        .getattr(class)?
        .call1((message, kind, code))
}

/// The core error as the matching Python exception, carrying `kind` (the `ErrorKind` name,
/// e.g. `"NODE_OUT_OF_RANGE"`), `code` (its stable number) and the core's message.
pub fn to_pyerr(py: Python<'_>, err: Error) -> PyErr {
    let message = err.to_string();
    to_pyerr_saying(py, err, message)
}

/// [`to_pyerr`] with another message (a leased generator's explanation of a refusal).
pub fn to_pyerr_saying(py: Python<'_>, err: Error, message: String) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let kind = err.kind();
        let exc = new_error(py, class_name(kind), message, kind.name(), kind.code())?;
        match err {
            Error::ClockMovedBackwards { behind_ms } => exc.setattr("behind_ms", behind_ms)?,
            Error::LeaseExpired { fence_ms } => exc.setattr("fence_ms", fence_ms)?,
            _ => {}
        }
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|failed| failed)
}

/// Every core error kind as `(name, code, exception class)`, in code order: the error table
/// the tests check, and a reference for users who log codes.
#[pyfunction]
pub fn error_kinds(py: Python<'_>) -> PyResult<Vec<(&'static str, u32, Bound<'_, PyAny>)>> {
    let module = errors_module(py)?;
    ErrorKind::ALL
        .iter()
        .map(|&kind| Ok((kind.name(), kind.code(), module.getattr(class_name(kind))?)))
        .collect()
}

/// An exception of the class that errors of `kind` raise, with its name and code but a
/// message of our own: for refusals made here, before the core sees the value (an int
/// outside `u64`, an object inherited through fork that is not a core generator).
pub fn kind_error(py: Python<'_>, kind: ErrorKind, message: String) -> PyErr {
    new_error(py, class_name(kind), message, kind.name(), kind.code())
        .map(PyErr::from_value)
        .unwrap_or_else(|failed| failed)
}

/// A `ForkedGeneratorError` (kind `GENERATOR_FORKED`) for an object other than a core
/// generator, with its own message.
#[cfg(unix)]
pub fn forked_error(py: Python<'_>, message: String) -> PyErr {
    kind_error(py, ErrorKind::GeneratorForked, message)
}

/// The class (in `ferroflake._errors`) that lease errors of `kind` raise
/// (`LeaseError::name`; a `GENERATOR` error raises its core kind's class instead).
#[cfg(unix)]
fn lease_class(kind: &str) -> &'static str {
    match kind {
        "UNAVAILABLE" => "RegistryUnavailableError",
        "NO_FREE_NODE" => "NoFreeNodeError",
        "LOST" => "LeaseLostError",
        "BEHIND_HIGH_WATER" => "BehindHighWaterError",
        "START_WAIT_TOO_LONG" => "StartWaitTooLongError",
        "CLOCK_SKEW" => "ClockSkewError",
        "STATE_FILE" => "StateFileError",
        "BAD_ADDRESS" | "NOT_BUILT" => "RegistryAddressError",
        "INVALID_CONFIG" => "LeaseConfigError",
        "STORE" => "RegistryError",
        // Kinds added to the lease crate later still land on the right side of ValueError.
        other if ferroflake_lease::LeaseError::kind_is_invalid_input(other) => "LeaseConfigError",
        _ => "LeaseError",
    }
}

/// A lease operation's failure as the matching `LeaseError` subclass, with `kind` the
/// variant's name (`"UNAVAILABLE"`, `"LOST"`, ...) and `code` 0. A generator's refusal
/// inside it (`LeaseError::Generator`) raises the core kind's own class.
#[cfg(unix)]
pub fn lease_to_pyerr(py: Python<'_>, err: ferroflake_lease::LeaseError) -> PyErr {
    if let ferroflake_lease::LeaseError::Generator(core) = err {
        return to_pyerr(py, core);
    }
    named_error(py, lease_class(err.name()), err.name(), err.to_string())
}

/// Every lease error kind as `(name, exception class, whether it is the caller's)`, the
/// last as the lease crate decides it (`LeaseError::kind_is_invalid_input`): those classes
/// are `ValueError`s. `GENERATOR` is left out: it raises its core kind's class
/// ([`error_kinds`]).
#[cfg(unix)]
#[pyfunction]
pub fn lease_error_kinds(py: Python<'_>) -> PyResult<Vec<(&'static str, Bound<'_, PyAny>, bool)>> {
    let module = errors_module(py)?;
    ferroflake_lease::LeaseError::KINDS
        .iter()
        .filter(|&&kind| kind != "GENERATOR")
        .map(|&kind| {
            let caller = ferroflake_lease::LeaseError::kind_is_invalid_input(kind);
            Ok((kind, module.getattr(lease_class(kind))?, caller))
        })
        .collect()
}

/// An exception of `ferroflake._errors.<class>` with a `kind` that is not a core kind
/// (a lease or segment crate's name, or a refusal of this face's own such as
/// `"NO_MASK_KEY"`), and code 0.
pub fn named_error(py: Python<'_>, class: &str, kind: &str, message: String) -> PyErr {
    new_error(py, class, message, kind, 0)
        .map(PyErr::from_value)
        .unwrap_or_else(|failed| failed)
}

/// The class (in `ferroflake._errors`) that segment errors of `kind` raise
/// (`SegmentError::name`).
#[cfg(unix)]
fn segment_class(kind: &str) -> &'static str {
    match kind {
        "UNAVAILABLE" => "StoreUnavailableError",
        "UNKNOWN_KEY" => "UnknownKeyError",
        "KEY_EXISTS" => "KeyExistsError",
        "INVALID_KEY" => "InvalidKeyError",
        "INVALID_CONFIG" | "NOT_BUILT" => "SegmentConfigError",
        "EXHAUSTED" => "SegmentExhaustedError",
        "NOT_READY" => "SegmentNotReadyError",
        "CLOSED" => "SegmentClosedError",
        "REWOUND" => "SegmentRewoundError",
        "STORE" => "SegmentStoreError",
        // An allocator inherited through fork(): the same refusal as a forked generator's.
        "FORKED" => "ForkedGeneratorError",
        // Kinds added to the segment crate later still land on the right side of ValueError.
        other if ferroflake_segment::SegmentError::kind_is_invalid_input(other) => {
            "SegmentConfigError"
        }
        _ => "SegmentError",
    }
}

/// A segment store's or allocator's failure as the matching `SegmentError` subclass, with
/// `kind` the crate's stable name (`SegmentError::name`) and `code` 0; an allocator
/// inherited through fork() raises `ForkedGeneratorError` as a forked generator does.
#[cfg(unix)]
pub fn segment_to_pyerr(py: Python<'_>, err: ferroflake_segment::SegmentError) -> PyErr {
    if let ferroflake_segment::SegmentError::Forked { .. } = err {
        return forked_error(py, err.to_string());
    }
    named_error(py, segment_class(err.name()), err.name(), err.to_string())
}

/// Every segment error kind as `(name, exception class, whether it is the caller's)`, the
/// last as the segment crate decides it (`SegmentError::kind_is_invalid_input`): those
/// classes are `ValueError`s.
#[cfg(unix)]
#[pyfunction]
pub fn segment_error_kinds(
    py: Python<'_>,
) -> PyResult<Vec<(&'static str, Bound<'_, PyAny>, bool)>> {
    let module = errors_module(py)?;
    ferroflake_segment::SegmentError::KINDS
        .iter()
        .map(|&kind| {
            let caller = ferroflake_segment::SegmentError::kind_is_invalid_input(kind);
            Ok((kind, module.getattr(segment_class(kind))?, caller))
        })
        .collect()
}
