//! Every route, over real HTTP, against a server started in this process: the
//! Leaf-compatible ones as Leaf documents them, the native API, operations, bad input.

mod common;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use common::{raw, Place, Server};
use ferroflake::Layout;

/// One server for the route checks: keys `orders` (from 1, step 100) and `users` preloaded,
/// `js` limited to 2^53 - 1, a batch limit of 1000.
fn server(place: &Place) -> Server {
    place.create("orders", 1, 100);
    place.create("users", 1000, 10);
    place.create("js", 9_007_199_254_740_900, 10);
    let mut config = place.config();
    config.preload = vec!["orders".into(), "users".into()];
    config.js_keys = vec!["js".into()];
    config.snowflake_keys = vec!["known".into()];
    config.max_batch = 1000;
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));
    server
}

#[test]
fn leaf_routes_answer_the_id_as_decimal_text_for_any_method_but_head() {
    let place = Place::new();
    let server = server(&place);

    // Leaf: 200, the ID as plain decimal text, no JSON.
    let first = server.get("/api/segment/get/orders");
    assert_eq!(first.status, 200);
    assert!(first.content_type.starts_with("text/plain"), "{first:?}");
    assert_eq!(first.body, "1");
    // Leaf's controller maps the path without a method: POST, PUT, DELETE work as GET.
    assert_eq!(server.post("/api/segment/get/orders").body, "2");
    let put = common::answer(
        server
            .agent
            .put(&format!("{}/api/segment/get/orders", server.base))
            .send_empty(),
    );
    assert_eq!((put.status, put.body.as_str()), (200, "3"));
    let delete = common::answer(
        server
            .agent
            .delete(&format!("{}/api/segment/get/orders", server.base))
            .call(),
    );
    assert_eq!((delete.status, delete.body.as_str()), (200, "4"));

    let mut last = 0u64;
    for _ in 0..300 {
        let id: u64 = server
            .get("/api/snowflake/get/anything")
            .body
            .parse()
            .unwrap();
        assert!(id > last, "snowflake IDs increase");
        last = id;
    }
    let parts = Layout::twitter().decode(last).unwrap();
    let node = server.get("/readyz").json()["lease"]["node"]
        .as_u64()
        .unwrap();
    assert_eq!(parts.node, node);
    let posted = server.post("/api/snowflake/get/x");
    assert_eq!(posted.status, 200);
    assert!(posted.body.parse::<u64>().unwrap() > last);
    assert!(posted.content_type.starts_with("text/plain"));

    // HEAD and CONNECT would use IDs up unseen: 405 on every route that issues, and
    // nothing is used.
    for path in [
        "/api/segment/get/orders",
        "/api/snowflake/get/x",
        "/v1/segment/orders",
        "/v1/snowflake/known",
    ] {
        let head = common::answer(server.agent.head(&format!("{}{path}", server.base)).call());
        assert_eq!(head.status, 405, "HEAD {path}: {head:?}");
    }
    for path in ["/api/segment/get/orders", "/api/snowflake/get/x"] {
        let (status, _) = raw(server.addr, format!("CONNECT {path} HTTP/1.1").as_bytes());
        assert_eq!(status, 405, "CONNECT {path}");
    }
    assert_eq!(server.get("/api/segment/get/orders").body, "5");

    // Where ferroflake differs from Leaf (which answers 500): 404 for an unknown key.
    let unknown = server.get("/api/segment/get/nope");
    assert_eq!(unknown.status, 404);
    assert!(unknown.body.contains("nope"), "{unknown:?}");
    assert!(unknown.content_type.starts_with("text/plain"));
    // A key with no segment: the path does not match Leaf's route at all.
    assert_eq!(server.get("/api/segment/get/").status, 404);
    server.stop();
}

#[test]
fn native_batches_are_json_with_ids_as_strings_and_bounded_counts() {
    let place = Place::new();
    let server = server(&place);

    let one = server.get("/v1/segment/users");
    assert_eq!(one.status, 200);
    assert!(one.content_type.starts_with("application/json"));
    assert_eq!(one.json()["mode"], "segment");
    assert_eq!(one.json()["key"], "users");
    assert_eq!(one.ids(), vec![1000]);
    // A batch spans several segments of 10.
    let batch = server.get("/v1/segment/users?count=35").ids();
    assert_eq!(batch, (1001..1036).collect::<Vec<_>>());

    let snow = server.get("/v1/snowflake/known?count=1000");
    assert_eq!(snow.status, 200);
    let json = snow.json();
    assert_eq!(json["mode"], "snowflake");
    assert_eq!(json["layout"], "twitter");
    let ids = snow.ids();
    assert_eq!(ids.len(), 1000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let node = json["node"].as_u64().unwrap();
    assert!(ids
        .iter()
        .all(|&id| Layout::twitter().decode(id).unwrap().node == node));
    let single = server.get("/v1/snowflake/known");
    assert_eq!(single.ids().len(), 1);
    assert_eq!(single.json()["node"].as_u64(), Some(node));

    // JS keys stop below 2^53: the last IDs, then 410 EXHAUSTED, never a wrap.
    let js = server.get("/v1/segment/js?count=92").ids();
    assert_eq!(*js.last().unwrap(), (1u64 << 53) - 1);
    let gone = server.get("/v1/segment/js");
    assert_eq!((gone.status, gone.kind().as_str()), (410, "EXHAUSTED"));

    for bad in [
        "count=0",
        "count=1001",
        "count=18446744073709551616",
        "count=abc",
        "count=",
        "count=-1",
        "count=1.5",
    ] {
        for route in ["/v1/segment/users", "/v1/snowflake/known"] {
            let a = server.get(&format!("{route}?{bad}"));
            assert_eq!(a.status, 400, "{route}?{bad}: {a:?}");
            assert_eq!(a.kind(), "BAD_COUNT");
            assert!(a.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("count"));
        }
    }
    let unknown = server.get("/v1/segment/nope?count=5");
    assert_eq!(
        (unknown.status, unknown.kind().as_str()),
        (404, "UNKNOWN_KEY")
    );
    server.stop();
}

/// Every route reads its query parameters one way: percent-decoded as forms are, and a
/// name given twice (however it is spelled) refused, never read first by one route and
/// last by another.
#[test]
fn a_parameter_given_twice_is_refused_on_every_route() {
    let place = Place::new();
    let server = server(&place);

    assert_eq!(server.get("/v1/segment/users?c%6Funt=%33").ids().len(), 3);
    for path in [
        "/v1/segment/users?count=2&count=900",
        "/v1/segment/users?count=2&c%6Funt=900",
        "/v1/snowflake/known?count=1&count=1",
        "/v1/decode/1?layout=twitter&layout=sonyflake",
    ] {
        let a = server.get(path);
        assert_eq!(
            (a.status, a.kind().as_str()),
            (400, "REPEATED_PARAMETER"),
            "{path}: {a:?}"
        );
    }
    let admin = server.post("/v1/admin/segment/fresh?start=1&step=10&step=20");
    assert_eq!(
        (admin.status, admin.kind().as_str()),
        (400, "REPEATED_PARAMETER"),
        "{admin:?}"
    );
    assert_eq!(
        server
            .post("/v1/admin/segment/fresh?start=1&step=10")
            .status,
        201
    );
    let leaf = server.get("/decodeSnowflakeId?snowflakeId=1&snowflakeId=2");
    assert_eq!(leaf.status, 400, "{leaf:?}");
    assert!(leaf.body.contains("snowflakeId"), "{leaf:?}");
    server.stop();
}

/// A `/v1` route refuses a parameter it does not read, so that a misspelt one is an error
/// rather than a default; the Leaf and operations routes ignore them, as Leaf and probes
/// expect.
#[test]
fn a_parameter_a_v1_route_does_not_read_is_refused() {
    let place = Place::new();
    let server = server(&place);
    server.get("/v1/segment/users");
    for path in [
        "/v1/segment/users?cuont=100",
        "/v1/snowflake/known?count=2&_=1",
        "/v1/segment/users/status?verbose=1",
        "/v1/decode/1?layuot=sonyflake",
        "/v1/status?x",
        "/v1/admin/keys?all=1",
    ] {
        let a = server.get(path);
        assert_eq!(
            (a.status, a.kind().as_str()),
            (400, "UNKNOWN_PARAMETER"),
            "{path}: {a:?}"
        );
    }
    let admin = server.post("/v1/admin/segment/fresh?start=1&step=10&max=5");
    assert_eq!(
        (admin.status, admin.kind().as_str()),
        (400, "UNKNOWN_PARAMETER"),
        "{admin:?}"
    );
    for path in [
        "/api/segment/get/users?_=1",
        "/healthz?probe=1",
        "/v1/segment/users/status",
    ] {
        assert_eq!(server.get(path).status, 200, "{path}");
    }
    server.stop();
}

#[test]
fn decode_status_and_operations() {
    let place = Place::new();
    let server = server(&place);

    let id: u64 = server.get("/api/snowflake/get/k").body.parse().unwrap();
    let decoded = server.get(&format!("/v1/decode/{id}")).json();
    let parts = Layout::twitter().decode(id).unwrap();
    assert_eq!(decoded["id"], id.to_string());
    assert_eq!(decoded["timestamp_ms"].as_u64(), Some(parts.timestamp_ms));
    assert_eq!(decoded["node"].as_u64(), Some(parts.node));
    assert_eq!(decoded["sequence"].as_u64(), Some(parts.sequence));
    assert!(decoded["time"].as_str().unwrap().ends_with('Z'));
    let sony = server
        .get(&format!("/v1/decode/{id}?layout=sonyflake"))
        .json();
    assert_eq!(sony["layout"], "sonyflake");
    for bad in ["abc", "-1", "18446744073709551616", "12a", "%20"] {
        let a = server.get(&format!("/v1/decode/{bad}"));
        assert_eq!(
            (a.status, a.kind().as_str()),
            (400, "BAD_ID"),
            "{bad}: {a:?}"
        );
    }
    let a = server.get(&format!("/v1/decode/{id}?layout=nope"));
    assert_eq!((a.status, a.kind().as_str()), (400, "BAD_LAYOUT"));

    server.get("/v1/segment/orders?count=15");
    let status = server.get("/v1/segment/orders/status").json();
    assert_eq!(status["key"], "orders");
    assert_eq!(status["current"]["start"], "16");
    assert_eq!(status["current"]["end"], "101");
    assert!(status["step"].as_u64().unwrap() >= 100);
    // The prefetch at 10% of the segment has brought the next one.
    let mut ready = status;
    for _ in 0..100 {
        if ready["next_ready"] == true {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        ready = server.get("/v1/segment/orders/status").json();
    }
    assert_eq!(ready["next_ready"], true, "{ready}");
    assert_eq!(ready["next"]["start"], "101");
    let runway: u64 = ready["runway_ids"].as_str().unwrap().parse().unwrap();
    assert!(runway >= 185, "{ready}");
    assert_eq!(server.get("/v1/segment/nope/status").status, 404);

    let all = server.get("/v1/status").json();
    assert_eq!(all["snowflake"]["state"], "held");
    assert!(all["snowflake"]["fence_ms"].as_u64().unwrap() > parts.timestamp_ms);
    let skew = all["snowflake"]["clock_skew_ms"].as_i64().unwrap();
    assert!(
        skew.abs() < 1_000,
        "the host's clock against itself: {skew} ms"
    );
    let keys: HashSet<&str> = all["segment"]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains("orders") && keys.contains("users"));

    let health = server.get("/healthz");
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"));
    let ready = server.get("/readyz");
    assert_eq!(ready.status, 200);
    assert_eq!(ready.json()["ready"], true);
    assert_eq!(server.get("/v1/constant").body, "1");

    let metrics = server.get("/metrics");
    assert_eq!(metrics.status, 200);
    let text = metrics.body;
    for needle in [
        "ferroflake_ids_issued_total{mode=\"segment\",key=\"orders\"} 15",
        "ferroflake_ids_issued_total{mode=\"snowflake\",key=\"other\"} 1",
        "ferroflake_http_request_duration_seconds_bucket{route=\"/api/snowflake/get/{key}\"",
        "ferroflake_http_requests_total{route=\"/v1/decode/{id}\",status=\"400\"}",
        "ferroflake_segment_fetches_total{key=\"orders\",outcome=\"ok\"}",
        "ferroflake_segment_fetch_duration_seconds_count{key=\"orders\"}",
        "ferroflake_segment_runway_ids{key=\"orders\"} ",
        "ferroflake_segment_step{key=\"orders\"} ",
        "ferroflake_segment_key_loaded{key=\"users\"} 1",
        "ferroflake_lease_state{state=\"held\"} 1",
        "ferroflake_lease_fence_ms ",
        "ferroflake_lease_node_id ",
        // The embedded registry reports the host's clock.
        "ferroflake_lease_clock_skew_seconds ",
        "ferroflake_refusals_total{mode=\"snowflake\",kind=\"BAD_ID\"}",
        "ferroflake_ready 1",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    assert_eq!(server.get("/nowhere").status, 404);
    server.stop();
}

#[test]
fn bad_keys_are_400_with_a_reason_and_never_reach_the_store() {
    let place = Place::new();
    let server = server(&place);
    let long = "k".repeat(129);
    let cases: Vec<(String, &str)> = vec![
        (long.clone(), "129 bytes"),
        ("..%2Fetc%2Fpasswd".to_owned(), "'/'"),
        ("..%2F..%2Forders".to_owned(), "'/'"),
        ("a%5Cb".to_owned(), "'\\\\'"),
        ("a%00b".to_owned(), "control"),
        ("a%0Ab".to_owned(), "control"),
        ("%FF%FE".to_owned(), "UTF-8"),
        ("%C3%28".to_owned(), "UTF-8"),
    ];
    for (key, why) in &cases {
        for route in ["/api/segment/get/", "/api/snowflake/get/"] {
            let a = server.get(&format!("{route}{key}"));
            assert_eq!(a.status, 400, "{route}{key}: {a:?}");
            assert!(a.body.contains(why), "{route}{key}: {a:?}");
        }
        for route in ["/v1/segment/", "/v1/snowflake/"] {
            let a = server.get(&format!("{route}{key}"));
            assert_eq!(
                (a.status, a.kind().as_str()),
                (400, "INVALID_KEY"),
                "{route}{key}"
            );
        }
    }
    // 128 bytes is the limit: a key that long is merely unknown.
    assert_eq!(
        server
            .get(&format!("/api/segment/get/{}", &long[..128]))
            .status,
        404
    );
    // Multi-byte UTF-8 keys are keys like any other.
    assert_eq!(
        server.get("/api/segment/get/%E8%AE%A2%E5%8D%95").status,
        404
    );
    // Dot segments are not resolved into another route, nor into another key.
    let (status, _) = raw(
        server.addr,
        b"GET /api/segment/get/../../v1/constant HTTP/1.1",
    );
    assert_ne!(status, 200);
    let (status, _) = raw(server.addr, b"GET /api/segment/get/.. HTTP/1.1");
    assert_eq!(status, 404, "'..' is an unknown key, nothing more");
    // Raw bytes that are not UTF-8 (no client library sends these) are refused by HTTP.
    let (status, _) = raw(server.addr, b"GET /api/segment/get/\xff\xfe HTTP/1.1");
    assert_eq!(status, 400);
    let (status, _) = raw(server.addr, b"GET /api/segment/get/a b HTTP/1.1");
    assert_eq!(status, 400);
    // None of it reached the metrics as a key.
    let metrics = server.get("/metrics").body;
    assert!(!metrics.contains("passwd") && !metrics.contains("kkkk"));
    // The store still serves the real key in order.
    assert_eq!(server.get("/api/segment/get/orders").body, "1");
    server.stop();
}

#[test]
fn leafs_decode_route_answers_leafs_json_and_refuses_bad_ids_as_text() {
    let place = Place::new();
    let server = server(&place);

    // Leaf's own example: 1567733700834 ms, worker 39, sequence 3448 (Leaf printed the
    // time in its server's zone, UTC+8; here it is UTC).
    let leaf_example = ((1_567_733_700_834u64 - 1_288_834_974_657) << 22) | (39 << 12) | 3448;
    let a = server.get(&format!("/decodeSnowflakeId?snowflakeId={leaf_example}"));
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.content_type.starts_with("application/json"), "{a:?}");
    assert_eq!(
        a.json(),
        serde_json::json!({
            "timestamp": "1567733700834(2019-09-06 01:35:00.834)",
            "workerId": "39",
            "sequenceId": "3448",
        })
    );

    // An ID this server issued, the way Leaf maps the route: any method.
    let id: u64 = server.get("/api/snowflake/get/k").body.parse().unwrap();
    let parts = Layout::twitter().decode(id).unwrap();
    let decoded = server
        .post(&format!("/decodeSnowflakeId?snowflakeId={id}"))
        .json();
    assert_eq!(decoded["workerId"], parts.node.to_string());
    assert_eq!(decoded["sequenceId"], parts.sequence.to_string());
    let timestamp = decoded["timestamp"].as_str().unwrap();
    assert!(
        timestamp.starts_with(&format!("{}(", parts.timestamp_ms)),
        "{timestamp}"
    );
    let native = server.get(&format!("/v1/decode/{id}")).json();
    let native_time = native["time"].as_str().unwrap().replace('T', " ");
    assert_eq!(
        &timestamp[timestamp.len() - 24..timestamp.len() - 1],
        native_time.trim_end_matches('Z')
    );

    // Bad input: a plain-text 400 saying why, never a panic.
    for (query, why) in [
        ("", "missing"),
        ("?snowflakeid=1", "missing"),
        ("?snowflakeId=", "not a decimal"),
        ("?snowflakeId=abc", "not a decimal"),
        ("?snowflakeId=-1", "not a decimal"),
        ("?snowflakeId=18446744073709551616", "not a decimal"),
        ("?snowflakeId=9223372036854775808", "2^63 - 1"),
        ("?snowflakeId=%FF", "not a decimal"),
    ] {
        let a = server.get(&format!("/decodeSnowflakeId{query}"));
        assert_eq!(a.status, 400, "{query}: {a:?}");
        assert!(a.content_type.starts_with("text/plain"), "{query}: {a:?}");
        assert!(a.body.contains(why), "{query}: {a:?}");
    }
    let metrics = server.get("/metrics").body;
    assert!(
        metrics.contains(
            "ferroflake_http_requests_total{route=\"/decodeSnowflakeId\",status=\"400\"} 8"
        ),
        "{metrics}"
    );
    server.stop();
}

#[test]
fn the_decode_route_shows_an_id_as_each_peer_does() {
    let place = Place::new();
    let server = server(&place);

    // Leaf's example again, in every form core knows, each its peer's own JSON.
    let leaf_example = ((1_567_733_700_834u64 - 1_288_834_974_657) << 22) | (39 << 12) | 3448;
    let leaf_route = server
        .get(&format!("/decodeSnowflakeId?snowflakeId={leaf_example}"))
        .json();
    let as_leaf = server.get(&format!("/v1/decode/{leaf_example}?as=leaf"));
    assert_eq!(as_leaf.status, 200, "{as_leaf:?}");
    assert_eq!(as_leaf.json(), leaf_route);
    assert_eq!(
        server
            .get(&format!("/v1/decode/{leaf_example}?as=bwmarrin"))
            .json(),
        serde_json::json!({
            "id": leaf_example.to_string(), "time": 1_567_733_700_834u64, "node": 39, "step": 3448,
        })
    );
    assert_eq!(
        server
            .get(&format!("/v1/decode/{leaf_example}?as=cosid"))
            .json()["friendlyId"],
        "20190906013500834-39-3448"
    );
    // sonyflake's forms count the time in the layout's ticks since its start.
    let sony = (7u64 << 24) | (200 << 16) | 513;
    let v1 = server
        .get(&format!("/v1/decode/{sony}?layout=sonyflake&as=sonyflake"))
        .json();
    assert_eq!(
        v1,
        serde_json::json!({"id": sony, "machine-id": 513, "msb": 0, "sequence": 200, "time": 7})
    );
    let v2 = server
        .get(&format!(
            "/v1/decode/{sony}?layout=sonyflake&as=sonyflake-v2"
        ))
        .json();
    assert_eq!(
        v2,
        serde_json::json!({"id": sony, "machine": 513, "sequence": 200, "time": 7})
    );

    for bad in ["Leaf", "", "snowflake", "leaf%00"] {
        let a = server.get(&format!("/v1/decode/1?as={bad}"));
        assert_eq!(
            (a.status, a.kind().as_str()),
            (400, "BAD_VIEW"),
            "{bad}: {a:?}"
        );
        assert!(a.body.contains("sonyflake-v2"), "{a:?}");
    }
    // The ID is still checked against the layout first.
    let a = server.get("/v1/decode/9007199254740992?layout=js53&as=leaf");
    assert_eq!((a.status, a.kind().as_str()), (400, "BAD_ID"));
    assert!(a.body.contains("is not a js53 ID"), "{a:?}");
    server.stop();
}

#[test]
fn readiness_waits_for_the_lease_and_the_preloaded_keys() {
    let place = Place::new();
    let mut config = place.config();
    config.preload = vec!["late".into()];
    let server = place.start(config);
    // The key does not exist yet, and the new registry holds the lease back for 1.2 s.
    let first = server.get("/readyz");
    assert_eq!(first.status, 503);
    assert_eq!(first.retry_after.as_deref(), Some("1"));
    let body = first.json();
    assert_eq!(body["ready"], false);
    assert_eq!(body["keys"][0]["ready"], false);
    // Snowflake requests before the lease: 503 with Retry-After, never an ID.
    let early = server.get("/api/snowflake/get/x");
    if early.status != 200 {
        assert_eq!(early.status, 503);
        assert_eq!(early.retry_after.as_deref(), Some("1"));
    }
    // The lease comes when the registry's floor has passed: wait for /readyz to say so.
    let until = Instant::now() + Duration::from_secs(15);
    let lease_only = loop {
        let body = server.get("/readyz").json();
        if body["lease"]["ready"] == true {
            break body;
        }
        assert!(Instant::now() < until, "no lease in time: {body}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(lease_only["ready"], false, "the key is still missing");
    assert!(lease_only["keys"][0]["why"]
        .as_str()
        .unwrap()
        .contains("late"));
    place.create("late", 1, 10);
    server.wait_ready(Duration::from_secs(15));
    // Preloaded: the first segment came from the preload, not from a request.
    let status = server.get("/v1/segment/late/status").json();
    assert_eq!(status["counters"]["fetches"].as_u64(), Some(1));
    assert_eq!(server.get("/api/segment/get/late").body, "1");

    // The stop makes /readyz 503 before anything is given back.
    let state = std::sync::Arc::clone(server.state());
    let report = server.stop();
    assert!(report.drained);
    let (ready, body) = state.readiness();
    assert!(!ready);
    assert_eq!(body["stopping"], true);
    assert_eq!(report.segments.unwrap().given_back, 9);
    assert_eq!(place.max_id("late"), 2, "the rest went back to the table");
    assert!(
        matches!(report.lease, Some(Ok(Some(_)))),
        "{:?}",
        report.lease
    );
}

#[test]
fn modes_can_be_switched_off() {
    let place = Place::new();
    place.create("orders", 1, 10);
    let mut config = place.config();
    config.snowflake = false;
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(5));
    assert_eq!(server.get("/api/segment/get/orders").body, "1");
    let off = server.get("/v1/snowflake/x");
    assert_eq!((off.status, off.kind().as_str()), (404, "MODE_OFF"));
    server.stop();
}

#[test]
fn a_method_a_route_does_not_take_and_an_unknown_path_get_json_and_are_counted() {
    let place = Place::new();
    let server = server(&place);
    // A route that issues allows GET alone: HEAD would use up an ID unseen.
    for (path, allow) in [
        ("/v1/segment/orders", "GET"),
        ("/v1/snowflake/k", "GET"),
        ("/v1/masked/segment/orders", "GET"),
        ("/v1/status", "GET,HEAD"),
        ("/metrics", "GET,HEAD"),
    ] {
        let a = server.post(path);
        assert_eq!(a.status, 405, "{path}: {a:?}");
        assert!(a.content_type.starts_with("application/json"), "{a:?}");
        assert_eq!(a.kind(), "METHOD_NOT_ALLOWED", "{path}");
        assert_eq!(a.allow.as_deref(), Some(allow), "{path}");
    }
    for path in ["/nope-1", "/nope-2/x", "/v2/segment/orders"] {
        let a = server.get(path);
        assert_eq!((a.status, a.kind().as_str()), (404, "NO_ROUTE"), "{a:?}");
    }
    let metrics = server.get("/metrics").body;
    // Unknown paths under one label, never one series per path.
    assert!(
        metrics.contains("ferroflake_http_requests_total{route=\"unmatched\",status=\"404\"} 3"),
        "{metrics}"
    );
    assert!(!metrics.contains("nope"), "{metrics}");
    server.stop();
}
