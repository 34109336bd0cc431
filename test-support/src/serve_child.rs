//! `ferroflake serve` as a child process: started from the `ferroflake` binary with JSON
//! logs on loopback, its log lines collected as they come, signalled as an operator would.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::wait_for;

/// A running `ferroflake serve`, where it listens, and its log lines (JSON, from stderr).
pub struct ServeChild {
    /// The process.
    pub child: Child,
    /// Its address on loopback (an address on every interface includes loopback).
    pub addr: SocketAddr,
    /// Every log line so far.
    pub log: Arc<Mutex<Vec<String>>>,
}

/// `bin serve ARGS --log-format json`, with `env` and no other `FERROFLAKE_*` variable of
/// this process; stdin and stdout closed, stderr piped.
pub fn serve_command(bin: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(bin);
    for (name, _) in std::env::vars() {
        if name.starts_with("FERROFLAKE_") {
            command.env_remove(name);
        }
    }
    command
        .arg("serve")
        .args(args)
        .args(["--log-format", "json"])
        .envs(env.iter().copied())
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

impl ServeChild {
    /// Starts `command` (see [`serve_command`]) and returns once it logs that it serves.
    pub fn spawn(mut command: Command) -> Self {
        let mut child = command.spawn().expect("the binary starts");
        let stderr = child.stderr.take().expect("stderr is piped");
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
        let addr: SocketAddr = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(addr) => addr.parse().expect("the start line holds an address"),
            Err(_) => {
                let _ = child.kill();
                panic!("no start line: {:?}", log.lock().unwrap());
            }
        };
        ServeChild {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], addr.port())),
            log,
        }
    }

    /// `scheme://addr`.
    pub fn base(&self, scheme: &str) -> String {
        format!("{scheme}://{}", self.addr)
    }

    /// Sends the signal named `name` (`TERM`, `INT`, `HUP`, `STOP`...).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{name} failed");
    }

    /// The log lines with `event`, parsed.
    pub fn events(&self, event: &str) -> Vec<serde_json::Value> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["event"] == event)
            .collect()
    }

    /// The first log line with `event`, if there is one yet.
    pub fn logged(&self, event: &str) -> Option<serde_json::Value> {
        self.events(event).into_iter().next()
    }

    /// Waits at most `within` for `count` log lines with `event`; returns the last.
    pub fn wait_logged(&self, event: &str, count: usize, within: Duration) -> serde_json::Value {
        let what = format!("{count} {event:?} lines in {:?}", self.log);
        wait_for(&what, within, || self.events(event).len() >= count);
        self.events(event).swap_remove(count - 1)
    }

    /// The whole log so far, one line each.
    pub fn log_text(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Waits at most `within` for the exit, and returns its status; kills it and fails
    /// the test if it does not end.
    pub fn wait(&mut self, within: Duration) -> ExitStatus {
        wait_exit(&mut self.child, within, &self.log)
    }

    /// SIGTERM; the exit status, how long the exit took, and the whole log.
    pub fn stop(mut self, within: Duration) -> (ExitStatus, Duration, String) {
        self.signal("TERM");
        let began = Instant::now();
        let status = self.wait(within);
        let took = began.elapsed();
        (status, took, self.log_text())
    }
}

impl Drop for ServeChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits at most `within` for `child` to exit, and returns its status; kills it and fails
/// the test, showing `what`, if it does not end.
pub fn wait_exit(child: &mut Child, within: Duration, what: &dyn std::fmt::Debug) -> ExitStatus {
    let until = Instant::now() + within;
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no exit in {within:?}: {what:?}");
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Runs `command`, a child that should end by itself: its exit code and stderr. A child
/// still running after 20 s (one that started when it should have refused) is killed, and
/// the test fails rather than hangs.
pub fn exit_of(mut command: Command) -> (Option<i32>, String) {
    let mut child = command.spawn().expect("the binary starts");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let status = wait_exit(
        &mut child,
        Duration::from_secs(20),
        &"a child that should refuse",
    );
    (status.code(), reader.join().unwrap())
}
