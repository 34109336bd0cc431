//! What a segment key costs the service: at most `max_keys` keys open (503 beyond,
//! counted, no store call and no metric series for the key refused), nothing kept for a
//! key the table does not have, and, on MariaDB, one key per row whatever the spellings a
//! caller tries, and a key the table's character set cannot hold refused as the caller's.

mod common;

use std::time::Duration;

use common::{Place, Server};

/// The lines of `/metrics` that name `key` as a label value.
fn series_of(server: &Server, key: &str) -> Vec<String> {
    let needle = format!("key=\"{key}\"");
    server
        .get("/metrics")
        .body
        .lines()
        .filter(|l| l.contains(&needle))
        .map(str::to_owned)
        .collect()
}

/// The value of the `/metrics` line that starts with `prefix`, 0 if there is none.
fn value(server: &Server, prefix: &str) -> f64 {
    server
        .get("/metrics")
        .body
        .lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .map_or(0.0, |v| v.parse().unwrap())
}

#[test]
fn at_most_max_keys_keys_open_and_one_more_is_a_counted_503() {
    let place = Place::new();
    for key in ["a", "b", "c", "d"] {
        place.create(key, 1, 10);
    }
    let mut config = place.config();
    config.snowflake = false;
    config.preload = vec!["a".into()];
    config.max_keys = 3;
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));

    assert_eq!(server.get("/v1/segment/b").ids(), [1]);
    assert_eq!(server.get("/api/segment/get/c").body, "1");
    for _ in 0..3 {
        let refused = server.get("/v1/segment/d");
        assert_eq!(refused.status, 503, "{refused:?}");
        assert_eq!(refused.kind(), "TOO_MANY_KEYS");
        assert!(refused.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit of 3"));
        assert_eq!(refused.retry_after, None, "a retry cannot cure it");
    }
    let leaf = server.get("/api/segment/get/d");
    assert_eq!(leaf.status, 503);
    assert!(leaf.content_type.starts_with("text/plain"), "{leaf:?}");
    // The refused key took nothing from the store and has no series of its own; the
    // refusals are counted under their kind.
    assert_eq!(place.max_id("d"), 1);
    assert_eq!(series_of(&server, "d"), Vec::<String>::new());
    assert_eq!(
        value(
            &server,
            "ferroflake_refusals_total{mode=\"segment\",kind=\"TOO_MANY_KEYS\"}"
        ),
        4.0
    );
    // The open keys go on; an unknown key is still told apart.
    assert_eq!(server.get("/v1/segment/b").ids(), [2]);
    assert_eq!(server.get("/v1/segment/a").ids(), [1]);
    let keys = server.get("/v1/status").json()["segment"]["keys"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(keys, 3);
    server.stop();
}

#[test]
fn unknown_keys_cost_no_key_and_no_series() {
    let place = Place::new();
    place.create("known", 1, 10);
    let mut config = place.config();
    config.snowflake = false;
    config.max_keys = 2;
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));

    for i in 0..300 {
        let a = server.get(&format!("/v1/segment/nope-{i}"));
        assert_eq!((a.status, a.kind().as_str()), (404, "UNKNOWN_KEY"), "{a:?}");
    }
    let metrics = server.get("/metrics").body;
    assert!(!metrics.contains("nope-"), "{metrics}");
    assert_eq!(
        value(
            &server,
            "ferroflake_refusals_total{mode=\"segment\",kind=\"UNKNOWN_KEY\"}"
        ),
        300.0
    );
    let status = server.get("/v1/status").json();
    assert_eq!(status["segment"]["keys"], serde_json::json!([]));
    assert_eq!(status["segment"]["opening"], serde_json::json!([]));
    // 300 unknown keys did not use up a limit of 2: unknown keys hold no slot.
    assert_eq!(server.get("/v1/segment/known").ids(), [1]);
    assert!(
        !series_of(&server, "known").is_empty(),
        "an open key is labelled"
    );
    server.stop();
}

/// `FERROFLAKE_TEST_MYSQL`, and a table name `prefix_...` no other run uses.
#[cfg(feature = "stores")]
fn mysql_and_a_fresh_table(prefix: &str) -> (String, String) {
    use std::time::{SystemTime, UNIX_EPOCH};
    let base = std::env::var("FERROFLAKE_TEST_MYSQL").expect("FERROFLAKE_TEST_MYSQL");
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    (base, format!("{prefix}_{}_{nanos}", std::process::id()))
}

/// On MariaDB, the table the store makes compares `biz_tag` in `utf8mb4_bin`, which ignores
/// trailing spaces: 120 spellings of one key opened 120 keys of one row, each taking a
/// segment of it. Now each is a 400 `INVALID_KEY`, nothing opens, no ID is burnt.
#[cfg(feature = "stores")]
#[test]
#[ignore = "needs FERROFLAKE_TEST_MYSQL (scripts/test-serve.sh)"]
fn mariadb_spellings_of_one_key_open_one_key() {
    let (base, table) = mysql_and_a_fresh_table("serve_keys");
    let address = format!("{base}?table={table}");
    let store = ferroflake_segment_stores::open(Some(&address)).unwrap();
    store.create("orders", 1, 100).unwrap();

    let place = Place::new();
    let mut config = place.config();
    config.store = Some(address);
    config.snowflake = false;
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));

    assert_eq!(server.get("/v1/segment/orders").ids(), [1]);
    for spaces in 1..=120 {
        let spelling = format!("orders{}", "%20".repeat(spaces));
        for route in [
            format!("/v1/segment/{spelling}"),
            format!("/api/segment/get/{spelling}"),
        ] {
            let a = server.get(&route);
            assert_eq!(a.status, 400, "{route}: {a:?}");
            let message = if route.starts_with("/v1/") {
                assert_eq!(a.kind(), "INVALID_KEY");
                a.json()["error"]["message"].as_str().unwrap().to_owned()
            } else {
                a.body.clone()
            };
            assert!(message.contains("row \"orders\""), "{route}: {a:?}");
        }
    }
    let status = server.get("/v1/status").json();
    assert_eq!(status["segment"]["keys"].as_array().unwrap().len(), 1);
    assert_eq!(
        store.peek("orders").unwrap().unwrap().max_id,
        101,
        "no ID burnt"
    );
    let metrics = server.get("/metrics").body;
    assert!(!metrics.contains("orders "), "{metrics}");
    assert_eq!(server.get("/v1/segment/orders").ids(), [2]);
    server.stop();
}

/// Runs `sql` with the `mariadb` client on the server of `url` (`mysql://user[:pw]@host:port/db`).
#[cfg(feature = "stores")]
fn mariadb(url: &str, sql: &str) {
    let rest = url.strip_prefix("mysql://").expect("a mysql:// address");
    let (login, rest) = rest.split_once('@').expect("user@host");
    let (server, db) = rest.split_once('/').expect("host:port/db");
    let db = db.split('?').next().unwrap();
    let (host, port) = server.split_once(':').unwrap_or((server, "3306"));
    let (user, password) = login.split_once(':').unwrap_or((login, ""));
    let mut command = std::process::Command::new("mariadb");
    command.args(["-h", host, "-P", port, "-u", user, db, "-e", sql]);
    if !password.is_empty() {
        command.env("MYSQL_PWD", password);
    }
    let out = command.output().expect("the mariadb client");
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// On Leaf's DDL in MariaDB's 3-byte `utf8` (`utf8mb3`), a key with an emoji cannot be
/// stored: it is a 400 `INVALID_KEY` on both routes, counted as no `STORE` error, not the
/// server's collation error as a 503 `STORE`.
#[cfg(feature = "stores")]
#[test]
#[ignore = "needs FERROFLAKE_TEST_MYSQL (scripts/test-serve.sh)"]
fn mariadb_utf8mb3_key_past_the_bmp_is_invalid_not_a_store_error() {
    let (base, table) = mysql_and_a_fresh_table("serve_mb3");
    mariadb(
        &base,
        &format!(
            "CREATE TABLE {table} (biz_tag varchar(128) NOT NULL DEFAULT '', \
             max_id bigint(20) NOT NULL DEFAULT '1', step int(11) NOT NULL, \
             description varchar(256) DEFAULT NULL, update_time timestamp NOT NULL \
             DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, PRIMARY KEY (biz_tag)) \
             ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci; \
             INSERT INTO {table} (biz_tag, max_id, step) VALUES ('orders', 1, 100)"
        ),
    );
    let place = Place::new();
    let mut config = place.config();
    config.store = Some(format!("{base}?table={table}"));
    config.snowflake = false;
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));

    assert_eq!(server.get("/v1/segment/orders").ids(), [1]);
    let emoji = "orders-%F0%9F%98%80"; // U+1F600
    for route in [
        format!("/v1/segment/{emoji}"),
        format!("/api/segment/get/{emoji}"),
    ] {
        let a = server.get(&route);
        assert_eq!(a.status, 400, "{route}: {a:?}");
        let message = if route.starts_with("/v1/") {
            assert_eq!(a.kind(), "INVALID_KEY");
            a.json()["error"]["message"].as_str().unwrap().to_owned()
        } else {
            a.body.clone()
        };
        assert!(
            message.contains("U+1F600") && message.contains("Basic Multilingual Plane"),
            "{route}: {a:?}"
        );
    }
    let metrics = server.get("/metrics").body;
    assert!(
        !metrics
            .lines()
            .any(|l| l.starts_with("ferroflake_store_errors_total") && l.contains("STORE")),
        "{metrics}"
    );
    assert_eq!(server.get("/v1/segment/orders").ids(), [2]);
    server.stop();
}
