//! # ferroflake-lease
//!
//! Worker-id leases for ferroflake. The top cause of duplicate snowflake IDs is two live
//! generators sharing a node id; this crate hands node ids out under leases and makes a
//! generator refuse to issue once it can no longer prove it holds its id.
//!
//! - [`Registry`]: where ids are claimed, renewed and released, and listed for operators
//!   ([`Registry::list`]: holders, states, expiries, high-water marks, the floor). [`EmbeddedRegistry`] is
//!   the default: a local directory shared by the processes of one host, no server.
//!   Distributed backends (etcd, Redis, ZooKeeper, PostgreSQL) live in
//!   `ferroflake-lease-stores`.
//! - [`LeasedGenerator`]: a core [`Generator`](ferroflake::Generator) with a leased node
//!   id, a high-water mark and a fence checked in the hot path.
//! - `conformance` (feature `conformance`): the checks every registry passes.
//! - [`protocol`]: the protocol's decisions as pure functions, called by every registry,
//!   the leased generator and the model checker (`lease/model`, stateright); its docs say
//!   what the protocol assumes of clocks and stores, what it guarantees, and which of
//!   those the model checks.
//!
//! ```
//! use std::sync::Arc;
//! use ferroflake::{Layout, ManualClock};
//! use ferroflake_lease::{EmbeddedRegistry, LeaseConfig, LeasedGenerator};
//!
//! let dir = std::env::temp_dir().join(format!("ff-lib-doc-{}", std::process::id()));
//! let registry = Arc::new(EmbeddedRegistry::open(&dir)?);
//! let clock = Arc::new(ManualClock::new(1_700_000_000_000));
//! let generator = LeasedGenerator::start(
//!     Layout::twitter(), Arc::clone(&clock), registry, LeaseConfig::default())?;
//! let before = generator.next_id()?;
//! // The wall clock steps a minute ahead, past the reserved high-water mark: the lease is
//! // still healthy, so the generator renews at once and goes on, with later IDs.
//! clock.advance_ms(60_000);
//! assert!(generator.next_id()? > before);
//! generator.shutdown()?; // stop issuing, give the id back with the final mark
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Features
//!
//! - `conformance`: the registry conformance suite, for backends' tests.
#![warn(missing_docs)]

mod config;
#[cfg(feature = "conformance")]
pub mod conformance;
mod container;
mod dir_lock;
mod embedded;
mod error;
mod host_clock;
mod leased;
mod peer_clocks;
mod private_dir;
#[doc = include_str!("../PROTOCOL.md")]
///
/// ---
///
pub mod protocol;
mod records;
mod registry;
mod settings;
mod state_file;
mod token;
mod witness;

pub use config::{shown_in_holder, LeaseConfig, MAX_HOLDER_BYTES};
pub use embedded::EmbeddedRegistry;
pub use error::LeaseError;
pub use leased::{report_to_stderr, LeaseStatus, LeasedGenerator};
pub use protocol::{Loss, Reservation};
pub use registry::{
    check_reservation, check_unreserve_mark, Grant, LeaseRequest, NodeState, NodeView, Registry,
    RegistryView, Renewal,
};
pub use settings::LeaseSettings;
pub use token::new_token;
