//! Whether standard output was closed when the process started (`ferroflake next >&-`).
//!
//! Rust's runtime reopens closed standard descriptors on /dev/null before `main` runs, so
//! IDs written there would vanish while the command reports success. This check runs
//! earlier: from the ELF init array, which the C runtime calls before `main` (and so before
//! Rust's runtime touches the descriptors). It asks /proc whether descriptor 1 exists; on
//! systems without /proc, or other than Linux, it assumes standard output is open.

use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

/// Whether descriptor 1 was closed before `main`.
pub fn closed_at_start() -> bool {
    CLOSED_AT_START.load(Ordering::Relaxed)
}

#[cfg(any(target_os = "linux", target_os = "android"))]
#[used]
#[link_section = ".init_array"]
static CHECK_AT_START: extern "C" fn() = check;

/// Runs before `main`: only a couple of `stat` calls, nothing that needs the runtime.
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
extern "C" fn check() {
    let proc_fds = std::path::Path::new("/proc/self/fd");
    let closed = proc_fds.is_dir() && std::fs::symlink_metadata(proc_fds.join("1")).is_err();
    CLOSED_AT_START.store(closed, Ordering::Relaxed);
}
