//! Where ferroflake keeps what must outlive a process on this host: the embedded segment
//! table and this host's record of its ranges.

use std::path::PathBuf;

use crate::SegmentError;

/// `/var/lib/ferroflake` for root, else `$XDG_STATE_HOME/ferroflake` (an absolute
/// `XDG_STATE_HOME`), else `~/.local/state/ferroflake` (an absolute `HOME`): directories the
/// OS does not clean, unlike `/var/tmp`, which systemd-tmpfiles ages out after 30 days on
/// Fedora, RHEL and Arch. `None` for a user with neither: there is no such place, and
/// `/var/tmp` would not do.
pub fn state_dir() -> Option<PathBuf> {
    if rustix::process::getuid().is_root() {
        return Some(PathBuf::from("/var/lib/ferroflake"));
    }
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("XDG_STATE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".local/state")))
        .map(|state| state.join("ferroflake"))
}

/// [`state_dir`], or why there is none.
pub(crate) fn required_state_dir(store: &str) -> Result<PathBuf, SegmentError> {
    state_dir().ok_or_else(|| SegmentError::Unavailable {
        store: store.into(),
        detail: "no state directory: this user has neither an absolute HOME nor \
                 XDG_STATE_HOME, and /var/tmp, which the OS cleans, will not do; set one of \
                 them (or FERROFLAKE_STATE_DIR for this host's record), or name a store"
            .into(),
    })
}
