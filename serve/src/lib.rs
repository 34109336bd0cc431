//! # ferroflake-serve
//!
//! The ferroflake ID service, run by `ferroflake serve`: snowflake IDs under a leased node
//! id and segment IDs from a table, over HTTP, with the routes of Meituan's Leaf so that
//! Leaf clients work unchanged, a versioned JSON API, Prometheus metrics, health and
//! readiness, and a stop that gives everything back.
//!
//! With no configuration it listens on `127.0.0.1:8080`, leases its node id from the
//! embedded registry and takes segments from the embedded SQLite file. [`Config`] (a TOML
//! file, flags, `FERROFLAKE_*` variables) chooses the registry, the store, the layout, the
//! keys to preload and the address. The routes are listed in [`routes`]; the statuses of
//! refusals in [`refusal`].
//!
//! On loopback it needs no token. Anywhere else it refuses to start unless it has a tokens
//! file ([`tokens`]: SHA-256 hashes of bearer tokens, each with scopes from [`scopes`],
//! read again on SIGHUP) or is told `allow_unauthenticated`.
//!
//! With `--tls-cert FILE --tls-key FILE` (PEM) it serves HTTPS: TLS 1.2 and 1.3 with
//! rustls, the pair read again on SIGHUP without a restart, each handshake within the
//! connection bounds ([`tls`]). Tokens beyond loopback without TLS start with a warning:
//! they would cross the network in clear text.
//!
//! ```no_run
//! use ferroflake_serve::{Config, RunningServer};
//!
//! let config = Config {
//!     listen: "127.0.0.1:0".parse()?,
//!     preload: vec!["orders".to_owned()], // created beforehand: `ferroflake segment create`
//!     ..Config::default()
//! };
//! let server = RunningServer::start(config)?;
//! println!("serving on {}", server.url()); // GET /api/segment/get/orders -> 1
//! let report = server.stop(); // drain, give segments back, release the node id
//! assert!(report.drained);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A binary that owns its process hands [`Server::run_until`] a shutdown future instead,
//! and decides the exit status from the report, as `ferroflake serve` does with its
//! signals:
//!
//! ```no_run
//! use ferroflake_serve::{Config, Server};
//!
//! let server = Server::bind(Config::default())?; // stores open, lease claimed in the back
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! std::thread::spawn(move || {
//!     // Here: until standard input closes.
//!     let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
//!     let _ = stop.send(());
//! });
//! let report = server.run_until(async move {
//!     let _ = stopped.await;
//! });
//! std::process::exit(if report.drained { 0 } else { 1 });
//! # Ok::<(), String>(())
//! ```
//!
//! ## Guarantees
//!
//! - **No 200 without a unique ID.** Snowflake IDs come from a leased generator fenced at
//!   its lease deadline: past it the answer is 503, never an ID. Segment IDs come from
//!   ranges the store's atomic update gave this server alone.
//! - **No cold start on the request path.** `/readyz` answers 200 only once the lease is
//!   held and every preloaded key has its first segment.
//! - **Bounded input.** Keys are 1 to 128 bytes without `/`, `\` or control characters;
//!   batches are 1 to `max_batch` IDs. Anything else is a 400 that says why.
//! - **Bounded connections.** At most `max_connections` at once (503 beyond, counted),
//!   heads within `header_read_timeout_ms` and 16 KiB, requests within
//!   `request_timeout_ms`: see [`connections`]. A stop closes idle and half-sent
//!   connections at once and waits only for requests being answered.
//! - **No wait on an async worker.** Waits for a tick, a store, a registry or a lock run
//!   on the blocking pool; status routes read only what is in memory (see [`issue`]).
//! - **Bounded metrics and keys.** Segment keys are labelled only once they are open,
//!   and at most `max_keys` are (503 `TOO_MANY_KEYS` beyond, counted); a key the table
//!   does not have is a 404 counted under its kind alone. Snowflake keys are labelled
//!   only if the config names them.
//! - **One key, one spelling.** A key opens only in the spelling its row has: a store
//!   whose table folds spellings (MySQL's case-insensitive collations) refuses the others
//!   with 400 `INVALID_KEY`, so they never open keys of their own.
#![warn(missing_docs)]

pub mod admin;
mod app_state;
pub mod auth;
mod config;
pub mod connections;
mod fast_lane;
mod handed_out;
pub mod issue;
pub mod keys;
mod layer_answers;
pub mod masked;
mod measure;
mod metered_store;
pub mod metrics;
pub mod open_files;
pub mod query;
pub mod refusal;
pub mod remote_registry;
pub mod remote_store;
pub mod routes;
pub mod scopes;
mod segments;
mod server;
mod small_file;
mod snowflake;
pub mod tls;
pub mod tokens;

pub use app_state::AppState;
pub use config::{
    Config, LogFormat, Mode, ServeArgs, BUILD_WITH_STORES, DEFAULT_MAX_BATCH,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_KEYS, MAX_BATCH_LIMIT,
};
pub use segments::{KeyReadiness, OpenKey, Segments};
pub use server::{init_logging, RunningServer, Server, StopReport};
pub use snowflake::{Leased, Snowflake};
