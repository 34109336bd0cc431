//! Test helpers shared by the lease tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicI64, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[allow(unused_imports)] // each test file uses part of it
pub use ferroflake_test_support::wait_for;

use ferroflake_lease::{Grant, LeaseError, LeaseRequest, Registry, RegistryView, Renewal};

/// What a [`Switchable`] registry does with each call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// Pass calls to the real registry.
    Pass = 0,
    /// Answer every call with `Unavailable` (a partition, or a crashed holder's calls).
    Unreachable = 1,
    /// Answer renewals with `Lost`.
    LoseRenewals = 2,
    /// Hold each renewal until the mode changes, as a renewal thread that a paused or
    /// starved process does not run.
    StallRenewals = 3,
    /// Answer every call but renewals with `Unavailable`: a release that fails while the
    /// lease is still healthy.
    UnreachableButRenewals = 4,
    /// Answer renewals with `InvalidConfig`, as a service address whose servers turned
    /// out to serve two registries does.
    RefuseRenewalsAsSettings = 5,
}

/// A registry wrapper whose failures a test switches on and off; it counts renewals, and
/// can report the registry's clock set off by some ms.
pub struct Switchable {
    pub inner: Arc<dyn Registry>,
    mode: AtomicU8,
    renewals: AtomicU64,
    clock_offset_ms: AtomicI64,
}

impl Switchable {
    pub fn new(inner: Arc<dyn Registry>) -> Arc<Self> {
        Arc::new(Switchable {
            inner,
            mode: AtomicU8::new(Mode::Pass as u8),
            renewals: AtomicU64::new(0),
            clock_offset_ms: AtomicI64::new(0),
        })
    }
    /// Reports the registry's clock `offset_ms` off from now on (0: as it is).
    pub fn set_clock_offset_ms(&self, offset_ms: i64) {
        self.clock_offset_ms.store(offset_ms, Ordering::SeqCst);
    }
    /// Renewal calls so far, whatever they were answered.
    pub fn renewals(&self) -> u64 {
        self.renewals.load(Ordering::SeqCst)
    }
    pub fn set(&self, mode: Mode) {
        self.mode.store(mode as u8, Ordering::SeqCst);
    }
    fn mode(&self) -> u8 {
        self.mode.load(Ordering::SeqCst)
    }
    /// Whether calls other than renewals are refused.
    fn away(&self) -> bool {
        let mode = self.mode();
        mode == Mode::Unreachable as u8 || mode == Mode::UnreachableButRenewals as u8
    }
    fn unreachable() -> LeaseError {
        LeaseError::Unavailable {
            registry: "switchable".into(),
            detail: "switched off by the test".into(),
        }
    }
}

impl Registry for Switchable {
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError> {
        if self.away() {
            return Err(Self::unreachable());
        }
        self.inner.acquire(request)
    }
    fn renew(&self, grant: &Grant, renewal: &Renewal) -> Result<(), LeaseError> {
        self.renewals.fetch_add(1, Ordering::SeqCst);
        while self.mode() == Mode::StallRenewals as u8 {
            std::thread::sleep(Duration::from_millis(5));
        }
        match self.mode() {
            m if m == Mode::Unreachable as u8 => Err(Self::unreachable()),
            m if m == Mode::LoseRenewals as u8 => Err(LeaseError::Lost {
                node_id: grant.node_id,
                why: ferroflake_lease::Loss::Taken,
            }),
            m if m == Mode::RefuseRenewalsAsSettings as u8 => Err(LeaseError::InvalidConfig {
                detail: "the servers serve two registries (switched on by the test)".into(),
            }),
            _ => self.inner.renew(grant, renewal),
        }
    }
    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError> {
        if self.away() {
            return Err(Self::unreachable());
        }
        self.inner.release(grant, high_water_ms)
    }
    fn restored(&self, window: Duration) -> Result<Duration, LeaseError> {
        self.inner.restored(window)
    }
    fn reserve(
        &self,
        node_id: u64,
        holder: &str,
    ) -> Result<ferroflake_lease::Reservation, LeaseError> {
        self.inner.reserve(node_id, holder)
    }
    fn list(&self) -> Result<RegistryView, LeaseError> {
        if self.away() {
            return Err(Self::unreachable());
        }
        self.inner.list()
    }
    fn wall_clock_ms(&self) -> Result<Option<u64>, LeaseError> {
        if self.away() {
            return Err(Self::unreachable());
        }
        let offset = self.clock_offset_ms.load(Ordering::SeqCst);
        Ok(self
            .inner
            .wall_clock_ms()?
            .map(|ms| ms.saturating_add_signed(offset)))
    }
    fn name(&self) -> &str {
        "switchable"
    }
    fn locator(&self) -> String {
        self.inner.locator()
    }
}
