//! Worker-id leases for ferroflake (being built).
#![warn(missing_docs)]

mod error;
mod registry;

pub use error::LeaseError;
pub use registry::{Grant, LeaseRequest, Registry};
