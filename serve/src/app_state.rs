//! What every request handler shares: the modes, the tokens and TLS pair (read again on
//! SIGHUP), the metrics and the stop flag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::config::Config;
use crate::metrics::Metrics;
use crate::segments::Segments;
use crate::snowflake::Snowflake;
use crate::tls::Tls;
use crate::tokens::Tokens;

/// What every request handler shares.
pub struct AppState {
    /// The settings the server started with.
    pub config: Config,
    /// Snowflake mode, if on.
    pub snowflake: Option<Arc<Snowflake>>,
    /// Segment mode, if on.
    pub segments: Option<Arc<Segments>>,
    /// The lease registry the lease store routes serve: `--lease`'s, if given.
    pub(crate) registry: Option<Arc<crate::remote_registry::ServedRegistry>>,
    /// The mask keys of the masked-ID routes, if a key was given.
    pub mask: Option<ferroflake::MaskKeyring>,
    /// The bearer tokens the routes accept, if a tokens file is configured; `None`: no
    /// route asks for a token.
    pub(crate) tokens: Option<Tokens>,
    /// The TLS certificate and key, if configured; `None`: plain HTTP.
    pub(crate) tls: Option<Arc<Tls>>,
    /// The server's metrics registry.
    pub metrics: Arc<Metrics>,
    /// Request counters and latency per route.
    pub routes: crate::measure::RouteMetrics,
    /// Set when the stop begins.
    pub stopping: AtomicBool,
    /// Set when the preload has finished (or was cut short by a stop).
    pub(crate) preload_stop: AtomicBool,
    /// The last range the store routes handed out for each key, with its give-back
    /// ticket.
    pub(crate) handed_out: crate::handed_out::HandedOut,
}

impl AppState {
    /// Whether the server is ready, and the details `/readyz` shows.
    pub fn readiness(&self) -> (bool, Value) {
        let stopping = self.stopping.load(Ordering::SeqCst);
        let mut ready = !stopping;
        let lease = match &self.snowflake {
            None => Value::Null,
            Some(s) => match s.readiness() {
                Ok(node) => json!({ "ready": true, "node": node }),
                Err(why) => {
                    ready = false;
                    json!({ "ready": false, "why": why })
                }
            },
        };
        let keys: Vec<Value> = match &self.segments {
            None => Vec::new(),
            Some(s) => s
                .readiness()
                .into_iter()
                .map(|k| {
                    ready &= k.ready;
                    json!({ "key": k.key, "ready": k.ready, "why": k.why })
                })
                .collect(),
        };
        let body = json!({
            "ready": ready,
            "stopping": stopping,
            "lease": lease,
            "keys": keys,
        });
        (ready, body)
    }

    /// Reads again the tokens file and the TLS certificate and key, those that are
    /// configured, as SIGHUP does. Each outcome is logged; a bad file changes nothing.
    pub fn reload(&self) {
        tracing::info!(
            event = "reload",
            "reading the tokens file and the TLS certificate and key again"
        );
        if self.tokens.is_some() {
            let _ = self.reload_tokens();
        }
        if self.tls.is_some() {
            let _ = self.reload_tls();
        }
    }

    /// Reads the tokens file again, as SIGHUP does: the new tokens are in force for the
    /// next request. A file that cannot be read or parsed keeps the tokens in force and
    /// logs why (by path and line, never the file's text).
    ///
    /// # Errors
    /// No tokens file is configured, or it cannot be loaded.
    pub fn reload_tokens(&self) -> Result<usize, String> {
        let Some(tokens) = &self.tokens else {
            return Err("no tokens file is configured".to_owned());
        };
        let file = tokens.path().display();
        match tokens.reload() {
            Ok(count) => {
                tracing::info!(event = "tokens_reloaded", %file, tokens = count,
                    "tokens file read again; its tokens are in force");
                Ok(count)
            }
            Err(e) => {
                tracing::error!(event = "tokens_reload_failed", %file, error = %e,
                    "tokens file not reloaded; the tokens loaded before stay in force");
                Err(e)
            }
        }
    }

    /// Reads the TLS certificate and key files again, as SIGHUP does: new connections
    /// use the new pair; open ones keep theirs. A pair that cannot be read, does not
    /// parse or does not match keeps the pair in force and logs why (by path, never the
    /// files' text).
    ///
    /// # Errors
    /// No TLS is configured, or the pair cannot be loaded.
    pub fn reload_tls(&self) -> Result<(), String> {
        let Some(tls) = &self.tls else {
            return Err("no TLS certificate is configured".to_owned());
        };
        let (cert, key) = (tls.cert_path().display(), tls.key_path().display());
        match tls.reload() {
            Ok(()) => {
                tracing::info!(event = "tls_reloaded", %cert, %key,
                    "TLS certificate and key read again; new connections use them");
                Ok(())
            }
            Err(e) => {
                tracing::error!(event = "tls_reload_failed", %cert, %key, error = %e,
                    "TLS certificate and key not reloaded; the pair loaded before stays in force");
                Err(e)
            }
        }
    }

    /// Whether the server speaks TLS.
    pub fn tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Brings the gauges up to date (before `/metrics` renders).
    pub fn refresh_metrics(&self) {
        if let Some(s) = &self.snowflake {
            s.refresh_metrics();
        }
        if let Some(s) = &self.segments {
            s.refresh_metrics();
        }
        let (ready, _) = self.readiness();
        self.metrics
            .gauge(crate::metrics::READY, &[])
            .set(if ready { 1.0 } else { 0.0 });
    }
}
