//! What the command's tests share: the built `ferroflake`, run to its end, and what it
//! printed.

// Each test file uses some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
