//! Two servers of one kind are two registries, though their addresses read the same: each
//! Redis of a service host's own at `redis://127.0.0.1:6379/0`, say. Their node ids are
//! handed out apart, so a client of a service must tell them apart, and the locator
//! cannot: the id each registry keeps in its records ([`Registry::identity`]) does, and a
//! service answers with both. (The conformance suite checks the id per namespace on each
//! server; here it is one namespace on two servers.)
//!
//! Runs its own `redis-server`s on loopback ports, so it needs no shared server;
//! `#[ignore]`d with the other server tests.

mod common;

use common::redis_pair::Server;
use ferroflake_lease::Registry;

fn connect(url: &str) -> std::sync::Arc<dyn Registry> {
    ferroflake_lease_stores::connect(url).unwrap_or_else(|e| panic!("connect {url}: {e}"))
}

#[test]
#[ignore = "starts its own redis-servers; run by scripts/test-lease-stores.sh"]
fn one_namespace_on_two_redis_servers_is_two_registries() {
    let prefix = common::unique("identity");
    let first = Server::start(&[]);
    let on_first = connect(&first.url(&prefix));
    let id = on_first.identity().expect("the Redis registry keeps an id");
    let again = connect(&first.url(&prefix));
    assert_eq!(
        again.identity().as_deref(),
        Some(id.as_str()),
        "another registry on the same server and namespace is the same registry"
    );

    let beside = Server::start(&[]);
    let on_beside = connect(&beside.url(&prefix));
    let beside_id = on_beside.identity().expect("an id");
    assert_ne!(
        beside_id, id,
        "two servers, one db and prefix: two registries"
    );

    // One address naming another server, as the same loopback address does on another
    // host: here the first server stopped and another started on its port.
    let (port, locator) = (first.port, on_first.locator());
    drop(first);
    let successor = Server::start_on(port, &[]);
    let on_successor = connect(&successor.url(&prefix));
    assert_eq!(
        on_successor.locator(),
        locator,
        "the locator cannot tell the servers apart"
    );
    let successor_id = on_successor.identity().expect("an id");
    assert_ne!(successor_id, id, "the id must tell them apart");
    assert_ne!(successor_id, beside_id);
    // The registry of the first server still says its own, asking no server.
    assert_eq!(on_first.identity().as_deref(), Some(id.as_str()));
}
