//! What the segment store tests share: server addresses from the environment, fresh
//! tables, and the test servers' control script.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The backends a test can run on: `sqlite` needs nothing, the others a running server.
pub const SERVERS: [&str; 3] = ["postgres", "mysql", "redis"];

/// The base address of a running test server, from `FERROFLAKE_TEST_<NAME>` (set by
/// scripts/test-segment-stores.sh).
pub fn base_url(backend: &str) -> String {
    let var = format!("FERROFLAKE_TEST_{}", backend.to_uppercase());
    std::env::var(&var).unwrap_or_else(|_| {
        panic!("{var} is not set: run scripts/test-segment-stores.sh, which starts the servers")
    })
}

/// A name no other test run or call has used: `<tag>_<pid>_<ms>_<n>`, lowercase.
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
    .to_lowercase()
}

/// A store address over a fresh, empty table: a new file under `scratch` for SQLite, a new
/// table for the SQL servers, a new key prefix for Redis.
pub fn fresh_address(backend: &str, scratch: &Path) -> String {
    let name = unique("t");
    match backend {
        "sqlite" => scratch.join(format!("{name}.db")).display().to_string(),
        // The test server runs without an AOF (redis_faults restarts it to lose writes).
        "redis" => format!("{}?prefix={name}&accept=lost-writes", base_url(backend)),
        "postgres" | "mysql" => format!("{}?table={name}", base_url(backend)),
        other => panic!("unknown backend {other}"),
    }
}

/// Runs `scripts/servers/ctl.sh COMMAND BACKEND` (kill, start, stop) on the test servers.
pub fn ctl(command: &str, backend: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/servers/ctl.sh");
    let status = Command::new("bash")
        .arg(&script)
        .args([command, backend])
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(status.success(), "ctl.sh {command} {backend} failed");
}

/// The probe binary that the process tests start.
pub fn probe_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ferroflake-segment-probe"))
}
