//! Bearer tokens over real HTTP, against a server started in this process: 401 without a
//! known token, 403 outside its scopes, each scope's routes, the open probes, a reload of
//! the tokens file (the path SIGHUP takes), and no token ever shown in a log or an answer.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::{captured_logs, tokens_toml, write_whole, Answer, Place, Server};

const ORDERS: &str = "t-orders-0f3a";
const USERS: &str = "t-users-77c1";
const READER: &str = "t-reader-5d20";
const OPS: &str = "t-ops-c9e4";
const MASK_KEY: &str = "1:000102030405060708090a0b0c0d0e0f";

/// Every route, with a key or value it accepts.
const ID_ROUTES: [&str; 6] = [
    "/api/segment/get/{}",
    "/api/snowflake/get/{}",
    "/v1/segment/{}",
    "/v1/snowflake/{}",
    "/v1/masked/segment/{}",
    "/v1/masked/snowflake/{}",
];
const READ_ROUTES: [&str; 6] = [
    "/v1/status",
    "/metrics",
    "/v1/segment/order/status",
    "/v1/decode/1863012341145829376",
    "/decodeSnowflakeId?snowflakeId=1863012341145829376",
    "/v1/constant",
];

fn id_route(template: &str, key: &str) -> String {
    template.replace("{}", key)
}

fn tokens_file(place: &Place) -> PathBuf {
    let path = place.dir.path().join("tokens.toml");
    write_whole(
        &path,
        &tokens_toml(&[
            ("orders-service", ORDERS, &["issue:order"]),
            ("users-service", USERS, &["issue:user-*"]),
            ("dashboards", READER, &["read"]),
            ("ops", OPS, &["read", "admin"]),
        ]),
    );
    path
}

/// A server with tokens, keys `order`, `other`, `user-eu` (preloaded) and `quiet` (not),
/// and a mask key.
fn server(place: &Place) -> Server {
    for key in ["order", "other", "user-eu", "quiet"] {
        place.create(key, 1, 100);
    }
    let mask = place.dir.path().join("mask.key");
    std::fs::write(&mask, MASK_KEY).unwrap();
    let mut config = place.config();
    config.preload = vec!["order".into(), "other".into(), "user-eu".into()];
    config.tokens_file = Some(tokens_file(place));
    config.mask_key_file = Some(mask);
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));
    server
}

fn assert_challenged(answer: &Answer, kind: &str, what: &str) {
    assert_eq!(answer.status, 401, "{what}: {answer:?}");
    let challenge = answer.www_authenticate.as_deref().unwrap_or_default();
    assert!(challenge.starts_with("Bearer "), "{what}: {answer:?}");
    assert_kind(answer, kind, what);
}

/// The refusal's kind: in the JSON error on native routes, the text on Leaf routes
/// (which carry no kind, only the message).
fn assert_kind(answer: &Answer, kind: &str, what: &str) {
    if what.starts_with("/api/") || what.starts_with("/decodeSnowflakeId") {
        assert!(
            answer.content_type.starts_with("text/plain"),
            "{what}: {answer:?}"
        );
        assert!(!answer.body.trim().is_empty(), "{what}: {answer:?}");
    } else {
        assert_eq!(answer.kind(), kind, "{what}: {answer:?}");
    }
}

#[test]
fn no_token_or_an_unknown_one_gets_401_with_a_bearer_challenge() {
    let place = Place::new();
    let server = server(&place);
    let mut routes: Vec<String> = ID_ROUTES.iter().map(|r| id_route(r, "order")).collect();
    routes.extend(READ_ROUTES.iter().map(|r| (*r).to_owned()));
    routes.push("/v1/unmask/0000000000".to_owned());
    for route in &routes {
        assert_challenged(&server.get(route), "NO_TOKEN", route);
        assert_challenged(&server.get_as(route, "wrong-token"), "BAD_TOKEN", route);
        // A token's hash is not the token.
        let hash = tokens_toml(&[("x", OPS, &[])]);
        let hash = hash.split('"').nth(3).unwrap();
        assert_challenged(&server.get_as(route, hash), "BAD_TOKEN", route);
    }
    // Another scheme, or the token in the URL, is no token.
    let basic = common::answer(
        server
            .agent
            .get(&format!("{}/v1/status", server.base))
            .header("Authorization", &format!("Basic {OPS}"))
            .call(),
    );
    assert_challenged(&basic, "NO_TOKEN", "/v1/status");
    let in_url = server.get(&format!("/v1/status?access_token={OPS}"));
    assert_challenged(&in_url, "NO_TOKEN", "/v1/status");
    // Refused before the route ran: no ID was taken.
    assert_eq!(server.get_as("/v1/segment/order", ORDERS).ids(), [1]);
}

#[test]
fn an_issue_scope_reaches_its_keys_and_is_forbidden_the_others() {
    let place = Place::new();
    let server = server(&place);
    let quiet = place.max_id("quiet");
    for template in ID_ROUTES {
        let route = id_route(template, "order");
        let answer = server.get_as(&route, ORDERS);
        assert_eq!(answer.status, 200, "{route}: {answer:?}");
        for key in ["other", "orders", "quiet"] {
            let route = id_route(template, key);
            let answer = server.get_as(&route, ORDERS);
            assert_eq!(answer.status, 403, "{route}: {answer:?}");
            assert!(
                answer
                    .www_authenticate
                    .as_deref()
                    .unwrap_or_default()
                    .contains("insufficient_scope"),
                "{answer:?}"
            );
            assert_kind(&answer, "OUT_OF_SCOPE", &route);
            assert!(answer.body.contains(&format!("issue:{key}")), "{answer:?}");
        }
    }
    // A forbidden key was never opened: its table row is untouched.
    assert_eq!(place.max_id("quiet"), quiet);
    for route in READ_ROUTES.iter().chain(&["/v1/unmask/0000000000"]) {
        assert_eq!(server.get_as(route, ORDERS).status, 403, "{route}");
    }

    // A prefix: `issue:user-*`, also for a key percent-encoded in the path.
    assert_eq!(server.get_as("/v1/segment/user-eu", USERS).status, 200);
    assert_eq!(server.get_as("/v1/segment/user%2Deu", USERS).status, 200);
    assert_eq!(
        server.get_as("/api/snowflake/get/user-us", USERS).status,
        200
    );
    assert_eq!(server.get_as("/v1/segment/user", USERS).status, 403);
    assert_eq!(server.get_as("/v1/segment/order", USERS).status, 403);
}

#[test]
fn read_reaches_status_and_metrics_but_no_ids() {
    let place = Place::new();
    let server = server(&place);
    for route in READ_ROUTES {
        let answer = server.get_as(route, READER);
        assert_eq!(answer.status, 200, "{route}: {answer:?}");
    }
    for template in ID_ROUTES {
        let route = id_route(template, "order");
        let answer = server.get_as(&route, READER);
        assert_eq!(answer.status, 403, "{route}: {answer:?}");
        assert_kind(&answer, "OUT_OF_SCOPE", &route);
    }
    let unmask = server.get_as("/v1/unmask/0000000000", READER);
    assert_eq!(unmask.status, 403, "{unmask:?}");
    // The refusals are counted per route, as any answer is.
    let metrics = server.get_as("/metrics", READER).body;
    assert!(
        metrics
            .lines()
            .any(|l| l.contains("route=\"/v1/segment/{key}\"") && l.contains("status=\"403\"")),
        "{metrics}"
    );
}

#[test]
fn admin_reaches_every_route() {
    let place = Place::new();
    let server = server(&place);
    for template in ID_ROUTES {
        for key in ["order", "quiet", "anything-else"] {
            if key == "anything-else" && template.contains("segment") {
                continue; // not in the table: 404, after the token was accepted
            }
            let route = id_route(template, key);
            let answer = server.get_as(&route, OPS);
            assert_eq!(answer.status, 200, "{route}: {answer:?}");
        }
    }
    for route in READ_ROUTES {
        assert_eq!(server.get_as(route, OPS).status, 200, "{route}");
    }
    let masked = server.get_as("/v1/masked/segment/order", OPS).json()["ids"][0]
        .as_str()
        .unwrap()
        .to_owned();
    let unmasked = server.get_as(&format!("/v1/unmask/{masked}"), OPS);
    assert_eq!(unmasked.status, 200, "{unmasked:?}");
    // Past the token check, the route's own refusals are unchanged.
    assert_eq!(server.get_as("/v1/segment/nope", OPS).status, 404);
    assert_eq!(server.get_as("/v1/segment/order?count=0", OPS).status, 400);
}

#[test]
fn the_admin_routes_need_the_admin_scope() {
    let place = Place::new();
    let server = server(&place);
    let create = "/v1/admin/segment/fresh?start=1&step=10";
    let recover = "/v1/admin/segment/order/recover?above=100000";
    let step = "/v1/admin/segment/order/step?step=7";
    let order = place.max_id("order");
    for token in [ORDERS, USERS, READER] {
        let keys = server.get_as("/v1/admin/keys", token);
        assert_eq!((keys.status, keys.kind().as_str()), (403, "OUT_OF_SCOPE"));
        assert!(keys.body.contains("admin"), "{keys:?}");
        for path in [create, recover, step] {
            let a = server.post_as(path, token);
            assert_eq!(
                (a.status, a.kind().as_str()),
                (403, "OUT_OF_SCOPE"),
                "{path}"
            );
        }
    }
    for path in [create, recover, step] {
        assert_challenged(&server.post(path), "NO_TOKEN", path);
        assert_challenged(&server.post_as(path, "wrong-token"), "BAD_TOKEN", path);
    }
    assert_challenged(&server.get("/v1/admin/keys"), "NO_TOKEN", "/v1/admin/keys");
    // Nothing was created, raised or changed by a refused call.
    assert_eq!(place.max_id("order"), order);
    assert_eq!(place.step("order"), 100);
    assert_eq!(server.get_as("/v1/segment/fresh", OPS).status, 404);

    assert_eq!(server.get_as("/v1/admin/keys", OPS).status, 200);
    assert_eq!(server.post_as(create, OPS).status, 201);
    assert_eq!(server.post_as(recover, OPS).json()["max_id"], "100001");
    assert_eq!(server.post_as(step, OPS).json()["step"], 7);
}

#[test]
fn the_probes_need_no_token() {
    let place = Place::new();
    let server = server(&place);
    for route in ["/healthz", "/readyz"] {
        assert_eq!(server.get(route).status, 200, "{route}");
        assert_eq!(server.get_as(route, "wrong-token").status, 200, "{route}");
        assert_eq!(server.get_as(route, ORDERS).status, 200, "{route}");
    }
    let readyz = server.get("/readyz").body;
    assert!(
        !readyz.contains("tokens.toml") && !readyz.contains("sha256"),
        "{readyz}"
    );
    // An unknown route is still a 404, token or not.
    assert_eq!(server.get("/v2/nothing").status, 404);
}

#[test]
fn a_reload_puts_the_new_tokens_in_force_and_a_bad_file_changes_nothing() {
    let place = Place::new();
    let server = server(&place);
    let path = place.dir.path().join("tokens.toml");
    assert_eq!(server.get_as("/v1/status", READER).status, 200);

    // What SIGHUP calls (the signal itself: cli/tests/serve_auth.rs).
    write_whole(&path, &tokens_toml(&[("rotated", "t-new-9a9a", &["read"])]));
    assert_eq!(server.state().reload_tokens(), Ok(1));
    assert_challenged(
        &server.get_as("/v1/status", READER),
        "BAD_TOKEN",
        "/v1/status",
    );
    assert_eq!(server.get_as("/v1/status", "t-new-9a9a").status, 200);

    for bad in [
        "[[token]]\nname = \"half-writ",
        "",
        "[[token]]\nname = \"x\"\n",
    ] {
        write_whole(&path, bad);
        assert!(server.state().reload_tokens().is_err(), "{bad:?}");
        assert_eq!(server.get_as("/v1/status", "t-new-9a9a").status, 200);
    }
    std::fs::remove_file(&path).unwrap();
    assert!(server.state().reload_tokens().is_err());
    assert_eq!(server.get_as("/v1/status", "t-new-9a9a").status, 200);
}

#[test]
fn a_presented_token_is_never_logged_or_echoed() {
    const SECRET: &str = "sekrit-xyz";
    let logs = captured_logs();
    let place = Place::new();
    let server = server(&place);
    let mut seen = String::new();
    let routes = ID_ROUTES
        .iter()
        .map(|r| id_route(r, "order"))
        .chain(READ_ROUTES.iter().map(|r| (*r).to_owned()))
        .chain(["/v1/unmask/0000000000".to_owned()]);
    for route in routes {
        for token in [SECRET, &format!("{SECRET} {SECRET}")] {
            let answer = server.get_as(&route, token);
            assert_eq!(answer.status, 401, "{route}: {answer:?}");
            seen.push_str(&format!("{answer:?}\n"));
        }
    }
    for route in ["/healthz", "/readyz"] {
        seen.push_str(&format!("{:?}\n", server.get_as(route, SECRET)));
    }
    // A tokens file that holds a token by mistake, read again: the error says where, not
    // what.
    let path = place.dir.path().join("tokens.toml");
    write_whole(
        &path,
        &format!("[[token]]\nname = \"x\"\nsha256 = \"{SECRET}\"\nscopes = [\"read\"]\n"),
    );
    let error = server.state().reload_tokens().unwrap_err();
    assert!(error.contains("tokens.toml"), "{error}");
    seen.push_str(&error);
    write_whole(&path, &format!("[[token]]\nname = {SECRET}\n"));
    seen.push_str(&server.state().reload_tokens().unwrap_err());
    drop(server);

    let logs = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert!(
        logs.contains("tokens_reload_failed"),
        "nothing captured: {logs}"
    );
    seen.push_str(&logs);
    assert!(!seen.contains(SECRET), "{SECRET} shown in: {seen}");
}
