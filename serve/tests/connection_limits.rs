//! Bounded resources, against a server in this process: connections over the limit are
//! answered 503 and counted (but for the probes, which a small reserve answers), a request head that does not arrive is cut off, a request
//! that takes too long and a body that is too large get JSON refusals.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Place, Server};

/// The value of the metric line that starts with `series` in `/metrics` text.
fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}

/// The server's metrics, read in this process (no connection needed).
fn metrics_here(server: &Server) -> String {
    server.state().metrics.render()
}

/// A connection to `server` from the loopback address 127.0.0.`last`.
fn from(last: u8, server: std::net::SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket
        .bind(&std::net::SocketAddr::from(([127, 0, 0, last], 0)).into())
        .unwrap();
    socket.connect(&server.into()).unwrap();
    socket.into()
}

/// Everything the server sends on `stream` until it closes it (or 10 s pass).
fn read_all(stream: &mut TcpStream) -> String {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut text = Vec::new();
    let _ = stream.read_to_end(&mut text);
    String::from_utf8_lossy(&text).into_owned()
}

#[test]
fn connections_over_the_limit_are_answered_503_and_counted_but_probes() {
    let place = Place::new();
    let mut config = place.config();
    config.snowflake = false;
    config.max_connections = 20;
    let server = place.start(config);

    let mut held: Vec<TcpStream> = (0..20)
        .map(|_| TcpStream::connect(server.addr).unwrap())
        .collect();
    let wait_open = |n: f64| {
        let began = Instant::now();
        while metric(&metrics_here(&server), "ferroflake_http_connections_open") != Some(n) {
            assert!(
                began.elapsed() < Duration::from_secs(10),
                "not all {n} held"
            );
            std::thread::yield_now();
        }
    };
    wait_open(20.0);

    // At the limit, the probe reserve answers the probes, once per connection, and
    // nothing else.
    let once = |request: &[u8]| {
        let mut over = TcpStream::connect(server.addr).unwrap();
        over.write_all(request).unwrap();
        read_all(&mut over)
    };
    for probe in ["/healthz", "/readyz"] {
        let request = format!("GET {probe} HTTP/1.1\r\nHost: x\r\n\r\n");
        let answer = once(request.as_bytes());
        assert!(answer.starts_with("HTTP/1.1 200 "), "{probe}: {answer:?}");
        assert!(answer.contains("connection: close"), "{probe}: {answer:?}");
    }
    let answer = once(b"GET /api/segment/get/k HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer:?}");
    assert!(answer.contains("retry-after: 1"), "{answer:?}");
    assert!(answer.contains("\"TOO_MANY_CONNECTIONS\""), "{answer:?}");

    // One peer address holds at most two of the reserve: the rest stays for the probes
    // of others (every 127.x.y.z is this host's loopback).
    let per_peer = ferroflake_serve::connections::PROBE_RESERVE_PER_PEER;
    held.extend((0..per_peer).map(|_| TcpStream::connect(server.addr).unwrap()));
    wait_open((20 + per_peer) as f64);
    let busy = |answer: &str| {
        assert!(answer.starts_with("HTTP/1.1 503 "), "{answer:?}");
        assert!(answer.contains("retry-after: 1"), "{answer:?}");
        assert!(answer.contains("\"TOO_MANY_CONNECTIONS\""), "{answer:?}");
    };
    busy(&read_all(&mut TcpStream::connect(server.addr).unwrap()));
    let mut other = from(2, server.addr);
    other
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert!(read_all(&mut other).starts_with("HTTP/1.1 200 "));

    // The reserve held too, a connection is answered 503 at once, unread.
    let reserve = ferroflake_serve::connections::PROBE_RESERVE;
    let peers = (reserve - per_peer).div_ceil(per_peer);
    for peer in 0..peers {
        held.extend((0..per_peer).map(|_| from(3 + peer as u8, server.addr)));
    }
    wait_open((20 + reserve) as f64);
    for _ in 0..5 {
        busy(&read_all(&mut from(200, server.addr)));
    }
    drop(held);
    // Over HTTP once there is room again: a try that still finds the server full is
    // answered 503 (and counted too), so the count is at least the five above.
    let mut tries = 0;
    let text = loop {
        let a = server.get("/metrics");
        if a.status == 200 {
            break a.body;
        }
        assert_eq!(a.status, 503, "{a:?}");
        tries += 1;
        assert!(tries < 10_000, "never room again");
    };
    let refused = metric(
        &text,
        "ferroflake_http_connections_refused_total{reason=\"limit\"}",
    );
    assert!(refused >= Some(7.0), "{refused:?} in\n{text}");
    assert_eq!(
        metric(&text, "ferroflake_http_connections_limit"),
        Some(20.0)
    );
    server.stop();
}

#[test]
fn a_request_head_that_does_not_arrive_is_cut_off_and_counted() {
    let place = Place::new();
    let mut config = place.config();
    config.snowflake = false;
    config.header_read_timeout_ms = 200;
    let server = place.start(config);

    let mut slow = TcpStream::connect(server.addr).unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let mut idle = TcpStream::connect(server.addr).unwrap();
    let began = Instant::now();
    read_all(&mut slow);
    read_all(&mut idle);
    // Closed by the server's timer (200 ms), not by the read timeout here (10 s).
    let took = began.elapsed();
    assert!(took < Duration::from_secs(5), "closed after {took:?}");
    let text = server.get("/metrics").body;
    let timeouts = metric(&text, "ferroflake_http_header_timeouts_total");
    assert!(timeouts >= Some(2.0), "{timeouts:?}");
    server.stop();
}

#[test]
fn a_request_over_its_time_and_a_body_over_the_bound_get_refusals_in_their_routes_shape() {
    let place = Place::new();
    let mut config = place.config();
    config.segment = false;
    // js53 issues 4,096 IDs a second: a batch of 10,000 takes two seconds or more.
    config.layout = "js53".into();
    config.lease_ttl_ms = Some(4000);
    config.lease_max_ttl_ms = Some(4000);
    config.request_timeout_ms = 300;
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));

    // Refused on its Content-Length alone, before a byte of it is read (a client still
    // sending it would find the connection closed), so none is sent here.
    // On a Leaf route the refusal is plain text, as every Leaf refusal; JSON elsewhere.
    let (status, body) = common::raw(
        server.addr,
        b"POST /api/snowflake/get/k HTTP/1.1\r\nContent-Length: 65536",
    );
    assert_eq!(status, 413, "{body}");
    assert!(
        body.ends_with(
            "a request body is at most 16384 bytes (only the lease store routes read one)\n"
        ),
        "{body}"
    );
    let (status, body) = common::raw(
        server.addr,
        b"GET /v1/snowflake/k HTTP/1.1\r\nContent-Length: 65536",
    );
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("\"BODY_TOO_LARGE\""), "{body}");
    let (status, body) = common::raw(server.addr, b"CONNECT /api/snowflake/get/k HTTP/1.1");
    assert_eq!(status, 405, "{body}");
    assert!(body.ends_with("use GET\n"), "{body}");
    // A small body, as a Leaf client's form, is fine.
    let small = common::answer(
        server
            .agent
            .post(&format!("{}/api/snowflake/get/k", server.base))
            .send(&b"a=b"[..]),
    );
    assert_eq!(small.status, 200, "{small:?}");

    // Last: the batch cut short goes on using up ticks for a while.
    let began = Instant::now();
    let slow = server.get("/v1/snowflake/k?count=10000");
    assert!(
        began.elapsed() < Duration::from_millis(1900),
        "{}",
        slow.status
    );
    // Not the answer itself in the message: a batch that was not cut short is 10,000 IDs.
    let kind = if slow.status == 200 {
        String::new()
    } else {
        slow.kind()
    };
    assert_eq!((slow.status, kind.as_str()), (503, "TIMEOUT"));
    assert!(slow.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("300 ms"));
    assert_eq!(slow.retry_after.as_deref(), Some("1"));
    let text = metrics_here(&server);
    let timeouts = metric(
        &text,
        "ferroflake_http_request_timeouts_total{route=\"/v1/snowflake/{key}\"}",
    );
    assert_eq!(timeouts, Some(1.0), "{text}");

    server.stop();
}
