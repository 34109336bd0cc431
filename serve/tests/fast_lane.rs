//! Leaf's issuing routes are answered before the router when their ID is ready (a `GET`
//! without a body): those answers are the router's, header for header, counted in the
//! same metrics and behind the same token check; every other request reaches the router.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use common::{tokens_toml, Place, Server};

/// A whole answer to `request` (a request line and headers, without the blank line) on
/// its own connection: the status line and the headers but `date`, sorted, and the body.
fn exchange(addr: SocketAddr, request: &str) -> (Vec<String>, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(format!("{request}\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
        .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a whole answer");
    let mut lines = head.lines();
    let mut head: Vec<String> = lines
        .by_ref()
        .skip(1)
        .filter(|line| !line.to_ascii_lowercase().starts_with("date:"))
        .map(str::to_owned)
        .collect();
    head.sort();
    head.insert(0, text.lines().next().unwrap().to_owned());
    (head, body.to_owned())
}

fn server(place: &Place, tokens: Option<&str>) -> Server {
    place.create("orders", 1, 100);
    let mut config = place.config();
    config.preload = vec!["orders".into()];
    config.snowflake_keys = vec!["orders".into()];
    if let Some(tokens) = tokens {
        let path = place.dir.path().join("tokens.toml");
        std::fs::write(&path, tokens).unwrap();
        config.tokens_file = Some(path);
    }
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));
    server
}

fn metric(metrics: &str, series: &str) -> u64 {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn the_lanes_answers_are_the_routers_header_for_header_and_counted_alike() {
    let place = Place::new();
    let server = server(&place, None);
    for (route, path) in [
        ("/api/segment/get/{key}", "/api/segment/get/orders"),
        ("/api/snowflake/get/{key}", "/api/snowflake/get/orders"),
    ] {
        // GET without a body: the lane. POST, and a key spelt with an escape: the router.
        let (lane_head, lane_id) = exchange(server.addr, &format!("GET {path} HTTP/1.1"));
        let (router_head, router_id) = exchange(server.addr, &format!("POST {path} HTTP/1.1"));
        let escaped = path.replace("orders", "%6Frders");
        let (escaped_head, escaped_id) = exchange(server.addr, &format!("GET {escaped} HTTP/1.1"));
        let ids: Vec<u64> = [&lane_id, &router_id, &escaped_id]
            .iter()
            .map(|id| id.parse().unwrap_or_else(|_| panic!("{path}: {id:?}")))
            .collect();
        assert!(ids[0] < ids[1] && ids[1] < ids[2], "{path}: {ids:?}");
        assert_eq!(lane_head, router_head, "{path}");
        assert_eq!(lane_head, escaped_head, "{path}");
        assert!(lane_head[0].starts_with("HTTP/1.1 200"), "{lane_head:?}");

        // Each of the three counted once, under the route's template.
        let metrics = server.get("/metrics").body;
        let ok = format!("ferroflake_http_requests_total{{route=\"{route}\",status=\"200\"}}");
        let timed = format!("ferroflake_http_request_duration_seconds_count{{route=\"{route}\"}}");
        assert_eq!(metric(&metrics, &ok), 3, "{path}:\n{metrics}");
        assert_eq!(metric(&metrics, &timed), 3, "{path}:\n{metrics}");
    }
    let metrics = server.get("/metrics").body;
    for mode in ["segment", "snowflake"] {
        let issued = format!("ferroflake_ids_issued_total{{mode=\"{mode}\",key=\"orders\"}}");
        assert_eq!(metric(&metrics, &issued), 3, "{mode}:\n{metrics}");
    }
    server.stop();
}

#[test]
fn a_request_the_lane_could_answer_still_meets_the_token_check() {
    let place = Place::new();
    let tokens = tokens_toml(&[
        ("orders", "orders-token-0123456789", &["issue:orders"]),
        ("other", "other-token-0123456789", &["issue:other", "read"]),
    ]);
    let server = server(&place, Some(&tokens));
    for path in ["/api/segment/get/orders", "/api/snowflake/get/orders"] {
        assert_eq!(server.get(path).status, 401, "{path}");
        assert_eq!(server.get_as(path, "wrong-token-0123456789").status, 401);
        let outside = server.get_as(path, "other-token-0123456789");
        assert_eq!(outside.status, 403, "{path}: {outside:?}");
        let answer = server.get_as(path, "orders-token-0123456789");
        assert_eq!(answer.status, 200, "{path}: {answer:?}");
        answer.body.parse::<u64>().unwrap();
    }
    // The floor the benchmarks compare with needs `read`, in the lane too.
    assert_eq!(
        server
            .get_as("/v1/constant", "orders-token-0123456789")
            .status,
        403
    );
    assert_eq!(
        server
            .get_as("/v1/constant", "other-token-0123456789")
            .status,
        200
    );
    // Refusals reach the router, which counts them.
    let metrics = server.get_as("/metrics", "other-token-0123456789").body;
    let refused = "ferroflake_http_requests_total{route=\"/api/segment/get/{key}\",status=\"401\"}";
    assert_eq!(metric(&metrics, refused), 2, "{metrics}");
    server.stop();
}
