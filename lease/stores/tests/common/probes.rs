//! The probe processes that the multi-process suites start (`ferroflake-lease-probe`),
//! and what they share: a registry's timings and fresh addresses, starting, waiting for
//! and reading probes, and checking the IDs they wrote.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ferroflake::{Layout, TWITTER_EPOCH_MS};
#[allow(unused_imports)] // each test file uses part of it
pub use ferroflake_test_support::wait_for;

pub const PROBE: &str = env!("CARGO_BIN_EXE_ferroflake-lease-probe");

/// A registry under test: its name, how to make a fresh namespace of it, and the claim
/// TTL and quarantine its holders use.
pub struct Backend {
    pub name: &'static str,
    /// The server's base address; `None` for the embedded registry.
    pub base: Option<String>,
    pub ttl_ms: u64,
    pub quarantine_ms: u64,
}

impl Backend {
    pub fn new(name: &'static str) -> Backend {
        let (ttl_ms, quarantine_ms) = match name {
            // A file lock and a local clock: nothing to wait for but the machine.
            "embedded" => (1500, 300),
            // etcd counts lease TTLs in whole seconds and raises short ones to about 2 s,
            // and its remaining TTL is read rounded down, so a claim counts as expired up
            // to 1 s early: 3 s leaves renewals (every TTL/3) a second of slack with 32
            // processes on two cores, where 2 s left a third of one.
            "etcd" => (3000, 1000),
            _ => (1000, 500),
        };
        let base = (name != "embedded").then(|| super::base_url(name));
        Backend {
            name,
            base,
            ttl_ms,
            quarantine_ms,
        }
    }

    pub fn is_embedded(&self) -> bool {
        self.base.is_none()
    }

    pub fn base(&self) -> &str {
        self.base.as_deref().expect("a server backend")
    }

    /// A registry no other test uses: a new directory, or a new namespace on the server.
    pub fn fresh_address(&self, tag: &str) -> String {
        match &self.base {
            None => scratch(tag).join("registry").to_str().unwrap().to_owned(),
            Some(base) => super::namespaced(self.name, base, &super::unique(tag)),
        }
    }

    /// A probe command on `address` with this backend's timings.
    pub fn probe(&self, address: &str, node_bits: u32) -> Command {
        let mut cmd = Command::new(PROBE);
        cmd.args(["--registry", address])
            .args(["--node-bits", &node_bits.to_string()])
            // Every holder here uses this TTL: the lost-records floor is TTL + quarantine.
            .args(["--ttl-ms", &self.ttl_ms.to_string()])
            .args(["--quarantine-ms", &self.quarantine_ms.to_string()])
            .args(["--skew-ms", "50"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }
}

pub fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The probe's layout for `node_bits`: 41 time bits, 12 sequence bits, Twitter epoch.
pub fn layout(node_bits: u32) -> Layout {
    Layout::builder(41, node_bits, 12)
        .epoch_ms(TWITTER_EPOCH_MS as i64)
        .build()
        .unwrap()
}

pub fn read_ids(path: &Path) -> Vec<u64> {
    let bytes = std::fs::read(path).unwrap_or_default();
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn scratch(tag: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(super::unique(tag));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What a finished probe said.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    pub fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }
    pub fn nodes(&self) -> Vec<u64> {
        nodes_in(&self.stdout)
    }
}

pub fn nodes_in(stdout: &str) -> Vec<u64> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("node=")?.split(' ').next()?.parse().ok())
        .collect()
}

/// Reads a child's stdout into a shared string as it comes, so that the pipe never fills
/// and a test can look at what the probe said so far.
pub fn collect_stdout(child: &mut Child) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let reader = BufReader::new(child.stdout.take().unwrap());
    let sink = Arc::clone(&text);
    thread::spawn(move || {
        for line in reader.lines() {
            let Ok(line) = line else { break };
            let mut text = sink.lock().unwrap();
            text.push_str(&line);
            text.push('\n');
        }
    });
    text
}

/// Waits for `child` at most `limit`, killing it (and failing) if it overruns. Reads its
/// output meanwhile: a full pipe would block a child that holds an id others wait for.
pub fn finish(mut child: Child, limit: Duration, what: &str) -> Finished {
    let stdout = match &child.stdout {
        Some(_) => Some(collect_stdout(&mut child)),
        None => None,
    };
    let stderr = {
        let mut pipe = child.stderr.take().unwrap();
        thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
            text
        })
    };
    let until = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            let said = stdout
                .map(|s| s.lock().unwrap().clone())
                .unwrap_or_default();
            panic!(
                "{what} did not finish within {limit:?}; stdout: {said} stderr: {}",
                stderr.join().unwrap()
            );
        }
        thread::sleep(Duration::from_millis(20));
    };
    let stderr = stderr.join().unwrap();
    // The reader ends with the pipe, soon after the exit.
    thread::sleep(Duration::from_millis(50));
    let stdout = stdout
        .map(|s| s.lock().unwrap().clone())
        .unwrap_or_default();
    Finished {
        status,
        stdout,
        stderr,
    }
}

/// Waits for all `children`, each at most `limit` from now.
pub fn finish_all(children: Vec<Child>, limit: Duration, what: &str) -> Vec<Finished> {
    let until = Instant::now() + limit;
    let waiting: Vec<_> = children
        .into_iter()
        .map(|child| {
            let what = what.to_owned();
            thread::spawn(move || {
                finish(
                    child,
                    until.saturating_duration_since(Instant::now()),
                    &what,
                )
            })
        })
        .collect();
    waiting
        .into_iter()
        .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
        .collect()
}

/// Whether a probe printed a line that `matches`.
pub fn said(stdout: &str, matches: impl Fn(&str) -> bool) -> bool {
    stdout.lines().any(matches)
}

/// Waits for `child`'s first line and checks that it started on node 0; `who` names it.
pub fn started_on_node_0(child: &mut Child, who: &str) {
    let line = first_line(child);
    assert!(line.starts_with("node=0"), "{who} did not start: {line:?}");
}

/// Reads the first line a probe prints (its `node=` line, or nothing if it failed).
pub fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    line
}

pub fn signal(child: &Child, sig: &str) {
    // bash's built-in kill: no procps needed.
    let status = Command::new("bash")
        .args(["-c", &format!("kill {sig} {}", child.id())])
        .status()
        .unwrap();
    assert!(status.success(), "kill {sig} failed");
}

/// SIGSTOPs `child` at a moment it does not hold the embedded registry's lock at
/// `address` (a directory; other registries have no lock a holder keeps): a holder paused
/// inside one of its short operations keeps every other process of the registry out until
/// it resumes, a limit of a file lock, and not the pause a test of the fence wants.
pub fn stop_outside_registry_lock(child: &Child, address: &str) {
    let lock = Path::new(address).join("leases.lock");
    for _ in 0..100 {
        signal(child, "-STOP");
        if !address.starts_with('/') {
            return;
        }
        // util-linux flock: exit 3 when the lock is held.
        let free = Command::new("flock")
            .args(["-n", "-E", "3"])
            .arg(&lock)
            .arg("true")
            .status()
            .unwrap();
        if free.code() != Some(3) {
            return;
        }
        signal(child, "-CONT");
        thread::sleep(Duration::from_millis(10));
    }
    panic!("{} stayed locked by the holder", lock.display());
}

/// Sorted IDs with no repeats, or a panic naming the first duplicate.
pub fn assert_unique(all: &mut [u64], layout: &Layout) {
    all.sort_unstable();
    if let Some(w) = all.windows(2).find(|w| w[0] == w[1]) {
        panic!("duplicate ID {} = {:?}", w[0], layout.decode(w[0]));
    }
}
