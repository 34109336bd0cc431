//! Clients that take segment ranges and node-id leases through two `ferroflake serve`
//! processes on one PostgreSQL store and one etcd registry, while the services are killed,
//! restarted and paused in turn: no ID is issued twice, no client sees an error while one
//! service is up, and with none up a client fails with the store's or registry's error.
//!
//! Each client is a process writing its IDs to a pipe that the test reads a phase at a
//! time: a client blocked on a full pipe issues nothing, so every phase's IDs are issued
//! while that phase's fault holds. The clients are `ferroflake` commands, and where
//! `FERROFLAKE_TEST_FACE_CLIENTS` names them (scripts/test-serve.sh does, on the packages
//! that ship), the C, Python and Node faces' (`ffi-c/tests/remote_client.c`,
//! `bindings-python/tests/remote_client.py`, `bindings-node/test/fixtures/remote-client.mjs`).

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{sync_channel, Receiver};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ferroflake");
/// How long one line may take to come, the whole test being bounded by it.
const LINE_WITHIN: Duration = Duration::from_secs(30);

/// A `ferroflake` command without the caller's `FERROFLAKE_*` variables.
fn ferroflake() -> Command {
    let mut command = Command::new(BIN);
    for (name, _) in std::env::vars() {
        if name.starts_with("FERROFLAKE_") {
            command.env_remove(name);
        }
    }
    command
}

/// A loopback port free now, for a service that must come back on it after a kill.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A service on a fixed port, started again on it after a kill, its log in a file.
struct Service {
    port: u16,
    args: Vec<String>,
    child: Option<Child>,
    log: tempfile::NamedTempFile,
}

impl Service {
    fn start(port: u16, args: &[&str]) -> Self {
        let mut service = Service {
            port,
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            child: None,
            log: tempfile::NamedTempFile::new().unwrap(),
        };
        service.restart();
        service
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn restart(&mut self) {
        let child = ferroflake()
            .args(["serve", "--listen", &format!("127.0.0.1:{}", self.port)])
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(self.log.reopen().unwrap())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let agent = agent();
        let until = Instant::now() + LINE_WITHIN;
        while get(&agent, &format!("{}/readyz", self.base())).0 != 200 {
            assert!(Instant::now() < until, "service on {} not ready", self.port);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    fn signal(&self, name: &str) {
        let pid = self.child.as_ref().unwrap().id().to_string();
        assert!(Command::new("kill")
            .args([&format!("-{name}"), &pid])
            .status()
            .unwrap()
            .success());
    }

    /// SIGTERM, and its exit awaited.
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            self.signal_pid(child.id(), "TERM");
            let status = child.wait().unwrap();
            let log = std::fs::read_to_string(self.log.path()).unwrap_or_default();
            assert_eq!(status.code(), Some(0), "service on {}:\n{log}", self.port);
        }
    }

    fn signal_pid(&self, pid: u32, name: &str) {
        assert!(Command::new("kill")
            .args([&format!("-{name}"), &pid.to_string()])
            .status()
            .unwrap()
            .success());
    }

    /// The node id the service leases for itself.
    fn node(&self) -> u64 {
        let (_, body) = get(&agent(), &format!("{}/readyz", self.base()));
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        v["lease"]["node"].as_u64().unwrap()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(child) = &self.child {
            // A paused service would never die of SIGTERM: go on first.
            self.signal_pid(child.id(), "CONT");
        }
        self.kill();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(2)))
        .build()
        .new_agent()
}

/// Status and body; 0 for no answer.
fn get(agent: &ureq::Agent, url: &str) -> (u16, String) {
    match agent.get(url).call() {
        Ok(mut response) => (
            response.status().as_u16(),
            response.body_mut().read_to_string().unwrap_or_default(),
        ),
        Err(_) => (0, String::new()),
    }
}

/// A client process and its IDs, line by line, through a channel that holds one: the
/// client issues only as fast as the test reads.
struct Client {
    what: String,
    child: Child,
    lines: Receiver<String>,
    ids: Vec<u64>,
}

impl Client {
    fn start(what: &str, args: &[&str]) -> Self {
        let mut command = ferroflake();
        command.args(args);
        Self::spawn(what, command)
    }

    fn spawn(what: &str, mut command: Command) -> Self {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = sync_channel(0);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Client {
            what: what.to_owned(),
            child,
            lines,
            ids: Vec::new(),
        }
    }

    /// The next `n` IDs (fewer if the client ends first).
    fn take(&mut self, n: usize) {
        for _ in 0..n {
            match self.lines.recv_timeout(LINE_WITHIN) {
                Ok(line) => self.ids.push(line.trim().parse().unwrap_or_else(|_| {
                    panic!("{}: not an ID: {line:?}", self.what);
                })),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                Err(e) => panic!("{}: no ID in {LINE_WITHIN:?} ({e})", self.what),
            }
        }
    }

    /// Every ID left, and the exit: 0, and `count` IDs in all.
    fn finish(mut self, count: usize) -> Vec<u64> {
        self.take(usize::MAX);
        let output = self.child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "{}: {:?} {stderr}",
            self.what,
            output.status
        );
        assert_eq!(self.ids.len(), count, "{}: {stderr}", self.what);
        self.ids
    }
}

/// The faces' client commands that `FERROFLAKE_TEST_FACE_CLIENTS` names, as JSON: face name
/// to the command's words, which take `segment ADDRESS KEY COUNT` or `leased ADDRESS COUNT`.
fn face_clients() -> Vec<(String, Vec<String>)> {
    let Ok(json) = std::env::var("FERROFLAKE_TEST_FACE_CLIENTS") else {
        return Vec::new();
    };
    let faces: std::collections::BTreeMap<String, Vec<String>> =
        serde_json::from_str(&json).expect("FERROFLAKE_TEST_FACE_CLIENTS: face -> [words]");
    faces.into_iter().collect()
}

/// A face's client command: its words, then `args`, without the caller's `FERROFLAKE_*`.
fn face_command(words: &[String], args: &[&str]) -> Command {
    let mut command = Command::new(&words[0]);
    command.args(&words[1..]).args(args);
    for (name, _) in std::env::vars() {
        if name.starts_with("FERROFLAKE_") {
            command.env_remove(name);
        }
    }
    command
}

#[test]
#[ignore = "needs the servers of scripts/test-serve.sh"]
fn clients_through_two_services_survive_kills_and_a_pause_with_no_id_twice() {
    let postgres = std::env::var("FERROFLAKE_TEST_POSTGRES").expect("FERROFLAKE_TEST_POSTGRES");
    let etcd = std::env::var("FERROFLAKE_TEST_ETCD").expect("FERROFLAKE_TEST_ETCD");
    let unique = format!("remote_processes_{}", std::process::id());
    let store = format!("{postgres}?table={unique}");
    let registry = format!("{etcd}/{unique}");
    // A small step: each phase takes many ranges through whichever service answers.
    let created = ferroflake()
        .args(["segment", "create", "k", "--start", "1", "--step", "100"])
        .args(["--store", &store])
        .output()
        .unwrap();
    assert!(created.status.success(), "{created:?}");
    // The services' own leases are short, so that one paused past its TTL loses its node
    // id within the test; every holder of the registry agrees on the longest TTL.
    let args = [
        "--store",
        &store,
        "--lease",
        &registry,
        "--lease-ttl-ms",
        "2000",
        "--lease-max-ttl-ms",
        "10000",
    ];
    let (port_a, port_b) = (free_port(), free_port());
    let mut a = Service::start(port_a, &args);
    let mut b = Service::start(port_b, &args);
    let address =
        format!("ferroflake+http://127.0.0.1:{port_a},127.0.0.1:{port_b}/?timeout_ms=500");

    const PHASE: usize = 4_000;
    const PHASES: usize = 5;
    const COUNT: usize = PHASE * PHASES;
    let count = COUNT.to_string();
    let faces = face_clients();
    let mut clients: Vec<Client> = (0..4)
        .map(|i| {
            Client::start(
                &format!("segment client {i}"),
                &[
                    "segment", "next", "k", "--store", &address, "--count", &count,
                ],
            )
        })
        .chain((0..4).map(|i| {
            Client::start(
                &format!("leased client {i}"),
                &["next", "--lease", &address, "--count", &count],
            )
        }))
        .collect();
    // Four per face: two on the segment key, two leased.
    for (face, words) in &faces {
        for i in 0..2 {
            let args = ["segment", address.as_str(), "k", count.as_str()];
            let command = face_command(words, &args);
            clients.push(Client::spawn(
                &format!("{face} segment client {i}"),
                command,
            ));
            let command = face_command(words, &["leased", &address, &count]);
            clients.push(Client::spawn(&format!("{face} leased client {i}"), command));
        }
    }
    let total = clients.len();
    let phase = |clients: &mut Vec<Client>| {
        for client in clients.iter_mut() {
            client.take(PHASE);
        }
    };

    // Both up; then each killed while the clients go on through the other, and back.
    phase(&mut clients);
    a.kill();
    phase(&mut clients);
    a.restart();
    b.kill();
    phase(&mut clients);
    b.restart();
    // One paused until the registry, read through the other, no longer holds its node id
    // for it: its lease has lapsed.
    let paused_node = a.node();
    a.signal("STOP");
    let agent = agent();
    let until = Instant::now() + LINE_WITHIN;
    loop {
        let (_, body) = get(&agent, &format!("{}/v1/admin/leases", b.base()));
        let view: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let held = view["nodes"].as_array().is_some_and(|nodes| {
            nodes
                .iter()
                .any(|n| n["node_id"] == paused_node && n["state"] == "held")
        });
        if !body.is_empty() && !held {
            break;
        }
        assert!(
            Instant::now() < until,
            "node {paused_node} still held: {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    phase(&mut clients);
    a.signal("CONT");
    let mut all = HashSet::new();
    let mut nodes = HashSet::new();
    let layout = ferroflake::Layout::twitter();
    for client in clients {
        let leased = client.what.contains("leased");
        let what = client.what.clone();
        let ids = client.finish(COUNT);
        if leased {
            let node = layout.decode(ids[0]).unwrap().node;
            assert!(
                ids.iter()
                    .all(|id| layout.decode(*id).unwrap().node == node),
                "{what}: one node id"
            );
            assert!(nodes.insert(node), "{what}: node {node} held twice");
        }
        for id in ids {
            assert!(all.insert((leased, id)), "{what}: {id} issued twice");
        }
    }
    assert_eq!(all.len(), total * COUNT);

    // With no service up, both kinds of client fail closed, saying why, in every face.
    a.stop();
    b.stop();
    let mut commands = Vec::new();
    for args in [
        vec!["segment", "next", "k", "--store", &address],
        vec!["next", "--lease", &address],
    ] {
        let mut command = ferroflake();
        command.args(&args);
        commands.push((format!("ferroflake {args:?}"), command));
    }
    for (face, words) in &faces {
        for args in [
            vec!["segment", &address, "k", "1"],
            vec!["leased", &address, "1"],
        ] {
            commands.push((format!("{face} {args:?}"), face_command(words, &args)));
        }
    }
    for (what, mut command) in commands {
        let began = Instant::now();
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{what}: {stderr}");
        assert!(output.stdout.is_empty(), "{what}");
        let said = stderr.to_lowercase();
        assert!(
            said.contains("unreachable") || said.contains("unavailable"),
            "{what}: {stderr}"
        );
        assert!(began.elapsed() < LINE_WITHIN, "{what}");
    }
}
