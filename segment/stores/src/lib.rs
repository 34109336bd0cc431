//! # ferroflake-segment-stores
//!
//! Segment stores on servers, and the store addresses every segment tool takes:
//!
//! | address | store |
//! |---|---|
//! | none | the embedded SQLite file, `segments.db` in `/var/lib/ferroflake` (root) or `~/.local/state/ferroflake` |
//! | `/abs/file.db`, `sqlite:///abs/file.db` | a SQLite file |
//! | `postgres://user@host:port/db[?table=leaf_alloc]` | Leaf's table on PostgreSQL |
//! | `mysql://user[:pw]@host:port/db[?table=leaf_alloc]` | Leaf's table on MySQL or MariaDB |
//! | `redis://host:port[/db][?prefix=segment][&accept=lost-writes]` | a hash per key in Redis (one that fsyncs every write, unless `accept=lost-writes`) |
//!
//! Every store passes `ferroflake_segment::conformance` against a real server (see
//! `tests/`).
#![warn(missing_docs)]

mod address;
#[cfg(feature = "mysql")]
mod mysql;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "redis")]
mod redis;
mod sql;

use std::sync::Arc;

pub use address::{redact, StoreAddress, DEFAULT_TABLE};
use ferroflake_segment::host_record::HostRecorded;
use ferroflake_segment::{SegmentError, SegmentStore, SqliteStore};
#[cfg(feature = "mysql")]
pub use mysql::MysqlStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "redis")]
pub use redis::RedisStore;

/// Opens the store at `address`, or the embedded SQLite default for `None`, with this
/// host's record of the ranges it takes around it
/// ([`HostRecorded`](ferroflake_segment::host_record)).
///
/// # Errors
/// [`SegmentError::InvalidConfig`] for an address that cannot work (a relative path, an
/// unknown scheme, ...); [`SegmentError::NotBuilt`] for a store this build leaves out;
/// [`SegmentError::Unavailable`] if the store cannot be reached, or this
/// host's record cannot be kept.
pub fn open(address: Option<&str>) -> Result<Arc<dyn SegmentStore>, SegmentError> {
    let address = match address {
        Some(a) => StoreAddress::parse(a)?,
        None => {
            let store = SqliteStore::open_default()?;
            let identity = sqlite_identity(store.path());
            return recorded(Arc::new(store), &identity);
        }
    };
    open_address(&address)
}

/// Opens a parsed address, as [`open`] does.
///
/// # Errors
/// As [`open`].
pub fn open_address(address: &StoreAddress) -> Result<Arc<dyn SegmentStore>, SegmentError> {
    let store = open_bare(address)?;
    // Known twice: by its address (a file deleted and made again at one path is still the
    // store), and by the identity it keeps in its data (a copy put back under another
    // name or on another disk is still the store).
    let own = store.identity();
    let store = recorded(store, &record_identity(address))?;
    match own {
        Some(own) => recorded(store, &own),
        None => Ok(store),
    }
}

/// The store alone, without this host's record.
fn open_bare(address: &StoreAddress) -> Result<Arc<dyn SegmentStore>, SegmentError> {
    #[allow(unreachable_patterns)] // with every store feature on
    match address {
        StoreAddress::Sqlite { path } => Ok(Arc::new(SqliteStore::open(path)?)),
        #[cfg(feature = "postgres")]
        StoreAddress::Postgres {
            url,
            table,
            accept_lost_writes: false,
        } => Ok(Arc::new(PostgresStore::connect(url, table)?)),
        #[cfg(feature = "postgres")]
        StoreAddress::Postgres {
            url,
            table,
            accept_lost_writes: true,
        } => Ok(Arc::new(PostgresStore::connect_accepting_lost_writes(
            url, table,
        )?)),
        #[cfg(feature = "mysql")]
        StoreAddress::Mysql {
            url,
            table,
            accept_lost_writes: false,
        } => Ok(Arc::new(MysqlStore::connect(url, table)?)),
        #[cfg(feature = "mysql")]
        StoreAddress::Mysql {
            url,
            table,
            accept_lost_writes: true,
        } => Ok(Arc::new(MysqlStore::connect_accepting_lost_writes(
            url, table,
        )?)),
        #[cfg(feature = "redis")]
        StoreAddress::Redis {
            url,
            prefix,
            accept_lost_writes: false,
        } => Ok(Arc::new(RedisStore::connect(url, prefix)?)),
        #[cfg(feature = "redis")]
        StoreAddress::Redis {
            url,
            prefix,
            accept_lost_writes: true,
        } => Ok(Arc::new(RedisStore::connect_accepting_lost_writes(
            url, prefix,
        )?)),
        #[cfg(feature = "remote")]
        StoreAddress::Service { address } => {
            Ok(Arc::new(ferroflake_remote::RemoteStore::open(address)?))
        }
        other => Err(other.not_built()),
    }
}

fn recorded(
    store: Arc<dyn SegmentStore>,
    identity: &str,
) -> Result<Arc<dyn SegmentStore>, SegmentError> {
    Ok(Arc::new(HostRecorded::new(store, identity)?))
}

/// The name this host's record knows a store by: one store however its address is
/// spelled. For a server: its kind, database and table or prefix, not the host or the user
/// (`localhost`, `127.0.0.1` and a host name reach one server; two servers with the same
/// database, table and key used from one host share a record, which can only refuse a
/// range too many, never issue one twice). For SQLite: see [`sqlite_identity`].
fn record_identity(address: &StoreAddress) -> String {
    match address {
        StoreAddress::Sqlite { path } => sqlite_identity(path),
        StoreAddress::Postgres { url, table, .. } => {
            format!("postgres {} {table}", database(url))
        }
        StoreAddress::Mysql { url, table, .. } => format!("mysql {} {table}", database(url)),
        StoreAddress::Redis { url, prefix, .. } => format!("redis {} {prefix}", database(url)),
        // The servers of one service share its table.
        StoreAddress::Service { address } => {
            let servers = address.split(['?', '#']).next().unwrap_or(address);
            format!("service {}", servers.to_ascii_lowercase())
        }
    }
}

/// The database a server URL names (its path), or the user's name where the path is empty
/// (PostgreSQL's default), percent-decoded as the clients decode it: `%70ostgres` is
/// `postgres`.
fn database(url: &str) -> String {
    let decoded = |text: &str| {
        percent_encoding::percent_decode_str(text)
            .decode_utf8_lossy()
            .into_owned()
    };
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if !path.is_empty() {
        return decoded(path);
    }
    let user = authority.rsplit_once('@').map_or("", |(user, _)| user);
    decoded(user.split(':').next().unwrap_or(""))
}

/// A SQLite file's identity: its path on its filesystem, with links resolved and the mount
/// it is reached through undone (a directory bind-mounted elsewhere, as into a container,
/// is one store), and the filesystem's device. A file deleted and made again under the same
/// name is the same store.
fn sqlite_identity(path: &std::path::Path) -> String {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    match on_filesystem(&real, &mounts) {
        Some((device, inside)) => format!("sqlite {device} {}", inside.display()),
        None => format!("sqlite {}", real.display()),
    }
}

/// The device and the path inside its filesystem of `path`, by the mount table (the last
/// mount on the longest mount point that holds `path` is the one in effect).
fn on_filesystem(path: &std::path::Path, mountinfo: &str) -> Option<(String, std::path::PathBuf)> {
    // mountinfo escapes spaces, tabs, newlines and backslashes as \ooo.
    let unescape = |field: &str| {
        let mut out = Vec::new();
        let bytes = field.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let octal = bytes
                .get(i + 1..i + 4)
                .and_then(|d| u8::from_str_radix(std::str::from_utf8(d).ok()?, 8).ok());
            match (bytes[i], octal) {
                (b'\\', Some(byte)) => {
                    out.push(byte);
                    i += 4;
                }
                (byte, _) => {
                    out.push(byte);
                    i += 1;
                }
            }
        }
        let text: std::ffi::OsString = std::os::unix::ffi::OsStringExt::from_vec(out);
        std::path::PathBuf::from(text)
    };
    let mut best: Option<(usize, String, std::path::PathBuf, std::path::PathBuf)> = None;
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let [_, _, device, root, point, ..] = fields[..] else {
            continue;
        };
        let point = unescape(point);
        if !path.starts_with(&point) {
            continue;
        }
        let depth = point.components().count();
        if !matches!(&best, Some((d, ..)) if depth < *d) {
            best = Some((depth, device.to_owned(), unescape(root), point));
        }
    }
    let (_, device, root, point) = best?;
    let rest = path.strip_prefix(&point).ok()?;
    Some((device, root.join(rest)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_server_is_one_record_however_its_address_is_spelled() {
        let identity = |a: &str| record_identity(&StoreAddress::parse(a).unwrap());
        let pg = identity("postgres://app@127.0.0.1:5432/ids");
        for same in [
            "postgresql://app:pw@localhost/ids",
            "postgres://other@db.example:6432/ids?connect_timeout=5&application_name=x",
            "postgres://app@127.1/ids?table=leaf_alloc",
        ] {
            assert_eq!(identity(same), pg, "{same}");
        }
        // Percent-encoded, as the client decodes it.
        assert_eq!(identity("postgres://app@127.0.0.1/%69ds"), pg);
        assert_eq!(
            identity("mysql://root@127.0.0.1/%6Ceaf"),
            identity("mysql://root@127.0.0.1/leaf")
        );
        assert_ne!(identity("postgres://app@127.0.0.1/ids?table=other"), pg);
        assert_ne!(identity("postgres://app@127.0.0.1/other"), pg);
        assert_eq!(
            identity("redis://127.0.0.1:16379/0"),
            identity("redis://:pw@LOCALHOST:16379?prefix=segment")
        );
        assert_ne!(identity("redis://h/1"), identity("redis://h/0"));
        assert_eq!(
            identity("mysql://root@127.0.0.1:13306/leaf"),
            identity("mysql://root:pw@localhost/leaf")
        );
    }

    #[test]
    fn a_sqlite_file_is_known_by_its_path_on_its_filesystem() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.db");
        std::fs::write(&file, b"").unwrap();
        let before = sqlite_identity(&file);
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, b"").unwrap();
        assert_eq!(sqlite_identity(&file), before, "made again: the same store");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert_eq!(sqlite_identity(&link.join("s.db")), before);
        assert_ne!(sqlite_identity(&dir.path().join("t.db")), before);
    }

    #[test]
    fn a_bind_mount_is_undone() {
        let mounts = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n\
                      30 22 8:1 /srv/ids /data rw - ext4 /dev/sda1 rw\n\
                      31 22 8:2 / /mnt/my\\040disk rw - ext4 /dev/sdb1 rw\n";
        let at = |p: &str| on_filesystem(std::path::Path::new(p), mounts);
        assert_eq!(at("/srv/ids/s.db"), at("/data/s.db"));
        assert_eq!(
            at("/data/s.db").unwrap(),
            ("8:1".into(), "/srv/ids/s.db".into())
        );
        assert_eq!(
            at("/mnt/my disk/s.db").unwrap(),
            ("8:2".into(), "/s.db".into())
        );
        assert_ne!(
            at("/datum/s.db"),
            at("/data/s.db"),
            "a prefix of a name is not a parent"
        );
    }
}
