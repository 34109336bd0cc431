//! The segment store's server killed under load, then started again: requests get 503 with
//! `Retry-After` (never a wrong ID), `/readyz` turns 503, and both recover by themselves.
//! Needs the `stores` feature and a PostgreSQL test server (`scripts/test-serve.sh` runs
//! it: `FERROFLAKE_TEST_POSTGRES`, `FF_SERVERS_DIR`).
#![cfg(feature = "stores")]

mod common;

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{agent, answer, Place};

fn ctl(command: &str, server: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/servers/ctl.sh");
    let status = Command::new("bash")
        .arg(&script)
        .args([command, server])
        .status()
        .unwrap();
    assert!(status.success(), "ctl.sh {command} {server}");
}

/// Waits (at most `within`) for `done`, polling.
fn until(within: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
#[ignore = "needs FERROFLAKE_TEST_POSTGRES and FF_SERVERS_DIR; kills and restarts the server"]
fn postgres_killed_under_load() {
    let base = std::env::var("FERROFLAKE_TEST_POSTGRES").expect("FERROFLAKE_TEST_POSTGRES");
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let address = format!("{base}?table=serve_{}_{nanos}", std::process::id());
    ferroflake_segment_stores::open(Some(&address))
        .unwrap()
        .create("k", 1, 100)
        .unwrap();

    let place = Place::new();
    let mut config = place.config();
    config.store = Some(address);
    config.snowflake = false;
    config.preload = vec!["k".into()];
    config.segment_max_wait_ms = 200;
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));

    let stop = AtomicBool::new(false);
    let ids = Mutex::new(Vec::<u64>::new());
    let issued = AtomicU64::new(0);
    let unavailable = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for route in [
            "/v1/segment/k?count=200",
            "/api/segment/get/k",
            "/v1/segment/k?count=3",
        ] {
            let (base, stop, ids, issued, unavailable) =
                (&server.base, &stop, &ids, &issued, &unavailable);
            scope.spawn(move || {
                let client = agent();
                let mut mine = Vec::new();
                while !stop.load(Ordering::SeqCst) {
                    let a = answer(client.get(&format!("{base}{route}")).call());
                    match a.status {
                        200 => {
                            let got = if a.body.starts_with('{') {
                                a.ids()
                            } else {
                                vec![a.body.parse().unwrap()]
                            };
                            issued.fetch_add(got.len() as u64, Ordering::SeqCst);
                            mine.extend(got);
                        }
                        503 => {
                            assert_eq!(a.retry_after.as_deref(), Some("1"), "{a:?}");
                            unavailable.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        other => panic!("{route}: {other} {}", a.body),
                    }
                }
                ids.lock().unwrap().extend(mine);
            });
        }

        until(Duration::from_secs(10), "load", || {
            issued.load(Ordering::SeqCst) > 5_000
        });
        ctl("kill", "postgres");
        until(Duration::from_secs(60), "503s", || {
            unavailable.load(Ordering::SeqCst) > 0
        });
        until(Duration::from_secs(30), "/readyz to fail", || {
            server.get("/readyz").status == 503
        });
        let readyz = server.get("/readyz").json();
        assert!(
            readyz["keys"][0]["why"].as_str().unwrap().contains("store"),
            "{readyz}"
        );
        let metrics = server.get("/metrics").body;
        assert!(
            metrics.contains("ferroflake_store_errors_total{op=\"allocate\""),
            "{metrics}"
        );
        ctl("start", "postgres");
        let before = issued.load(Ordering::SeqCst);
        until(Duration::from_secs(60), "IDs again", || {
            issued.load(Ordering::SeqCst) > before + 5_000
        });
        until(Duration::from_secs(30), "/readyz to recover", || {
            server.get("/readyz").status == 200
        });
        stop.store(true, Ordering::SeqCst);
    });

    let ids = ids.into_inner().unwrap();
    let unique: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "no duplicate");
    eprintln!(
        "{} IDs, {} answers 503 during the outage",
        ids.len(),
        unavailable.load(Ordering::SeqCst)
    );
    server.stop();
}
