//! What the service tests share: a server on a free port with its own store and registry
//! in a temporary directory, and (from `ferroflake-test-support`) a real HTTP client.
#![allow(dead_code)] // each test file uses part of it

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

pub use ferroflake_test_support::http::*;

use ferroflake_segment::{SegmentError, SegmentStore, SqliteStore};
use ferroflake_serve::{Config, RunningServer};

/// A directory holding one SQLite store and one embedded lease registry, which every
/// server made from it shares.
pub struct Place {
    pub dir: tempfile::TempDir,
}

impl Place {
    pub fn new() -> Self {
        Place {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn store_path(&self) -> PathBuf {
        self.dir.path().join("segments.db")
    }

    pub fn lease_dir(&self) -> PathBuf {
        self.dir.path().join("leases")
    }

    /// Adds `key` to the SQLite store.
    pub fn create(&self, key: &str, start: i64, step: u64) {
        let store = SqliteStore::open(self.store_path()).unwrap();
        match store.create(key, start, step) {
            Ok(()) | Err(SegmentError::KeyExists { .. }) => {}
            Err(e) => panic!("create {key}: {e}"),
        }
    }

    pub fn step(&self, key: &str) -> u64 {
        let store = SqliteStore::open(self.store_path()).unwrap();
        store.peek(key).unwrap().unwrap().step
    }

    pub fn max_id(&self, key: &str) -> u64 {
        let store = SqliteStore::open(self.store_path()).unwrap();
        store.peek(key).unwrap().unwrap().max_id
    }

    /// A config on a free port over this place, with a 1 s lease (a new registry then
    /// waits 1.2 s before issuing).
    pub fn config(&self) -> Config {
        Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            lease: Some(self.lease_dir().to_str().unwrap().to_owned()),
            lease_ttl_ms: Some(1000),
            lease_max_ttl_ms: Some(1000),
            store: Some(self.store_path().to_str().unwrap().to_owned()),
            shutdown_timeout_ms: 5000,
            workers: 2,
            ..Config::default()
        }
    }

    pub fn start(&self, config: Config) -> Server {
        Server::new(RunningServer::start(config).unwrap())
    }

    /// A server over TLS with `cert`, its client trusting `cert`.
    pub fn start_tls(&self, mut config: Config, cert: &TestCert) -> Server {
        let (cert_path, key_path) = cert.write(self.dir.path());
        config.tls_cert = Some(cert_path);
        config.tls_key = Some(key_path);
        let mut server = self.start(config);
        server.agent = tls_agent(cert);
        server
    }
}

/// Whether `path` exists.
pub fn exists(path: &std::path::Path) -> bool {
    path.exists()
}

/// A running server and a client for it.
pub struct Server {
    pub inner: Option<RunningServer>,
    pub base: String,
    pub addr: SocketAddr,
    pub agent: ureq::Agent,
}

impl Server {
    pub fn new(inner: RunningServer) -> Self {
        Server {
            base: inner.url(),
            addr: inner.addr(),
            inner: Some(inner),
            agent: agent(),
        }
    }

    pub fn get(&self, path: &str) -> Answer {
        answer(self.agent.get(&format!("{}{path}", self.base)).call())
    }

    pub fn post(&self, path: &str) -> Answer {
        answer(
            self.agent
                .post(&format!("{}{path}", self.base))
                .send_empty(),
        )
    }

    /// POST with `Authorization: Bearer {token}`.
    pub fn post_as(&self, path: &str, token: &str) -> Answer {
        answer(
            self.agent
                .post(&format!("{}{path}", self.base))
                .header("Authorization", &format!("Bearer {token}"))
                .send_empty(),
        )
    }

    /// GET with `Authorization: Bearer {token}`.
    pub fn get_as(&self, path: &str, token: &str) -> Answer {
        answer(
            self.agent
                .get(&format!("{}{path}", self.base))
                .header("Authorization", &format!("Bearer {token}"))
                .call(),
        )
    }

    /// Polls `/readyz` until 200 (panics after `within`).
    pub fn wait_ready(&self, within: Duration) {
        let until = Instant::now() + within;
        loop {
            let a = self.get("/readyz");
            if a.status == 200 {
                return;
            }
            assert!(Instant::now() < until, "not ready in time: {}", a.body);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn stop(mut self) -> ferroflake_serve::StopReport {
        self.inner.take().unwrap().stop()
    }

    pub fn state(&self) -> &Arc<ferroflake_serve::AppState> {
        self.inner.as_ref().unwrap().state()
    }
}

/// Every log line of this test process, whatever thread wrote it.
pub fn captured_logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    Arc::clone(LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&logs);
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || Sink(Arc::clone(&sink)))
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        logs
    }))
}

pub struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
