//! `ferroflake serve` over TLS as a process of its own, with its real flags and signals:
//! SIGHUP rotating the certificate and key (and a bad pair keeping the one in force, and
//! a device or a FIFO in place of a file refused at once),
//! SIGTERM with a handshake half done, the flags refused alone (exit 2), the warning for
//! tokens sent in clear text. No key and no token in any log line.
//!
//! The process is this test binary run again: [`serve_child`] runs the service when
//! [`CHILD_ARGS`] is set, so no other crate's binary is needed.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use common::{tokens_toml, write_whole, TestCert};

/// The child's `ferroflake serve` arguments, one per line.
const CHILD_ARGS: &str = "FF_TLS_TEST_SERVE_ARGS";

#[derive(Parser)]
struct Serve {
    #[command(flatten)]
    args: ferroflake_serve::ServeArgs,
}

/// Not a test of its own: the entry point of the child processes the tests below start.
#[test]
fn serve_child() {
    let Ok(args) = std::env::var(CHILD_ARGS) else {
        return;
    };
    let parsed = Serve::parse_from(std::iter::once("serve").chain(args.lines()));
    std::process::exit(ferroflake_serve::run(&parsed.args));
}

/// `serve ARGS` in a child: segment mode only (no lease to wait for) on a store in `dir`,
/// JSON logs, and no `FERROFLAKE_*` variable from this environment.
fn command(dir: &Path, args: &[&str]) -> Command {
    let store = dir.join("segments.db");
    let mut all = vec![
        "--modes",
        "segment",
        "--store",
        store.to_str().unwrap(),
        "--log-format",
        "json",
    ];
    all.extend(args);
    let mut command = Command::new(std::env::current_exe().unwrap());
    for (name, _) in std::env::vars() {
        if name.starts_with("FERROFLAKE_") {
            command.env_remove(name);
        }
    }
    command
        .args(["serve_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ARGS, all.join("\n"))
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// A running child, its HTTPS address on loopback, and its log lines.
struct Service {
    child: Child,
    base: String,
    addr: std::net::SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
}

impl Service {
    fn start(dir: &Path, args: &[&str]) -> Self {
        let mut child = command(dir, args).spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = Arc::clone(&log);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                    if v["event"] == "started" {
                        let _ = tx.send(v["addr"].as_str().unwrap_or_default().to_owned());
                    }
                }
                lines.lock().unwrap().push(line);
            }
        });
        let addr: std::net::SocketAddr = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no start line: {:?}", log.lock().unwrap()))
            .parse()
            .unwrap();
        // Listening on every address includes loopback.
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], addr.port()));
        Service {
            child,
            base: format!("https://{addr}"),
            addr,
            log,
        }
    }

    /// GET over TLS by a new client (a new connection) that trusts `cert` alone.
    fn get(
        &self,
        cert: &TestCert,
        path: &str,
        token: Option<&str>,
    ) -> Result<common::Answer, String> {
        let mut request = common::tls_agent(cert).get(&format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.header("Authorization", &format!("Bearer {token}"));
        }
        match request.call() {
            Ok(response) => Ok(common::answer(Ok(response))),
            Err(e) => Err(e.to_string()),
        }
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn logged(&self, event: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(&format!("\"event\":\"{event}\"")))
            .count()
    }

    /// Waits until the log holds `count` lines of `event`.
    fn wait_logged(&self, event: &str, count: usize) {
        let until = Instant::now() + Duration::from_secs(20);
        while self.logged(event) < count {
            assert!(
                Instant::now() < until,
                "{event}: not logged {count} times: {:?}",
                self.log.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM; the exit status, how long the exit took, and the whole log.
    fn stop(mut self) -> (ExitStatus, Duration, String) {
        self.signal("TERM");
        let began = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let log = self.log.lock().unwrap().join("\n");
                return (status, began.elapsed(), log);
            }
            assert!(
                began.elapsed() < Duration::from_secs(30),
                "no exit after SIGTERM: {:?}",
                self.log.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The segment key `k` in the store in `dir`.
fn create_key(dir: &Path) {
    use ferroflake_segment::{SegmentError, SegmentStore, SqliteStore};
    match SqliteStore::open(dir.join("segments.db"))
        .unwrap()
        .create("k", 1, 1000)
    {
        Ok(()) | Err(SegmentError::KeyExists { .. }) => {}
        Err(e) => panic!("create k: {e}"),
    }
}

/// The key `k` in a store in `dir`, a new certificate pair written there, and a child
/// serving HTTPS with that pair and `args`: the pair, its two files, and the child.
fn start_tls(dir: &Path, args: &[&str]) -> (TestCert, PathBuf, PathBuf, Service) {
    create_key(dir);
    let pair = TestCert::new();
    let (cert, key) = pair.write(dir);
    let mut all = vec![
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    all.extend(args);
    let service = Service::start(dir, &all);
    (pair, cert, key, service)
}

#[test]
fn sighup_rotates_the_pair_and_a_bad_pair_keeps_the_one_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    write_whole(
        &tokens,
        &tokens_toml(&[("app", "t-app-3333", &["issue:*"])]),
    );
    let (old, cert, _key, service) = start_tls(
        dir.path(),
        &[
            "--listen",
            "0.0.0.0:0",
            "--tokens-file",
            tokens.to_str().unwrap(),
        ],
    );
    let id = |cert: &TestCert| service.get(cert, "/api/segment/get/k", Some("t-app-3333"));
    assert_eq!(id(&old).unwrap().body, "1");
    // Tokens beyond loopback, with TLS: nothing to warn about.
    assert_eq!(service.logged("tokens_in_clear"), 0);

    let new = TestCert::new();
    new.write(dir.path());
    service.signal("HUP");
    service.wait_logged("tls_reloaded", 1);
    assert_eq!(id(&new).unwrap().body, "2");
    let refused = id(&old).unwrap_err();
    assert!(refused.contains("certificate"), "{refused}");

    // A bad pair: a third certificate with the second's key. Logged; the second serves.
    let third = TestCert::new();
    write_whole(&cert, &third.cert_pem);
    service.signal("HUP");
    service.wait_logged("tls_reload_failed", 1);
    assert_eq!(id(&new).unwrap().body, "3");
    assert!(id(&third).is_err());
    // The tokens were read again on each SIGHUP as well.
    assert_eq!(service.logged("tokens_reloaded"), 2);

    let (status, _, log) = service.stop();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("does not match"), "{log}");
    assert!(log.contains("key.pem"), "the path may be shown: {log}");
    for secret in [
        old.key_line(),
        new.key_line(),
        third.key_line(),
        "t-app-3333",
    ] {
        assert!(!log.contains(secret), "{secret} shown in: {log}");
    }
}

/// SIGHUP with the key and the tokens file renamed onto things that are no small regular
/// file: `/dev/zero` (endless) and a FIFO nobody writes (a read that never ends). Each
/// reload fails at once and says so, the pair and the tokens in force stay, a later good
/// reload still works, and SIGTERM exits 0 promptly.
#[test]
fn sighup_refuses_a_device_or_a_fifo_at_once_and_keeps_what_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    let token_file = tokens_toml(&[("app", "t-app-5555", &["issue:*"])]);
    write_whole(&tokens, &token_file);
    let (pair, _cert, key, service) =
        start_tls(dir.path(), &["--tokens-file", tokens.to_str().unwrap()]);
    let id = || service.get(&pair, "/api/segment/get/k", Some("t-app-5555"));
    assert_eq!(id().unwrap().body, "1");

    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    std::fs::remove_file(&key).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &key).unwrap();
    std::fs::remove_file(&tokens).unwrap();
    std::os::unix::fs::symlink(&fifo, &tokens).unwrap();
    service.signal("HUP");
    service.wait_logged("tls_reload_failed", 1);
    service.wait_logged("tokens_reload_failed", 1);
    assert_eq!(
        id().unwrap().body,
        "2",
        "the pair and the tokens in force stay"
    );

    // Put right, the next SIGHUP loads both again.
    std::fs::remove_file(&key).unwrap();
    pair.write(dir.path());
    std::fs::remove_file(&tokens).unwrap();
    write_whole(&tokens, &token_file);
    service.signal("HUP");
    service.wait_logged("tls_reloaded", 1);
    service.wait_logged("tokens_reloaded", 1);
    assert_eq!(id().unwrap().body, "3");

    let (status, took, log) = service.stop();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(log.contains("not a regular file"), "{log}");
}

#[test]
fn sigterm_with_a_half_done_handshake_exits_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // A stop timeout and a header timeout far beyond the bound below: a drain that
    // waited for the handshake would wait a minute.
    let (pair, _cert, _key, service) = start_tls(
        dir.path(),
        &[
            "--listen",
            "127.0.0.1:0",
            "--shutdown-timeout-ms",
            "60000",
            "--header-read-timeout-ms",
            "60000",
        ],
    );
    // The first bytes of a ClientHello's record, and no more.
    let mut half = TcpStream::connect(service.addr).unwrap();
    half.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        .unwrap();
    // Held: the half-done one and the one asking.
    let began = Instant::now();
    loop {
        let text = service.get(&pair, "/metrics", None).unwrap().body;
        let open = text.lines().find_map(|line| {
            line.strip_prefix("ferroflake_http_connections_open")?
                .trim()
                .parse::<f64>()
                .ok()
        });
        if open >= Some(2.0) {
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "never held: {text}"
        );
    }

    let (status, took, log) = service.stop();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(took < Duration::from_secs(5), "the exit took {took:?}");
    assert!(log.contains("\"drained\":true"), "{log}");
    assert!(!log.contains("drain_timeout"), "{log}");
    drop(half);
}

#[test]
fn tokens_beyond_loopback_in_clear_text_are_warned() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    write_whole(&tokens, &tokens_toml(&[("app", "t-app-4444", &["read"])]));
    let service = Service::start(
        dir.path(),
        &[
            "--listen",
            "0.0.0.0:0",
            "--tokens-file",
            tokens.to_str().unwrap(),
        ],
    );
    assert_eq!(service.logged("tokens_in_clear"), 1);
    let (status, _, log) = service.stop();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("--tls-cert"), "{log}");
}

#[test]
fn a_certificate_without_its_key_or_a_missing_file_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = TestCert::new().write(dir.path());
    let missing = dir.path().join("missing.pem");
    let cases: [(&[&str], i32, &str); 3] = [
        (&["--tls-cert", cert.to_str().unwrap()], 2, "--tls-key"),
        (&["--tls-key", key.to_str().unwrap()], 2, "--tls-cert"),
        (
            &[
                "--tls-cert",
                missing.to_str().unwrap(),
                "--tls-key",
                key.to_str().unwrap(),
            ],
            1,
            "missing.pem",
        ),
    ];
    for (args, code, says) in cases {
        let args = [&["--listen", "127.0.0.1:0"], args].concat();
        let mut child = command(dir.path(), &args).spawn().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            text
        });
        // A child that started when it should have refused is killed: the test fails
        // rather than hangs.
        let until = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > until {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{args:?}: still running: {}", reader.join().unwrap());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stderr = reader.join().unwrap();
        assert_eq!(status.code(), Some(code), "{args:?}: {stderr}");
        assert!(
            stderr.contains(says),
            "{args:?}: {says:?} missing in {stderr}"
        );
    }
    // Refused before anything opened.
    assert!(!dir.path().join("segments.db").exists());
}

#[test]
fn plain_http_to_the_tls_port_is_logged_at_most_once_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let (_pair, _cert, _key, service) = start_tls(dir.path(), &["--listen", "127.0.0.1:0"]);
    const TRIES: usize = 200;
    let began = Instant::now();
    for _ in 0..TRIES {
        let mut plain = TcpStream::connect(service.addr).unwrap();
        plain
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        // Until the server closes it, having refused the handshake.
        let _ = std::io::Read::read_to_end(&mut plain, &mut Vec::new());
    }
    let took = began.elapsed();
    let (status, _, log) = service.stop();
    assert_eq!(status.code(), Some(0), "{log}");
    let warnings = log
        .lines()
        .filter(|line| line.contains("\"level\":\"WARN\"") || line.contains("\"level\":\"ERROR\""))
        .count();
    // One line for the first failure, then one a second at most, whoever logs it.
    let allowed = 2 + took.as_secs() as usize;
    assert!(
        warnings <= allowed,
        "{warnings} warnings for {TRIES} refused handshakes in {took:?}:\n{log}"
    );
}
