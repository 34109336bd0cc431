//! `ferroflake serve`'s entry point ([`ferroflake_serve::run`]) as a process of its own,
//! with its real flags and variables: SIGHUP rotating the tokens, a start beyond loopback
//! refused without tokens (exit 2) and allowed with them or `--allow-unauthenticated`.
//!
//! The process is this test binary run again: [`serve_child`] runs the service when
//! [`CHILD_ARGS`] is set, so no other crate's binary is needed.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use common::{tokens_toml, write_whole};

/// The child's `ferroflake serve` arguments, one per line.
const CHILD_ARGS: &str = "FF_AUTH_TEST_SERVE_ARGS";

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

/// `serve ARGS` in a child, with `env` and no other `FERROFLAKE_*` variable.
fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    for (name, _) in std::env::vars() {
        if name.starts_with("FERROFLAKE_") {
            command.env_remove(name);
        }
    }
    command
        .args(["serve_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ARGS, args.join("\n"))
        .envs(env.iter().copied())
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    command
}

/// Segment mode only (no lease to wait for), on a store in `dir`, JSON logs.
fn base_args(dir: &Path) -> Vec<String> {
    let store = dir.join("segments.db");
    [
        "--modes",
        "segment",
        "--store",
        store.to_str().unwrap(),
        "--log-format",
        "json",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// A running child, its port on loopback, and its log lines.
struct Service {
    child: Child,
    base: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Service {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = command(args, env).stderr(Stdio::piped()).spawn().unwrap();
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
        Service {
            child,
            // Listening on every address includes loopback.
            base: format!("http://127.0.0.1:{}", addr.port()),
            log,
        }
    }

    fn get(&self, path: &str, token: Option<&str>) -> common::Answer {
        let mut request = common::agent().get(&format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.header("Authorization", &format!("Bearer {token}"));
        }
        common::answer(request.call())
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

    /// Polls until `done` holds, at most `within`.
    fn wait_for(&self, what: &str, within: Duration, mut done: impl FnMut(&Self) -> bool) {
        let until = Instant::now() + within;
        while !done(self) {
            assert!(
                Instant::now() < until,
                "{what}: not within {within:?}: {:?}",
                self.log.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then the exit status.
    fn stop(mut self) -> (ExitStatus, String) {
        self.signal("TERM");
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // The reader thread ends with the pipe; give it the last lines.
                let log = self.log.lock().unwrap().join("\n");
                return (status, log);
            }
            assert!(Instant::now() < until, "no exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a child that should exit by itself: its exit code and stderr. A child still
/// running after 20 s (one that started when it should have refused) is killed, and the
/// test fails rather than hangs.
fn exit_of(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut child = command(args, env).stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let until = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after 20 s: {}", reader.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status.code(), reader.join().unwrap())
}

#[test]
fn beyond_loopback_without_tokens_it_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let base = base_args(dir.path());
    for listen in ["0.0.0.0:0", "[::]:0", "192.0.2.7:8080", "[2001:db8::1]:80"] {
        let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
        args.extend(["--listen", listen]);
        let (code, stderr) = exit_of(&args, &[]);
        assert_eq!(code, Some(2), "{listen}: {stderr}");
        for says in [
            "refusing to listen on",
            "without authentication",
            "--tokens-file",
            "--allow-unauthenticated",
        ] {
            assert!(
                stderr.contains(says),
                "{listen}: {says:?} missing in {stderr}"
            );
        }
        // Refused before anything opened.
        assert!(!dir.path().join("segments.db").exists());
    }
    // From the variable too.
    let args: Vec<&str> = base.iter().map(String::as_str).collect();
    let (code, stderr) = exit_of(&args, &[("FERROFLAKE_LISTEN", "0.0.0.0:0")]);
    assert_eq!(code, Some(2), "{stderr}");
}

#[test]
fn allow_unauthenticated_lets_it_start_beyond_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let base = base_args(dir.path());
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.extend(["--listen", "0.0.0.0:0"]);
    let env_allowed = [("FERROFLAKE_ALLOW_UNAUTHENTICATED", "true")];
    let flag_args = [&args[..], &["--allow-unauthenticated"]].concat();
    for (args, env) in [(&flag_args[..], &[][..]), (&args[..], &env_allowed[..])] {
        let service = Service::start(args, env);
        assert_eq!(service.logged("unauthenticated"), 1, "a warning is logged");
        assert_eq!(service.get("/v1/status", None).status, 200);
        let (status, _) = service.stop();
        assert_eq!(status.code(), Some(0));
    }
    // Tokens and the waiver at once contradict each other.
    let tokens = dir.path().join("tokens.toml");
    write_whole(&tokens, &tokens_toml(&[("a", "t-a", &["read"])]));
    let both = [&flag_args[..], &["--tokens-file", tokens.to_str().unwrap()]].concat();
    let (code, stderr) = exit_of(&both, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("allow_unauthenticated"), "{stderr}");
}

#[test]
fn sighup_rotates_the_tokens_without_a_restart() {
    const SECRET: &str = "sekrit-xyz";
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    write_whole(
        &tokens,
        &tokens_toml(&[("before", "t-old-1111", &["read"])]),
    );
    let base = base_args(dir.path());
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    // Tokens allow any address.
    args.extend(["--listen", "0.0.0.0:0"]);
    let service = Service::start(
        &args,
        &[("FERROFLAKE_TOKENS_FILE", tokens.to_str().unwrap())],
    );
    let mut seen = String::new();
    assert_eq!(service.get("/v1/status", Some("t-old-1111")).status, 200);
    assert_eq!(service.get("/v1/status", None).status, 401);
    seen.push_str(&format!("{:?}", service.get("/v1/status", Some(SECRET))));

    write_whole(&tokens, &tokens_toml(&[("after", "t-new-2222", &["read"])]));
    service.signal("HUP");
    service.wait_for("the old token refused", Duration::from_secs(10), |s| {
        s.get("/v1/status", Some("t-old-1111")).status == 401
    });
    assert_eq!(service.get("/v1/status", Some("t-new-2222")).status, 200);
    assert_eq!(service.logged("tokens_reloaded"), 1);

    // A bad file: logged, and the tokens in force stay.
    write_whole(
        &tokens,
        &format!("[[token]]\nname = \"x\"\nsha256 = \"{SECRET}\"\n"),
    );
    service.signal("HUP");
    service.wait_for("the failed reload logged", Duration::from_secs(10), |s| {
        s.logged("tokens_reload_failed") == 1
    });
    assert_eq!(service.get("/v1/status", Some("t-new-2222")).status, 200);

    let (status, log) = service.stop();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("tokens.toml"), "the path may be shown: {log}");
    seen.push_str(&log);
    for secret in [SECRET, "t-old-1111", "t-new-2222"] {
        assert!(!seen.contains(secret), "{secret} shown in: {seen}");
    }
}
