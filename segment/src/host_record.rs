//! This host's own record of the ranges it took: the last line of defence when a store lost
//! everything, marks included (a SQLite file deleted or aged out, a Redis flushed, a
//! database restored whole).
//!
//! The store's marks ([`crate::marks`]) cannot catch a store that lost them with its rows:
//! the next process that creates its keys would start them again at their start. So every
//! store opened by address ([`HostRecorded`], which `ferroflake_segment_stores::open` puts
//! around every store it opens) also keeps, in a private file, per store and key, where the
//! last range this user on this host took ended. A range below that, or a create below it,
//! is [`SegmentError::Rewound`] for every process of the user, new ones too.
//!
//! The file is one per store, named by a hash of the store's identity (which the file also
//! holds for people; the caller decides what names one store), in [`default_dir`]. The
//! directory must belong to the caller, be writable by nobody else, and sit below
//! directories no other user can move; the file is never followed through a symbolic link.
//! Its lock is held across the store's call, so the processes of a host record their ranges
//! in the order the store gave them. Each change is appended to the file and synced once
//! (the latest line for a key counting), and the file written whole now and then.
//!
//! A store that can tell where its server stands in its own history
//! ([`SegmentStore::history`]: PostgreSQL, MariaDB) has that kept too, beside the ranges
//! (`<name>.history`), read when the record is opened and after every range taken: the
//! furthest history this host saw. A server found behind it (restored from a copy, put
//! back to an earlier point, another server at the address) may have gone back for keys
//! this host never used, which no range of this host's can show; so from then on every key
//! of the store is [`SegmentError::Rewound`] until it is recovered
//! ([`SegmentStore::recover`]), key by key, each one once. A server that is only restarted
//! keeps its history, and is not held.
//!
//! What this cannot see: another user's ranges, a host that never used the store (a new
//! machine, a new container whose state is not kept), or a state directory lost with the
//! store.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::journal::{open_private, Journal};
use crate::marks::{recovered_max_id, recreated_below_mark, row_below_mark};
use crate::private_dir::private_dir;
use crate::{Allocation, KeyRecord, Range, SegmentError, SegmentStore, StoreHistory};

/// The environment variable that names another state directory.
pub const STATE_DIR_ENV: &str = "FERROFLAKE_STATE_DIR";

/// Where this host keeps its records: `$FERROFLAKE_STATE_DIR` (an absolute path), else
/// ferroflake's state directory ([`state_dir`](crate::state_dir)), which the OS does not
/// clean.
///
/// # Errors
/// [`SegmentError::InvalidConfig`] for a relative `FERROFLAKE_STATE_DIR` (each working
/// directory would keep a record of its own); [`SegmentError::Unavailable`] without a
/// state directory.
pub fn default_dir() -> Result<PathBuf, SegmentError> {
    match std::env::var_os(STATE_DIR_ENV).filter(|d| !d.is_empty()) {
        Some(dir) if Path::new(&dir).is_absolute() => Ok(PathBuf::from(dir)),
        Some(dir) => Err(SegmentError::InvalidConfig {
            detail: format!(
                "{STATE_DIR_ENV}={}: a relative directory would be another one in each \
                 working directory; give an absolute path",
                Path::new(&dir).display()
            ),
        }),
        None => crate::state_dir::required_state_dir("segment"),
    }
}

/// A store with this host's record of its ranges around it (see the module docs).
pub struct HostRecorded {
    inner: Arc<dyn SegmentStore>,
    /// The store's address, as the file records it.
    identity: String,
    file: PathBuf,
    /// The furthest history of the store this host saw, and whether it went back.
    history: PathBuf,
    lock: PathBuf,
}

/// What the history file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Seen {
    /// The furthest history seen (after a going back, the history it went back to).
    history: Option<StoreHistory>,
    /// Set once the store was found behind: why, and the keys recovered since.
    rewound: Option<(String, Vec<String>)>,
}

impl std::fmt::Debug for HostRecorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostRecorded")
            .field("store", &self.identity)
            .field("file", &self.file)
            .finish()
    }
}

impl HostRecorded {
    /// Puts this host's record around `store`, whose address (without secrets) is
    /// `identity`, keeping it in [`default_dir`].
    ///
    /// # Errors
    /// [`SegmentError::Unavailable`] if the directory cannot be made or trusted, or the
    /// file cannot be read; [`SegmentError::Store`] if it is garbled or names another store.
    pub fn new(store: Arc<dyn SegmentStore>, identity: &str) -> Result<Self, SegmentError> {
        Self::in_dir(store, identity, &default_dir()?)
    }

    /// As [`new`](Self::new), keeping the record in `dir`.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn in_dir(
        store: Arc<dyn SegmentStore>,
        identity: &str,
        dir: &Path,
    ) -> Result<Self, SegmentError> {
        let dir = dir.join("segments");
        private_dir(&dir, store.name())?;
        let name = format!("{:016x}", fnv1a(identity.as_bytes()));
        let recorded = HostRecorded {
            inner: store,
            identity: identity.to_owned(),
            file: dir.join(format!("{name}.ranges")),
            history: dir.join(format!("{name}.history")),
            lock: dir.join(format!("{name}.lock")),
        };
        // A new process learns at once if the store went back while none ran.
        recorded.with_record(|store, _, seen| recorded.look_back(store, seen))?;
        Ok(recorded)
    }

    /// The file this host's record of the store is kept in.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The file this host keeps the furthest history of the store it saw in.
    pub fn history_file(&self) -> &Path {
        &self.history
    }

    /// Runs `op` with the record locked: read before, what it changed added after.
    fn with_record<T>(
        &self,
        op: impl FnOnce(
            &dyn SegmentStore,
            &mut Vec<(String, u64)>,
            &mut Seen,
        ) -> Result<T, SegmentError>,
    ) -> Result<T, SegmentError> {
        let _held = self.hold()?;
        self.with_record_held(op)
    }

    /// [`with_record`](Self::with_record) for a caller that holds the lock already.
    fn with_record_held<T>(
        &self,
        op: impl FnOnce(
            &dyn SegmentStore,
            &mut Vec<(String, u64)>,
            &mut Seen,
        ) -> Result<T, SegmentError>,
    ) -> Result<T, SegmentError> {
        let ranges = self.journal(&self.file)?;
        let mut record = self.read(ranges.text())?;
        let history = self.journal(&self.history)?;
        let mut seen = self.read_seen(history.text())?;
        let (before, seen_before) = (record.clone(), seen.clone());
        let out = op(&*self.inner, &mut record, &mut seen);
        if seen != seen_before {
            let lines = self.seen_lines(&seen_before, &seen);
            history
                .append(&lines, 3 + seen_len(&seen), || self.seen_text(&seen))
                .map_err(|e| self.unavailable(&self.history, &e))?;
        }
        if record != before {
            let lines = record
                .iter()
                .filter(|(key, end)| last_end(&before, key) != Some(*end))
                .map(|(key, end)| range_line(key, *end))
                .collect::<String>();
            ranges
                .append(&lines, 1 + record.len(), || self.record_text(&record))
                .map_err(|e| self.unavailable(&self.file, &e))?;
        }
        out
    }

    fn journal(&self, path: &Path) -> Result<Journal, SegmentError> {
        Journal::read(path).map_err(|e| self.unavailable(path, &e))
    }

    /// Reads where the store stands in its history and keeps it in `seen`: as the furthest
    /// seen if it continues what was seen, else as the history the store went back to, with
    /// every key held.
    fn look_back(&self, store: &dyn SegmentStore, seen: &mut Seen) -> Result<(), SegmentError> {
        let Some(now) = store.history()? else {
            return Ok(());
        };
        if let Some(why) = seen.history.as_ref().and_then(|before| now.behind(before)) {
            seen.rewound = Some((why, Vec::new()));
        }
        seen.history = Some(now);
        Ok(())
    }

    /// The refusal of `key` while the store is held and the key not recovered since.
    fn held(&self, store: &dyn SegmentStore, seen: &Seen, key: &str) -> Result<(), SegmentError> {
        match &seen.rewound {
            Some((why, recovered)) if !recovered.iter().any(|k| k == key) => {
                Err(SegmentError::Rewound {
                    store: store.name().into(),
                    key: key.into(),
                    detail: format!(
                        "{why} (this host's record of the store's history, {}): the whole \
                         store may have gone back, keys this host never used included, so \
                         each key is held until it is recovered",
                        self.history.display()
                    ),
                })
            }
            _ => Ok(()),
        }
    }

    /// The history file: the identity, then `seen`, `rewound` and `recovered` lines, in
    /// the order they happened (the last `seen` counts; `rewound` starts a new list of
    /// recovered keys).
    fn read_seen(&self, text: &str) -> Result<Seen, SegmentError> {
        if text.is_empty() {
            return Ok(Seen::default());
        }
        let garbled = |what: &str| self.garbled_file(&self.history, what);
        let mut lines = text.lines();
        if lines.next() != Some(self.identity.as_str()) {
            return Err(garbled("its first line names another store"));
        }
        let mut seen = Seen::default();
        for line in lines {
            let fields: Vec<&str> = line.split('\t').collect();
            match fields.as_slice() {
                ["seen", timeline, position, system] => {
                    seen.history = Some(StoreHistory {
                        system: unhex(system).ok_or_else(|| garbled("a system not in hex"))?,
                        timeline: timeline
                            .parse()
                            .map_err(|_| garbled("a timeline that is not a number"))?,
                        position: position
                            .parse()
                            .map_err(|_| garbled("a position that is not a number"))?,
                    })
                }
                ["rewound", why] => {
                    let why = unhex(why).ok_or_else(|| garbled("a reason not in hex"))?;
                    seen.rewound = Some((why, Vec::new()));
                }
                ["recovered", key] => {
                    let key = unhex(key).ok_or_else(|| garbled("a key that is not hex"))?;
                    match &mut seen.rewound {
                        Some((_, recovered)) => recovered.push(key),
                        None => return Err(garbled("a recovered key before `rewound`")),
                    }
                }
                _ => return Err(garbled("a line it does not know")),
            }
        }
        Ok(seen)
    }

    /// The history file's text for `seen`.
    fn seen_text(&self, seen: &Seen) -> String {
        format!(
            "{}\n{}",
            self.identity,
            self.seen_lines(&Seen::default(), seen)
        )
    }

    /// The lines that take the history file from `before` to `after`: a going back (with
    /// the keys recovered since) before the history it went back to, so that a crash
    /// between the two leaves the store held, never a history that hides the going back.
    fn seen_lines(&self, before: &Seen, after: &Seen) -> String {
        let mut text = String::new();
        match (&before.rewound, &after.rewound) {
            (Some((why, was)), Some((same, now))) if why == same && now.starts_with(was) => {
                for key in &now[was.len()..] {
                    text.push_str(&format!("recovered\t{}\n", hex(key)));
                }
            }
            (_, Some((why, recovered))) => {
                text.push_str(&format!("rewound\t{}\n", hex(why)));
                for key in recovered {
                    text.push_str(&format!("recovered\t{}\n", hex(key)));
                }
            }
            (_, None) => {}
        }
        if let Some(h) = after
            .history
            .as_ref()
            .filter(|h| before.history.as_ref() != Some(h))
        {
            let system = hex(&h.system);
            text.push_str(&format!("seen\t{}\t{}\t{system}\n", h.timeline, h.position));
        }
        text
    }

    fn hold(&self) -> Result<File, SegmentError> {
        let lock = open_private(&self.lock, true).map_err(|e| self.unavailable(&self.lock, &e))?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| self.unavailable(&self.lock, &e.into()))?;
        Ok(lock)
    }

    /// The record: `(key, end of the last range this host took)`, one per key, the last
    /// line for a key counting.
    fn read(&self, text: &str) -> Result<Vec<(String, u64)>, SegmentError> {
        if text.is_empty() {
            return Ok(Vec::new());
        }
        let mut lines = text.lines();
        if lines.next() != Some(self.identity.as_str()) {
            return Err(self.garbled("its first line names another store"));
        }
        let mut record = Vec::new();
        for line in lines {
            let (end, key) = line
                .split_once('\t')
                .ok_or_else(|| self.garbled("a line without a tab"))?;
            let end = end
                .parse()
                .map_err(|_| self.garbled("a range end that is not a number"))?;
            let key = unhex(key).ok_or_else(|| self.garbled("a key that is not hex"))?;
            set_end(&mut record, &key, end);
        }
        Ok(record)
    }

    /// The record file's text for `record`.
    fn record_text(&self, record: &[(String, u64)]) -> String {
        let mut text = format!("{}\n", self.identity);
        for (key, end) in record {
            text.push_str(&range_line(key, *end));
        }
        text
    }

    fn unavailable(&self, path: &Path, e: &std::io::Error) -> SegmentError {
        SegmentError::Unavailable {
            store: self.inner.name().into(),
            detail: format!(
                "this host's record of the ranges it took, {}: {e}",
                path.display()
            ),
        }
    }

    fn garbled(&self, what: &str) -> SegmentError {
        self.garbled_file(&self.file, what)
    }

    fn garbled_file(&self, path: &Path, what: &str) -> SegmentError {
        SegmentError::Store {
            store: self.inner.name().into(),
            detail: format!(
                "this host's record of the ranges it took, {}, is garbled ({what}); it is not \
                 guessed at: move it aside only after checking the store is above every ID \
                 this host issued",
                path.display()
            ),
        }
    }
}

fn range_line(key: &str, end: u64) -> String {
    format!("{end}\t{}\n", hex(key))
}

/// The lines `seen` needs in the history file.
fn seen_len(seen: &Seen) -> usize {
    seen.rewound.as_ref().map_or(0, |(_, keys)| 1 + keys.len())
}

fn last_end(record: &[(String, u64)], key: &str) -> Option<u64> {
    record.iter().find(|(k, _)| k == key).map(|(_, end)| *end)
}

fn set_end(record: &mut Vec<(String, u64)>, key: &str, end: u64) {
    match record.iter_mut().find(|(k, _)| k == key) {
        Some(entry) => entry.1 = end,
        None => record.push((key.to_owned(), end)),
    }
}

/// `refusal`, saying that this host's record (not the store's marks) caught it, and `how`.
fn told_by_host(mut refusal: SegmentError, how: &str) -> SegmentError {
    if let SegmentError::Rewound { detail, .. } = &mut refusal {
        detail.push_str(&format!(" (this host's record {how})"));
    }
    refusal
}

impl SegmentStore for HostRecorded {
    fn create(&self, key: &str, start: i64, step: u64) -> Result<(), SegmentError> {
        self.with_record(|store, record, seen| {
            self.held(store, seen, key)?;
            // A key whose row is there is the usual start-up's KeyExists; only a key the
            // store would make again is held to this host's record.
            let missing = match store.peek(key) {
                Ok(row) => row.is_none(),
                // Gone after use, by the store's marks: the store itself decides the create.
                Err(SegmentError::Rewound { .. }) => true,
                Err(e) => return Err(e),
            };
            // Plain numbers, not a match on two options: optimised code may compare an
            // absent value's bytes before it looks at the tag, which valgrind reports.
            let end = last_end(record, key).unwrap_or(0);
            let first = u64::try_from(start).unwrap_or(u64::MAX);
            if missing && end > first {
                let refusal = recreated_below_mark(store.name(), key, first, end);
                return Err(told_by_host(refusal, "of the ranges it took"));
            }
            store.create(key, start, step)?;
            self.look_back(store, seen)?;
            self.held(store, seen, key)
        })
    }

    fn allocate(&self, key: &str, step: u64) -> Result<Allocation, SegmentError> {
        self.with_record(|store, record, seen| {
            self.held(store, seen, key)?;
            let allocation = store.allocate(key, step)?;
            // After the range was taken: a history read before it could miss a copy taken
            // between the two. A range refused here is never issued.
            self.look_back(store, seen)?;
            self.held(store, seen, key)?;
            if let Some(end) = last_end(record, key) {
                if end > allocation.range.start {
                    let refusal = row_below_mark(store.name(), key, allocation.range.start, end);
                    let how = format!(
                        "of the ranges it took: one ended at {end}; the store lost it, marks \
                         included"
                    );
                    return Err(told_by_host(refusal, &how));
                }
            }
            set_end(record, key, allocation.range.end);
            Ok(allocation)
        })
    }

    fn give_back(
        &self,
        key: &str,
        rest: Range,
        expected_max_id: u64,
    ) -> Result<bool, SegmentError> {
        // This host's record comes down first, the row after: a process that ends between
        // the two (a second SIGTERM, a crash) or loses the store's answer leaves the record
        // below the row, which is safe since nothing of the rest was issued, and never
        // above it, which the next fetch would read as the store going back. The lock is
        // held across both: another process' give-back in between could bring the row down
        // to this one's expected max_id after the record was read above it, and the record
        // would then stay above the row.
        let _held = self.hold()?;
        let lowered = self.with_record_held(|_, record, _| {
            let ours = last_end(record, key) == Some(expected_max_id);
            if ours {
                set_end(record, key, rest.start);
            }
            Ok(ours)
        })?;
        self.with_record_held(|store, record, _| {
            let given = store.give_back(key, rest, expected_max_id)?;
            // Refused (someone allocated since): the rest stays skipped, the record as it was.
            if !given && lowered {
                set_end(record, key, expected_max_id);
            }
            Ok(given)
        })
    }

    fn peek(&self, key: &str) -> Result<Option<KeyRecord>, SegmentError> {
        self.inner.peek(key)
    }

    fn recover(&self, key: &str, above: u64, step: u64) -> Result<KeyRecord, SegmentError> {
        self.with_record(|store, record, seen| {
            // Before: a store found gone back now is held for every other key.
            self.look_back(store, seen)?;
            // This host's end counts as a floor too: it knows IDs up to it were issued.
            let floor = recovered_max_id(above, None, last_end(record, key))? - 1;
            let row = store.recover(key, floor, step)?;
            set_end(record, key, row.max_id);
            if let Some((_, recovered)) = &mut seen.rewound {
                if !recovered.iter().any(|k| k == key) {
                    recovered.push(key.to_owned());
                }
            }
            Ok(row)
        })
    }

    /// The step changes no range, so this host's record is not involved.
    fn set_step(&self, key: &str, step: u64) -> Result<KeyRecord, SegmentError> {
        self.inner.set_step(key, step)
    }

    fn history(&self) -> Result<Option<StoreHistory>, SegmentError> {
        self.inner.history()
    }

    fn identity(&self) -> Option<String> {
        self.inner.identity()
    }

    fn name(&self) -> &str {
        self.inner.name()
    }
}

/// FNV-1a, 64 bits: a file name per store that does not change between builds.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn hex(key: &str) -> String {
    key.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<String> {
    let pairs = text.as_bytes().chunks_exact(2);
    if !pairs.remainder().is_empty() {
        return None;
    }
    let bytes: Option<Vec<u8>> = pairs
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_through_hex() {
        for key in ["orders", "a b\tc\nd", "é"] {
            assert_eq!(unhex(&hex(key)).as_deref(), Some(key));
        }
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex("abc"), None);
    }
}
