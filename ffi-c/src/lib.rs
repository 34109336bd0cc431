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
//! - Options and status structs start with `uint32_t struct_size` (set by their `_init`
//!   function or `FERROFLAKE_*_INIT` macro), so fields can be appended without breaking
//!   programs built against an older header (see `versioned.rs`).
//! - A failed call leaves the underlying error's own text (the core's, the lease crate's or
//!   the segment crate's) in the thread's `ferroflake_last_error_message`.
//!
//! ## What it offers
//!
//! Layouts, generators and the keyed ID mask (`ferroflake_mask_keyring_*`) on every platform
//! with `std`; on Unix also leased generators (`ferroflake_leased_generator_*`, a thin
//! wrapper of ferroflake-lease), segment allocators (`ferroflake_segment_*`, of
//! ferroflake-segment) and date-prefixed order numbers on them (`ferroflake_order_numbers_*`):
//! these need flock and user ids.
//! The cargo feature `stores` adds the server registries and stores.
#![allow(non_camel_case_types)] // C type names: ferroflake_result, ferroflake_layout, ...
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod boundary;
mod failure;
mod format;
mod generator;
mod last_error;
mod layout;
#[cfg(unix)]
mod lease;
mod mask;
mod options;
#[cfg(unix)]
mod order_number;
mod parts;
mod result;
#[cfg(unix)]
mod segment;
mod version;
mod versioned;

pub use format::*;
pub use generator::*;
pub use last_error::*;
pub use layout::*;
#[cfg(unix)]
pub use lease::*;
pub use mask::*;
pub use options::*;
#[cfg(unix)]
pub use order_number::*;
pub use parts::*;
pub use result::*;
#[cfg(unix)]
pub use segment::*;
pub use version::*;
