//! The probe processes the process tests start: each opens a store by address, creates its
//! key unless it exists (as programs that create their keys at every start do), and prints
//! `<thread> <id>` per ID; on an error it exits 3 and names the error's kind on stderr.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::probe_path;

/// A probe taking IDs from `key` in `store`.
pub fn probe_key(store: &str, key: &str, extra: &[&str]) -> Command {
    let mut command = Command::new(probe_path());
    command
        .args(["--store", store])
        .args(["--key", key])
        .args(extra);
    command
}

/// A probe taking IDs from the key "shared".
pub fn probe(store: &str, extra: &[&str]) -> Command {
    probe_key(store, "shared", extra)
}

/// `<thread> <id>` lines into per-thread ID lists.
pub fn parse(output: &str) -> HashMap<u32, Vec<u64>> {
    let mut by_thread: HashMap<u32, Vec<u64>> = HashMap::new();
    for line in output.lines() {
        let (t, id) = line.split_once(' ').expect("`<thread> <id>`");
        by_thread
            .entry(t.parse().unwrap())
            .or_default()
            .push(id.parse().unwrap());
    }
    by_thread
}

/// Runs a probe to its end; panics unless it succeeded.
pub fn run_ok(command: &mut Command) -> String {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "probe failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// One machine's processes: a state directory of their own (`FERROFLAKE_STATE_DIR`), which
/// holds the host's record of the ranges its processes took.
pub struct Host {
    state: tempfile::TempDir,
}

impl Host {
    pub fn new() -> Host {
        Host {
            state: tempfile::tempdir().unwrap(),
        }
    }

    /// `command` run on this host.
    pub fn on(&self, mut command: Command) -> Command {
        command.env("FERROFLAKE_STATE_DIR", self.state.path());
        command
    }
}

/// How a probe ended: its exit code and what it said on stderr.
#[derive(Debug)]
pub struct Exit {
    pub code: Option<i32>,
    pub stderr: String,
}

impl Exit {
    /// Refused with the error kind `kind` (`REWOUND`, `STORE`, ...): exit 3.
    pub fn assert_refused(&self, kind: &str, says: &str, who: &str) {
        assert_eq!(self.code, Some(3), "{who} did not refuse: {}", self.stderr);
        assert!(
            self.stderr.contains(&format!("probe: {kind}: ")) && self.stderr.contains(says),
            "{who}: expected {kind} saying {says:?}, got: {}",
            self.stderr
        );
    }
}

/// Every ID the probes of one test printed; an ID printed twice fails the test.
#[derive(Default)]
pub struct Issued {
    ids: HashSet<u64>,
}

impl Issued {
    pub fn take(&mut self, id: u64) {
        assert!(self.ids.insert(id), "ID {id} issued twice");
    }

    pub fn take_output(&mut self, stdout: &str) {
        for id in parse(stdout).into_values().flatten() {
            self.take(id);
        }
    }

    /// Runs a probe to its end and takes what it printed.
    pub fn run(&mut self, command: &mut Command) -> Exit {
        let out = command.output().unwrap();
        self.take_output(&String::from_utf8_lossy(&out.stdout));
        Exit {
            code: out.status.code(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Probes issuing at once, their IDs read as they print them.
pub struct Running {
    children: Vec<Child>,
    ids: Receiver<u64>,
}

impl Running {
    pub fn start(commands: impl IntoIterator<Item = Command>) -> Running {
        let (sender, ids) = channel();
        let children = commands
            .into_iter()
            .map(|mut command| {
                let mut child = command
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                let lines = BufReader::new(child.stdout.take().unwrap()).lines();
                let sender = sender.clone();
                std::thread::spawn(move || {
                    for line in lines.map_while(Result::ok) {
                        let id = line.split_once(' ').unwrap().1.parse().unwrap();
                        if sender.send(id).is_err() {
                            break;
                        }
                    }
                });
                child
            })
            .collect();
        Running { children, ids }
    }

    /// Waits until the probes printed `n` more IDs.
    pub fn wait_for(&self, n: usize, issued: &mut Issued) {
        for _ in 0..n {
            let id = self
                .ids
                .recv_timeout(Duration::from_secs(30))
                .expect("the probes issue");
            issued.take(id);
        }
    }

    /// Every ID the probes print until all of them have exited (within `limit`), and how
    /// each ended.
    pub fn until_all_exit(mut self, limit: Duration, issued: &mut Issued) -> Vec<Exit> {
        let deadline = Instant::now() + limit;
        loop {
            match self.ids.recv_timeout(Duration::from_millis(100)) {
                Ok(id) => issued.take(id),
                // Every reader saw its probe's stdout close.
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
            assert!(
                Instant::now() < deadline,
                "the probes did not stop within {limit:?}"
            );
        }
        self.children
            .iter_mut()
            .map(|child| {
                let code = child.wait().unwrap().code();
                let mut stderr = String::new();
                child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut stderr)
                    .unwrap();
                Exit { code, stderr }
            })
            .collect()
    }
}

impl Drop for Running {
    /// A test that failed half-way leaves no probe behind.
    fn drop(&mut self) {
        for child in &mut self.children {
            if let Ok(None) = child.try_wait() {
                child.kill().ok();
                child.wait().ok();
            }
        }
    }
}
