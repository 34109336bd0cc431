//! Where ferroflake keeps what must outlive a process on this host: the embedded segment
//! table and this host's record of its ranges.

use std::path::{Path, PathBuf};

/// `/var/lib/ferroflake` for root, else `$XDG_STATE_HOME/ferroflake` (an absolute
/// `XDG_STATE_HOME`), else `~/.local/state/ferroflake`: directories the OS does not clean,
/// unlike `/var/tmp`, which systemd-tmpfiles ages out after 30 days on Fedora, RHEL and
/// Arch. Without a home, `/var/tmp/ferroflake-state-<uid>`.
pub fn state_dir() -> PathBuf {
    let uid = rustix::process::getuid();
    if uid.is_root() {
        return PathBuf::from("/var/lib/ferroflake");
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|d| Path::new(d).is_absolute())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|home| Path::new(home).is_absolute())
                .map(|home| Path::new(&home).join(".local/state"))
        });
    state.map_or_else(
        || PathBuf::from(format!("/var/tmp/ferroflake-state-{}", uid.as_raw())),
        |state| state.join("ferroflake"),
    )
}
