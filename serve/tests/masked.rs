//! The masked-ID routes over real HTTP: masked batches in both modes, unmasking with the
//! server's key (and with a rotated keyring), and the refusals.

mod common;

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use common::{captured_logs, Place, Server};
use ferroflake::{Format, Layout, MaskKeyring};

const KEY_V1: &str = "1:000102030405060708090a0b0c0d0e0f";
const KEY_V2: &str = "2:f0e1d2c3b4a5968778695a4b3c2d1e0f";

fn key_file(place: &Place, name: &str, text: &str) -> PathBuf {
    let path = place.dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A server with `orders` (from 1), `js` (near 2^53) and the mask keys in `keys`.
fn server(place: &Place, keys: Option<&str>) -> Server {
    place.create("orders", 1, 100);
    place.create("js", 9_007_199_254_740_000, 100);
    let mut config = place.config();
    config.js_keys = vec!["js".into()];
    config.preload = vec!["orders".into()];
    config.mask_key_file = keys.map(|k| key_file(place, "mask.key", k));
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));
    server
}

fn texts(answer: &common::Answer) -> Vec<String> {
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.json()["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

fn unmasked(server: &Server, text: &str, format: &str) -> (u64, serde_json::Value) {
    let answer = server.get(&format!("/v1/unmask/{text}?format={format}"));
    assert_eq!(answer.status, 200, "{text}: {}", answer.body);
    let body = answer.json();
    (body["id"].as_str().unwrap().parse().unwrap(), body)
}

#[test]
fn masked_segment_ids_unmask_to_the_ids_the_key_issued() {
    let place = Place::new();
    let server = server(&place, Some(KEY_V1));
    let answer = server.get("/v1/masked/segment/orders?count=50");
    let body = answer.json();
    assert_eq!(
        (body["mode"].as_str(), body["key"].as_str()),
        (Some("segment"), Some("orders"))
    );
    assert_eq!(
        (body["key_version"].as_u64(), body["format"].as_str()),
        (Some(1), Some("base62"))
    );
    let masked = texts(&answer);
    assert_eq!(masked.len(), 50);
    assert!(
        masked.iter().all(|t| t.len() == 12 && t.starts_with('1')),
        "{masked:?}"
    );
    let ids: Vec<u64> = masked
        .iter()
        .map(|t| unmasked(&server, t, "base62").0)
        .collect();
    assert_eq!(ids, (1..=50).collect::<Vec<u64>>());
    // The masked texts of consecutive IDs are not in order.
    let mut sorted = masked.clone();
    sorted.sort();
    assert_ne!(sorted, masked);
    // The same key unmasks them outside the server too.
    let ring = MaskKeyring::parse(KEY_V1).unwrap();
    assert_eq!(ring.decode(&masked[0], Format::Base62, 63), Ok(1));

    // A JavaScript key is masked within 53 bits: shorter texts, exact in a JS number.
    let js = texts(&server.get("/v1/masked/segment/js?format=dec"));
    assert_eq!(js[0].len(), 18, "{js:?}");
    let (id, body) = unmasked(&server, &js[0], "dec");
    assert_eq!(
        (id, body["bits"].as_u64(), body["key_version"].as_u64()),
        (9_007_199_254_740_000, Some(53), Some(1))
    );
    server.stop();
}

#[test]
fn masked_snowflake_ids_hide_their_time_and_node() {
    let place = Place::new();
    let server = server(&place, Some(KEY_V1));
    let masked = texts(&server.get("/v1/masked/snowflake/any?count=20&format=base32"));
    assert!(masked.iter().all(|t| t.len() == 14), "{masked:?}");
    let mut ids = Vec::new();
    for text in &masked {
        let (id, body) = unmasked(&server, text, "base32");
        assert_eq!(body["bits"].as_u64(), Some(63));
        // The unmasked ID is a real twitter ID of this server's node, made just now.
        let parts = Layout::twitter().decode(id).unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        assert!(parts.timestamp_ms.abs_diff(now.as_millis() as u64) < 60_000);
        ids.push(id);
        // The masked form decodes to nothing like the ID's time.
        let raw = Format::Base32.parse(&text[1..]).unwrap_or(0);
        let shown = Layout::twitter()
            .decode(raw)
            .map(|p| p.timestamp_ms)
            .unwrap_or(0);
        assert!(shown.abs_diff(parts.timestamp_ms) > 60_000, "{text}");
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 20);
    server.stop();
}

#[test]
fn a_rotated_keyring_unmasks_what_the_old_key_masked() {
    let place = Place::new();
    let old = server(&place, Some(KEY_V1));
    let before = texts(&old.get("/v1/masked/segment/orders?count=3"));
    old.stop();
    let rotated = server(&place, Some(&format!("{KEY_V2}\n{KEY_V1}\n")));
    let after = texts(&rotated.get("/v1/masked/segment/orders?count=3"));
    assert!(before.iter().all(|t| t.starts_with('1')) && after.iter().all(|t| t.starts_with('2')));
    let ids: Vec<u64> = before
        .iter()
        .chain(&after)
        .map(|t| unmasked(&rotated, t, "base62").0)
        .collect();
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 6, "{ids:?}");
    assert_eq!(&ids[..3], [1, 2, 3]);
    rotated.stop();
    // A server with only the new key refuses the old texts by their version.
    let new_only = server(&place, Some(KEY_V2));
    let answer = new_only.get(&format!("/v1/unmask/{}", before[0]));
    assert_eq!(
        (answer.status, answer.kind()),
        (400, "UNKNOWN_MASK_KEY_VERSION".to_owned())
    );
    assert!(answer.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("version 1"));
    new_only.stop();
}

#[test]
fn bad_requests_are_refused_with_their_kind() {
    let place = Place::new();
    let server = server(&place, Some(KEY_V1));
    let good = texts(&server.get("/v1/masked/segment/orders"))[0].clone();
    let cases = [
        (
            format!("/v1/unmask/{}", &good[1..]),
            400,
            "PARSE_WRONG_LENGTH",
        ),
        (
            format!("/v1/unmask/{good}?format=dec"),
            400,
            "PARSE_WRONG_LENGTH",
        ),
        (format!("/v1/unmask/{good}?format=hex"), 400, "BAD_FORMAT"),
        (
            format!("/v1/unmask/1{}-", &good[1..11]),
            400,
            "PARSE_INVALID_CHARACTER",
        ),
        (
            format!("/v1/unmask/9{}", &good[1..]),
            400,
            "UNKNOWN_MASK_KEY_VERSION",
        ),
        ("/v1/masked/segment/missing".to_owned(), 404, "UNKNOWN_KEY"),
        (
            "/v1/masked/segment/orders?count=0".to_owned(),
            400,
            "BAD_COUNT",
        ),
        (
            "/v1/masked/segment/orders?format=b64".to_owned(),
            400,
            "BAD_FORMAT",
        ),
    ];
    for (path, status, kind) in cases {
        let answer = server.get(&path);
        assert_eq!(
            (answer.status, answer.kind()),
            (status, kind.to_owned()),
            "{path}: {}",
            answer.body
        );
    }
    server.stop();

    // Without a key the routes say how to give one.
    let keyless = self::server(&place, None);
    for path in [
        "/v1/masked/segment/orders",
        "/v1/masked/snowflake/a",
        "/v1/unmask/x",
    ] {
        let answer = keyless.get(path);
        assert_eq!(
            (answer.status, answer.kind()),
            (404, "NO_MASK_KEY".to_owned()),
            "{path}"
        );
        assert!(answer.body.contains("--mask-key-file"));
    }
    // Other routes are unchanged.
    assert_eq!(keyless.get("/v1/segment/orders").status, 200);
    keyless.stop();
}

#[test]
fn a_key_file_other_users_may_read_is_loaded_with_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let logs = captured_logs();
    let place = Place::new();
    let path = key_file(&place, "shared-readable.key", KEY_V1);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut config = place.config();
    config.mask_key_file = Some(path.clone());
    assert!(ferroflake_serve::masked::load_keyring(&config)
        .unwrap()
        .is_some());
    let logs = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    let line = logs
        .lines()
        .find(|line| line.contains("shared-readable.key"))
        .unwrap_or_else(|| panic!("no warning: {logs}"));
    assert!(
        line.contains("mask_key_file_readable") && line.contains("chmod 600"),
        "{line}"
    );
    assert!(!logs.contains("000102030405"), "{logs}");
}

#[test]
fn a_bad_key_file_stops_the_start_without_showing_the_key() {
    let place = Place::new();
    let mut config = place.config();
    config.mask_key_file = Some(key_file(
        &place,
        "bad.key",
        "1:0001020304050607zz0a0b0c0d0e0f10\n",
    ));
    let Err(message) = ferroflake_serve::RunningServer::start(config.clone()) else {
        panic!("started with a bad key");
    };
    assert!(
        message.contains("bad.key") && message.contains("line 1"),
        "{message}"
    );
    assert!(!message.contains("01020304"), "{message}");
    config.mask_key_file = Some(place.dir.path().join("absent.key"));
    let Err(message) = ferroflake_serve::RunningServer::start(config) else {
        panic!("started without its key file");
    };
    assert!(message.contains("absent.key"), "{message}");
}
