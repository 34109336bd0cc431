//! `encode` and `parse`: the core's string forms of IDs.

use ferroflake::Format;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::to_pyerr;
use crate::ints::uint;
use crate::names::{one_of, quoted};

pub(crate) fn format_from_name(name: &str) -> PyResult<Format> {
    Format::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown format {name:?}: expected {}",
            one_of(&quoted(Format::ALL.map(Format::name)))
        ))
    })
}

/// The ID as text: `"dec"` (decimal), `"base62"` (11 chars) or `"base32"` (Crockford, 13
/// chars), whose fixed widths sort like the numbers; or bwmarrin/snowflake's forms,
/// `"base58-flickr"`, `"base32-bwmarrin"`, `"base36"`, `"base2"`, `"base64-decimal"` (base64
/// of the decimal text) and `"json"` (the quoted decimal). Takes what `parse` gives, 0 to
/// 2**63 - 1: a larger int raises `ParseError` (`PARSE_OVERFLOW`), as `parse` does. The
/// 8-byte big-endian form is `id.to_bytes(8, "big")`.
#[pyfunction]
#[pyo3(signature = (id, format="dec"))]
pub fn encode(
    py: Python<'_>,
    #[pyo3(from_py_with = uint)] id: u64,
    format: &str,
) -> PyResult<String> {
    format_from_name(format)?
        .encode(id)
        .map(|text| text.to_string())
        .map_err(|e| to_pyerr(py, e))
}

/// The ID in `text`, which must be in `format`; a `ParseError` says why not. Where Go's
/// bwmarrin/snowflake would wrap a value past 64 bits or read a sign, this refuses.
#[pyfunction]
#[pyo3(signature = (text, format="dec"))]
pub fn parse(py: Python<'_>, text: &str, format: &str) -> PyResult<u64> {
    format_from_name(format)?
        .parse(text)
        .map_err(|e| to_pyerr(py, e))
}
