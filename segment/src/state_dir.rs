//! Where ferroflake keeps what must outlive a process on this host: the embedded segment
//! table and this host's record of its ranges.

use std::path::PathBuf;

use crate::SegmentError;

/// `/var/lib/ferroflake` for root, else `~/.local/state/ferroflake` (an absolute `HOME`):
/// directories the OS does not clean, unlike `/var/tmp`, which systemd-tmpfiles ages out
/// after 30 days on Fedora, RHEL and Arch. `None` for a user without: there is no such
/// place, and `/var/tmp` would not do.
///
/// `XDG_STATE_HOME` is not read: it is set in some of a user's environments and not in
/// others (a desktop session, not cron), and each would get a table and a host record of
/// its own, which hand out the same IDs.
pub fn state_dir() -> Option<PathBuf> {
    if rustix::process::getuid().is_root() {
        return Some(PathBuf::from("/var/lib/ferroflake"));
    }
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|home| home.is_absolute())
        .map(|home| home.join(".local/state/ferroflake"))
}

/// [`state_dir`], or why there is none.
pub(crate) fn required_state_dir(store: &str) -> Result<PathBuf, SegmentError> {
    state_dir().ok_or_else(|| SegmentError::Unavailable {
        store: store.into(),
        detail: "no state directory: this user has no absolute HOME, and /var/tmp, which \
                 the OS cleans, will not do; set HOME (or FERROFLAKE_STATE_DIR for this \
                 host's record), or name a store"
            .into(),
    })
}
