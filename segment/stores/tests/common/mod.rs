//! What the segment store tests share: server addresses from the environment, fresh
//! tables, and the test servers' control script; the probe processes ([`probes`]) and an
//! operator's tools on a store ([`operator`]).

#![allow(dead_code)]

pub mod operator;
pub mod probes;

#[allow(unused_imports)] // each test file uses part of it
pub use ferroflake_test_support::{base_url, unique};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The backends a test can run on: `sqlite` needs nothing, the others a running server.
pub const SERVERS: [&str; 3] = ["postgres", "mysql", "redis"];

/// A store address over a fresh, empty table: a new file under `scratch` for SQLite, a new
/// table for the SQL servers, a new key prefix for Redis.
pub fn fresh_address(backend: &str, scratch: &Path) -> String {
    fresh_tampered(backend, scratch).0
}

/// [`fresh_address`], with a plain client on its table to change it behind the store's back.
pub fn fresh_tampered(backend: &str, scratch: &Path) -> (String, OnServer) {
    let name = unique("t");
    let address = match backend {
        "sqlite" => scratch.join(format!("{name}.db")).display().to_string(),
        // The test server runs without an AOF (redis_faults restarts it to lose writes).
        "redis" => format!("{}?prefix={name}&accept=lost-writes", base_url(backend)),
        "postgres" | "mysql" => format!("{}?table={name}", base_url(backend)),
        other => panic!("unknown backend {other}"),
    };
    let name = match backend {
        "sqlite" => address.clone(),
        _ => name,
    };
    let backend = SERVERS
        .into_iter()
        .chain(["sqlite"])
        .find(|b| *b == backend)
        .unwrap();
    (address, OnServer { backend, name })
}

/// A plain client on a store's table, as an operator (or a lost write, or a restored
/// backup) changes it behind the store's back.
pub struct OnServer {
    backend: &'static str,
    /// The table (SQL), key prefix (Redis) or file (SQLite) of the store under test.
    name: String,
}

impl OnServer {
    fn sql(&self, sql: &str) {
        let sql = sql.replace("{table}", &self.name);
        let changed = match self.backend {
            "sqlite" => {
                let c = rusqlite::Connection::open(&self.name).unwrap();
                c.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
                let sql = sql.replace(&self.name, "leaf_alloc");
                c.execute(&sql, []).unwrap() as u64
            }
            "postgres" => {
                let url = base_url(self.backend);
                let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                c.execute(&sql, &[]).unwrap()
            }
            _ => {
                use mysql::prelude::Queryable;
                let url = base_url(self.backend);
                let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
                c.query_drop(&sql).unwrap();
                c.affected_rows()
            }
        };
        assert_eq!(changed, 1, "{sql}");
    }

    fn redis(&self, cmd: &mut redis::Cmd) {
        let client = redis::Client::open(base_url("redis")).unwrap();
        let mut c = client.get_connection().unwrap();
        let changed: i64 = cmd.query(&mut c).unwrap();
        assert!(changed <= 1, "{changed}");
    }
}

impl ferroflake_segment::conformance::Tamper for OnServer {
    fn delete_row(&self, key: &str) {
        match self.backend {
            "redis" => self.redis(redis::cmd("DEL").arg(format!("ferroflake:{}:{key}", self.name))),
            _ => self.sql(&format!("DELETE FROM {{table}} WHERE biz_tag = '{key}'")),
        }
    }

    fn set_max_id(&self, key: &str, max_id: u64) {
        match self.backend {
            "redis" => self.redis(
                redis::cmd("HSET")
                    .arg(format!("ferroflake:{}:{key}", self.name))
                    .arg("max_id")
                    .arg(max_id),
            ),
            _ => self.sql(&format!(
                "UPDATE {{table}} SET max_id = {max_id} WHERE biz_tag = '{key}'"
            )),
        }
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
