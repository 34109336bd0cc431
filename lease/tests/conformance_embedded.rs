//! The embedded registry passes the registry conformance suite.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use ferroflake_lease::conformance::{run_all, Timing};
use ferroflake_lease::{EmbeddedRegistry, Registry};

#[test]
fn embedded_registry_conforms() {
    let root = tempfile::tempdir().unwrap();
    let namespaces = AtomicU32::new(0);
    let fresh = || -> Arc<dyn Registry> {
        let n = namespaces.fetch_add(1, Ordering::Relaxed);
        Arc::new(EmbeddedRegistry::open(root.path().join(format!("ns{n}"))).unwrap())
    };
    run_all(&fresh, Timing::fast());
}
