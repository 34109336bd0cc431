//! `ferroflake serve` over TLS as a process, with its real flags and signals: SIGHUP
//! rotating the certificate and key (and a bad pair keeping the one in force, and a device
//! or a FIFO in place of a file refused at once), SIGTERM with a handshake half done, the
//! flags refused alone (exit 2), the warning for tokens sent in clear text. No key and no
//! token in any log line.

use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ferroflake_test_support::http::{
    answer, tls_agent, tokens_toml, write_whole, Answer, TestCert,
};
use ferroflake_test_support::serve_child::{exit_of, serve_command, ServeChild};

const BIN: &str = env!("CARGO_BIN_EXE_ferroflake");
const WITHIN: Duration = Duration::from_secs(30);

/// `ferroflake serve ARGS` in segment mode only (no lease to wait for) on a store in
/// `dir`, with no `FERROFLAKE_*` variable from this environment.
fn command(dir: &Path, args: &[&str]) -> Command {
    let store = dir.join("segments.db");
    let mut all = vec!["--modes", "segment", "--store", store.to_str().unwrap()];
    all.extend(args);
    serve_command(BIN, &all, &[])
}

/// GET over TLS by a new client (a new connection) that trusts `cert` alone.
fn get(
    service: &ServeChild,
    cert: &TestCert,
    path: &str,
    token: Option<&str>,
) -> Result<Answer, String> {
    let mut request = tls_agent(cert).get(&format!("{}{path}", service.base("https")));
    if let Some(token) = token {
        request = request.header("Authorization", &format!("Bearer {token}"));
    }
    match request.call() {
        Ok(response) => Ok(answer(Ok(response))),
        Err(e) => Err(e.to_string()),
    }
}

/// The segment key `k` in the store in `dir`.
fn create_key(dir: &Path) {
    use ferroflake_segment::{SegmentError, SegmentStore, SqliteStore};
    match SqliteStore::open(dir.join("segments.db"))
        .unwrap()
        .create("k", 1, 1000)
    {
        Ok(()) | Err(SegmentError::KeyExists { .. }) => {}
        Err(e) => panic!("create k: {e}"),
    }
}

/// The key `k` in a store in `dir`, a new certificate pair written there, and a child
/// serving HTTPS with that pair and `args`: the pair, its two files, and the child.
fn start_tls(dir: &Path, args: &[&str]) -> (TestCert, PathBuf, PathBuf, ServeChild) {
    create_key(dir);
    let pair = TestCert::new();
    let (cert, key) = pair.write(dir);
    let mut all = vec![
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    all.extend(args);
    let service = ServeChild::spawn(command(dir, &all));
    (pair, cert, key, service)
}

#[test]
fn sighup_rotates_the_pair_and_a_bad_pair_keeps_the_one_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    write_whole(
        &tokens,
        &tokens_toml(&[("app", "t-app-3333", &["issue:*"])]),
    );
    let (old, cert, _key, service) = start_tls(
        dir.path(),
        &[
            "--listen",
            "0.0.0.0:0",
            "--tokens-file",
            tokens.to_str().unwrap(),
        ],
    );
    let id = |cert: &TestCert| get(&service, cert, "/api/segment/get/k", Some("t-app-3333"));
    assert_eq!(id(&old).unwrap().body, "1");
    // Tokens beyond loopback, with TLS: nothing to warn about.
    assert_eq!(service.events("tokens_in_clear").len(), 0);

    let new = TestCert::new();
    new.write(dir.path());
    service.signal("HUP");
    service.wait_logged("tls_reloaded", 1, WITHIN);
    assert_eq!(id(&new).unwrap().body, "2");
    let refused = id(&old).unwrap_err();
    assert!(refused.contains("certificate"), "{refused}");

    // A bad pair: a third certificate with the second's key. Logged; the second serves.
    let third = TestCert::new();
    write_whole(&cert, &third.cert_pem);
    service.signal("HUP");
    service.wait_logged("tls_reload_failed", 1, WITHIN);
    assert_eq!(id(&new).unwrap().body, "3");
    assert!(id(&third).is_err());
    // The tokens were read again on each SIGHUP as well.
    assert_eq!(service.events("tokens_reloaded").len(), 2);

    let (status, _, log) = service.stop(WITHIN);
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("does not match"), "{log}");
    assert!(log.contains("key.pem"), "the path may be shown: {log}");
    for secret in [
        old.key_line(),
        new.key_line(),
        third.key_line(),
        "t-app-3333",
    ] {
        assert!(!log.contains(secret), "{secret} shown in: {log}");
    }
}

/// SIGHUP with the key and the tokens file renamed onto things that are no small regular
/// file: `/dev/zero` (endless) and a FIFO nobody writes (a read that never ends). Each
/// reload fails at once and says so, the pair and the tokens in force stay, a later good
/// reload still works, and SIGTERM exits 0 promptly.
#[test]
fn sighup_refuses_a_device_or_a_fifo_at_once_and_keeps_what_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    let token_file = tokens_toml(&[("app", "t-app-5555", &["issue:*"])]);
    write_whole(&tokens, &token_file);
    let (pair, _cert, key, service) =
        start_tls(dir.path(), &["--tokens-file", tokens.to_str().unwrap()]);
    let id = || get(&service, &pair, "/api/segment/get/k", Some("t-app-5555"));
    assert_eq!(id().unwrap().body, "1");

    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    std::fs::remove_file(&key).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &key).unwrap();
    std::fs::remove_file(&tokens).unwrap();
    std::os::unix::fs::symlink(&fifo, &tokens).unwrap();
    service.signal("HUP");
    service.wait_logged("tls_reload_failed", 1, WITHIN);
    service.wait_logged("tokens_reload_failed", 1, WITHIN);
    assert_eq!(
        id().unwrap().body,
        "2",
        "the pair and the tokens in force stay"
    );

    // Put right, the next SIGHUP loads both again.
    std::fs::remove_file(&key).unwrap();
    pair.write(dir.path());
    std::fs::remove_file(&tokens).unwrap();
    write_whole(&tokens, &token_file);
    service.signal("HUP");
    service.wait_logged("tls_reloaded", 1, WITHIN);
    service.wait_logged("tokens_reloaded", 1, WITHIN);
    assert_eq!(id().unwrap().body, "3");

    let (status, took, log) = service.stop(WITHIN);
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(log.contains("not a regular file"), "{log}");
}

#[test]
fn sigterm_with_a_half_done_handshake_exits_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // A stop timeout and a header timeout far beyond the bound below: a drain that
    // waited for the handshake would wait a minute.
    let (pair, _cert, _key, service) = start_tls(
        dir.path(),
        &[
            "--listen",
            "127.0.0.1:0",
            "--shutdown-timeout-ms",
            "60000",
            "--header-read-timeout-ms",
            "60000",
        ],
    );
    // The first bytes of a ClientHello's record, and no more.
    let mut half = TcpStream::connect(service.addr).unwrap();
    half.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        .unwrap();
    // Held: the half-done one and the one asking.
    let began = Instant::now();
    loop {
        let text = get(&service, &pair, "/metrics", None).unwrap().body;
        let open = text.lines().find_map(|line| {
            line.strip_prefix("ferroflake_http_connections_open")?
                .trim()
                .parse::<f64>()
                .ok()
        });
        if open >= Some(2.0) {
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "never held: {text}"
        );
    }

    let (status, took, log) = service.stop(WITHIN);
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(took < Duration::from_secs(5), "the exit took {took:?}");
    assert!(log.contains("\"drained\":true"), "{log}");
    assert!(!log.contains("drain_timeout"), "{log}");
    drop(half);
}

#[test]
fn tokens_beyond_loopback_in_clear_text_are_warned() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    write_whole(&tokens, &tokens_toml(&[("app", "t-app-4444", &["read"])]));
    let service = ServeChild::spawn(command(
        dir.path(),
        &[
            "--listen",
            "0.0.0.0:0",
            "--tokens-file",
            tokens.to_str().unwrap(),
        ],
    ));
    assert_eq!(service.events("tokens_in_clear").len(), 1);
    let (status, _, log) = service.stop(WITHIN);
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("--tls-cert"), "{log}");
}

#[test]
fn a_certificate_without_its_key_or_a_missing_file_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = TestCert::new().write(dir.path());
    let missing = dir.path().join("missing.pem");
    let cases: [(&[&str], i32, &str); 3] = [
        (&["--tls-cert", cert.to_str().unwrap()], 2, "--tls-key"),
        (&["--tls-key", key.to_str().unwrap()], 2, "--tls-cert"),
        (
            &[
                "--tls-cert",
                missing.to_str().unwrap(),
                "--tls-key",
                key.to_str().unwrap(),
            ],
            1,
            "missing.pem",
        ),
    ];
    for (args, code, says) in cases {
        let args = [&["--listen", "127.0.0.1:0"], args].concat();
        let (code_seen, stderr) = exit_of(command(dir.path(), &args));
        assert_eq!(code_seen, Some(code), "{args:?}: {stderr}");
        assert!(
            stderr.contains(says),
            "{args:?}: {says:?} missing in {stderr}"
        );
    }
    // Refused before anything opened.
    assert!(!dir.path().join("segments.db").exists());
}

#[test]
fn plain_http_to_the_tls_port_is_logged_at_most_once_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let (_pair, _cert, _key, service) = start_tls(dir.path(), &["--listen", "127.0.0.1:0"]);
    const TRIES: usize = 200;
    let began = Instant::now();
    for _ in 0..TRIES {
        let mut plain = TcpStream::connect(service.addr).unwrap();
        plain
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        // Until the server closes it, having refused the handshake.
        let _ = std::io::Read::read_to_end(&mut plain, &mut Vec::new());
    }
    let took = began.elapsed();
    let (status, _, log) = service.stop(WITHIN);
    assert_eq!(status.code(), Some(0), "{log}");
    let warnings = log
        .lines()
        .filter(|line| line.contains("\"level\":\"WARN\"") || line.contains("\"level\":\"ERROR\""))
        .count();
    // One line for the first failure, then one a second at most, whoever logs it.
    let allowed = 2 + took.as_secs() as usize;
    assert!(
        warnings <= allowed,
        "{warnings} warnings for {TRIES} refused handshakes in {took:?}:\n{log}"
    );
}
