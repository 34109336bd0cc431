//! A server registry that connects at its first call rather than when it is opened, for a
//! holder with a state file: a process restarted while the server is down must still get
//! as far as its state file, to resume its claim there.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroflake_lease::{
    Grant, LeaseError, LeaseRequest, Registry, RegistryView, Renewal, Reservation,
};

/// A registry at a store address, connected by the first call that finds it reachable.
pub(crate) struct Deferred {
    /// The address as given (it may carry a password: never shown).
    address: String,
    /// The backend's name, known from the scheme without connecting.
    name: &'static str,
    /// What [`Registry::locator`] says, known from the address as the connected registry
    /// will say it.
    locator: String,
    connected: Mutex<Option<Arc<dyn Registry>>>,
}

impl Deferred {
    pub(crate) fn new(address: &str, name: &'static str, locator: String) -> Deferred {
        Deferred {
            address: address.to_owned(),
            name,
            locator,
            connected: Mutex::new(None),
        }
    }

    /// The connected registry, connecting now if it is not yet.
    fn registry(&self) -> Result<Arc<dyn Registry>, LeaseError> {
        let mut connected = self.connected.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(registry) = &*connected {
            return Ok(Arc::clone(registry));
        }
        let registry = crate::connect(&self.address)?;
        *connected = Some(Arc::clone(&registry));
        Ok(registry)
    }
}

impl Registry for Deferred {
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError> {
        self.registry()?.acquire(request)
    }
    fn renew(&self, grant: &Grant, renewal: &Renewal) -> Result<(), LeaseError> {
        self.registry()?.renew(grant, renewal)
    }
    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError> {
        self.registry()?.release(grant, high_water_ms)
    }
    fn restored(&self, window: Duration) -> Result<Duration, LeaseError> {
        self.registry()?.restored(window)
    }
    fn reserve(&self, node_id: u64, holder: &str) -> Result<Reservation, LeaseError> {
        self.registry()?.reserve(node_id, holder)
    }
    fn unreserve(&self, node_id: u64, high_water_ms: u64) -> Result<(), LeaseError> {
        self.registry()?.unreserve(node_id, high_water_ms)
    }
    fn list(&self) -> Result<RegistryView, LeaseError> {
        self.registry()?.list()
    }
    fn wall_clock_ms(&self) -> Result<Option<u64>, LeaseError> {
        self.registry()?.wall_clock_ms()
    }
    fn name(&self) -> &str {
        self.name
    }
    fn locator(&self) -> String {
        self.locator.clone()
    }
    fn identity(&self) -> Option<String> {
        let connected = self.connected.lock().unwrap_or_else(|p| p.into_inner());
        connected.as_ref()?.identity()
    }
}
