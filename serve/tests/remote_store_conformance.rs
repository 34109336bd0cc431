//! The service's segment store, through `ferroflake+http://` ([`RemoteStore`]), shows the
//! behaviour every store must: the store conformance suite, each check against a service
//! of its own over a fresh table.

mod common;

use std::sync::{Arc, Mutex};

use common::{Place, Server};
use ferroflake_remote::RemoteStore;
use ferroflake_segment::SegmentStore;

/// A factory of stores, each the store routes of a new service over a new SQLite file;
/// the services live as long as the factory.
struct Services(Mutex<Vec<(Server, Place)>>);

impl Services {
    fn fresh(&self) -> Arc<dyn SegmentStore> {
        let place = Place::new();
        let mut config = place.config();
        config.snowflake = false;
        let server = place.start(config);
        let store = RemoteStore::open(&format!("ferroflake+http://{}/", server.addr)).unwrap();
        self.0.lock().unwrap().push((server, place));
        Arc::new(store)
    }
}

macro_rules! checks {
    ($($check:ident),* $(,)?) => {$(
        #[test]
        fn $check() {
            let services = Services(Mutex::new(Vec::new()));
            ferroflake_segment::conformance::$check(&|| services.fresh());
            for (server, _place) in services.0.into_inner().unwrap() {
                server.stop();
            }
        }
    )*};
}

checks!(
    leaf_ranges,
    create_refuses_bad_input,
    unknown_keys,
    exhaustion_never_wraps,
    give_back_is_conditional,
    concurrent_allocations_are_disjoint,
    recover_creates_and_never_lowers,
    set_step_changes_the_step_alone,
);
