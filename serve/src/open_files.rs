//! The process's open-file limit, which bounds how many connections it can hold.
//!
//! Every connection is a file descriptor. With the usual soft limit of 1,024, a thousand
//! idle clients would leave `accept` failing with `EMFILE` and every route unreachable,
//! so `ferroflake serve` raises the soft limit to the hard one at start, and the server
//! never admits more connections than the limit leaves room for beside its own files.

use rustix::process::{getrlimit, setrlimit, Resource};

/// Descriptors kept back from connections: the listener, the stores' and the registry's
/// files and sockets, the log, the blocking pool's work.
pub const RESERVED: u64 = 128;

/// The soft open-file limit now, if it has one.
pub fn soft_limit() -> Option<u64> {
    getrlimit(Resource::Nofile).current
}

/// Raises the soft open-file limit to the hard one, and says what it was and became:
/// `(before, after)`, `None` for unlimited.
///
/// # Errors
/// The kernel refused the change (its message).
pub fn raise_to_hard() -> Result<(Option<u64>, Option<u64>), String> {
    let mut limit = getrlimit(Resource::Nofile);
    let before = limit.current;
    if limit.current == limit.maximum {
        return Ok((before, before));
    }
    limit.current = limit.maximum;
    setrlimit(Resource::Nofile, limit).map_err(|e| e.to_string())?;
    Ok((before, soft_limit()))
}

/// A limit as a log line shows it: the number, or `unlimited`.
pub fn shown(limit: Option<u64>) -> String {
    limit.map_or_else(|| "unlimited".to_owned(), |n| n.to_string())
}

/// How many connections a server may hold at once: `configured`, or fewer if the
/// open-file limit `soft` leaves room for fewer beside [`RESERVED`] and the probe reserve
/// ([`PROBE_RESERVE`](crate::connections::PROBE_RESERVE)).
pub fn connection_limit(configured: usize, soft: Option<u64>) -> usize {
    let probes = crate::connections::PROBE_RESERVE as u64;
    let room = soft.map_or(u64::MAX, |soft| {
        soft.saturating_sub(RESERVED + probes).max(1)
    });
    configured.min(usize::try_from(room).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_leaves_room_for_the_servers_own_files() {
        assert_eq!(connection_limit(10_000, Some(1024)), 1024 - 128 - 8);
        assert_eq!(connection_limit(500, Some(1024)), 500);
        assert_eq!(connection_limit(10_000, None), 10_000);
        assert_eq!(connection_limit(10_000, Some(10)), 1);
    }
}
