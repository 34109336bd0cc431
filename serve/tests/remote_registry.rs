//! The lease routes over real HTTP, through `ferroflake+http://` ([`RemoteRegistry`]): a
//! token for every key is needed and a refused one says so; the owner token of a grant is
//! in no log line, metric or refusal; a renewal goes on through a second server of the
//! same registry with the grant's epoch unchanged; a claim that may have arrived is made
//! afresh on the next server; a server without `--lease`, and servers of two registries,
//! are refused as settings.

mod common;

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use common::{captured_logs, closed, read_message, silent, Place, Server};
use ferroflake_lease::{Grant, LeaseError, LeaseRequest, Loss, NodeState, Registry, Renewal};
use ferroflake_remote::RemoteRegistry;

/// A service over `place`'s registry (segment mode only: it holds no node id itself).
fn service(place: &Place) -> Server {
    let mut config = place.config();
    config.snowflake = false;
    place.start(config)
}

/// A service over `place`, listening at `addr` (a port another service had): a server
/// that comes up after a client's first call.
fn service_at(place: &Place, addr: SocketAddr) -> Server {
    let mut config = place.config();
    config.snowflake = false;
    config.listen = addr;
    place.start(config)
}

/// A registry over `servers`, each request bounded by 300 ms, with the token in
/// `token_file` if given.
fn registry(servers: &[SocketAddr], token_file: Option<&Path>) -> RemoteRegistry {
    registry_waiting(servers, token_file, 300)
}

/// As [`registry`], each request bounded by `timeout_ms`: for calls that write the
/// registry's records on a loaded machine, where no second server is asked.
fn registry_waiting(
    servers: &[SocketAddr],
    token_file: Option<&Path>,
    timeout_ms: u64,
) -> RemoteRegistry {
    let list: Vec<String> = servers.iter().map(ToString::to_string).collect();
    let token = token_file.map_or_else(String::new, |path| {
        format!("&token_file={}", path.display())
    });
    RemoteRegistry::open(&format!(
        "ferroflake+http://{}/?timeout_ms={timeout_ms}{token}",
        list.join(",")
    ))
    .unwrap()
}

fn request(node_count: u64) -> LeaseRequest {
    LeaseRequest {
        node_count,
        ttl: Duration::from_secs(5),
        quarantine: Duration::from_secs(1),
        holder: "remote registry test".into(),
        max_ttl: Duration::from_secs(5),
        prefer_node: None,
    }
}

fn token_file(place: &Place, name: &str, token: &str) -> std::path::PathBuf {
    let path = place.dir.path().join(name);
    common::write_whole(&path, token);
    path
}

#[test]
fn a_token_for_every_key_is_needed_and_a_refused_one_says_so() {
    let place = Place::new();
    let tokens = common::tokens_toml(&[
        ("all", "t-all-7f7f", &["issue:*"]),
        ("orders", "t-orders-7f7f", &["issue:orders", "issue:user-*"]),
        ("ops", "t-ops-7f7f", &["read"]),
        ("root", "t-admin-7f7f", &["admin"]),
    ]);
    let mut config = place.config();
    config.snowflake = false;
    let path = place.dir.path().join("tokens.toml");
    common::write_whole(&path, &tokens);
    config.tokens_file = Some(path);
    let server = place.start(config);

    let all = token_file(&place, "all.token", "t-all-7f7f");
    let grant = registry(&[server.addr], Some(&all))
        .acquire(&request(4))
        .unwrap();
    registry(&[server.addr], Some(&all))
        .release(&grant, 0)
        .unwrap();

    let wrong = token_file(&place, "wrong.token", "t-wrong-7f7f");
    let orders = token_file(&place, "orders.token", "t-orders-7f7f");
    let ops = token_file(&place, "ops.token", "t-ops-7f7f");
    for (file, kind) in [
        (Some(&wrong), "BAD_TOKEN"),
        (Some(&orders), "OUT_OF_SCOPE"),
        (Some(&ops), "OUT_OF_SCOPE"),
    ] {
        let remote = registry(&[server.addr], file.map(|f| f.as_path()));
        for refused in [
            remote.acquire(&request(4)).unwrap_err(),
            remote
                .renew(&grant, &Renewal::new(Duration::from_secs(5), 0))
                .unwrap_err(),
            remote.list().unwrap_err(),
            remote.wall_clock_ms().unwrap_err(),
        ] {
            let LeaseError::InvalidConfig { detail } = &refused else {
                panic!("{kind}: {refused:?}");
            };
            assert!(
                detail.contains("refused this client's token") && detail.contains(kind),
                "{detail}"
            );
            assert!(!detail.contains("7f7f"), "a token shown: {detail}");
        }
    }
    // No token at all (the variable is not set in the tests).
    if std::env::var_os("FERROFLAKE_TOKEN").is_none() {
        let refused = registry(&[server.addr], None)
            .acquire(&request(4))
            .unwrap_err();
        assert!(
            matches!(&refused, LeaseError::InvalidConfig { detail } if detail.contains("NO_TOKEN")),
            "{refused:?}"
        );
    }
    let view = registry(&[server.addr], Some(&all)).list().unwrap();
    assert_eq!(view.nodes.len(), 1, "no refused claim took an id: {view:?}");
    // Saying the records were lost holds every claim off for a floor: an operator's word.
    let refused = registry(&[server.addr], Some(&all))
        .restored(Duration::from_secs(600))
        .unwrap_err();
    assert!(
        matches!(&refused, LeaseError::InvalidConfig { detail } if detail.contains("OUT_OF_SCOPE")),
        "{refused:?}"
    );
    // So is reserving an id for another generator, and lifting a reservation; and a
    // reservation's token lifts nothing through a release or a renewal.
    let issuer = registry_waiting(&[server.addr], Some(&all), 5_000);
    for refused in [
        issuer.reserve(3, "old fleet").map(drop).unwrap_err(),
        issuer.unreserve(3, 0).unwrap_err(),
    ] {
        assert!(
            matches!(&refused, LeaseError::InvalidConfig { detail } if detail.contains("OUT_OF_SCOPE")),
            "{refused:?}"
        );
    }
    let admin = token_file(&place, "admin.token", "t-admin-7f7f");
    let admin = registry_waiting(&[server.addr], Some(&admin), 5_000);
    assert_eq!(
        admin.reserve(3, "old fleet").unwrap(),
        ferroflake_lease::Reservation::Made
    );
    let posing = Grant {
        node_id: 3,
        token: ferroflake_lease::protocol::RESERVED_TOKEN.into(),
        epoch: 0,
        previous_high_water_ms: 0,
        floor_wait: Duration::ZERO,
    };
    for refused in [
        issuer.release(&posing, 0).unwrap_err(),
        issuer
            .renew(&posing, &Renewal::new(Duration::from_secs(5), 0))
            .unwrap_err(),
    ] {
        assert!(
            matches!(&refused, LeaseError::InvalidConfig { detail } if detail.contains("grant.token")),
            "{refused:?}"
        );
    }
    let reserved = admin.list().unwrap();
    assert_eq!(
        reserved.node(3).map(|n| n.state),
        Some(ferroflake_lease::NodeState::Reserved)
    );
    // A mark far ahead of the service's clock would keep the id's holders from starting.
    assert!(matches!(
        admin.unreserve(3, u64::MAX),
        Err(LeaseError::InvalidConfig { .. })
    ));
    admin.unreserve(3, 0).unwrap();
    let fresh = registry(&[server.addr], Some(&all))
        .acquire(&request(4))
        .unwrap();
    // The 10-minute floor asked for would show in the next claim's wait.
    assert!(
        fresh.floor_wait < Duration::from_secs(60),
        "{:?}",
        fresh.floor_wait
    );
    server.stop();
}

/// POSTs `body` as JSON to `path`.
fn post_json(server: &Server, path: &str, body: &serde_json::Value) -> common::Answer {
    common::answer(
        server
            .agent
            .post(&format!("{}{path}", server.base))
            .header("content-type", "application/json")
            .send(body.to_string().as_bytes()),
    )
}

#[test]
fn the_owner_token_is_in_no_log_line_metric_or_refusal() {
    let logs = captured_logs();
    let place = Place::new();
    let server = service(&place);
    let remote = registry(&[server.addr], None);
    let grant = remote.acquire(&request(2)).unwrap();
    let token = grant.token.clone();
    assert!(token.len() >= 32, "a real owner token: {}", token.len());
    remote
        .renew(
            &grant,
            &Renewal::new(Duration::from_secs(5), 1_700_000_000_000),
        )
        .unwrap();
    remote.release(&grant, 1_700_000_000_000).unwrap();

    let grant_json = |token: &str| {
        serde_json::json!({
            "node_id": grant.node_id,
            "token": token,
            "epoch": grant.epoch,
            "previous_high_water_ms": grant.previous_high_water_ms,
            "floor_wait_ms": 0,
        })
    };
    let mut seen = String::new();
    // Refusals whose requests carry the token: a lost claim, a grant with a field of the
    // wrong type, a field no route reads, the token where a number goes, a body that is
    // not JSON around it.
    let mut missing_epoch = grant_json(&token);
    missing_epoch["epoch"] = serde_json::Value::from("x");
    for (path, body, status, kind) in [
        (
            "/v1/store/lease/renew",
            serde_json::json!({"grant": grant_json(&token), "ttl_ms": 5000, "high_water_ms": 0}),
            409,
            "LOST",
        ),
        (
            "/v1/store/lease/renew",
            serde_json::json!({"grant": missing_epoch, "ttl_ms": 5000, "high_water_ms": 0}),
            400,
            "BAD_PARAMETER",
        ),
        (
            "/v1/store/lease/release",
            serde_json::json!({"grant": grant_json(&token), "high_water_ms": 0, "token": token}),
            400,
            "UNKNOWN_PARAMETER",
        ),
        (
            "/v1/store/lease/release",
            serde_json::json!({"grant": grant_json(&token), "high_water_ms": token}),
            400,
            "BAD_PARAMETER",
        ),
    ] {
        let a = post_json(&server, path, &body);
        assert_eq!((a.status, a.kind().as_str()), (status, kind), "{a:?}");
        seen.push_str(&format!("{a:?}\n"));
    }
    let lost = post_json(
        &server,
        "/v1/store/lease/renew",
        &serde_json::json!({"grant": grant_json(&token), "ttl_ms": 5000, "high_water_ms": 0}),
    );
    assert_eq!(lost.json()["error"]["why"], "RELEASED", "{lost:?}");
    let not_json = common::answer(
        server
            .agent
            .post(&format!("{}/v1/store/lease/renew", server.base))
            .send(format!("{{\"grant\": {token}").as_bytes()),
    );
    assert_eq!(not_json.status, 400, "{not_json:?}");
    seen.push_str(&format!("{not_json:?}\n"));
    // The client's own error for the lost claim.
    let refused = remote
        .renew(&grant, &Renewal::new(Duration::from_secs(5), 0))
        .unwrap_err();
    assert!(
        matches!(
            refused,
            LeaseError::Lost {
                why: Loss::Released,
                ..
            }
        ),
        "{refused:?}"
    );
    seen.push_str(&format!("{refused:?} {refused}\n"));
    remote.restored(Duration::from_millis(1)).unwrap();
    seen.push_str(&server.get("/metrics").body);
    seen.push_str(&server.get("/v1/store/lease/list").body);
    server.stop();
    let logs = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert!(logs.contains("lease_restored"), "nothing captured: {logs}");
    seen.push_str(&logs);
    assert!(
        seen.contains("ferroflake_http_requests_total"),
        "no metrics seen"
    );
    assert!(!seen.contains(&token), "the owner token shown in: {seen}");
}

#[test]
fn a_renewal_goes_on_through_a_second_server_with_the_grants_epoch() {
    let place = Place::new();
    let a = service(&place);
    let b = service(&place);
    let remote = registry(&[a.addr, b.addr], None);
    let grant: Grant = remote.acquire(&request(4)).unwrap();
    let mark = 1_700_000_000_000;
    remote
        .renew(&grant, &Renewal::new(Duration::from_secs(5), mark))
        .unwrap();
    let before = remote.list().unwrap();
    let held = before.node(grant.node_id).unwrap().clone();
    assert_eq!((held.state, held.epoch), (NodeState::Held, grant.epoch));
    a.stop();
    // Through the second server: the same claim, the same epoch, the mark raised.
    remote
        .renew(&grant, &Renewal::new(Duration::from_secs(5), mark + 1000))
        .unwrap();
    let after = remote.list().unwrap();
    let node = after.node(grant.node_id).unwrap();
    assert_eq!(node.state, NodeState::Held, "{node:?}");
    assert_eq!(node.epoch, grant.epoch, "the fence did not move: {node:?}");
    assert_eq!(node.high_water_ms, mark + 1000, "{node:?}");
    assert_eq!(node.since_ms, held.since_ms, "the same claim: {node:?}");
    assert!(node.last_renewal_ms >= held.last_renewal_ms, "{node:?}");
    assert_eq!(after.nodes.len(), 1, "no claim was made again: {after:?}");
    remote.release(&grant, mark + 1000).unwrap();
    assert_eq!(
        remote.list().unwrap().node(grant.node_id).unwrap().state,
        NodeState::Released
    );
    b.stop();
    let refused = remote
        .renew(&grant, &Renewal::new(Duration::from_secs(5), mark))
        .unwrap_err();
    assert!(
        matches!(refused, LeaseError::Unavailable { .. }),
        "{refused:?}"
    );
}

/// A server that passes each request on to `target` and keeps the answer to itself: a
/// request it got is applied, and its client hears nothing. Each answer it kept is sent
/// on the returned channel.
fn applies_and_keeps_quiet(target: SocketAddr) -> (SocketAddr, Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (kept, answers) = channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for mut client in listener.incoming().flatten() {
            let request = read_message(&mut client).unwrap();
            let mut server = TcpStream::connect(target).unwrap();
            server.write_all(&request).unwrap();
            let answer = read_message(&mut server).unwrap();
            held.push(client);
            if kept
                .send(String::from_utf8_lossy(&answer).into_owned())
                .is_err()
            {
                break;
            }
        }
    });
    (addr, answers)
}

#[test]
fn a_claim_that_may_have_arrived_is_made_afresh_on_the_next_server() {
    let place = Place::new();
    let server = service(&place);
    let direct = registry(&[server.addr], None);

    // Applied by the first server, its answer never heard: the next server gets a claim of
    // its own, and the first claim holds its id, renewed by nobody, until its TTL.
    let (late, answers) = applies_and_keeps_quiet(server.addr);
    let grant = registry(&[late, server.addr], None)
        .acquire(&request(4))
        .unwrap();
    let kept = answers.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(kept.starts_with("HTTP/1.1 200"), "{kept}");
    let view = direct.list().unwrap();
    let held: Vec<u64> = view
        .nodes
        .iter()
        .filter(|n| n.state == NodeState::Held)
        .map(|n| n.node_id)
        .collect();
    assert_eq!(
        held.len(),
        2,
        "the claim and the one applied late: {view:?}"
    );
    assert!(held.contains(&grant.node_id), "{view:?}");

    // Refused at connect, it was never sent: the next server takes it, the only claim.
    let (quiet, asked) = silent();
    let other = registry(&[closed(), server.addr], None)
        .acquire(&request(4))
        .unwrap();
    // A renewal is resent past the server that does not answer.
    registry(&[quiet, server.addr], None)
        .renew(&other, &Renewal::new(Duration::from_secs(5), 0))
        .unwrap();
    assert!(
        !asked.lock().unwrap().is_empty(),
        "the quiet server was asked"
    );
    let view = direct.list().unwrap();
    assert_eq!(view.nodes.len(), 3, "{view:?}");
    server.stop();
}

#[test]
fn a_server_without_a_registry_and_servers_of_two_are_refused_as_settings() {
    let place = Place::new();
    let mut config = place.config();
    config.snowflake = false;
    config.lease = None;
    let off = place.start(config);
    let refused = registry(&[off.addr], None)
        .acquire(&request(4))
        .unwrap_err();
    assert!(
        matches!(&refused, LeaseError::InvalidConfig { detail } if detail.contains("no lease registry")),
        "{refused:?}"
    );
    assert_eq!(off.get("/v1/store/lease/clock").kind(), "MODE_OFF");
    off.stop();

    let (first, second) = (Place::new(), Place::new());
    let a = service(&first);
    let b_addr = closed();
    let remote = registry(&[a.addr, b_addr], None);
    let grant = remote.acquire(&request(4)).unwrap();
    // The other server comes up only after the first call asked it.
    let b = service_at(&second, b_addr);
    a.stop();
    // The other registry has no record of the claim: the holder stops (a refusal names
    // no registry, and a lost claim is the safe reading)...
    let refused = remote
        .renew(&grant, &Renewal::new(Duration::from_secs(5), 0))
        .unwrap_err();
    assert!(matches!(refused, LeaseError::Lost { .. }), "{refused:?}");
    // ...and claims nothing there: its own node 0 would repeat the first registry's.
    let refused = remote.acquire(&request(4)).unwrap_err();
    assert_two_registries(&refused);
    assert!(remote.list().is_err(), "nor reads it");
    b.stop();

    // Both up: the first call asks the others too, and every call is refused after.
    let (first, second) = (Place::new(), Place::new());
    let a = service(&first);
    let b = service(&second);
    for remote in [
        registry(&[a.addr, b.addr], None),
        registry(&[b.addr, a.addr], None),
    ] {
        assert!(remote.list().is_err());
        let refused = remote.acquire(&request(4)).unwrap_err();
        assert_two_registries(&refused);
    }
    a.stop();
    b.stop();

    // Refused before it claims: the first registry holds nothing for it.
    let (first, second) = (Place::new(), Place::new());
    let a = service(&first);
    let b = service(&second);
    assert!(registry(&[a.addr, b.addr], None)
        .acquire(&request(4))
        .is_err());
    let held = registry(&[a.addr], None).list().unwrap();
    assert!(
        held.nodes.iter().all(|n| n.state != NodeState::Held),
        "{held:?}"
    );
    a.stop();
    b.stop();

    // One path, two registries (two hosts each with their own directory there; here the
    // first's directory moved away and another made in its place): told apart by the id
    // each keeps, not by the path.
    let place = Place::new();
    let a = service(&place);
    let remote = registry(&[a.addr], None);
    remote.list().unwrap();
    let leases = place.config().lease.unwrap();
    std::fs::rename(&leases, place.dir.path().join("moved-away")).unwrap();
    let b_addr = closed();
    let remote = registry(&[a.addr, b_addr], None);
    remote.list().unwrap();
    let b = service_at(&place, b_addr);
    a.stop();
    let refused = remote.list().unwrap_err();
    assert_two_registries(&refused);
    b.stop();
}

/// The address reader every face uses opens a service's registry, and a leased generator
/// issues under a node id claimed through it, released through it at the end (with the
/// store backends, which carry the `remote` feature).
#[cfg(feature = "stores")]
#[test]
fn a_leased_generator_issues_under_a_node_id_held_through_the_service() {
    use ferroflake::{Layout, SystemClock};
    use ferroflake_lease::{LeaseConfig, LeasedGenerator};
    use ferroflake_lease_stores::RegistryAddress;

    let place = Place::new();
    let server = service(&place);
    let address = format!("ferroflake+http://{}/", server.addr);
    let parsed = RegistryAddress::parse(&address).unwrap();
    assert_eq!(parsed, RegistryAddress::Service(address.clone()));
    let mut config = LeaseConfig::with_ttl(Duration::from_secs(1));
    config.max_ttl = Duration::from_secs(1);
    // The new registry's floor (TTL + quarantine) is waited out before the first ID.
    let generator = LeasedGenerator::start(
        Layout::twitter(),
        SystemClock,
        parsed.open().unwrap(),
        config,
    )
    .unwrap();
    let ids: Vec<u64> = (0..1000).map(|_| generator.next_id().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let node = generator.node();
    let direct = registry(&[server.addr], None);
    let held = direct.list().unwrap();
    assert_eq!(held.node(node).unwrap().state, NodeState::Held, "{held:?}");
    generator.shutdown().unwrap();
    let released = direct.list().unwrap();
    assert_eq!(released.node(node).unwrap().state, NodeState::Released);
    server.stop();
}

/// A client that began while one server was down, or whose token one server refuses,
/// would claim from its own first server's registry while clients that began on the
/// other claim from that one: two holders of one node id. The servers not heard from are
/// asked again in the background, and a token refused by one is refused by the client.
#[test]
fn servers_heard_from_late_or_refusing_the_token_are_checked_all_the_same() {
    let (first, second) = (Place::new(), Place::new());
    let a = service(&first);
    let b_addr = closed();
    let remote = registry(&[a.addr, b_addr], None);
    let grant = remote.acquire(&request(4)).unwrap();
    let b = service_at(&second, b_addr);
    // Its renewals go to its first server, which answers: the check comes from asking.
    let refused = renewed_until_refused(&remote, &grant, "never asked the late server");
    assert_two_registries(&refused);
    a.stop();
    b.stop();

    let (first, second) = (Place::new(), Place::new());
    let open = service(&first);
    let mut config = second.config();
    config.snowflake = false;
    let path = second.dir.path().join("tokens.toml");
    common::write_whole(
        &path,
        &common::tokens_toml(&[("other", "t-other-5e5e", &["issue:*"])]),
    );
    config.tokens_file = Some(path);
    let guarded = second.start(config);
    let token = token_file(&first, "mine.token", "t-mine-5e5e");
    let refused = registry(&[open.addr, guarded.addr], Some(&token))
        .acquire(&request(4))
        .unwrap_err();
    assert!(
        matches!(&refused, LeaseError::InvalidConfig { detail } if detail.contains("refuses this client's token")),
        "{refused:?}"
    );
    open.stop();
    guarded.stop();
}

fn assert_two_registries(refused: &LeaseError) {
    assert!(
        matches!(refused, LeaseError::InvalidConfig { detail } if detail.contains("two lease registries")),
        "{refused:?}"
    );
}

/// A server slower than the first call's short wait for the others still answers calls:
/// it is asked again, waiting as long as a call, and the second registry behind it found.
#[test]
fn a_server_slower_than_the_first_asking_is_asked_again_with_a_calls_wait() {
    let (first, second) = (Place::new(), Place::new());
    let a = service(&first);
    let b = service(&second);
    let slow = common::slow_relay(b.addr, Duration::from_millis(800));
    let remote = RemoteRegistry::open(&format!(
        "ferroflake+http://{},{slow}/?timeout_ms=3000",
        a.addr
    ))
    .unwrap();
    let grant = remote.acquire(&request(4)).unwrap();
    let refused = renewed_until_refused(&remote, &grant, "never asked the slow server");
    assert_two_registries(&refused);
    a.stop();
    b.stop();
}

/// Renews `grant` through `remote` until a renewal is refused (within 15 s, else panics
/// with `never`): the client's asking of its other servers runs beside the renewals.
fn renewed_until_refused(remote: &RemoteRegistry, grant: &Grant, never: &str) -> LeaseError {
    let renewal = Renewal::new(Duration::from_secs(5), 0);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match remote.renew(grant, &renewal) {
            Err(e) => return e,
            Ok(()) => assert!(Instant::now() < deadline, "{never}"),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A registry with hundreds of records (a Leaf fleet's worker ids reserved, with long
/// holder names) lists through the service, and a client still claims the id left: the
/// listing's answer is read whole, not cut at the size of the other answers.
#[test]
fn a_registry_of_many_records_lists_and_claims_through_the_service() {
    let place = Place::new();
    let server = service(&place);
    let remote = registry_waiting(&[server.addr], None, 5_000);
    let holder = format!("leaf {}", "x".repeat(250));
    for id in 0..300 {
        remote.reserve(id, &holder).unwrap();
    }
    let view = remote.list().unwrap();
    assert_eq!(view.nodes.len(), 300);
    assert!(view.nodes.iter().all(|n| n.state == NodeState::Reserved));
    let grant = remote.acquire(&request(301)).unwrap();
    assert_eq!(grant.node_id, 300);
    remote.release(&grant, 0).unwrap();
    server.stop();
}
