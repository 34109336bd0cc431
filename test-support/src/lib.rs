//! What ferroflake's test suites share, so each rule of a test is written once: a bounded
//! wait ([`wait_for`]), names no other run has used ([`unique`]), the addresses of the
//! test servers that `scripts/servers/ctl.sh` starts ([`base_url`]), and, with the `http`
//! feature, a real HTTP client for the service ([`http`]) and `ferroflake serve` as a
//! child process ([`serve_child`]).

mod names;
mod wait;

#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "http")]
pub mod serve_child;

pub use names::{base_url, unique};
pub use wait::wait_for;
