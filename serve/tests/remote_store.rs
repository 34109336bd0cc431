//! The store routes over real HTTP: ranges taken through the server are the table's own,
//! disjoint from the server's and from each other; a give-back is conditional, and only
//! the holder of the last range handed out, shown by its ticket, can give it back; a peek
//! changes nothing; the store's refusals keep their kinds; a token reaches only its keys.

mod common;

use std::time::Duration;

use common::{Place, Server};

fn server(place: &Place, tokens: Option<&str>) -> Server {
    place.create("orders", 1, 100);
    place.create("users", 1, 100);
    let mut config = place.config();
    config.snowflake = false;
    if let Some(tokens) = tokens {
        let path = place.dir.path().join("tokens.toml");
        common::write_whole(&path, tokens);
        config.tokens_file = Some(path);
    }
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));
    server
}

fn range(server: &Server, path: &str) -> (u64, u64) {
    let a = server.post(path);
    assert_eq!(a.status, 200, "{path}: {a:?}");
    let body = a.json();
    let number = |name: &str| body[name].as_str().unwrap().parse::<u64>().unwrap();
    (number("start"), number("end"))
}

#[test]
fn ranges_taken_through_the_server_are_the_tables_and_never_overlap() {
    let place = Place::new();
    let server = server(&place, None);
    let first = range(&server, "/v1/store/segment/orders/allocate?step=10");
    assert_eq!(first, (1, 11));
    // The server's own issuing takes its ranges from the same row.
    let issued = server.get("/v1/segment/orders?count=3").ids();
    assert!(issued.iter().all(|id| *id >= 11), "{issued:?}");
    let second = range(&server, "/v1/store/segment/orders/allocate?step=5000");
    assert!(
        second.0 > *issued.iter().max().unwrap(),
        "{second:?} {issued:?}"
    );
    assert_eq!(second.1 - second.0, 5000);
    assert_eq!(place.max_id("orders"), second.1);

    let peek = server.get("/v1/store/segment/orders").json();
    assert_eq!(peek["max_id"], second.1.to_string(), "{peek}");
    assert_eq!(peek["step"], 100, "{peek}");
    assert_eq!(place.max_id("orders"), second.1, "a peek changes nothing");
    let none = server.get("/v1/store/segment/nobody").json();
    assert_eq!(none["max_id"], serde_json::Value::Null, "{none}");
    server.stop();
}

/// A range taken through `path`: start, end and its give-back ticket.
fn ticketed(server: &Server, path: &str) -> (u64, u64, String) {
    let a = server.post(path);
    assert_eq!(a.status, 200, "{path}: {a:?}");
    let body = a.json();
    let number = |name: &str| body[name].as_str().unwrap().parse::<u64>().unwrap();
    let ticket = body["ticket"].as_str().unwrap().to_owned();
    (number("start"), number("end"), ticket)
}

/// Whether `[from, to)` of `key` was given back, the table expected at `expected`.
fn back(server: &Server, key: &str, (from, to, expected): (u64, u64, u64), ticket: &str) -> bool {
    let a = server.post(&format!(
        "/v1/store/segment/{key}/give-back?start={from}&end={to}&expected_max_id={expected}\
         {ticket}"
    ));
    assert_eq!(a.status, 200, "{a:?}");
    a.json()["given_back"].as_bool().unwrap()
}

#[test]
fn a_give_back_holds_only_while_nobody_took_a_range_since() {
    let place = Place::new();
    let server = server(&place, None);
    let (start, end, first) = ticketed(&server, "/v1/store/segment/users/allocate?step=100");
    let (_, later_end, later) = ticketed(&server, "/v1/store/segment/users/allocate?step=100");
    let first = format!("&ticket={first}");
    assert!(
        !back(&server, "users", (start + 10, end, end), &first),
        "someone took a range since"
    );
    assert_eq!(place.max_id("users"), later_end);
    let later = format!("&ticket={later}");
    assert!(back(
        &server,
        "users",
        (later_end - 60, later_end, later_end),
        &later
    ));
    assert_eq!(place.max_id("users"), later_end - 60);
    let (again, _, _) = ticketed(&server, "/v1/store/segment/users/allocate?step=100");
    assert_eq!(again, later_end - 60, "the given-back IDs are taken next");
    server.stop();
}

/// A client of the key that does not hold the last range cannot move the table back under
/// the one that does: without its ticket, with a used or replaced ticket, or with its own.
#[test]
fn only_the_holder_of_the_last_range_can_give_it_back() {
    let place = Place::new();
    let server = server(&place, None);
    let (_, mine_end, mine) = ticketed(&server, "/v1/store/segment/users/allocate?step=100");
    let (theirs_start, end, theirs) =
        ticketed(&server, "/v1/store/segment/users/allocate?step=100");
    let whole = (theirs_start, end, end);
    for ticket in [
        String::new(),
        format!("&ticket={mine}"),
        "&ticket=1".to_owned(),
    ] {
        assert!(!back(&server, "users", whole, &ticket), "{ticket:?}");
        // The hostile form: from 0, the table read first.
        assert!(
            !back(&server, "users", (0, end, end), &ticket),
            "{ticket:?}"
        );
        assert_eq!(place.max_id("users"), end, "{ticket:?}");
    }
    assert!(!back(
        &server,
        "users",
        (0, mine_end, mine_end),
        &format!("&ticket={mine}")
    ));
    // The holder gives its top back once; the same range taken again has a new ticket,
    // and the first one no longer moves the table.
    let theirs = format!("&ticket={theirs}");
    assert!(back(&server, "users", whole, &theirs));
    let (again_start, again_end, _) =
        ticketed(&server, "/v1/store/segment/users/allocate?step=100");
    assert_eq!((again_start, again_end), (theirs_start, end));
    assert!(!back(&server, "users", whole, &theirs), "a used ticket");
    assert_eq!(place.max_id("users"), end);
    // A ticket nearly right is refused without being said back.
    let a = server.post(&format!(
        "/v1/store/segment/users/give-back?start={}&end={end}&expected_max_id={end}\
         {theirs}%20",
        whole.0
    ));
    assert_eq!(
        (a.status, a.kind()),
        (400, "BAD_PARAMETER".to_owned()),
        "{a:?}"
    );
    let digits = theirs.trim_start_matches("&ticket=");
    assert!(!a.body.contains(digits), "{a:?}");
    // An unknown key is still said to be one.
    let a = server.post("/v1/store/segment/nobody/give-back?start=1&end=2&expected_max_id=2");
    assert_eq!(a.status, 404, "{a:?}");
    server.stop();
}

#[test]
fn the_stores_refusals_keep_their_kinds() {
    let place = Place::new();
    let server = server(&place, None);
    for (path, status, kind) in [
        (
            "/v1/store/segment/nobody/allocate?step=10",
            404,
            "UNKNOWN_KEY",
        ),
        (
            "/v1/store/segment/orders/allocate?step=0",
            400,
            "INVALID_CONFIG",
        ),
        ("/v1/store/segment/orders/allocate", 400, "BAD_PARAMETER"),
        (
            "/v1/store/segment/orders/allocate?step=x",
            400,
            "BAD_PARAMETER",
        ),
        (
            "/v1/store/segment/orders/allocate?step=1&n=2",
            400,
            "UNKNOWN_PARAMETER",
        ),
        (
            "/v1/store/segment/orders/give-back?start=1&end=2",
            400,
            "BAD_PARAMETER",
        ),
    ] {
        let a = server.post(path);
        assert_eq!(
            (a.status, a.kind().as_str()),
            (status, kind),
            "{path}: {a:?}"
        );
    }
    let a = server.get("/v1/store/segment/orders/allocate?step=10");
    assert_eq!(a.status, 405, "a GET takes no range: {a:?}");
    assert_eq!(place.max_id("orders"), 1, "no refusal moved the row");
    server.stop();
}

#[test]
fn a_token_takes_ranges_of_its_own_keys_only() {
    let place = Place::new();
    let tokens = common::tokens_toml(&[("orders", "t-orders", &["issue:orders"])]);
    let server = server(&place, Some(&tokens));
    let a = server.post_as("/v1/store/segment/orders/allocate?step=10", "t-orders");
    assert_eq!(a.status, 200, "{a:?}");
    for path in [
        "/v1/store/segment/users/allocate?step=10",
        "/v1/store/segment/users/give-back?start=1&end=2&expected_max_id=2",
    ] {
        let a = server.post_as(path, "t-orders");
        assert_eq!(
            (a.status, a.kind().as_str()),
            (403, "OUT_OF_SCOPE"),
            "{a:?}"
        );
    }
    let a = server.get_as("/v1/store/segment/users", "t-orders");
    assert_eq!(a.status, 403, "{a:?}");
    let a = server.post("/v1/store/segment/orders/allocate?step=10");
    assert_eq!((a.status, a.kind().as_str()), (401, "NO_TOKEN"), "{a:?}");
    assert_eq!(place.max_id("users"), 1);
    assert_eq!(place.max_id("orders"), 11);
    server.stop();
}
