//! Accept errors are counted and paused on, never spun on: with no file descriptor left,
//! `accept` fails with `EMFILE` for as long as the queued connections wait, and the loop
//! must neither spin nor stop. A file of its own: it lowers this process's open-file
//! limit, which no other test may share.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Place;
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

const ERRORS: &str = "ferroflake_http_accept_errors_total{kind=\"too_many_open_files\"}";

/// The accept errors counted so far, read in this process (no descriptor needed).
fn accept_errors(server: &common::Server) -> f64 {
    let text = server.state().metrics.render();
    text.lines()
        .find_map(|line| line.strip_prefix(ERRORS)?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// Waits (at most 30 s) until `accept_errors` reaches `count`.
fn until_errors(server: &common::Server, count: f64) {
    let began = Instant::now();
    while accept_errors(server) < count {
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "{} accept errors, not {count}: {}",
            accept_errors(server),
            server
                .state()
                .metrics
                .render()
                .lines()
                .filter(|l| l.contains("accept") || l.contains("connections"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        std::thread::yield_now();
    }
}

#[test]
fn accept_errors_are_counted_and_paused_on_never_spun_on() {
    let place = Place::new();
    let mut config = place.config();
    config.snowflake = false;
    let server = place.start(config);
    assert_eq!(server.get("/healthz").status, 200);

    // Forty connections from another process (its own descriptors, its own limit), once
    // told to: the server takes what descriptors it has, and the rest wait in the queue.
    let port = server.addr.port();
    let mut client = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "read; for i in $(seq 40); do exec {{fd}}<>/dev/tcp/127.0.0.1/{port}; done; read"
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // This process's descriptors used up but two, under a limit that stays put.
    let limit = getrlimit(Resource::Nofile);
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(1024.min(limit.current.unwrap_or(1024))),
            maximum: limit.maximum,
        },
    )
    .unwrap();
    let mut filler = Vec::new();
    while let Ok(file) = std::fs::File::open("/dev/null") {
        filler.push(file);
    }
    filler.truncate(filler.len() - 2);
    client.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();

    until_errors(&server, 1.0);
    let first = Instant::now();
    until_errors(&server, 6.0);
    // Between the first error and the sixth the loop paused 10, 20, 40, 80 and 160 ms; a
    // loop that retried at once would count the six within microseconds.
    let took = first.elapsed();
    drop(filler);
    setrlimit(Resource::Nofile, limit).unwrap();
    assert!(
        took >= Duration::from_millis(300),
        "six accept errors in {took:?}"
    );

    drop(client.stdin.take());
    let _ = client.wait();
    // Descriptors again: accepting resumes after the pause (at most a second).
    let agent = common::agent();
    let began = Instant::now();
    loop {
        if let Ok(mut r) = agent.get(&format!("{}/healthz", server.base)).call() {
            if r.status() == 200 && r.body_mut().read_to_string().is_ok() {
                break;
            }
        }
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "never accepted again"
        );
    }
    server.stop();
}
