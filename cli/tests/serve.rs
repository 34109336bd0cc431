//! `ferroflake serve` as a process: SIGTERM under load, a second signal, a drain that
//! times out, a clean exit on each server store, no password shown anywhere.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferroflake_lease::{EmbeddedRegistry, LeaseRequest, Registry};
use ferroflake_segment::{SegmentStore, SqliteStore};

use ferroflake_test_support::serve_child::{serve_command, wait_exit, ServeChild};

const BIN: &str = env!("CARGO_BIN_EXE_ferroflake");

/// A `ferroflake serve` child on loopback, its base URL, and its log lines.
struct Service {
    child: ServeChild,
    base: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Service {
    fn start(args: &[&str]) -> Self {
        Self::start_with_env(args, &[])
    }

    /// Started with `env` added to the environment (and no other `FERROFLAKE_*` variable).
    fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Self {
        let all = [&["--listen", "127.0.0.1:0"], args].concat();
        let child = ServeChild::spawn(serve_command(BIN, &all, env));
        Service {
            base: child.base("http"),
            log: Arc::clone(&child.log),
            child,
        }
    }

    fn signal(&self, name: &str) {
        self.child.signal(name);
    }

    fn wait(&mut self, within: Duration) -> ExitStatus {
        self.child.wait(within)
    }

    /// Waits at most `within` for a log line with `event`, and returns it.
    fn wait_logged(&self, event: &str, within: Duration) -> serde_json::Value {
        self.child.wait_logged(event, 1, within)
    }

    fn logged(&self, event: &str) -> Option<serde_json::Value> {
        self.child.logged(event)
    }
}

fn client() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .new_agent()
}

fn get(agent: &ureq::Agent, url: &str) -> Result<(u16, String), ureq::Error> {
    let mut response = agent.get(url).call()?;
    let body = response.body_mut().read_to_string()?;
    Ok((response.status().as_u16(), body))
}

fn wait_ready(base: &str) {
    let agent = client();
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        if let Ok((200, _)) = get(&agent, &format!("{base}/readyz")) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("not ready");
}

/// A request in flight that keeps the drain waiting (a half-sent one no longer does: the
/// stop closes it): the first ID of a key not open yet, whose first segment waits for the
/// store's write lock, which the returned connection holds (SQLite's busy timeout, 5 s,
/// bounds the wait). Returned once the server has read the whole request.
fn request_held_by_the_store(service: &Service, store: &str) -> (rusqlite::Connection, TcpStream) {
    SqliteStore::open(store)
        .unwrap()
        .create("held", 1, 10)
        .unwrap();
    let holder = rusqlite::Connection::open(store).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let mut stuck = TcpStream::connect(service.base.trim_start_matches("http://")).unwrap();
    stuck
        .write_all(b"GET /api/segment/get/held HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    wait_read_by_peer(&stuck, Duration::from_secs(10));
    (holder, stuck)
}

/// Waits at most `within` until the other end of `stream` (on this host) has read every
/// byte sent on it: our side has no unacknowledged bytes, and the peer's socket none
/// unread (the kernel's counts in /proc/net/tcp).
fn wait_read_by_peer(stream: &TcpStream, within: Duration) {
    let (ours, theirs) = (stream.local_addr().unwrap(), stream.peer_addr().unwrap());
    let hex = |addr: std::net::SocketAddr| match addr {
        std::net::SocketAddr::V4(a) => {
            format!(
                "{:08X}:{:04X}",
                u32::from_ne_bytes(a.ip().octets()),
                a.port()
            )
        }
        std::net::SocketAddr::V6(_) => panic!("the service listens on 127.0.0.1"),
    };
    // (tx_queue, rx_queue) of the socket from `local` to `remote`.
    let queues = |local: &str, remote: &str| -> Option<(u64, u64)> {
        let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
        table.lines().skip(1).find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(1) != Some(&local) || fields.get(2) != Some(&remote) {
                return None;
            }
            let (tx, rx) = fields.get(4)?.split_once(':')?;
            Some((
                u64::from_str_radix(tx, 16).ok()?,
                u64::from_str_radix(rx, 16).ok()?,
            ))
        })
    };
    let (ours, theirs) = (hex(ours), hex(theirs));
    let until = Instant::now() + within;
    loop {
        let sent = queues(&ours, &theirs);
        let received = queues(&theirs, &ours);
        if matches!(sent, Some((0, _))) && matches!(received, Some((_, 0))) {
            return;
        }
        assert!(
            Instant::now() < until,
            "the server did not read the request in {within:?}: ours {sent:?}, theirs {received:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The registry at `leases` with a 1 s TTL (a new registry's first claim waits that out,
/// not the default 10 s) and the store at `store`.
fn on<'a>(leases: &'a str, store: &'a str) -> [&'a str; 8] {
    [
        "--lease",
        leases,
        "--lease-ttl-ms",
        "1000",
        "--lease-max-ttl-ms",
        "1000",
        "--store",
        store,
    ]
}

/// Leases and store in one temporary directory; key `k` from 1, step 500.
fn place() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    SqliteStore::open(&store)
        .unwrap()
        .create("k", 1, 500)
        .unwrap();
    let leases = dir.path().join("leases");
    let (store, leases) = (
        store.to_str().unwrap().to_owned(),
        leases.to_str().unwrap().to_owned(),
    );
    (dir, store, leases)
}

/// Inside a container the default registry is one of several on the host (each container
/// has its own /var/tmp): the service is refused it, logs and answers /readyz saying that
/// IDs can collide and what to use instead, issues no snowflake ID, and still stops
/// cleanly. The container is made known by its `container` variable (as systemd-nspawn,
/// Podman and LXC set it), so the test says the same inside CI's container and on a host.
#[test]
fn the_default_registry_is_refused_in_a_container() {
    let mut service = Service::start_with_env(
        &["--modes", "snowflake"],
        &[("container", "ferroflake-test")],
    );
    let failed = service.wait_logged("lease_failed", Duration::from_secs(20));
    let error = failed["error"].as_str().unwrap_or_default().to_owned();
    let agent = client();
    let (status, readyz) = get(&agent, &format!("{}/readyz", service.base)).unwrap();
    let (id_status, _) = get(&agent, &format!("{}/v1/snowflake/k?count=1", service.base)).unwrap();
    for said in [&error, &readyz] {
        assert!(
            said.contains("runs in a container (container=ferroflake-test)")
                && said.contains("IDs can collide with other containers'")
                && said.contains("a mounted volume")
                && said.contains("(etcd://, redis://, zk://, postgres://)"),
            "{said}"
        );
    }
    assert_eq!((status, id_status), (503, 503), "{readyz}");
    service.signal("TERM");
    assert_eq!(service.wait(Duration::from_secs(20)).code(), Some(0));
}

/// The environment configures the service: a variable beats the config file, a flag beats
/// the variable.
#[test]
fn environment_variables_sit_between_the_file_and_the_flags() {
    let (dir, store, leases) = place();
    let file = dir.path().join("serve.toml");
    std::fs::write(
        &file,
        "layout = \"sonyflake\"\nmax_batch = 5\nsnowflake_keys = [\"any\"]\n",
    )
    .unwrap();
    let service = Service::start_with_env(
        &["--max-batch", "9"],
        &[
            ("FERROFLAKE_CONFIG", file.to_str().unwrap()),
            ("FERROFLAKE_LAYOUT", "js53"),
            ("FERROFLAKE_MAX_BATCH", "7"),
            ("FERROFLAKE_STORE", &store),
            ("FERROFLAKE_LEASE", &leases),
            ("FERROFLAKE_PRELOAD", "k"),
        ],
    );
    wait_ready(&service.base);
    let agent = client();
    let json = |path: &str| {
        let (status, body) = get(&agent, &format!("{}{path}", service.base)).unwrap();
        (
            status,
            serde_json::from_str::<serde_json::Value>(&body).unwrap(),
        )
    };
    // The variable's layout, not the file's.
    let (_, ids) = json("/v1/snowflake/any?count=1");
    assert_eq!(ids["layout"], "js53", "{ids}");
    // The flag's batch limit (9), not the variable's (7) or the file's (5).
    assert_eq!(json("/v1/segment/k?count=9").0, 200);
    assert_eq!(json("/v1/segment/k?count=10").0, 400);
    // The variables' store and preload: key k was loaded from the given file before ready.
    let (_, status) = json("/v1/status");
    let keys = status["segment"]["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1, "{status}");
    assert_eq!(keys[0]["key"], "k");
    assert!(
        status["segment"]["store"]
            .as_str()
            .unwrap()
            .contains(&store),
        "{status}"
    );
}

#[test]
fn sigterm_under_load_answers_every_request_rightly_releases_the_lease_and_gives_segments_back() {
    let (_dir, store, leases) = place();
    let mut service = Service::start(&[&on(&leases, &store)[..], &["--preload", "k"]].concat());
    wait_ready(&service.base);
    let node = get(&client(), &format!("{}/readyz", service.base))
        .unwrap()
        .1;
    let node: serde_json::Value = serde_json::from_str(&node).unwrap();
    assert_eq!(
        node["lease"]["node"], 0,
        "the first holder of a new registry gets node 0"
    );

    let stop = AtomicBool::new(false);
    let segment_ids = Mutex::new(Vec::new());
    let snowflake_ids = Mutex::new(Vec::new());
    let refusals = Mutex::new(Vec::new());
    let base = service.base.clone();
    std::thread::scope(|scope| {
        for route in [
            "/v1/segment/k?count=50",
            "/api/segment/get/k",
            "/api/snowflake/get/x",
            "/v1/segment/k?count=7",
        ] {
            let (base, stop, segment_ids, snowflake_ids, refusals) =
                (&base, &stop, &segment_ids, &snowflake_ids, &refusals);
            scope.spawn(move || {
                let agent = client();
                while !stop.load(Ordering::SeqCst) {
                    match get(&agent, &format!("{base}{route}")) {
                        Ok((200, body)) => {
                            let ids: Vec<u64> = if body.starts_with('{') {
                                let v: serde_json::Value = serde_json::from_str(&body).unwrap();
                                v["ids"]
                                    .as_array()
                                    .unwrap()
                                    .iter()
                                    .map(|i| i.as_str().unwrap().parse().unwrap())
                                    .collect()
                            } else {
                                vec![body
                                    .parse()
                                    .unwrap_or_else(|_| panic!("200 without an ID: {body:?}"))]
                            };
                            let sink = if route.contains("snowflake") {
                                snowflake_ids
                            } else {
                                segment_ids
                            };
                            sink.lock().unwrap().extend(ids);
                        }
                        // During the stop: 503 (the allocator or the lease has closed), never
                        // anything else.
                        Ok((status, body)) => {
                            assert_eq!(status, 503, "{route}: {body}");
                            refusals.lock().unwrap().push(body);
                        }
                        // The listener has closed: the server is gone.
                        Err(_) => break,
                    }
                }
            });
        }
        std::thread::sleep(Duration::from_millis(800));
        service.signal("TERM");
        let status = service.wait(Duration::from_secs(15));
        stop.store(true, Ordering::SeqCst);
        assert_eq!(status.code(), Some(0), "{:?}", service.log.lock().unwrap());
    });

    let segment_ids = segment_ids.into_inner().unwrap();
    let snowflake_ids = snowflake_ids.into_inner().unwrap();
    assert!(
        segment_ids.len() > 100 && snowflake_ids.len() > 10,
        "load ran"
    );
    for ids in [&segment_ids, &snowflake_ids] {
        let unique: HashSet<u64> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len(), "no duplicate");
    }
    // Segments given back: the table continues right after the highest ID answered.
    let max_issued = *segment_ids.iter().max().unwrap();
    let row = SqliteStore::open(&store)
        .unwrap()
        .peek("k")
        .unwrap()
        .unwrap();
    assert_eq!(
        row.max_id,
        max_issued + 1,
        "the unissued rest went back to the table"
    );
    assert!(service.logged("segment_given_back").is_some());
    assert!(service.logged("lease_released").is_some());
    assert!(service.logged("stopped").is_some());

    // The lease was released: a claim that may only take node 0 gets it at once (a lapsed
    // one would wait out TTL + quarantine).
    let registry = EmbeddedRegistry::open(&leases).unwrap();
    let grant = registry
        .acquire(&LeaseRequest {
            node_count: 1,
            ttl: Duration::from_secs(1),
            quarantine: Duration::from_millis(200),
            holder: "test".into(),
            max_ttl: Duration::from_secs(1),
            prefer_node: None,
        })
        .expect("node 0 is free at once");
    assert_eq!(grant.node_id, 0);
    assert!(grant.floor_wait.is_zero());
    // And the next holder starts past every ID the server answered.
    let last_ms = snowflake_ids
        .iter()
        .map(|&id| {
            ferroflake::Layout::twitter()
                .decode(id)
                .unwrap()
                .timestamp_ms
        })
        .max()
        .unwrap();
    assert!(grant.previous_high_water_ms > last_ms);
}

/// SIGTERM ends in exit status 0 on every server store: the clients close their
/// connections as the store is dropped, on the way out.
#[test]
#[ignore = "needs the servers of scripts/test-serve.sh"]
fn sigterm_exits_0_on_every_server_store() {
    let unique = format!("sigterm_{}", std::process::id());
    for server in ["postgres", "mysql", "redis"] {
        let var = format!("FERROFLAKE_TEST_{}", server.to_uppercase());
        let base = std::env::var(&var).unwrap_or_else(|_| panic!("{var} is not set"));
        // The test Redis runs without an AOF.
        let store = match server {
            "redis" => format!("{base}?prefix={unique}&accept=lost-writes"),
            _ => format!("{base}?table={unique}"),
        };
        let created = Command::new(BIN)
            .args(["segment", "create", "k", "--start", "1", "--step", "100"])
            .args(["--store", &store])
            .output()
            .unwrap();
        assert!(created.status.success(), "{server}: {created:?}");
        let mut service = Service::start(&["--modes", "segment", "--store", &store]);
        let (status, body) = get(&client(), &format!("{}/v1/segment/k?count=3", service.base))
            .unwrap_or_else(|e| panic!("{server}: {e}"));
        assert_eq!(status, 200, "{server}: {body}");
        service.signal("TERM");
        let status = service.wait(Duration::from_secs(20));
        assert_eq!(
            status.code(),
            Some(0),
            "{server}: {:?}",
            service.log.lock().unwrap()
        );
        assert!(service.logged("stopped").is_some(), "{server}");
        let log = service.log.lock().unwrap().join("\n");
        assert!(
            !log.contains("NOTICE"),
            "{server}: a server notice logged: {log}"
        );
    }
}

/// A password in the registry's and the store's addresses, and a bearer token, are shown
/// nowhere: not in any route's body or headers (every route, by GET and POST, with the
/// right token, a wrong one and none), the metrics, the log, nor the CLI's messages,
/// whether the password is right (a Redis user made for the test) or wrong.
#[test]
#[ignore = "needs the servers of scripts/test-serve.sh"]
fn no_password_is_shown_anywhere() {
    const SECRET: &str = "Zq7-secret-pw";
    const WRONG: &str = "Wr0ng-secret-pw";
    const TOKEN: &str = "Tk9-secret-token";
    const WRONG_TOKEN: &str = "Wt4-secret-token";
    let base = std::env::var("FERROFLAKE_TEST_REDIS").expect("FERROFLAKE_TEST_REDIS");
    let acl = Command::new("redis-cli")
        .args(["-u", &base, "ACL", "SETUSER", "ffsecret", "on"])
        .arg(format!(">{SECRET}"))
        .args(["~*", "&*", "+@all"])
        .output()
        .unwrap();
    assert!(acl.status.success(), "{acl:?}");
    let with = |password: &str, prefix: &str| {
        let rest = base.strip_prefix("redis://").unwrap();
        format!(
            "redis://ffsecret:{password}@{rest}?prefix={prefix}_{}",
            std::process::id()
        )
    };
    // The test Redis runs without an AOF: the store accepts that by name.
    let (lease, store) = (
        with(SECRET, "lease"),
        format!("{}&accept=lost-writes", with(SECRET, "store")),
    );
    let mut seen = String::new();
    // The CLI, its output added to what was seen.
    let cli = |seen: &mut String, args: &[&str]| {
        let output = Command::new(BIN).args(args).output().unwrap();
        seen.push_str(&String::from_utf8_lossy(&output.stdout));
        seen.push_str(&String::from_utf8_lossy(&output.stderr));
        output.status
    };
    assert!(cli(
        &mut seen,
        &["segment", "create", "k", "--start", "1", "--step", "100", "--store", &store]
    )
    .success());
    // Refusals that name the address: a wrong password, an unknown key, a bad parameter.
    let wrong_store = format!("{}&accept=lost-writes", with(WRONG, "store"));
    assert!(!cli(
        &mut seen,
        &["segment", "next", "k", "--store", &wrong_store]
    )
    .success());
    assert!(!cli(&mut seen, &["segment", "next", "nokey", "--store", &store]).success());
    let bad_parameter = format!("{store}&token={SECRET}");
    assert!(!cli(
        &mut seen,
        &["segment", "next", "k", "--store", &bad_parameter]
    )
    .success());
    assert!(!cli(&mut seen, &["next", "--lease", &with(WRONG, "lease")]).success());
    assert!(!cli(
        &mut seen,
        &["next", "--lease", &format!("{lease}&password={SECRET}")]
    )
    .success());

    // A 1 s TTL: the new registry's first claim waits that out, not the default 10 s.
    let ttl = ["--lease-ttl-ms", "1000", "--lease-max-ttl-ms", "1000"];
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(
        &tokens,
        tokens_toml("ops", TOKEN, &["admin", "read", "issue:*"]),
    )
    .unwrap();
    let tokens_flag = ["--tokens-file", tokens.to_str().unwrap()];
    let mut service = Service::start(
        &[
            &["--lease", &lease, "--store", &store][..],
            &ttl,
            &tokens_flag,
        ]
        .concat(),
    );
    wait_ready(&service.base);
    let agent = client();
    // Every route, by GET and by POST, with the right token, a wrong one and none.
    for path in every_route() {
        for method in ["GET", "POST"] {
            for token in [Some(TOKEN), Some(WRONG_TOKEN), None] {
                let url = format!("{}{path}", service.base);
                let mut request = match method {
                    "GET" => agent.get(&url).force_send_body(),
                    _ => agent.post(&url),
                };
                if let Some(token) = token {
                    request = request.header("Authorization", &format!("Bearer {token}"));
                }
                let mut response = request.send_empty().unwrap();
                seen.push_str(&format!("{method} {path} {:?}\n", response.headers()));
                seen.push_str(&response.body_mut().read_to_string().unwrap());
            }
        }
    }
    assert!(
        seen.contains(r#""kind":"BAD_TOKEN""#) && seen.contains(r#""ids":"#),
        "the routes were not all reached: {seen}"
    );
    service.signal("TERM");
    assert_eq!(service.wait(Duration::from_secs(20)).code(), Some(0));
    seen.push_str(&service.log.lock().unwrap().join("\n"));
    assert!(cli(&mut seen, &["next", "--lease", &lease, "-n", "2"]).success());

    // A service whose registry refuses the password does not start, and says why.
    let mut refused = Command::new(BIN)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--lease",
            &with(WRONG, "lease"),
        ])
        .args(["--store", &wrong_store])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    seen.push_str(&String::from_utf8_lossy(&std::mem::take(
        &mut refused.stderr,
    )));

    assert!(
        seen.contains("ffsecret:***@"),
        "addresses are still named: {seen}"
    );
    for secret in [SECRET, WRONG, TOKEN, WRONG_TOKEN] {
        assert!(!seen.contains(secret), "{secret} shown in: {seen}");
    }
}

/// One path per route of the service's list (`ferroflake_serve::routes::ROUTES`, the list
/// `serve --help` shows), placeholders filled with an open key, an ID and a text, so a new
/// route is tried here without a change; then each key route with a key that is not open,
/// and refusals of bad values.
fn every_route() -> Vec<String> {
    let fill = |route: &str, key: &str| {
        let path = route
            .replace("{key}", key)
            .replace("{id}", "1234567890123")
            .replace("{text}", "nOtMaSkEd");
        assert!(
            !path.contains('{'),
            "a placeholder this test does not fill: {route}"
        );
        path
    };
    let mut paths = Vec::new();
    for route in ferroflake_serve::routes::ROUTES {
        paths.push(fill(route, "k"));
        if route.contains("{key}") {
            paths.push(fill(route, "nokey"));
        }
    }
    paths.extend(
        [
            "/v1/segment/k?count=nan",
            "/v1/snowflake/x?count=2",
            "/v1/decode/x?layout=nolayout",
            "/decodeSnowflakeId?snowflakeId=1234567890123",
            "/decodeSnowflakeId?snowflakeId=x",
            "/v1/admin/segment/made?start=1&step=10",
            "/v1/admin/segment/k/recover?above=100000",
            "/v1/admin/segment/k/recover?above=x",
            "/nowhere",
        ]
        .map(String::from),
    );
    paths
}

/// A tokens file with one token, as serve's docs describe it: its SHA-256, never itself.
fn tokens_toml(name: &str, token: &str, scopes: &[&str]) -> String {
    let mut sha256sum = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    sha256sum
        .stdin
        .take()
        .unwrap()
        .write_all(token.as_bytes())
        .unwrap();
    let output = sha256sum.wait_with_output().unwrap();
    let hash = String::from_utf8(output.stdout).unwrap();
    let hash = hash.split_whitespace().next().unwrap();
    format!("[[token]]\nname = {name:?}\nsha256 = \"{hash}\"\nscopes = {scopes:?}\n")
}

#[test]
fn a_second_signal_during_the_stop_exits_at_once() {
    let (_dir, store, leases) = place();
    // A request waiting for the store keeps the drain (and so the stop) waiting: long
    // enough to send a second signal.
    let mut service = Service::start(&on(&leases, &store));
    wait_ready(&service.base);
    let _held = request_held_by_the_store(&service, &store);
    service.signal("TERM");
    // The stop has begun (and the second-signal watch with it): INT now is a second signal.
    service.wait_logged("stopping", Duration::from_secs(10));
    assert!(service.logged("stopped").is_none(), "the stop ended early");
    let began = Instant::now();
    service.signal("INT");
    let status = service.wait(Duration::from_secs(5));
    assert_eq!(
        status.code(),
        Some(130),
        "{:?}",
        service.log.lock().unwrap()
    );
    assert!(began.elapsed() < Duration::from_secs(1));
    assert!(service.logged("forced_exit").is_some());
}

/// SIGTERM while the first claim waits out a new registry's floor (12 s with the default
/// max TTL) stops at once, exit 0, with the claim given back rather than held until its
/// TTL.
#[test]
fn sigterm_while_the_first_claim_waits_gives_the_claim_back() {
    let (_dir, store, leases) = place();
    let mut service = Service::start(&["--lease", &leases, "--store", &store]);
    service.wait_logged("lease_wait", Duration::from_secs(10));
    service.signal("TERM");
    let status = service.wait(Duration::from_secs(5));
    assert_eq!(status.code(), Some(0), "{:?}", service.log.lock().unwrap());
    assert!(service.logged("lease_wait_stopped").is_some());
    let records: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(std::path::Path::new(&leases).join("leases.json")).unwrap(),
    )
    .unwrap();
    let held: Vec<_> = records["nodes"]
        .as_object()
        .unwrap()
        .values()
        .filter(|record| !record["token"].is_null())
        .collect();
    assert!(held.is_empty(), "the claim was given back: {held:?}");
}

/// With a state file, a service killed with SIGKILL and started again keeps its node id
/// (without the file the id stays held until its TTL, and the restart takes another) and
/// issues above every ID it issued before.
#[test]
fn a_service_killed_and_restarted_with_its_state_file_keeps_its_node_id() {
    let (dir, store, leases) = place();
    let state = dir.path().join("state").join("lease.state");
    let args = [
        "--lease",
        &leases,
        "--store",
        &store,
        "--lease-ttl-ms",
        "1000",
        "--lease-max-ttl-ms",
        "1000",
        "--lease-state-file",
        state.to_str().unwrap(),
    ];
    let agent = client();
    let snowflake = |service: &Service| -> (u64, u64) {
        let (code, body) = get(&agent, &format!("{}/v1/snowflake/k", service.base)).unwrap();
        assert_eq!(code, 200, "{body}");
        let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
        let id = answer["ids"][0].as_str().unwrap().parse().unwrap();
        (answer["node"].as_u64().unwrap(), id)
    };
    let first = Service::start(&args);
    wait_ready(&first.base);
    let (node, last) = snowflake(&first);
    drop(first); // SIGKILL
    let second = Service::start(&args);
    wait_ready(&second.base);
    let (again, next) = snowflake(&second);
    assert_eq!(again, node, "{:?}", second.log.lock().unwrap());
    assert!(next > last);
    assert!(
        second
            .log
            .lock()
            .unwrap()
            .iter()
            .any(|line| line.contains("resumed the claim")),
        "{:?}",
        second.log.lock().unwrap()
    );
}

#[test]
fn a_drain_that_times_out_still_gives_everything_back_and_exits_1() {
    let (_dir, store, leases) = place();
    let mut service = Service::start(
        &[
            &on(&leases, &store)[..],
            &["--preload", "k", "--shutdown-timeout-ms", "500"],
        ]
        .concat(),
    );
    wait_ready(&service.base);
    let id = get(&client(), &format!("{}/api/segment/get/k", service.base)).unwrap();
    assert_eq!(id, (200, "1".to_owned()));
    // A request waiting for the store keeps the drain waiting; once the drain has timed
    // out, the store's lock is let go, so that the segments can be given back.
    let (holder, _stuck) = request_held_by_the_store(&service, &store);
    service.signal("TERM");
    service.wait_logged("drain_timeout", Duration::from_secs(10));
    holder.execute_batch("ROLLBACK").unwrap();
    let status = service.wait(Duration::from_secs(10));
    assert_eq!(status.code(), Some(1));
    assert!(service.logged("drain_timeout").is_some());
    assert!(service.logged("lease_released").is_some());
    let row = SqliteStore::open(&store)
        .unwrap()
        .peek("k")
        .unwrap()
        .unwrap();
    assert_eq!(row.max_id, 2, "the rest went back");
}

/// The log's reader goes away (a pipe closed, `| head -1`, a full disk): the service goes
/// on answering, and SIGTERM still stops it cleanly, giving the segment's rest back and
/// the node id up, rather than panicking on the broken stderr (exit 101, both kept).
#[test]
fn a_log_reader_that_goes_away_changes_nothing_about_the_stop() {
    let (_dir, store, leases) = place();
    let all = [&["--listen", "127.0.0.1:0"][..], &on(&leases, &store)].concat();
    let mut child = serve_command(BIN, &all, &[]).spawn().unwrap();
    let mut log = BufReader::new(child.stderr.take().unwrap());
    let addr = loop {
        let mut line = String::new();
        assert!(log.read_line(&mut line).unwrap() > 0, "no start line");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if v["event"] == "started" {
            break v["addr"].as_str().unwrap().to_owned();
        }
    };
    drop(log); // every later log line meets a closed pipe
    let base = format!("http://{addr}");
    wait_ready(&base);
    let agent = client();
    let (status, first) = get(&agent, &format!("{base}/api/segment/get/k")).unwrap();
    assert_eq!((status, first.as_str()), (200, "1"));
    for _ in 0..20 {
        assert_eq!(
            get(&agent, &format!("{base}/api/snowflake/get/k"))
                .unwrap()
                .0,
            200
        );
    }
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = wait_exit(&mut child, Duration::from_secs(20), &"serve after SIGTERM");
    assert_eq!(status.code(), Some(0));
    let row = SqliteStore::open(&store)
        .unwrap()
        .peek("k")
        .unwrap()
        .unwrap();
    assert_eq!(row.max_id, 2, "the segment's rest went back");
    let registry = EmbeddedRegistry::open(&leases).unwrap();
    let view = registry.list().unwrap();
    assert!(
        view.nodes
            .iter()
            .all(|n| n.state != ferroflake_lease::NodeState::Held),
        "{view:?}"
    );
}
