//! # ferroflake for Node
//!
//! A napi-rs addon over the `ferroflake` core. It adds no bit math, epoch handling or
//! validation of its own: every ID, layout check and string form comes from the core. What
//! lives here is only what JavaScript needs on top:
//!
//! - reading JS values strictly (`args`): NaN, Infinity, fractions, unsafe numbers,
//!   negative or oversized BigInts and wrong types are refused, never truncated;
//! - one mapping from refusals to `TypeError`/`RangeError`/`Error` with a stable `code`
//!   (`error`);
//! - handing out `number`s only when `Number.isSafeInteger` holds for them (`generator`);
//! - one core generator per (layout, node id) per process, shared by every
//!   `worker_threads` worker (`registry`);
//! - per-instance `nextId`/`nextIdBigInt` functions that skip napi-rs's method glue, so a
//!   call costs about what `Date.now()` does (`fast_path`);
//! - on Unix, `LeasedGenerator` (one `ferroflake-lease` lease per registry per process,
//!   shared by every worker; `leased`) and segment mode (`ferroflake-segment`; `segments`),
//!   opened on libuv's thread pool (`pool`), and date-prefixed order numbers on segments
//!   (`order_numbers`);
//! - `MaskKeyring`, the core's keyed ID mask with keys from text, a file or the
//!   environment, `number` or `bigint` by width (`mask`);
//! - `close()` and `Symbol.dispose` on whatever holds a node id, a lease or segments
//!   (`dispose`).

mod args;
mod bound;
mod clock;
mod decoded;
mod dispose;
mod error;
mod fast_path;
mod generator;
mod layout;
#[cfg(unix)]
mod lease_table;
#[cfg(unix)]
mod leased;
mod mask;
mod names;
mod numbers;
#[cfg(unix)]
mod order_numbers;
#[cfg(unix)]
mod pool;
mod registry;
#[cfg(unix)]
mod segments;
mod text;
