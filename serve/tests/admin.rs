//! The admin routes over real HTTP: the open keys, the lease registry's node ids, a key
//! created and recovered through the server's store, each refusal typed JSON. (Who may call them: tests/auth.rs.)

mod common;

use std::time::Duration;

use common::{Place, Server};

fn server(place: &Place) -> Server {
    place.create("orders", 1, 100);
    let mut config = place.config();
    config.snowflake = false;
    config.preload = vec!["orders".into()];
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));
    server
}

fn refused(server: &Server, path: &str, status: u16, kind: &str) -> String {
    let a = server.post(path);
    assert_eq!(
        (a.status, a.kind().as_str()),
        (status, kind),
        "{path}: {a:?}"
    );
    a.json()["error"]["message"].as_str().unwrap().to_owned()
}

#[test]
fn keys_lists_each_open_key_with_its_status() {
    let place = Place::new();
    let server = server(&place);
    server.get("/v1/segment/orders?count=5");
    let keys = server.get("/v1/admin/keys");
    assert_eq!(keys.status, 200, "{keys:?}");
    let body = keys.json();
    assert_eq!(body["keys"].as_array().unwrap().len(), 1, "{body}");
    let mut listed = body["keys"][0].clone();
    let mut status = server.get("/v1/segment/orders/status").json();
    // Everything but what moves on its own between two reads.
    for v in [&mut listed, &mut status] {
        v["runway_secs"] = serde_json::Value::Null;
        v["fetching"] = serde_json::Value::Null;
        v["next"] = serde_json::Value::Null;
        v["next_ready"] = serde_json::Value::Null;
        v["runway_ids"] = serde_json::Value::Null;
        v["counters"] = serde_json::Value::Null;
    }
    assert_eq!(listed, status);
    assert_eq!(listed["current"]["start"], "6");
    assert_eq!(body["opening"], serde_json::json!([]));
    assert!(body["store"].as_str().unwrap().contains("SQLite"), "{body}");
    server.stop();
}

/// The lease registry's node ids, as `ferroflake lease list --format json` shows them: the
/// server's own claim held under its holder name, with the node its status reports.
#[test]
fn leases_lists_the_registrys_node_ids() {
    let place = Place::new();
    let leased = place.start(place.config());
    leased.wait_ready(Duration::from_secs(15));
    let node = leased.get("/v1/status").json()["snowflake"]["node"].clone();
    let leases = leased.get("/v1/admin/leases");
    assert_eq!(leases.status, 200, "{leases:?}");
    let body = leases.json();
    assert_eq!(body["backend"], "embedded", "{body}");
    let nodes = body["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1, "{body}");
    assert_eq!(nodes[0]["node_id"], node, "{body}");
    assert_eq!(nodes[0]["state"], "held", "{body}");
    let holder = nodes[0]["holder"].as_str().unwrap();
    assert!(
        holder.ends_with(&format!(":{}", std::process::id())),
        "{holder}"
    );
    assert!(
        nodes[0]["expires_in_ms"].as_u64().unwrap() <= 1000,
        "{body}"
    );
    leased.stop();

    // Without snowflake mode there is no registry to list.
    let server = server(&place);
    let off = server.get("/v1/admin/leases");
    assert_eq!(
        (off.status, off.kind().as_str()),
        (404, "MODE_OFF"),
        "{off:?}"
    );
    server.stop();
}

#[test]
fn create_adds_a_key_the_server_then_issues_from() {
    let place = Place::new();
    let server = server(&place);
    let created = server.post("/v1/admin/segment/invoices?start=500&step=10");
    assert_eq!(created.status, 201, "{created:?}");
    assert_eq!(
        created.json(),
        serde_json::json!({"key": "invoices", "start": "500", "step": 10})
    );
    assert_eq!(server.get("/v1/segment/invoices?count=2").ids(), [500, 501]);
    assert!(place.max_id("invoices") >= 510);

    let exists = refused(
        &server,
        "/v1/admin/segment/invoices?start=1&step=10",
        409,
        "KEY_EXISTS",
    );
    assert!(exists.contains("invoices"), "{exists}");
    assert_eq!(
        server.get("/v1/segment/invoices").ids(),
        [502],
        "the key goes on"
    );

    // Without them, the segment crate's defaults, as in every face.
    let plain = server.post("/v1/admin/segment/plain");
    assert_eq!(plain.status, 201, "{plain:?}");
    assert_eq!(
        plain.json(),
        serde_json::json!({"key": "plain", "start": "1", "step": 1000})
    );
    assert_eq!(server.get("/v1/segment/plain").ids(), [1]);

    for (path, kind, why) in [
        (
            "/v1/admin/segment/k?start=x&step=10",
            "BAD_PARAMETER",
            "start=\"x\"",
        ),
        (
            "/v1/admin/segment/k?start=1&step=-1",
            "BAD_PARAMETER",
            "step=\"-1\"",
        ),
        (
            "/v1/admin/segment/k?start=99999999999999999999&step=1",
            "BAD_PARAMETER",
            "start=",
        ),
        (
            "/v1/admin/segment/k?start=1&step=0",
            "INVALID_CONFIG",
            "step 0",
        ),
        (
            "/v1/admin/segment/k?start=-5&step=10",
            "INVALID_CONFIG",
            "below 1",
        ),
        (
            "/v1/admin/segment/k?start=0&step=10",
            "INVALID_CONFIG",
            "below 1",
        ),
        (
            "/v1/admin/segment/k?start=1&step=4294967296",
            "INVALID_CONFIG",
            "step",
        ),
        (
            "/v1/admin/segment/a%0Ab?start=1&step=1",
            "INVALID_KEY",
            "control",
        ),
    ] {
        let message = refused(&server, path, 400, kind);
        assert!(message.contains(why), "{path}: {message}");
    }
    let long = "k".repeat(129);
    refused(
        &server,
        &format!("/v1/admin/segment/{long}?start=1&step=1"),
        400,
        "INVALID_KEY",
    );

    // A GET on a POST route: 405 in JSON, saying which method it takes.
    let get = server.get("/v1/admin/segment/invoices?start=1&step=1");
    assert_eq!(
        (get.status, get.kind().as_str()),
        (405, "METHOD_NOT_ALLOWED")
    );
    assert!(get.body.contains("Allow header"), "{get:?}");
    server.stop();
}

#[test]
fn create_below_a_key_s_past_is_a_409_rewound() {
    let place = Place::new();
    let server = server(&place);
    assert_eq!(server.get("/v1/segment/orders").ids(), [1]);
    // The row is lost after use (a restored backup, a hand edit).
    let db = rusqlite::Connection::open(place.store_path()).unwrap();
    db.execute("DELETE FROM leaf_alloc WHERE biz_tag = 'orders'", [])
        .unwrap();
    let message = refused(
        &server,
        "/v1/admin/segment/orders?start=1&step=100",
        409,
        "REWOUND",
    );
    assert!(message.contains("orders"), "{message}");
    // Created again above what it reached, it is accepted.
    let again = server.post("/v1/admin/segment/orders?start=1000&step=100");
    assert_eq!(again.status, 201, "{again:?}");
    server.stop();
}

#[test]
fn recover_raises_a_key_and_never_lowers_it() {
    let place = Place::new();
    let server = server(&place);
    let raised = server.post("/v1/admin/segment/orders/recover?above=5000");
    assert_eq!(raised.status, 200, "{raised:?}");
    let body = raised.json();
    assert_eq!(body["max_id"], "5001");
    assert_eq!(body["step"], 100, "the row's step is kept");
    assert_eq!(body["open_here"], true);
    assert_eq!(place.max_id("orders"), 5001);

    let lower = server.post("/v1/admin/segment/orders/recover?above=10");
    assert_eq!(lower.status, 200, "{lower:?}");
    assert_eq!(
        lower.json()["max_id"],
        "5002",
        "never lowered: the row moves one past itself"
    );

    // A missing row is made, with the step given or 1000.
    let made = server
        .post("/v1/admin/segment/lost/recover?above=7&step=20")
        .json();
    assert_eq!(
        (
            made["max_id"].as_str(),
            made["step"].as_u64(),
            made["open_here"].as_bool()
        ),
        (Some("8"), Some(20), Some(false))
    );
    let made = server
        .post("/v1/admin/segment/lost2/recover?above=7")
        .json();
    assert_eq!(made["step"], 1000);
    assert_eq!(server.get("/v1/segment/lost").ids(), [8]);

    for (path, kind) in [
        ("/v1/admin/segment/orders/recover", "BAD_PARAMETER"),
        ("/v1/admin/segment/orders/recover?above=-1", "BAD_PARAMETER"),
        (
            "/v1/admin/segment/orders/recover?above=1&step=0",
            "INVALID_CONFIG",
        ),
        (
            "/v1/admin/segment/orders/recover?above=9223372036854775807",
            "INVALID_CONFIG",
        ),
    ] {
        refused(&server, path, 400, kind);
    }
    assert_eq!(place.max_id("orders"), 5002, "no refusal moved the row");
    let metrics = server.get("/metrics").body;
    assert!(
        metrics.contains(
            "ferroflake_http_requests_total{route=\"/v1/admin/segment/{key}/recover\",status=\"400\"} 4"
        ),
        "{metrics}"
    );
    server.stop();
}

/// A key this server stopped as REWOUND (its row set back under it) issues again once an
/// operator recovers it above what it issued, with no restart, and never below that.
#[test]
fn recover_lets_a_rewound_key_issue_again_without_a_restart() {
    let place = Place::new();
    let server = server(&place);
    let issued = server.get("/v1/segment/orders?count=150").ids();
    let db = rusqlite::Connection::open(place.store_path()).unwrap();
    db.execute(
        "UPDATE leaf_alloc SET max_id = 1 WHERE biz_tag = 'orders'",
        [],
    )
    .unwrap();
    let mut stopped = None;
    for _ in 0..100 {
        let a = server.get("/v1/segment/orders?count=100");
        if a.status != 200 {
            stopped = Some(a);
            break;
        }
    }
    let stopped = stopped.expect("the key must stop once its row went back");
    assert_eq!(
        (stopped.status, stopped.kind().as_str()),
        (503, "REWOUND"),
        "{stopped:?}"
    );
    let recovered = server.post("/v1/admin/segment/orders/recover?above=100000");
    assert_eq!(recovered.status, 200, "{recovered:?}");
    let again = server.get("/v1/segment/orders?count=5");
    assert_eq!(again.status, 200, "{again:?}");
    let ids = again.ids();
    assert!(
        ids[0] > 100_000 && ids[0] > *issued.last().unwrap(),
        "{ids:?}"
    );
    server.stop();
}

#[test]
fn without_segment_mode_the_admin_routes_say_so() {
    let place = Place::new();
    let mut config = place.config();
    config.segment = false;
    let server = place.start(config);
    let a = server.get("/v1/admin/keys");
    assert_eq!((a.status, a.kind().as_str()), (404, "MODE_OFF"));
    refused(
        &server,
        "/v1/admin/segment/k?start=1&step=1",
        404,
        "MODE_OFF",
    );
    refused(
        &server,
        "/v1/admin/segment/k/recover?above=1",
        404,
        "MODE_OFF",
    );
    server.stop();
}

#[test]
fn step_sets_the_stored_step_and_leaves_max_id_alone() {
    let place = Place::new();
    let server = server(&place);
    place.create("cold", 1, 10);
    let set = server.post("/v1/admin/segment/cold/step?step=500");
    assert_eq!(set.status, 200, "{set:?}");
    assert_eq!(
        set.json(),
        serde_json::json!({"key": "cold", "max_id": "1", "step": 500, "open_here": false})
    );
    assert_eq!(place.max_id("cold"), 1, "no range moved");
    // The key's first fetch takes the stored step.
    assert_eq!(server.get("/v1/segment/cold").ids(), [1]);
    assert_eq!(
        server.get("/v1/segment/cold/status").json()["current"]["end"],
        "501"
    );

    let open = server
        .post("/v1/admin/segment/orders/step?step=2000")
        .json();
    assert_eq!(
        (open["step"].as_u64(), open["open_here"].as_bool()),
        (Some(2000), Some(true))
    );

    let unknown = server.post("/v1/admin/segment/nope/step?step=5");
    assert_eq!(
        (unknown.status, unknown.kind().as_str()),
        (404, "UNKNOWN_KEY")
    );
    for (path, kind) in [
        ("/v1/admin/segment/cold/step", "BAD_PARAMETER"),
        ("/v1/admin/segment/cold/step?step=x", "BAD_PARAMETER"),
        ("/v1/admin/segment/cold/step?step=0", "INVALID_CONFIG"),
        (
            "/v1/admin/segment/cold/step?step=2147483648",
            "INVALID_CONFIG",
        ),
    ] {
        refused(&server, path, 400, kind);
    }
    assert_eq!(server.get("/v1/segment/cold/status").json()["key"], "cold");
    let get = server.get("/v1/admin/segment/cold/step?step=5");
    assert_eq!(get.status, 405);
    server.stop();
}
