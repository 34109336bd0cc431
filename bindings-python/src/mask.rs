//! `MaskKeyring`: the core's keyed ID mask (`ferroflake::MaskKeyring`) for Python. The
//! permutation, the key text and the masked text forms are the core's; this file converts
//! arguments, reads keys from a file or the environment and maps errors. Masking takes a
//! few hundred ns, so it keeps the GIL.

use std::ffi::CString;
use std::path::PathBuf;

use ferroflake::{ErrorKind, MaskKeyring};
use pyo3::exceptions::{PyOSError, PyOverflowError, PyUserWarning};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple, PyType};

use crate::errors::{kind_error, named_error, to_pyerr};
use crate::ints::uint;
use crate::text::format_from_name;

/// `obj` as a `u64`; an int outside `0..2**64` raises `kind`'s class (a `ValueError`)
/// instead of `OverflowError`: to a mask, -1 and 2**64 are just more values outside its
/// range. `bool` and non-ints still raise `TypeError`.
fn value(obj: &Bound<'_, PyAny>, kind: ErrorKind, range: &str) -> PyResult<u64> {
    let py = obj.py();
    uint(obj).map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(py) {
            kind_error(py, kind, format!("{obj} is outside {range}"))
        } else {
            e
        }
    })
}

/// An ID or masked ID; the mask checks it against its width.
fn id(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    value(obj, ErrorKind::IdOutOfRange, "the IDs of every mask width")
}

/// A mask width, 8 to 64 bits (checked by the core).
fn width(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    let kind = ErrorKind::MaskWidthOutOfRange;
    let range = "the mask widths, 8 to 64 bits";
    let bits = value(obj, kind, range)?;
    u32::try_from(bits)
        .map_err(|_| kind_error(obj.py(), kind, format!("{bits} is outside {range}")))
}

/// A key version, or `None` for the current key. A version no key can have is the same
/// refusal as one the keyring lacks.
fn version(obj: &Bound<'_, PyAny>) -> PyResult<Option<u8>> {
    if obj.is_none() {
        return Ok(None);
    }
    let kind = ErrorKind::UnknownMaskKeyVersion;
    let range = "the mask key versions, 0 to 31";
    let version = value(obj, kind, range)?;
    u8::try_from(version)
        .map(Some)
        .map_err(|_| kind_error(obj.py(), kind, format!("{version} is outside {range}")))
}

/// The keys of a key rotation: the first (current) key masks, every key unmasks the IDs
/// it masked. Built from key text, one `VERSION:SECRET` per line (see `ferroflake mask
/// --new-key`); `repr` shows the versions, never a secret.
#[pyclass(frozen, name = "MaskKeyring", module = "ferroflake")]
pub struct PyMaskKeyring {
    ring: MaskKeyring,
}

impl PyMaskKeyring {
    /// The keyring in `text`, read from `source` (named in errors, never the text).
    fn parse(py: Python<'_>, text: &str, source: &str) -> PyResult<Self> {
        let ring = MaskKeyring::parse_from(text, source)
            .map_err(|e| kind_error(py, e.error().kind(), e.to_string()))?;
        Ok(PyMaskKeyring { ring })
    }
}

/// A file system path as `open()` takes one: `str`, `bytes`, or an `os.PathLike` of
/// either (a `bytes` name need not be UTF-8).
fn fs_path(obj: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    let path = obj.py().import("os")?.call_method1("fspath", (obj,))?;
    match path.cast::<PyBytes>() {
        #[cfg(unix)]
        Ok(bytes) => {
            use std::os::unix::ffi::OsStrExt;
            Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes.as_bytes())))
        }
        #[cfg(not(unix))]
        Ok(bytes) => Ok(PathBuf::from(
            String::from_utf8_lossy(bytes.as_bytes()).into_owned(),
        )),
        Err(_) => path.extract(),
    }
}

#[pymethods]
impl PyMaskKeyring {
    /// The keyring in `text`: one key per line, `VERSION:SECRET` (version 0 to 31, the
    /// secret as 32 hex digits or base64 of 16 bytes); blank lines and `#` comments are
    /// skipped; the first key is current. Keep key text out of source code and command
    /// lines: use `from_file` or `from_env`.
    #[new]
    fn new(py: Python<'_>, text: &str) -> PyResult<Self> {
        Self::parse(py, text, "the key text")
    }

    /// The keyring in the file at `path` (a key file, `chmod 600`; one other users can
    /// read is used with a `UserWarning` saying so). A missing or unreadable file raises
    /// the matching `OSError`, and so (errno `EINVAL`) does a FIFO, a device, a file over
    /// 64 KiB or one that is not UTF-8; bad key text a `ParseError` or `MaskKeyError`
    /// naming the file and line, never the secret.
    #[classmethod]
    fn from_file(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        #[pyo3(from_py_with = fs_path)] path: PathBuf,
    ) -> PyResult<Self> {
        let read = match ferroflake::read_key_file(&path) {
            Ok(read) => read,
            Err(e) => {
                // OSError(errno, strerror, filename) makes the errno's subclass
                // (FileNotFoundError, PermissionError, ...) with open()'s message.
                let (errno, reason): (i32, String) = match e.raw_os_error() {
                    Some(errno) => {
                        let reason = py.import("os")?.call_method1("strerror", (errno,))?;
                        (errno, reason.extract()?)
                    }
                    None => (
                        py.import("errno")?.getattr("EINVAL")?.extract()?,
                        e.to_string(),
                    ),
                };
                let name = path.display().to_string();
                return Err(PyOSError::new_err((errno, reason, name)));
            }
        };
        if let Some(warning) = read.warning(&path) {
            let category = py.get_type::<PyUserWarning>();
            let message = CString::new(warning).unwrap_or_default();
            PyErr::warn(py, &category, &message, 1)?;
        }
        let text = read.text;
        Self::parse(py, &text, &format!("the key file {}", path.display()))
    }

    /// The keyring in the environment variable `name` (the CLI's and the server's
    /// `FERROFLAKE_MASK_KEY` by default). An unset variable raises `MaskKeyError` (kind
    /// `"NO_MASK_KEY"`).
    #[classmethod]
    #[pyo3(signature = (name="FERROFLAKE_MASK_KEY"))]
    fn from_env(_cls: &Bound<'_, PyType>, py: Python<'_>, name: &str) -> PyResult<Self> {
        // os.environ, not the C environment: what Python code set is what it reads back.
        let environ = py.import("os")?.getattr("environ")?;
        let text: Option<String> = environ.call_method1("get", (name,))?.extract()?;
        match text {
            Some(text) => Self::parse(py, &text, name),
            None => Err(named_error(
                py,
                "MaskKeyError",
                "NO_MASK_KEY",
                format!(
                    "no mask key: the environment variable {name} is not set (make a key with \
                     `ferroflake mask --new-key 1`)"
                ),
            )),
        }
    }

    /// The version of the key that masks.
    #[getter]
    fn current_version(&self) -> u8 {
        self.ring.current_version()
    }

    /// Every version held, increasing.
    #[getter]
    fn versions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        // As ints: PyO3 would make a `Vec<u8>` bytes.
        let versions: Vec<u32> = self.ring.versions().map(u32::from).collect();
        PyTuple::new(py, versions)
    }

    /// `id` masked with the current key: a number of the same width (63 bits: any
    /// ferroflake ID, and the result fits a signed 64-bit column; 53: exact in JavaScript).
    /// The number does not say which key masked it; `encode` does.
    #[pyo3(signature = (id, bits=63))]
    fn mask(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = id)] id: u64,
        #[pyo3(from_py_with = width)] bits: u32,
    ) -> PyResult<u64> {
        let masked = self.ring.current_mask(bits).and_then(|mask| mask.mask(id));
        masked.map_err(|e| to_pyerr(py, e))
    }

    /// The ID that `mask` turned into `masked`, with the current key or the key of
    /// `version`. Any number of the width unmasks to some ID: check that it exists and may
    /// be shown before trusting it.
    #[pyo3(signature = (masked, bits=63, version=None))]
    fn unmask(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = id)] masked: u64,
        #[pyo3(from_py_with = width)] bits: u32,
        #[pyo3(from_py_with = version)] version: Option<u8>,
    ) -> PyResult<u64> {
        let version = version.unwrap_or(self.ring.current_version());
        let id = self
            .ring
            .mask_of(version, bits)
            .and_then(|mask| mask.unmask(masked));
        id.map_err(|e| to_pyerr(py, e))
    }

    /// `id` masked with the current key, as text of fixed length: the key's version first,
    /// then the masked number, in `"base62"` (12 characters at 63 bits), `"base32"`
    /// (Crockford, 14) or `"dec"` (21).
    #[pyo3(signature = (id, format="base62", bits=63))]
    fn encode(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = id)] id: u64,
        format: &str,
        #[pyo3(from_py_with = width)] bits: u32,
    ) -> PyResult<String> {
        let format = format_from_name(format)?;
        let text = self
            .ring
            .current_mask(bits)
            .and_then(|mask| mask.encode(id, format));
        text.map(|text| text.to_string())
            .map_err(|e| to_pyerr(py, e))
    }

    /// The ID in a text made by `encode`, unmasked with the key of the version the text
    /// names: IDs masked before a key rotation still decode. `ParseError` for text not of
    /// this format and width, `UnknownMaskKeyVersionError` for a version the keyring does
    /// not hold.
    #[pyo3(signature = (text, format="base62", bits=63))]
    fn decode(
        &self,
        py: Python<'_>,
        text: &str,
        format: &str,
        #[pyo3(from_py_with = width)] bits: u32,
    ) -> PyResult<u64> {
        let format = format_from_name(format)?;
        self.ring
            .decode(text, format, bits)
            .map_err(|e| to_pyerr(py, e))
    }

    /// The length of every text `encode` makes in `format` at `bits`.
    #[pyo3(signature = (format="base62", bits=63))]
    fn text_len(
        &self,
        py: Python<'_>,
        format: &str,
        #[pyo3(from_py_with = width)] bits: u32,
    ) -> PyResult<usize> {
        let format = format_from_name(format)?;
        let mask = self.ring.current_mask(bits).map_err(|e| to_pyerr(py, e))?;
        Ok(mask.text_len(format))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<ferroflake.MaskKeyring current_version={} versions={}>",
            self.ring.current_version(),
            self.versions(py)?.repr()?
        ))
    }
}
