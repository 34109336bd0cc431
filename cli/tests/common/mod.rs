//! What the command's tests share: the built `ferroflake`, run to its end, and what it
//! printed.

// Each test file uses some of these.
#![allow(dead_code)]

use std::io::Read;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The `ferroflake` binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_ferroflake");

/// Runs `ferroflake ARGS` to its end.
pub fn ferroflake(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// stdout of a run that must succeed (its stderr in the failure).
pub fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "ferroflake failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// stderr of a run.
pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// A directory that does not exist yet, named for the test file (`prefix`) and the test,
/// under the target's scratch space.
pub fn fresh_dir(prefix: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Starts `command` with its standard output in a pipe that nothing reads, and waits (at
/// most 60 s) until the pipe is full to within a page: its writes then wait for a reader.
pub fn stalled_on_its_output(mut command: Command) -> Child {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    wait_until_full(&out, &mut child);
    child.stdout = Some(out);
    child
}

/// Waits (at most 60 s) until the pipe whose read end is `pipe` is full to within a page,
/// or `writer` has exited (its stderr then says why).
pub fn wait_until_full(pipe: impl AsFd, writer: &mut Child) {
    let size = rustix::pipe::fcntl_getpipe_size(&pipe).unwrap() as u64;
    let began = Instant::now();
    while rustix::io::ioctl_fionread(&pipe).unwrap() + 4096 <= size {
        if writer.try_wait().unwrap().is_some() {
            return;
        }
        assert!(
            began.elapsed() < Duration::from_secs(60),
            "the pipe never filled"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// Sends `kill -SIGNAL` to `child`.
pub fn send_signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits (at most 30 s, then kills it) for `child` to exit.
pub fn exit_of(child: &mut Child) -> ExitStatus {
    let began = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if began.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("no exit within 30 s");
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `child`'s exit ([`exit_of`]): its status and its stderr.
pub fn exit_and_stderr(child: &mut Child) -> (ExitStatus, String) {
    let status = exit_of(child);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status, err)
}

/// Sends `kill -SIGNAL` to `child`, waits for its exit, and returns its exit code, what its
/// pipe held, and its stderr.
pub fn signal_and_finish(mut child: Child, signal: &str) -> (Option<i32>, String, String) {
    send_signal(&child, signal);
    let (status, err) = exit_and_stderr(&mut child);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    (status.code(), out, err)
}
