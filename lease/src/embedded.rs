//! The embedded default registry: a directory shared by the processes of one host.
//!
//! No server and no set-up. The directory holds `leases.json` (the records) and
//! `leases.lock`. Every operation takes a short exclusive `flock` on the lock file, reads
//! the records, changes them and writes them back atomically (temp file + rename). Whether a
//! claim is alive is judged only by the expiry time in its record, on the host's shared
//! monotonic clock (`CLOCK_BOOTTIME`), never by who holds a lock: a stopped process would
//! keep a lock forever, but its record still expires.
//!
//! The default directory is `$FERROFLAKE_LEASE_DIR` if set, else
//! `$XDG_RUNTIME_DIR/ferroflake-leases` if that is set, else `/tmp/ferroflake-leases-<uid>`.
//! It is created with mode 0700; a directory owned by another user is refused.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::dir_lock::DirLock;
use crate::host_clock::{boot_id, host_now_ms};
use crate::records::{Claim, Records, FORMAT};
use crate::token::new_token;
use crate::{Grant, LeaseError, LeaseRequest, Registry};

const RECORDS_FILE: &str = "leases.json";
const LOCK_FILE: &str = "leases.lock";
const NAME: &str = "embedded";

/// A node-id registry in a local directory, for the processes of one host.
///
/// ```
/// use std::time::Duration;
/// use ferroflake_lease::{EmbeddedRegistry, LeaseRequest, Registry};
///
/// let dir = std::env::temp_dir().join(format!("ff-doc-{}", std::process::id()));
/// let registry = EmbeddedRegistry::open(&dir)?;
/// let request = LeaseRequest {
///     node_count: 1024,
///     ttl: Duration::from_secs(10),
///     quarantine: Duration::from_secs(2),
///     holder: "doc example".into(),
///     max_ttl: Duration::from_secs(10),
/// };
/// let grant = registry.acquire(&request)?;
/// registry.renew(&grant, request.ttl, 1_700_000_000_000)?;
/// registry.release(&grant, 1_700_000_000_000)?;
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), ferroflake_lease::LeaseError>(())
/// ```
#[derive(Debug, Clone)]
pub struct EmbeddedRegistry {
    dir: PathBuf,
    lock_timeout: Duration,
}

impl EmbeddedRegistry {
    /// The directory used when none is named; see the module docs.
    pub fn default_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os("FERROFLAKE_LEASE_DIR").filter(|d| !d.is_empty()) {
            return PathBuf::from(dir);
        }
        if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
            return PathBuf::from(runtime).join("ferroflake-leases");
        }
        let uid = rustix::process::getuid().as_raw();
        std::env::temp_dir().join(format!("ferroflake-leases-{uid}"))
    }

    /// Opens the registry in [`default_dir`](Self::default_dir).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_default() -> Result<Self, LeaseError> {
        Self::open(Self::default_dir())
    }

    /// Opens (creating if needed) the registry in `dir`, and checks that it can be used, so
    /// that a bad directory fails here rather than at the first claim.
    ///
    /// # Errors
    /// [`LeaseError::Unavailable`] if the directory cannot be created, is not ours, or its
    /// lock file cannot be opened and locked.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, LeaseError> {
        let registry = EmbeddedRegistry {
            dir: dir.into(),
            lock_timeout: Duration::from_secs(5),
        };
        registry.prepare_dir()?;
        registry.with_records(|_, _, _| Ok(((), false)))?;
        Ok(registry)
    }

    /// Creates the directory if it is missing (it may have been deleted under running
    /// holders: the records then start empty, with a floor) and checks that it is ours.
    fn prepare_dir(&self) -> Result<(), LeaseError> {
        let dir = &self.dir;
        let unavailable = |what: &str, e: &dyn std::fmt::Display| LeaseError::Unavailable {
            registry: NAME.into(),
            detail: format!("{what} {}: {e}", dir.display()),
        };
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| unavailable("cannot create lease directory", &e))?;
        let meta = fs::metadata(dir).map_err(|e| unavailable("cannot read lease directory", &e))?;
        if !meta.is_dir() {
            return Err(unavailable("not a directory:", &"lease directory"));
        }
        let me = rustix::process::getuid().as_raw();
        if meta.uid() != me && me != 0 {
            return Err(unavailable(
                "lease directory belongs to another user:",
                &format!("owner uid {}, we are {me}", meta.uid()),
            ));
        }
        Ok(())
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

    /// Runs one read-modify-write under the directory lock. `change` gets the records, the
    /// host time and the boot id, and says whether it changed anything (then it is saved).
    fn with_records<T>(
        &self,
        change: impl FnOnce(&mut Records, u64, &str) -> Result<(T, bool), LeaseError>,
    ) -> Result<T, LeaseError> {
        self.with_records_found(|records, now, boot, _| change(records, now, boot))
    }

    /// As [`with_records`](Self::with_records); `change` also learns whether the records
    /// file was missing (a new registry, or records lost).
    fn with_records_found<T>(
        &self,
        change: impl FnOnce(&mut Records, u64, &str, bool) -> Result<(T, bool), LeaseError>,
    ) -> Result<T, LeaseError> {
        let lock_path = self.dir.join(LOCK_FILE);
        let locked = match DirLock::acquire(&lock_path, self.lock_timeout) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // The directory was deleted under us: make it again (its records are lost).
                self.prepare_dir()?;
                DirLock::acquire(&lock_path, self.lock_timeout)
            }
            other => other,
        };
        let _lock = locked.map_err(|e| LeaseError::Unavailable {
            registry: NAME.into(),
            detail: format!("cannot lock {}: {e}", lock_path.display()),
        })?;
        let (mut records, missing) = match self.load()? {
            Some(records) => (records, false),
            None => (
                Records {
                    format: FORMAT,
                    ..Records::default()
                },
                true,
            ),
        };
        let (out, changed) = change(&mut records, host_now_ms(), &boot_id(), missing)?;
        if changed {
            self.save(&records)?;
        }
        Ok(out)
    }

    /// The records, or `None` if there is no records file.
    fn load(&self) -> Result<Option<Records>, LeaseError> {
        let path = self.dir.join(RECORDS_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
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

    /// Writes the records to a temp file, syncs it and renames it over the old one, so a
    /// crash leaves either the old or the new records, never half of them.
    fn save(&self, records: &Records) -> Result<(), LeaseError> {
        let path = self.dir.join(RECORDS_FILE);
        let temp = self.dir.join(format!("{RECORDS_FILE}.tmp"));
        let text = serde_json::to_vec_pretty(records).map_err(|e| LeaseError::Store {
            registry: NAME.into(),
            detail: format!("cannot encode records: {e}"),
        })?;
        let write = || -> std::io::Result<()> {
            let mut file = fs::File::create(&temp)?;
            file.write_all(&text)?;
            file.sync_all()?;
            fs::rename(&temp, &path)
        };
        write().map_err(|e| self.store_error(&path, &e))
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
        self.with_records_found(|records, now_ms, boot, missing| {
            if missing {
                // No records: a new registry, or one whose file was deleted or moved aside
                // while holders may still be issuing. Nobody can tell which.
                records.start_floor(now_ms, boot, request.floor_window());
            }
            let node_id = records.pick_free(request.node_count, now_ms, boot).ok_or(
                LeaseError::NoFreeNode {
                    node_count: request.node_count,
                },
            )?;
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
                floor_wait: records.floor_wait(now_ms, boot),
            };
            Ok((grant, true))
        })
    }

    fn renew(&self, grant: &Grant, ttl: Duration, high_water_ms: u64) -> Result<(), LeaseError> {
        self.with_records(|records, now_ms, boot| {
            let ttl_ms = duration_ms(ttl);
            records
                .renew(
                    grant.node_id,
                    &grant.token,
                    ttl_ms,
                    high_water_ms,
                    now_ms,
                    boot,
                )
                .map(|()| ((), true))
                .map_err(|why| LeaseError::Lost {
                    node_id: grant.node_id,
                    why,
                })
        })
    }

    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError> {
        self.with_records(|records, _, _| {
            let changed = records.release(grant.node_id, &grant.token, high_water_ms);
            Ok(((), changed))
        })
    }

    fn name(&self) -> &str {
        NAME
    }
}

fn duration_ms(d: Duration) -> u64 {
    crate::protocol::ms(d)
}

/// The wall clock in Unix microseconds (0 before 1970), for epochs.
fn wall_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}
