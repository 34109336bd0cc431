//! `ferroflake serve` as a process, bounded as a platform team would try it: thousands of
//! idle and half-sent connections under the usual soft open-file limit of 1,024 (set by
//! `sh`'s `ulimit`), while a client gets IDs; SIGTERM with a half-sent request open.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use ferroflake_segment::{SegmentError, SegmentStore, SqliteStore};
use ferroflake_test_support::http::{agent, answer};
use ferroflake_test_support::serve_child::{serve_command, ServeChild};

const BIN: &str = env!("CARGO_BIN_EXE_ferroflake");

/// `ferroflake serve` in segment mode on a store in `dir` with the key `k`, plus `args`,
/// under a soft open-file limit of 1,024; returned once ready.
fn start(dir: &std::path::Path, args: &[&str]) -> ServeChild {
    let store = dir.join("segments.db");
    match SqliteStore::open(&store).unwrap().create("k", 1, 1000) {
        Ok(()) | Err(SegmentError::KeyExists { .. }) => {}
        Err(e) => panic!("create k: {e}"),
    }
    let mut all = vec![
        "--listen",
        "127.0.0.1:0",
        "--modes",
        "segment",
        "--store",
        store.to_str().unwrap(),
        "--preload",
        "k",
    ];
    all.extend(args);
    let plain = serve_command(BIN, &all, &[]);
    let mut limited = std::process::Command::new("sh");
    limited
        .arg("-c")
        .arg("ulimit -Sn 1024 && exec \"$0\" \"$@\"")
        .arg(plain.get_program())
        .args(plain.get_args());
    for (name, value) in plain.get_envs() {
        match value {
            Some(value) => limited.env(name, value),
            None => limited.env_remove(name),
        };
    }
    limited
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let service = ServeChild::spawn(limited);
    let agent = agent();
    ferroflake_test_support::wait_for("ready", Duration::from_secs(20), || {
        answer(
            agent
                .get(&format!("{}/readyz", service.base("http")))
                .call(),
        )
        .status
            == 200
    });
    service
}

/// The value of the metric line of `service` that starts with `series`.
fn metric(service: &ServeChild, agent: &ureq::Agent, series: &str) -> Option<f64> {
    let text = answer(
        agent
            .get(&format!("{}/metrics", service.base("http")))
            .call(),
    )
    .body;
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
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
    let service = start(dir.path(), &["--header-read-timeout-ms", "600000"]);
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
    let agent = agent();
    let held = (IDLE + HALF_SENT) as f64;
    let began = Instant::now();
    while metric(&service, &agent, "ferroflake_http_connections_open") < Some(held) {
        assert!(began.elapsed() < Duration::from_secs(60), "not all held");
    }

    // With all of them open, a client still gets IDs, and /healthz answers, promptly.
    let mut last = 0;
    for _ in 0..300 {
        for path in ["/api/segment/get/k", "/healthz"] {
            let began = Instant::now();
            let a = answer(agent.get(&format!("{}{path}", service.base("http"))).call());
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
    assert!(metric(&service, &agent, "ferroflake_http_connections_open") >= Some(held));
    let refused = metric(
        &service,
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
    let service = start(dir.path(), &["--shutdown-timeout-ms", "60000"]);
    let agent = agent();
    // An answered request: its kept-alive connection is idle at the stop.
    let id = answer(
        agent
            .get(&format!("{}/api/segment/get/k", service.base("http")))
            .call(),
    );
    assert_eq!((id.status, id.body.as_str()), (200, "1"));
    let mut stuck = TcpStream::connect(service.addr).unwrap();
    stuck
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let began = Instant::now();
    // Held: the one above, the kept-alive one, and the one asking.
    while metric(&service, &agent, "ferroflake_http_connections_open") < Some(2.0) {
        assert!(began.elapsed() < Duration::from_secs(10), "never held");
    }

    let events = std::sync::Arc::clone(&service.log);
    let (status, took, log) = service.stop(Duration::from_secs(30));
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(took < Duration::from_secs(5), "the exit took {took:?}");
    assert!(!log.contains("drain_timeout"), "{log}");
    let stopped = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["event"] == "stopped")
        .expect("a stopped line");
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
    let service = start(
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
    let agent = agent();
    let began = Instant::now();
    loop {
        let a = answer(
            agent
                .get(&format!("{}/healthz", service.base("http")))
                .call(),
        );
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
