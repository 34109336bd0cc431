//! # ferroflake
//!
//! Snowflake-family 64-bit IDs: `time | node | sequence` (plus an optional shard) packed
//! below the sign bit, issued lock-free by one CAS loop on one atomic word.
//!
//! ```
//! use ferroflake::{Generator, Layout};
//!
//! let generator = Generator::new(Layout::twitter(), 7)?; // node 7: never guessed
//! let a = generator.next_id()?;
//! let b = generator.next_id()?;
//! assert!(b > a);
//!
//! let parts = Layout::twitter().decode(b)?;
//! assert_eq!(parts.node, 7);
//! assert_eq!(ferroflake::Format::Base62.parse(&ferroflake::Format::Base62.encode(b)?), Ok(b));
//! # Ok::<(), ferroflake::Error>(())
//! ```
//!
//! Deterministic time for tests, and what happens when the clock goes back:
//!
//! ```
//! use ferroflake::{Error, Generator, Layout, ManualClock, Options};
//!
//! let clock = ManualClock::new(1_700_000_000_000);
//! let generator = Generator::with_clock(Layout::twitter(), 1, &clock, Options::default())?;
//! let first = generator.next_id()?;
//! clock.rewind_ms(3_600_000); // an hour back: far beyond the default 5 ms wait
//! assert_eq!(generator.next_id(), Err(Error::ClockMovedBackwards { behind_ms: 3_600_000 }));
//! clock.advance_ms(3_600_001);
//! assert!(generator.next_id()? > first);
//! # Ok::<(), ferroflake::Error>(())
//! ```
//!
//! Layouts are presets ([`Layout::twitter`], [`Layout::discord`], [`Layout::sonyflake`],
//! [`Layout::js53`], [`Layout::js53ms`], [`Layout::sharded`]) or built and validated with
//! [`Layout::builder`], and any of them read from text with [`Layout::parse`]: a preset
//! name or a spelling such as `41/8/14@2010-11-04T01:42:54.657Z`, which a layout's
//! `Display` prints. Every refusal is an [`Error`], never a panic.
//!
//! ## Public IDs
//!
//! An ID tells when and where it was made, and a counter tells how many came before. A
//! [`Mask`] (a keyed Feistel permutation, see [`mask`](Mask#the-construction)) turns IDs
//! into public IDs that only the key's holder can turn back; the text form names the key's
//! version, so a [`MaskKeyring`] still unmasks IDs masked before a key rotation. It hides,
//! it does not authenticate: any text of the right form unmasks to some ID.
//!
//! ```
//! use ferroflake::{Format, Generator, Layout, MaskKeyring};
//!
//! // Keys come from a file or an environment variable, never from source code or argv.
//! let keys = MaskKeyring::parse("1:000102030405060708090a0b0c0d0e0f")?;
//! let id = Generator::new(Layout::twitter(), 7)?.next_id()?;
//! let public = keys.current_mask(63)?.encode(id, Format::Base62)?; // "1" + 11 characters
//! assert_eq!(keys.decode(&public, Format::Base62, 63), Ok(id));
//! # Ok::<(), ferroflake::Error>(())
//! ```
//!
//! ## Features
//!
//! - `std` (default): [`SystemClock`], [`FastClock`] (its fast sources on Linux, the system
//!   clock elsewhere), [`AnyClock`], fork detection in [`ForkGuard`] (Unix),
//!   `std::error::Error`. Without it the crate is `#![no_std]` and needs no allocator; bring
//!   a [`Clock`].
#![no_std]
#![warn(
    missing_docs,
    clippy::std_instead_of_core,
    clippy::alloc_instead_of_core
)]
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "std")]
extern crate std;

#[cfg(all(feature = "std", not(ferroflake_loom)))]
mod any_clock;
mod bwmarrin_text;
#[cfg(all(feature = "std", not(ferroflake_loom)))]
mod claimed;
mod clock;
mod clock_kind;
mod error;
#[cfg(all(feature = "std", not(ferroflake_loom)))]
mod fast_clock;
mod fork_guard;
mod generator;
mod id;
mod layout;
mod layout_spec;
mod mask;
mod peer_parts;
mod presets;
mod retry_pause;
mod sync;
mod text;

#[cfg(all(feature = "std", not(ferroflake_loom)))]
pub use any_clock::AnyClock;
#[cfg(all(feature = "std", not(ferroflake_loom)))]
pub use claimed::ClaimedGenerator;
#[cfg(feature = "std")]
pub use clock::SystemClock;
pub use clock::{Clock, ManualClock};
pub use clock_kind::ClockKind;
pub use error::{Error, ErrorKind};
#[cfg(all(feature = "std", not(ferroflake_loom)))]
pub use fast_clock::{FastClock, FastClockSource};
pub use fork_guard::ForkGuard;
pub use generator::{Counters, Generator, Options};
pub use id::Parts;
pub use layout::{FieldOrder, Layout, LayoutBuilder};
#[cfg(feature = "std")]
pub use mask::{read_key_file, KeyFileText, KeyTextError, MAX_KEY_FILE_BYTES};
pub use mask::{Mask, MaskKey, MaskKeyring, MaskedString};
pub use peer_parts::{PeerParts, PeerView};
pub use presets::{DISCORD_EPOCH_MS, FERROFLAKE_EPOCH_MS, SONYFLAKE_EPOCH_MS, TWITTER_EPOCH_MS};
pub use retry_pause::shortened_at_random;
pub use text::{Format, IdString};
