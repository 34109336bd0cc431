//! The process's table of leases: one lease per registry and layout, shared by every
//! `LeasedGenerator` object of the process (main thread and `worker_threads` alike), and
//! the count of objects using each. The class is in [`leased`](crate::leased).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, Once, PoisonError, RwLock};

use ferroflake::{Layout as CoreLayout, SystemClock};
use ferroflake_lease::{EmbeddedRegistry, LeaseSettings, LeasedGenerator as CoreLeased};
use ferroflake_lease_stores::RegistryAddress;

use crate::error::{lease_refusal, Misuse, Refusal};
use crate::generator::closed;

/// The lease settings as a JS user wrote them, for messages. Two users of one lease must
/// agree on them.
fn describe(settings: &LeaseSettings) -> String {
    let ms = |v: Option<u64>| v.map_or_else(|| "default".to_owned(), |v| v.to_string());
    format!(
        "ttlMs {}, maxTtlMs {}, maxStartWaitMs {}, maxClockSkewMs {}, maxDriftTicks {}, \
         maxBackwardWaitMs {}, stateFile {}",
        ms(settings.ttl_ms),
        ms(settings.max_ttl_ms),
        ms(settings.max_start_wait_ms),
        ms(settings.max_clock_skew_ms),
        settings.options.max_drift_ticks,
        settings.options.max_backward_wait_ms,
        settings
            .state_file
            .as_deref()
            .map_or_else(|| "none".into(), |path| path.display().to_string()),
    )
}

/// Which lease: one per registry and layout per process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) registry: RegistryAddress,
    pub(crate) layout: CoreLayout,
}

impl Key {
    /// The table's key: the registry as given (two passwords are two registries), and the
    /// layout.
    fn text(&self) -> String {
        let registry = match &self.registry {
            RegistryAddress::Default => EmbeddedRegistry::default_dir().display().to_string(),
            RegistryAddress::Embedded(dir) => dir.display().to_string(),
            RegistryAddress::Store(url) | RegistryAddress::Service(url) => url.clone(),
        };
        format!("{registry}|{:?}", self.layout)
    }
}

/// One lease of the process and the number of JS objects using it.
pub(crate) struct Slot {
    /// `None` until started and after the last user released it. Issuing takes the read
    /// side; the release takes the write side, so it waits for calls in flight and the
    /// high-water mark it records is final.
    pub(crate) lease: RwLock<Option<CoreLeased<SystemClock>>>,
    users: Mutex<Users>,
}

struct Users {
    count: usize,
    settings: Option<LeaseSettings>,
}

static TABLE: LazyLock<Mutex<HashMap<String, Arc<Slot>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every write under these locks is one assignment: a poisoned lock holds good data.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Slot {
    /// Joins the slot's lease, starting it if nobody holds it. Blocks (on a pool thread)
    /// while the registry answers, and while another thread starts the same lease.
    pub(crate) fn join(&self, key: &Key, settings: LeaseSettings) -> Result<bool, Refusal> {
        let mut users = lock(&self.users);
        if users.count > 0 {
            if users.settings != Some(settings) {
                return Err(Refusal::misuse(
                    Misuse::LeaseInUse,
                    format!(
                        "this process already holds a lease on {} for this layout, with other \
                         settings ({}); one process holds one lease per registry: ask with \
                         the same settings to share it",
                        key.registry.describe(),
                        users.settings.as_ref().map(describe).unwrap_or_default()
                    ),
                ));
            }
            users.count += 1;
            return Ok(true);
        }
        let config = settings.config();
        let registry = key.registry.open_for(&config).map_err(lease_refusal)?;
        let leased = CoreLeased::start_reporting(
            key.layout,
            SystemClock,
            registry,
            config,
            &mut ferroflake_lease::report_to_stderr,
        )
        .map_err(lease_refusal)?;
        *self.lease.write().unwrap_or_else(PoisonError::into_inner) = Some(leased);
        users.count = 1;
        users.settings = Some(settings);
        Ok(false)
    }

    /// Gives one use back; the last one stops issuing and releases the node id.
    pub(crate) fn leave(&self) {
        let mut users = lock(&self.users);
        users.count = users.count.saturating_sub(1);
        if users.count == 0 {
            users.settings = None;
            let leased = self
                .lease
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(leased) = leased {
                // A failed release lapses after the TTL; there is nobody to tell here.
                let _ = leased.shutdown();
            }
        }
    }

    /// Runs `f` on the lease, or refuses if it was released under this user (it cannot be
    /// while the user is open; the check keeps the read side honest).
    #[inline]
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&CoreLeased<SystemClock>) -> Result<T, ferroflake::Error>,
    ) -> Result<T, Refusal> {
        let lease = self.lease.read().unwrap_or_else(PoisonError::into_inner);
        let Some(leased) = lease.as_ref() else {
            return Err(closed("this LeasedGenerator"));
        };
        f(leased).map_err(|error| {
            let message = leased.explain(&error);
            Refusal::Explained(error, message)
        })
    }
}

/// Releases every lease still held when the process exits through `exit()`
/// (`process.exit()`), which tears down no JavaScript environment.
extern "C" fn release_all_at_exit() {
    let slots: Vec<Arc<Slot>> = match TABLE.try_lock() {
        Ok(table) => table.values().cloned().collect(),
        Err(_) => return,
    };
    for slot in slots {
        let Ok(mut lease) = slot.lease.try_write() else {
            continue;
        };
        if let Some(leased) = lease.take() {
            let _ = leased.shutdown();
        }
    }
}

/// The slot for `key`, with the exit hook in place.
pub(crate) fn slot(key: &Key) -> Arc<Slot> {
    static AT_EXIT: Once = Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain function with no captured state; if registration fails
        // the leases lapse after their TTL instead.
        unsafe {
            libc::atexit(release_all_at_exit);
        }
    });
    lock(&TABLE)
        .entry(key.text())
        .or_insert_with(|| {
            Arc::new(Slot {
                lease: RwLock::new(None),
                users: Mutex::new(Users {
                    count: 0,
                    settings: None,
                }),
            })
        })
        .clone()
}
