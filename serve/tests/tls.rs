//! HTTPS against a server in this process, with a real client (ureq on rustls) that
//! trusts the server's self-signed certificate and nothing else: IDs over TLS; plain
//! HTTP and an untrusted certificate refused; a handshake that never comes cut off by the
//! header-read timeout; handshakes held within the connection limit; a rotated pair
//! serving new connections while open ones keep theirs.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Place, Server, TestCert};

/// The value of the metric line that starts with `series`, read in this process.
fn metric(server: &Server, series: &str) -> Option<f64> {
    server
        .state()
        .metrics
        .render()
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}

/// Waits until the metric `series` reaches `at_least` (a counter: it only grows).
fn wait_metric(server: &Server, series: &str, at_least: f64) {
    let began = Instant::now();
    while metric(server, series) < Some(at_least) {
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "{series} stays at {:?}",
            metric(server, series)
        );
        std::thread::yield_now();
    }
}

/// Everything the server sends on `stream` until it closes it (or 10 s pass).
fn read_all(stream: &mut TcpStream) -> Vec<u8> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    bytes
}

/// Segment mode on the key `k`, over TLS with `cert`.
fn start(
    place: &Place,
    cert: &TestCert,
    edit: impl FnOnce(&mut ferroflake_serve::Config),
) -> Server {
    place.create("k", 1, 1000);
    let mut config = place.config();
    config.snowflake = false;
    config.preload = vec!["k".to_owned()];
    edit(&mut config);
    let server = place.start_tls(config, cert);
    server.wait_ready(Duration::from_secs(15));
    server
}

#[test]
fn ids_over_tls_and_plain_http_or_an_untrusted_certificate_refused() {
    let place = Place::new();
    let cert = TestCert::new();
    let server = start(&place, &cert, |_| {});
    assert!(server.base.starts_with("https://"), "{}", server.base);

    let one = server.get("/api/segment/get/k");
    assert_eq!((one.status, one.body.as_str()), (200, "1"));
    assert_eq!(server.get("/v1/segment/k?count=3").ids(), [2, 3, 4]);

    // Plain HTTP to the TLS port: no HTTP answer, by a library client or by hand.
    let plain = common::agent()
        .get(&format!("http://{}/api/segment/get/k", server.addr))
        .call();
    assert!(plain.is_err(), "{:?}", plain.map(|r| r.status()));
    let mut by_hand = TcpStream::connect(server.addr).unwrap();
    by_hand
        .write_all(b"GET /api/segment/get/k HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let answer = read_all(&mut by_hand);
    assert!(!answer.starts_with(b"HTTP/"), "{answer:?}");
    wait_metric(
        &server,
        "ferroflake_http_tls_handshake_failures_total{reason=\"protocol\"}",
        2.0,
    );

    // A client that does not trust the certificate does not get an ID.
    let stranger = common::tls_agent(&TestCert::new())
        .get(&format!("{}/api/segment/get/k", server.base))
        .call();
    assert!(stranger.is_err(), "{:?}", stranger.map(|r| r.status()));
    // Nor did any of the above take one.
    assert_eq!(server.get("/api/segment/get/k").body, "5");
    server.stop();
}

#[test]
fn a_connection_that_never_handshakes_is_closed_by_the_header_read_timeout() {
    let place = Place::new();
    let cert = TestCert::new();
    let server = start(&place, &cert, |c| c.header_read_timeout_ms = 300);

    // One sends nothing; one the first bytes of a ClientHello's record and no more.
    let mut silent = TcpStream::connect(server.addr).unwrap();
    let mut half = TcpStream::connect(server.addr).unwrap();
    half.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        .unwrap();
    let began = Instant::now();
    read_all(&mut silent);
    read_all(&mut half);
    // Closed by the server's timer (300 ms), not by the read timeout here (10 s).
    let took = began.elapsed();
    assert!(took < Duration::from_secs(5), "closed after {took:?}");
    // Counted as they close (the count may trail the close by a moment).
    wait_metric(
        &server,
        "ferroflake_http_tls_handshake_failures_total{reason=\"timeout\"}",
        2.0,
    );
    wait_metric(&server, "ferroflake_http_header_timeouts_total", 2.0);
    assert_eq!(server.get("/api/segment/get/k").status, 200);
    server.stop();
}

/// The handshake and the first request head share one header-read timeout from the
/// accept: a client that spends most of it before its ClientHello, then sends its head
/// slowly, is closed before the head is complete rather than given the timeout twice.
#[test]
fn the_handshake_and_the_first_head_share_one_header_read_timeout() {
    let place = Place::new();
    let cert = TestCert::new();
    let server = start(&place, &cert, |c| c.header_read_timeout_ms = 2000);
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from(cert.der.clone()))
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let client = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let socket = TcpStream::connect(server.addr).unwrap();
    let accepted = Instant::now();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // The client's own pace is what is tested: 1.5 s of the 2 s before its ClientHello,
    // the start of its head at once, the rest 1.2 s later. A server that restarted the
    // timeout after the handshake would wait for it until about 3.5 s.
    std::thread::sleep(Duration::from_millis(1500));
    let mut tls = rustls::StreamOwned::new(client, socket);
    let _ = tls.write_all(b"GET /api/segment/get/k HTTP/1.1\r\n");
    let _ = tls.flush();
    std::thread::sleep(
        (accepted + Duration::from_millis(2700)).saturating_duration_since(Instant::now()),
    );
    let _ = tls.write_all(b"Host: x\r\n\r\n");
    let _ = tls.flush();
    let mut answer = Vec::new();
    let _ = tls.read_to_end(&mut answer);
    assert!(
        !answer.starts_with(b"HTTP/1.1 200"),
        "answered after {:?}: {}",
        accepted.elapsed(),
        String::from_utf8_lossy(&answer)
    );
    wait_metric(&server, "ferroflake_http_header_timeouts_total", 1.0);
    // Nothing was used up: the next ID is the first.
    assert_eq!(server.get("/api/segment/get/k").body, "1");
    server.stop();
}

#[test]
fn handshakes_in_progress_hold_connection_slots() {
    let place = Place::new();
    let cert = TestCert::new();
    let mut server = start(&place, &cert, |c| c.max_connections = 2);
    // The readiness probe's connection closes with its agent.
    server.agent = common::tls_agent(&cert);
    let began = Instant::now();
    while metric(&server, "ferroflake_http_connections_open") != Some(0.0) {
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "the probe's connection stays"
        );
        std::thread::yield_now();
    }

    let held: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(server.addr).unwrap())
        .collect();
    let began = Instant::now();
    while metric(&server, "ferroflake_http_connections_open") != Some(2.0) {
        assert!(began.elapsed() < Duration::from_secs(10), "not all held");
        std::thread::yield_now();
    }
    // Over the limit, the probe reserve: a connection that never handshakes is closed
    // unanswered (a plain-text 503 would be noise to TLS); over TLS, the probes are
    // answered and anything else is 503.
    let mut over = TcpStream::connect(server.addr).unwrap();
    assert_eq!(read_all(&mut over), b"");
    let probe = server.get("/healthz");
    assert_eq!(probe.status, 200, "{probe:?}");
    let refused = server.get("/api/segment/get/k");
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(refused.body.contains("TOO_MANY_CONNECTIONS"), "{refused:?}");
    wait_metric(
        &server,
        "ferroflake_http_connections_refused_total{reason=\"limit\"}",
        1.0,
    );

    drop(held);
    // Once the slots are free, a client gets in; a try that still finds them full fails.
    let mut tries = 0;
    loop {
        match common::tls_agent(&cert)
            .get(&format!("{}/api/segment/get/k", server.base))
            .call()
        {
            Ok(r) => {
                assert_eq!(r.status(), 200);
                break;
            }
            Err(_) => tries += 1,
        }
        assert!(tries < 10_000, "never room again");
    }
    server.stop();
}

#[test]
fn a_reloaded_pair_serves_new_connections_and_open_ones_keep_theirs() {
    let place = Place::new();
    let old = TestCert::new();
    let server = start(&place, &old, |_| {});
    // A connection made with the old pair, kept alive in the agent's pool.
    let kept = common::tls_agent(&old);
    let url = format!("{}/api/segment/get/k", server.base);
    assert_eq!(common::answer(kept.get(&url).call()).status, 200);

    // A bad pair: the new certificate with the old key. Refused; the old pair serves.
    let new = TestCert::new();
    let (cert_path, key_path) = (
        place.dir.path().join("cert.pem"),
        place.dir.path().join("key.pem"),
    );
    common::write_whole(&cert_path, &new.cert_pem);
    let refusal = server.state().reload_tls().unwrap_err();
    assert!(refusal.contains("does not match"), "{refusal}");
    assert!(!refusal.contains(new.key_line()) && !refusal.contains(old.key_line()));
    assert_eq!(
        common::answer(common::tls_agent(&old).get(&url).call()).status,
        200
    );
    assert!(common::tls_agent(&new).get(&url).call().is_err());

    common::write_whole(&key_path, &new.key_pem);
    server.state().reload_tls().unwrap();
    assert_eq!(
        common::answer(common::tls_agent(&new).get(&url).call()).status,
        200
    );
    assert!(common::tls_agent(&old).get(&url).call().is_err());
    // The connection opened before the rotation still answers: only a connection made
    // with the old pair could, as a new one would present the new certificate.
    assert_eq!(common::answer(kept.get(&url).call()).status, 200);
    server.stop();
}
