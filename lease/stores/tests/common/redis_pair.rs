//! Redis servers of a test's own, for a primary and its replica (the shared test Redis
//! cannot be made a replica of another), or for servers that one address names in turn.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// A `redis-server` of this test's own, in a directory of its own (a replica's full sync
/// writes a snapshot there), stopped on drop.
pub struct Server {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Server {
    /// On a free port.
    pub fn start(extra: &[&str]) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        Server::start_on(port, extra)
    }

    /// On `port`, which a server of the test's own may have had before this one.
    pub fn start_on(port: u16, extra: &[&str]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .arg("--dir")
            .arg(dir.path())
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--maxmemory-policy",
                "noeviction",
            ])
            .args(extra)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server (install it with scripts/install-deps.sh)");
        let server = Server {
            child,
            port,
            _dir: dir,
        };
        server.wait_for("PING", "PONG");
        server
    }

    pub fn url(&self, prefix: &str) -> String {
        format!("redis://127.0.0.1:{}/0?prefix={prefix}", self.port)
    }

    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits (at most 20 s) until `args` answers with something containing `expected`.
    pub fn wait_for(&self, args: &str, expected: &str) {
        let give_up = Instant::now() + Duration::from_secs(20);
        let args: Vec<&str> = args.split(' ').collect();
        while !self.cli(&args).contains(expected) {
            assert!(
                Instant::now() < give_up,
                "redis on {} never answered {expected:?} to {args:?}",
                self.port
            );
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
