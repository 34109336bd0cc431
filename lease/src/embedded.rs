//! The embedded default registry: a directory shared by the processes of one host.
//!
//! No server and no set-up. The directory holds `leases.json` (the records) and
//! `leases.lock`. Every operation takes a short exclusive `flock` on the lock file, reads
//! the records, changes them and writes them back atomically (temp file + rename). Whether a
//! claim is alive is judged only by the expiry time in its record, on the host's shared
//! monotonic clock (`CLOCK_BOOTTIME`), never by who holds a lock: a stopped process would
//! keep a lock forever, but its record still expires.
//!
//! The default directory is `/var/tmp/ferroflake-leases-<uid>`, whatever the environment:
//! a login shell, cron, sudo and a service of one user all find the same registry (a
//! location taken from `$XDG_RUNTIME_DIR` or `$TMPDIR` would give each its own, and each
//! would hand out node 0). `/var/tmp` outlives logouts and reboots, so high-water marks
//! survive a restart with the clock set back. Wherever the default would likely be one of
//! two registries on one host, each handing out the same node ids, [`open_default`] refuses
//! and says what to use instead (see `default_refusal`): a service whose `/var/tmp` is
//! private (systemd `PrivateTmp=`), another user's default registry in use, a container.
//! A directory named explicitly ([`open`]) is always accepted: whoever names it has chosen
//! it for every process of the host.
//!
//! The directory is created with mode 0700; one owned by another user (root included) or
//! writable by others is refused, and nothing in it is opened through a symbolic link
//! (see `private_dir`). If the records vanish (the directory deleted, the file moved
//! aside) or are not the latest (emptied, replaced, edited by hand, copied back from a
//! backup, or the lock file that counts the writes deleted: see `witness`), the registry
//! starts again with a floor as long as the longest TTL any holder asked for, so that no
//! holder of the lost records shares an id with a new one.
//!
//! [`open_default`]: EmbeddedRegistry::open_default
//! [`open`]: EmbeddedRegistry::open

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::container::container_mark;
use crate::dir_lock::DirLock;
use crate::host_clock::{boot_id, host_now_ms, host_wall_clock_ms, BOOT_ID};
use crate::private_dir;
use crate::protocol::{lost_records_window, DEFAULT_MAX_TTL, DEFAULT_QUARANTINE, LONGEST_WINDOW};
use crate::records::{Claim, Records, FORMAT};
use crate::token::new_token;
use crate::witness::{change_time_ns, Witness};
use crate::{
    check_reservation, Grant, LeaseError, LeaseRequest, NodeState, NodeView, Registry,
    RegistryView, Renewal, Reservation,
};

const RECORDS_FILE: &str = "leases.json";
/// The registry's id ([`Registry::identity`]): the same path on two hosts, or a directory
/// made again at one path, is another registry.
const ID_FILE: &str = "registry-id";
const LOCK_FILE: &str = "leases.lock";
const NAME: &str = "embedded";

/// A node-id registry in a local directory, for the processes of one host.
///
/// ```
/// use std::time::Duration;
/// use ferroflake_lease::{EmbeddedRegistry, LeaseRequest, Registry, Renewal};
///
/// let dir = std::env::temp_dir().join(format!("ff-doc-{}", std::process::id()));
/// let registry = EmbeddedRegistry::open(&dir)?;
/// let request = LeaseRequest {
///     node_count: 1024,
///     ttl: Duration::from_secs(10),
///     quarantine: Duration::from_secs(2),
///     holder: "doc example".into(),
///     max_ttl: Duration::from_secs(10),
///     prefer_node: None,
/// };
/// let grant = registry.acquire(&request)?;
/// registry.renew(&grant, &Renewal::new(request.ttl, 1_700_000_000_000))?;
/// registry.release(&grant, 1_700_000_000_000)?;
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), ferroflake_lease::LeaseError>(())
/// ```
#[derive(Debug, Clone)]
pub struct EmbeddedRegistry {
    dir: PathBuf,
    lock_timeout: Duration,
    /// The id kept in the directory ([`ID_FILE`]), read when opened.
    identity: String,
}

impl EmbeddedRegistry {
    /// The directory used when none is named: `/var/tmp/ferroflake-leases-<uid>`, the same
    /// for every process of the user whatever its environment (see the module docs).
    pub fn default_dir() -> PathBuf {
        let uid = rustix::process::getuid().as_raw();
        PathBuf::from(format!("/var/tmp/ferroflake-leases-{uid}"))
    }

    /// Opens the registry in [`default_dir`](Self::default_dir).
    ///
    /// # Errors
    /// As [`open`](Self::open); also [`LeaseError::Unavailable`] where the default would
    /// likely be one of two registries on this host, whose holders could share node ids:
    /// when this process has a private `/var/tmp` (systemd `PrivateTmp=`), when another
    /// user's default registry is in use, and inside a container (see the module docs).
    /// The message says what to use instead: a directory named explicitly, or a server
    /// registry.
    pub fn open_default() -> Result<Self, LeaseError> {
        let container = std::env::var_os("container");
        let host = Path::new("/");
        if let Some(detail) = default_refusal(host, container.as_deref(), SystemTime::now()) {
            return Err(LeaseError::Unavailable {
                registry: NAME.into(),
                detail,
            });
        }
        Self::open(Self::default_dir())
    }

    /// Opens (creating if needed) the registry in `dir`, and checks that it can be used, so
    /// that a bad directory fails here rather than at the first claim.
    ///
    /// # Errors
    /// [`LeaseError::Unavailable`] if the directory cannot be created, is not ours, or its
    /// lock file cannot be opened and locked.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, LeaseError> {
        let mut registry = EmbeddedRegistry {
            dir: dir.into(),
            lock_timeout: Duration::from_secs(5),
            identity: String::new(),
        };
        registry.prepare_dir()?;
        let lock = registry.lock()?;
        Witness::read(lock.file()).map_err(|e| registry.store_error(&registry.lock_path(), &e))?;
        registry.load()?;
        registry.identity = registry.read_or_make_identity()?;
        drop(lock);
        Ok(registry)
    }

    /// The id in [`ID_FILE`], made (random, once) by the first process to open the
    /// directory. Called under the directory lock.
    fn read_or_make_identity(&self) -> Result<String, LeaseError> {
        let path = self.dir.join(ID_FILE);
        let fail = |e: std::io::Error| self.store_error(&path, &e);
        if let Some(text) = private_dir::read_nofollow(&path).map_err(fail)? {
            let id = text.trim();
            if !id.is_empty() {
                return Ok(id.to_owned());
            }
        }
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| fail(std::io::Error::other(e.to_string())))?;
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        private_dir::replace(&path, format!("{id}\n").as_bytes()).map_err(fail)?;
        Ok(id)
    }

    /// Creates the directory if it is missing (it may have been deleted under running
    /// holders: the records then start empty, with a floor) and checks that only we can
    /// change it.
    fn prepare_dir(&self) -> Result<(), LeaseError> {
        private_dir::prepare(&self.dir).map_err(|detail| LeaseError::Unavailable {
            registry: NAME.into(),
            detail,
        })
    }

    /// How long an operation waits for the directory lock before it reports the registry
    /// unavailable (default 5 s). A process stopped inside an operation holds the lock.
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// The registry's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs one read-modify-write under the directory lock. `change` gets the records and
    /// the moment (host time, boot id, lost-records window), and says whether it changed
    /// anything (then it is saved).
    ///
    /// Records that are missing, or that are not the registry's latest state (their write
    /// count differs from the lock file's: emptied, replaced, restored, or the lock file
    /// deleted), are lost records: a floor of the longest window any claim asked for
    /// (`asked`, for a claim, counts too) starts and is saved before `change` runs, whether
    /// `change` succeeds or not. Whatever the old records still say (their high-water marks)
    /// is kept.
    fn with_records<T>(
        &self,
        asked: Option<Duration>,
        change: impl FnOnce(&mut Records, &Moment) -> Result<(T, bool), LeaseError>,
    ) -> Result<T, LeaseError> {
        let lock = self.lock()?;
        let lock_path = self.lock_path();
        let witness = Witness::read(lock.file()).map_err(|e| self.store_error(&lock_path, &e))?;
        let lock_changed_ns =
            change_time_ns(lock.file()).map_err(|e| self.store_error(&lock_path, &e))?;
        let loaded = self.load()?;
        let intact = match (&loaded, witness) {
            (Some(records), Some(witness)) => {
                records.generation == witness.generation
                    && records.ever_written()
                    // A record deleted or changed by hand, the count left as it was.
                    // A lock file of an earlier version, with no digest, costs one floor.
                    && witness.digest == Some(records.digest())
                    // Both files copied back from one backup agree on the count; the lock
                    // file's change time gives the copy away.
                    && (records.lock_ctime_ns == 0 || records.lock_ctime_ns == lock_changed_ns)
            }
            _ => false,
        };
        let mut records = loaded.unwrap_or_else(|| Records {
            format: FORMAT,
            ..Records::default()
        });
        let window_ms = [
            asked.map_or(0, duration_ms),
            witness.map_or(0, |w| w.floor_window_ms),
            records.floor_window_ms,
        ]
        .into_iter()
        .max()
        .filter(|&ms| ms > 0)
        // A longer one was written by hand, not by a claim: no floor lasts longer.
        .map(|ms| ms.min(duration_ms(LONGEST_WINDOW)))
        .unwrap_or_else(|| duration_ms(lost_records_window(DEFAULT_MAX_TTL, DEFAULT_QUARANTINE)));
        let moment = Moment {
            now_ms: host_now_ms(),
            boot_id: self.boot_id()?,
            window: Duration::from_millis(window_ms),
        };
        let mut generation = records.generation.max(witness.map_or(0, |w| w.generation));
        if !intact {
            // Nobody can tell what the lost records held, nor whether a holder of them is
            // still issuing.
            records.start_floor(moment.now_ms, &moment.boot_id, moment.window);
            generation += 1;
            self.commit(&lock, &mut records, generation, window_ms)?;
        }
        let widened = records.floor_window_ms < window_ms;
        let (out, changed) = change(&mut records, &moment)?;
        if changed || widened {
            generation += 1;
            self.commit(&lock, &mut records, generation, window_ms)?;
        }
        Ok(out)
    }

    /// Takes the directory lock, making the directory again if it was deleted.
    /// This boot's id, which every record carries: unreadable, the registry cannot tell a
    /// live holder's record from one of an earlier boot, and refuses.
    fn boot_id(&self) -> Result<String, LeaseError> {
        boot_id().map_err(|e| LeaseError::Unavailable {
            registry: NAME.into(),
            detail: format!(
                "cannot read this boot's id ({BOOT_ID}: {e}); the embedded registry tells \
                 a live holder from one of an earlier boot by it, so it does not guess: \
                 give the process /proc (with systemd, not ProcSubset=pid), or use a \
                 server registry (etcd://, redis://, zk://, postgres://)"
            ),
        })
    }

    fn lock(&self) -> Result<DirLock, LeaseError> {
        let lock_path = self.lock_path();
        let locked = match DirLock::acquire(&lock_path, self.lock_timeout) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // The directory was deleted under us: make it again (its records are lost).
                self.prepare_dir()?;
                DirLock::acquire(&lock_path, self.lock_timeout)
            }
            other => other,
        };
        locked.map_err(|e| LeaseError::Unavailable {
            registry: NAME.into(),
            detail: format!("cannot lock {}: {e}", lock_path.display()),
        })
    }

    fn lock_path(&self) -> PathBuf {
        self.dir.join(LOCK_FILE)
    }

    /// The records, or `None` if there is no records file.
    fn load(&self) -> Result<Option<Records>, LeaseError> {
        let path = self.dir.join(RECORDS_FILE);
        let text = match private_dir::read_nofollow(&path) {
            // An emptied file holds no records: lost, like a deleted one.
            Ok(Some(text)) if text.is_empty() => return Ok(None),
            Ok(Some(text)) => text,
            Ok(None) => return Ok(None),
            Err(e) => return Err(self.store_error(&path, &e)),
        };
        let records: Records = serde_json::from_str(&text).map_err(|e| LeaseError::Store {
            registry: NAME.into(),
            detail: format!(
                "records file {} is unreadable ({e}); move it aside to start afresh",
                path.display()
            ),
        })?;
        if records.format != FORMAT {
            return Err(LeaseError::Store {
                registry: NAME.into(),
                detail: format!(
                    "records file {} has format {}, this build reads {FORMAT}",
                    path.display(),
                    records.format
                ),
            });
        }
        Ok(Some(records))
    }

    /// Writes write number `generation` of the records: the witness in the lock file
    /// first, then the records (see `witness`).
    fn commit(
        &self,
        lock: &DirLock,
        records: &mut Records,
        generation: u64,
        window_ms: u64,
    ) -> Result<(), LeaseError> {
        records.generation = generation;
        records.floor_window_ms = window_ms;
        Witness {
            generation,
            floor_window_ms: window_ms,
            digest: Some(records.digest()),
            replacing: None,
        }
        .write(lock.file())
        .map_err(|e| self.store_error(&self.lock_path(), &e))?;
        records.lock_ctime_ns =
            change_time_ns(lock.file()).map_err(|e| self.store_error(&self.lock_path(), &e))?;
        self.save(records)
    }

    /// Replaces the records atomically (see [`private_dir::replace`]).
    fn save(&self, records: &Records) -> Result<(), LeaseError> {
        let path = self.dir.join(RECORDS_FILE);
        let text = serde_json::to_vec_pretty(records).map_err(|e| LeaseError::Store {
            registry: NAME.into(),
            detail: format!("cannot encode records: {e}"),
        })?;
        private_dir::replace(&path, &text).map_err(|e| self.store_error(&path, &e))
    }

    fn store_error(&self, path: &Path, e: &std::io::Error) -> LeaseError {
        LeaseError::Unavailable {
            registry: NAME.into(),
            detail: format!("{}: {e}", path.display()),
        }
    }
}

impl Registry for EmbeddedRegistry {
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError> {
        request.validate()?;
        let token = new_token("embedded")?;
        self.with_records(Some(request.floor_window()), |records, moment| {
            let (now_ms, boot) = (moment.now_ms, moment.boot_id.as_str());
            let node_id = records
                .pick_free(request.node_count, request.prefer_node, now_ms, boot)
                .ok_or(LeaseError::NoFreeNode {
                    node_count: request.node_count,
                })?;
            let claim = Claim {
                ttl_ms: duration_ms(request.ttl),
                quarantine_ms: duration_ms(request.quarantine),
                holder: &request.holder,
                token: token.clone(),
                now_us: wall_us(),
            };
            let (epoch, previous_high_water_ms) = records.claim(node_id, claim, now_ms, boot);
            let grant = Grant {
                node_id,
                token,
                epoch,
                previous_high_water_ms,
                floor_wait: records.floor_wait(now_ms, boot, moment.window),
            };
            Ok((grant, true))
        })
    }

    fn renew(&self, grant: &Grant, renewal: &Renewal) -> Result<(), LeaseError> {
        self.with_records(None, |records, moment| {
            let (now_ms, boot) = (moment.now_ms, moment.boot_id.as_str());
            records
                .renew(grant.node_id, &grant.token, renewal, now_ms, boot)
                .map(|()| ((), true))
                .map_err(|why| grant.lost(why))
        })
    }

    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError> {
        self.with_records(None, |records, _| {
            let changed = records.release(grant.node_id, &grant.token, high_water_ms);
            Ok(((), changed))
        })
    }

    fn reserve(&self, node_id: u64, holder: &str) -> Result<Reservation, LeaseError> {
        check_reservation(node_id, holder)?;
        self.with_records(None, |records, moment| {
            let outcome = records.reserve(node_id, holder, moment.now_ms, &moment.boot_id);
            Ok((outcome, outcome == Reservation::Made))
        })
    }

    fn restored(&self, window: Duration) -> Result<Duration, LeaseError> {
        self.with_records(Some(window), |records, moment| {
            records.start_floor(moment.now_ms, &moment.boot_id, moment.window);
            Ok((moment.window, true))
        })
    }

    fn list(&self) -> Result<RegistryView, LeaseError> {
        // Under the lock, so that no write is seen half done; nothing is written, and
        // missing or stale records start no floor here (the next claim starts it).
        let _lock = self.lock()?;
        let Some(records) = self.load()? else {
            return Ok(RegistryView::new(host_now_ms(), 0, Vec::new()));
        };
        let (now_ms, boot) = (host_now_ms(), self.boot_id()?);
        let nodes = records
            .nodes
            .iter()
            .map(|(&id, r)| {
                // As a claim judges it: a record from an earlier boot has lapsed.
                let state = NodeState::of(r.token.is_some(), r.standing(now_ms, &boot));
                let (since, renewed, skew) = r.times(&boot);
                NodeView::new(
                    id,
                    Some(r.holder.clone()),
                    r.epoch,
                    state,
                    r.expires_ms,
                    r.high_water_ms,
                )
                .with_times(since, renewed, skew)
            })
            .collect();
        let floor = if records.floor_boot_id == boot {
            records.floor_until_ms
        } else {
            0
        };
        Ok(RegistryView::new(now_ms, floor, nodes))
    }

    fn wall_clock_ms(&self) -> Result<Option<u64>, LeaseError> {
        Ok(Some(host_wall_clock_ms()))
    }

    fn name(&self) -> &str {
        NAME
    }

    fn locator(&self) -> String {
        format!("{NAME} {}", self.dir.display())
    }

    fn identity(&self) -> Option<String> {
        Some(self.identity.clone())
    }
}

/// When an operation runs, on the registry's clock, and the lost-records window in force.
struct Moment {
    now_ms: u64,
    boot_id: String,
    window: Duration,
}

fn duration_ms(d: Duration) -> u64 {
    crate::protocol::ms(d)
}

/// What to use instead of the default registry where it is refused, worded once.
const INSTEAD: &str = "name a registry directory explicitly (--lease DIR, or the registry \
    argument), or use a server registry (etcd://, redis://, zk://, postgres://)";

/// Why the default registry must not be opened on the host under `root` (`/` but in
/// tests; `container` is this process's `container` variable), in words, or `None`. Another
/// user's registry comes before a container: it is a second registry seen, not inferred.
fn default_refusal(
    root: &Path,
    container: Option<&std::ffi::OsStr>,
    now: SystemTime,
) -> Option<String> {
    if let Some(source) = private_var_tmp(root) {
        return Some(format!(
            "/var/tmp is private to this service ({source}, systemd PrivateTmp=), so the \
             default registry would not be shared with the host's other processes, and IDs \
             can collide with theirs. Give every process of this host one registry: \
             {INSTEAD}"
        ));
    }
    if let Some(other) = other_users_registry(&root.join("var/tmp"), now) {
        return Some(format!(
            "{other}: another user's default registry, in use on this host; each user's \
             default registry is their own, so both could lease the same node id, and IDs \
             can collide. Give every process of this host one registry: run them as one \
             user and {INSTEAD}"
        ));
    }
    container_mark(root, container).map(|mark| {
        format!(
            "this process runs in a container ({mark}), whose /var/tmp is its own: the \
             default registry here would be one of several on this host, each leasing the \
             same node ids, and IDs can collide with other containers'. Give every \
             container of the fleet on this host one registry: {INSTEAD}; a directory must \
             be shared by all of them, e.g. a mounted volume"
        )
    })
}

/// How recently another user's default registry must have been written to count as in
/// use: holders write their records at every renewal, a few times per TTL.
const IN_USE_WITHIN: Duration = Duration::from_secs(3600);

/// Another user's default registry under `var_tmp` written within [`IN_USE_WITHIN`] of
/// `now`, if any: its path and how long ago it was written. Each user's default registry
/// is their own, so two users issuing on one host (root and a service account, say) would
/// each hand out node 0.
fn other_users_registry(var_tmp: &Path, now: SystemTime) -> Option<String> {
    let me = rustix::process::getuid().as_raw();
    std::fs::read_dir(var_tmp)
        .ok()?
        .flatten()
        .find_map(|entry| {
            let name = entry.file_name();
            let uid: u32 = name
                .to_str()?
                .strip_prefix("ferroflake-leases-")?
                .parse()
                .ok()?;
            let written = entry.metadata().ok()?.modified().ok()?;
            let ago = now.duration_since(written).unwrap_or_default();
            (uid != me && ago < IN_USE_WITHIN).then(|| {
                format!(
                    "{} (uid {uid}) was written {} ago",
                    entry.path().display(),
                    humantime::format_duration(Duration::from_secs(ago.as_secs()))
                )
            })
        })
}

/// Where this process's `/var/tmp` comes from, if it is a private one (a systemd
/// `PrivateTmp=` bind mount from `/tmp/systemd-private-*`): read from the mount table
/// under `root`.
fn private_var_tmp(root: &Path) -> Option<String> {
    let table = std::fs::read_to_string(root.join("proc/self/mountinfo")).ok()?;
    table.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        // mountinfo: id parent major:minor root mount-point ...
        let (root, mount_point) = (fields.get(3)?, fields.get(4)?);
        (*mount_point == "/var/tmp" && root.contains("systemd-private-"))
            .then(|| format!("mounted from {root}"))
    })
}

/// The wall clock in Unix microseconds (0 before 1970), for epochs.
fn wall_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_keeps_its_id_and_another_has_another() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let first = EmbeddedRegistry::open(one.path())
            .unwrap()
            .identity()
            .unwrap();
        assert_eq!(first.len(), 32, "{first}");
        let again = EmbeddedRegistry::open(one.path()).unwrap().identity();
        assert_eq!(again.as_deref(), Some(first.as_str()), "opened again");
        let other = EmbeddedRegistry::open(two.path())
            .unwrap()
            .identity()
            .unwrap();
        assert_ne!(other, first);
        // The directory made again at the same path is another registry.
        std::fs::remove_dir_all(one.path()).unwrap();
        let remade = EmbeddedRegistry::open(one.path())
            .unwrap()
            .identity()
            .unwrap();
        assert_ne!(remade, first);
    }

    #[test]
    fn another_users_registry_in_use_is_found() {
        let var_tmp = tempfile::tempdir().unwrap();
        let me = rustix::process::getuid().as_raw();
        let now = SystemTime::now();
        std::fs::create_dir(var_tmp.path().join(format!("ferroflake-leases-{me}"))).unwrap();
        std::fs::create_dir(var_tmp.path().join("ferroflake-leases-x")).unwrap();
        assert_eq!(other_users_registry(var_tmp.path(), now), None, "ours only");
        let other = me.wrapping_add(1);
        std::fs::create_dir(var_tmp.path().join(format!("ferroflake-leases-{other}"))).unwrap();
        let found = other_users_registry(var_tmp.path(), now).expect("found");
        assert!(found.contains(&format!("(uid {other})")), "{found}");
        assert_eq!(
            other_users_registry(var_tmp.path(), now + IN_USE_WITHIN + Duration::from_secs(1)),
            None,
            "one written long ago is not in use"
        );
    }

    /// The default's refusals, in order, each saying that IDs can collide and what to use
    /// instead; a root with none of their causes (nothing under it) opens.
    #[test]
    fn the_default_is_refused_where_a_second_registry_is_likely() {
        let root = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        let refusal = |container: Option<&str>| {
            default_refusal(root.path(), container.map(std::ffi::OsStr::new), now)
        };
        let says = |refusal: Option<String>, words: &[&str]| {
            let refusal = refusal.expect("refused");
            for word in words
                .iter()
                .chain(&["IDs can collide", "--lease DIR", "etcd://"])
            {
                assert!(refusal.contains(word), "{refusal} should say {word}");
            }
        };
        assert_eq!(refusal(None), None);
        says(
            refusal(Some("podman")),
            &[
                "runs in a container (container=podman)",
                "other containers'",
                "shared by all of them, e.g. a mounted volume",
            ],
        );
        let other = rustix::process::getuid().as_raw().wrapping_add(1);
        std::fs::create_dir_all(
            root.path()
                .join(format!("var/tmp/ferroflake-leases-{other}")),
        )
        .unwrap();
        says(
            refusal(Some("podman")),
            &[&format!("(uid {other})"), "run them as one user"],
        );
        std::fs::create_dir_all(root.path().join("proc/self")).unwrap();
        let mount =
            "41 30 8:1 /tmp/systemd-private-ab-x.service-cd/tmp /var/tmp rw - ext4 /dev/sda1 rw\n";
        std::fs::write(root.path().join("proc/self/mountinfo"), mount).unwrap();
        says(refusal(Some("podman")), &["PrivateTmp="]);
    }
}
