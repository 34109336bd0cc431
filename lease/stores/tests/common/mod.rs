//! What the store tests share: server addresses from the environment, fresh namespaces.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The four backends, by the name `scripts/servers/ctl.sh` uses.
pub const BACKENDS: [&str; 4] = ["etcd", "redis", "zookeeper", "postgres"];

/// The base address of a running test server, from `FERROFLAKE_TEST_<NAME>` (set by
/// scripts/test-lease-stores.sh).
pub fn base_url(backend: &str) -> String {
    let var = format!("FERROFLAKE_TEST_{}", backend.to_uppercase());
    std::env::var(&var).unwrap_or_else(|_| {
        panic!("{var} is not set: run scripts/test-lease-stores.sh, which starts the servers")
    })
}

/// A name no other test run or call has used: `<tag>_<pid>_<ms>_<n>`.
pub fn unique(tag: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
        % 100_000_000;
    format!(
        "{tag}_{}_{ms}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// `base` with a fresh namespace in the form each backend takes.
pub fn namespaced(backend: &str, base: &str, name: &str) -> String {
    match backend {
        "etcd" | "zookeeper" => format!("{}/ferroflake-test/{name}", base.trim_end_matches('/')),
        "redis" => format!("{base}?prefix={name}"),
        "postgres" => format!("{base}?table={}", name.to_lowercase()),
        other => panic!("unknown backend {other}"),
    }
}
