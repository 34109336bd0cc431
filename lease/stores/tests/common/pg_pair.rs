//! PostgreSQL servers of a test's own, for a primary and a streaming standby: the shared
//! test server cannot be made a standby of another. Run as the `postgres` user when the
//! tests run as root, since PostgreSQL refuses to run as root.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

/// A server in a directory of its own, stopped on drop.
pub struct Server {
    dir: tempfile::TempDir,
    pub port: u16,
    stopped: bool,
}

/// The newest installed PostgreSQL's programs (Debian keeps them out of `PATH`).
fn bin(program: &str) -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL (install it with scripts/install-deps.sh)")
        .map(|entry| entry.unwrap().path())
        .collect();
    versions.sort_by_key(|path| {
        path.file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.parse::<u32>().ok())
    });
    versions.last().unwrap().join("bin").join(program)
}

/// Whether this process runs as root (`/proc/self` belongs to the process's user).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// `program` as the user PostgreSQL runs as.
fn as_server_user(program: &str) -> Command {
    if is_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(bin(program));
        cmd
    } else {
        Command::new(bin(program))
    }
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port()
}

impl Server {
    /// A new cluster, started.
    pub fn primary() -> Server {
        let server = Server::empty();
        run(as_server_user("initdb")
            .arg("-D")
            .arg(server.data())
            .args(["-A", "trust", "-U", "postgres"]));
        server.start();
        server
    }

    /// A streaming standby of `primary`: a base backup that keeps following it.
    pub fn standby_of(primary: &Server) -> Server {
        let server = Server::empty();
        run(as_server_user("pg_basebackup")
            .args(["-h", "127.0.0.1", "-p", &primary.port.to_string()])
            .args(["-U", "postgres", "-X", "stream", "-R", "-D"])
            .arg(server.data()));
        server.start();
        primary.wait_for(
            "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
            "1",
        );
        server
    }

    fn empty() -> Server {
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            run(Command::new("chown").arg("postgres").arg(dir.path()));
        }
        Server {
            dir,
            port: free_port(),
            stopped: false,
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn start(&self) {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {}",
            self.port,
            self.dir.path().display()
        );
        run(as_server_user("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.path().join("server.log"))
            .args(["-w", "-t", "30", "-o", &options, "start"]));
    }

    /// The registry address of `table` on this server.
    pub fn url(&self, table: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/postgres?table={table}",
            self.port
        )
    }

    /// What `sql` answers, unaligned.
    pub fn psql(&self, sql: &str) -> String {
        run(Command::new("psql")
            .arg(format!(
                "postgres://postgres@127.0.0.1:{}/postgres",
                self.port
            ))
            .args(["-Atc", sql]))
    }

    /// Waits (at most 20 s) until `sql` answers `expected`.
    pub fn wait_for(&self, sql: &str, expected: &str) {
        let give_up = Instant::now() + Duration::from_secs(20);
        while self.psql(sql).trim() != expected {
            assert!(
                Instant::now() < give_up,
                "postgres on {} never answered {expected:?} to {sql:?}",
                self.port
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops following the primary (a partition, a lag), once it has replayed everything
    /// the primary wrote so far; it stays a standby.
    pub fn cut_off_from(&self, primary: &Server) {
        let written = primary.psql("SELECT pg_current_wal_lsn()");
        self.wait_for(
            &format!("SELECT pg_last_wal_replay_lsn() >= '{}'", written.trim()),
            "t",
        );
        self.psql("ALTER SYSTEM SET primary_conninfo = ''");
        self.psql("SELECT pg_reload_conf()");
        self.wait_for("SELECT count(*) FROM pg_stat_wal_receiver", "0");
    }

    /// Promoted to primary, as a failover does.
    pub fn promote(&self) {
        self.psql("SELECT pg_promote()");
        self.wait_for("SELECT pg_is_in_recovery()", "f");
    }

    /// Stops at once, as a crash does.
    pub fn kill(&mut self) {
        if !std::mem::replace(&mut self.stopped, true) {
            let _ = as_server_user("pg_ctl")
                .arg("-D")
                .arg(self.data())
                .args(["-m", "immediate", "stop"])
                .output();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}
