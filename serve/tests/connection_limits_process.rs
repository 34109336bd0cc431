//! `ferroflake serve`'s entry point ([`ferroflake_serve::run`]) as a process of its own,
//! bounded as a platform team would try it: thousands of idle and half-sent connections
//! under the usual soft open-file limit of 1,024, while a client gets IDs; SIGTERM with a
//! half-sent request open.
//!
//! The process is this test binary run again: [`serve_child`] runs the service when
//! [`CHILD_ARGS`] is set, under a soft open-file limit of 1,024 set by `sh`'s `ulimit`.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use ferroflake_segment::{SegmentStore, SqliteStore};

/// The child's `ferroflake serve` arguments, one per line.
const CHILD_ARGS: &str = "FF_LIMITS_TEST_SERVE_ARGS";

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

/// A running child, its address, and its log lines (JSON).
struct Service {
    child: Child,
    base: String,
    addr: std::net::SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
}

impl Service {
    /// Segment mode on a store in `dir` with the key `k`, plus `args`.
    fn start(dir: &std::path::Path, args: &[&str]) -> Self {
        let store = dir.join("segments.db");
        let created = SqliteStore::open(&store).unwrap().create("k", 1, 1000);
        assert!(
            created.is_ok()
                || matches!(
                    created,
                    Err(ferroflake_segment::SegmentError::KeyExists { .. })
                )
        );
        let mut all = vec![
            "--listen",
            "127.0.0.1:0",
            "--modes",
            "segment",
            "--store",
            store.to_str().unwrap(),
            "--preload",
            "k",
            "--log-format",
            "json",
        ];
        all.extend(args);
        let exe = std::env::current_exe().unwrap();
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg("ulimit -Sn 1024 && exec \"$0\" \"$@\"")
            .arg(exe)
            .args(["serve_child", "--exact", "--nocapture", "--test-threads=1"]);
        for (name, _) in std::env::vars() {
            if name.starts_with("FERROFLAKE_") {
                command.env_remove(name);
            }
        }
        let mut child = command
            .env(CHILD_ARGS, all.join("\n"))
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
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
        let service = Service {
            child,
            base: format!("http://{addr}"),
            addr,
            log,
        };
        let agent = common::agent();
        let until = Instant::now() + Duration::from_secs(20);
        while common::answer(agent.get(&format!("{}/readyz", service.base)).call()).status != 200 {
            assert!(Instant::now() < until, "not ready");
            std::thread::sleep(Duration::from_millis(20));
        }
        service
    }

    fn logged(&self, event: &str) -> Option<serde_json::Value> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|v| v["event"] == event)
    }

    /// The value of the metric line that starts with `series`.
    fn metric(&self, agent: &ureq::Agent, series: &str) -> Option<f64> {
        let text = common::answer(agent.get(&format!("{}/metrics", self.base)).call()).body;
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
    }

    /// SIGTERM; the exit status and how long the exit took.
    fn terminate(&mut self, within: Duration) -> (ExitStatus, Duration) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let began = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status, began.elapsed());
            }
            if began.elapsed() > within {
                let _ = self.child.kill();
                panic!(
                    "no exit within {within:?} of SIGTERM: {:?}",
                    self.log.lock().unwrap()
                );
            }
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

/// This process's soft open-file limit raised to its hard one, which must leave room for
/// `needed` sockets.
fn room_for(needed: u64) {
    let (_, soft) = ferroflake_serve::open_files::raise_to_hard().unwrap();
    assert!(
        !matches!(soft, Some(soft) if soft < needed),
        "this test holds {needed} sockets; the hard open-file limit allows {soft:?}"
    );
}

#[test]
fn thousands_of_idle_and_half_sent_connections_leave_ids_and_healthz_answering() {
    const IDLE: usize = 5000;
    const HALF_SENT: usize = 1000;
    room_for((IDLE + HALF_SENT) as u64 + 200);
    let dir = tempfile::tempdir().unwrap();
    // Long enough a header timeout that every connection stays open through the test.
    let service = Service::start(dir.path(), &["--header-read-timeout-ms", "600000"]);
    // It started under a soft limit of 1,024 and raised it: else most of what follows
    // would be refused.
    let raised = service.logged("open_files").expect("no open_files line");
    assert_eq!(raised["soft_before"], "1024", "{raised}");

    let idle: Vec<TcpStream> = (0..IDLE)
        .map(|_| TcpStream::connect(service.addr).unwrap())
        .collect();
    let half_sent: Vec<TcpStream> = (0..HALF_SENT)
        .map(|_| {
            let mut s = TcpStream::connect(service.addr).unwrap();
            s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                .unwrap();
            s
        })
        .collect();
    let agent = common::agent();
    let held = (IDLE + HALF_SENT) as f64;
    let began = Instant::now();
    while service.metric(&agent, "ferroflake_http_connections_open") < Some(held) {
        assert!(began.elapsed() < Duration::from_secs(60), "not all held");
    }

    // With all of them open, a client still gets IDs, and /healthz answers, promptly.
    let mut last = 0;
    for _ in 0..300 {
        for path in ["/api/segment/get/k", "/healthz"] {
            let began = Instant::now();
            let a = common::answer(agent.get(&format!("{}{path}", service.base)).call());
            let took = began.elapsed();
            assert_eq!(a.status, 200, "{path}: {a:?}");
            assert!(took < Duration::from_secs(1), "{path} took {took:?}");
            if path != "/healthz" {
                let id: u64 = a.body.parse().unwrap();
                assert!(id > last);
                last = id;
            }
        }
    }
    assert!(service.metric(&agent, "ferroflake_http_connections_open") >= Some(held));
    let refused = service.metric(
        &agent,
        "ferroflake_http_connections_refused_total{reason=\"limit\"}",
    );
    assert!(refused.unwrap_or(0.0) == 0.0, "{refused:?}");
    drop((idle, half_sent));
}

#[test]
fn a_half_sent_request_does_not_hold_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    // A stop timeout far beyond the bound below: a drain that waited for the half-sent
    // request would wait all of it.
    let mut service = Service::start(dir.path(), &["--shutdown-timeout-ms", "60000"]);
    let agent = common::agent();
    // An answered request: its kept-alive connection is idle at the stop.
    let id = common::answer(
        agent
            .get(&format!("{}/api/segment/get/k", service.base))
            .call(),
    );
    assert_eq!((id.status, id.body.as_str()), (200, "1"));
    let mut stuck = TcpStream::connect(service.addr).unwrap();
    stuck
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let began = Instant::now();
    // Held: the one above, the kept-alive one, and the one asking.
    while service.metric(&agent, "ferroflake_http_connections_open") < Some(2.0) {
        assert!(began.elapsed() < Duration::from_secs(10), "never held");
    }

    let (status, took) = service.terminate(Duration::from_secs(30));
    assert_eq!(status.code(), Some(0), "{:?}", service.log.lock().unwrap());
    assert!(took < Duration::from_secs(5), "the exit took {took:?}");
    assert!(service.logged("drain_timeout").is_none());
    let stopped = service.logged("stopped").unwrap();
    assert_eq!(stopped["drained"], true);
    // The stop gave the segment's rest back: the table is where the one ID left it.
    let row = SqliteStore::open(dir.path().join("segments.db"))
        .unwrap()
        .peek("k")
        .unwrap()
        .unwrap();
    assert_eq!(row.max_id, 2, "the rest went back");
}

#[test]
fn clients_that_read_none_of_their_answers_lose_their_slots() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::start(
        dir.path(),
        &["--max-connections", "4", "--header-read-timeout-ms", "1000"],
    );
    // Every slot taken by a client that pipelines requests and reads no answer: the
    // answers fill its socket, and the server's next write waits on the client.
    let request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".repeat(2_000);
    let hogs: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = TcpStream::connect(service.addr).unwrap();
            s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
            for _ in 0..50 {
                if s.write_all(&request).is_err() {
                    break; // the server stopped reading: its writes wait on us
                }
            }
            s
        })
        .collect();
    // Within a few header-read timeouts their slots are free again, though they never
    // closed them, and /healthz answers. (Bounded: it fails rather than hangs.)
    let agent = common::agent();
    let began = Instant::now();
    loop {
        let a = common::answer(agent.get(&format!("{}/healthz", service.base)).call());
        if a.status == 200 {
            break;
        }
        assert_eq!(a.status, 503, "{a:?}");
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "the slots stayed taken by clients that read nothing"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(hogs);
}
