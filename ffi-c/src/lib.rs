//! # ferroflake-ffi: the C ABI of ferroflake
//!
//! A static and a shared library (`libferroflake.a`, `libferroflake.so`) and one header,
//! `include/ferroflake.h`, generated from this crate by cbindgen. All bit math, validation
//! and generator semantics live in the Rust crate `ferroflake`; this crate only translates.
//!
//! ## Conventions (every export follows them)
//!
//! - Names are `ferroflake_<type>_<verb>`; `ferroflake_layout` and `ferroflake_generator`
//!   are opaque handles made by `_new*` and released by `_free` (which accepts NULL).
//! - Every function that can fail returns a [`ferroflake_result`]; 0 is success and
//!   [`ferroflake_result_message`] turns any code into text. Codes are never renumbered.
//! - Out-parameters come last and are written only when the call returns
//!   `FERROFLAKE_RESULT_OK`.
//! - Every pointer is checked for NULL before use, every enum value is range-checked, and a
//!   panic never crosses the boundary: it becomes `FERROFLAKE_RESULT_PANIC`.
//! - Each function's doc comment says who owns what and which threads may call it.
#![allow(non_camel_case_types)] // C type names: ferroflake_result, ferroflake_layout, ...
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod boundary;
mod format;
mod generator;
mod layout;
mod options;
mod parts;
mod result;
mod version;

pub use format::*;
pub use generator::*;
pub use layout::*;
pub use options::*;
pub use parts::*;
pub use result::*;
pub use version::*;
