//! Nothing waits on an async worker: a snowflake tick used up (a second with `js53`) and a
//! key opening against a store that holds its lock are waited for off the workers, so
//! `/healthz` and the keys already open keep answering; reading a key's status never
//! opens it. Each wait here is seconds long and each bound one second, so that a worker
//! that waits fails the bound by far and one that does not cannot come near it.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{Answer, Place, Server};

/// The bound every answer must meet while a wait is going on.
const PROMPT: Duration = Duration::from_secs(1);

/// GETs `path`, asserting it answers within [`PROMPT`].
fn prompt(server: &Server, path: &str) -> Answer {
    let began = Instant::now();
    let answer = server.get(path);
    let took = began.elapsed();
    assert!(took < PROMPT, "{path} took {took:?}: {answer:?}");
    answer
}

/// Far below the up-to-1 s a probe waits behind a worker asleep on a `js53` tick, far
/// above an answer from a worker that never sleeps.
const TICK_STALL: Duration = Duration::from_millis(250);

/// Sets its flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The start of the last tick the leased generator issued from, Unix ms.
fn last_tick_ms(server: &Server) -> u64 {
    let snowflake = server.state().snowflake.as_ref().unwrap();
    let generator = snowflake.generator();
    generator.as_ref().unwrap().generator().last_issued_ms()
}

/// How many times the leased generator has waited for a tick.
fn tick_waits(server: &Server) -> u64 {
    let snowflake = server.state().snowflake.as_ref().unwrap();
    let generator = snowflake.generator();
    generator.as_ref().unwrap().generator().counters().waits
}

#[test]
fn a_saturating_js53_load_leaves_healthz_answering() {
    let place = Place::new();
    let mut config = place.config();
    config.layout = "js53".into(); // 4,096 IDs per 1 s tick
                                   // A lease that outlasts a tick: the fence of a 1 s lease would refuse the next tick.
    config.lease_ttl_ms = Some(4000);
    config.lease_max_ttl_ms = Some(4000);
    config.segment = false;
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));

    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        // Batches use up every tick within milliseconds; the callers of one ID at a time
        // (more of them than workers) then find it used up, and wait for the next.
        for caller in 0..8 {
            let (base, stop) = (&server.base, &stop);
            let path = if caller < 2 {
                "/v1/snowflake/k?count=1000"
            } else {
                "/api/snowflake/get/k"
            };
            scope.spawn(move || {
                let agent = common::agent();
                while !stop.load(Ordering::SeqCst) {
                    let a = common::answer(agent.get(&format!("{base}{path}")).call());
                    assert_eq!(a.status, 200, "{a:?}");
                }
            });
        }
        // The callers stop when the measuring ends, even by a failed assertion.
        let _stop = StopOnDrop(&stop);
        // Measured once callers wait for ticks, over at least three more ticks.
        let first = Instant::now();
        while tick_waits(&server) < 2 {
            assert!(
                first.elapsed() < Duration::from_secs(30),
                "the load never saturated"
            );
            prompt(&server, "/healthz");
        }
        let saturated = last_tick_ms(&server);
        let mut took = Vec::new();
        while last_tick_ms(&server) < saturated + 3000 || took.len() < 20 {
            assert!(
                first.elapsed() < Duration::from_secs(60),
                "the ticks stopped"
            );
            let began = Instant::now();
            assert_eq!(prompt(&server, "/healthz").status, 200);
            took.push(began.elapsed());
        }
        // A worker that slept for the next tick would hold a probe for up to the rest of
        // the tick (measured: a max of 995 ms over 20 probes); one that never sleeps
        // answers in milliseconds (measured: a max of 9 ms over 600). A second would never
        // catch the first, since the sleep ends at the tick; a quarter of one does, and is
        // still 25 times the slowest answer seen.
        took.sort();
        let slowest = took[took.len() - 1];
        assert!(
            slowest < TICK_STALL,
            "/healthz took {slowest:?}, a stalled worker's time (of {} probes)",
            took.len()
        );
    });
    server.stop();
}

#[test]
fn a_key_opening_against_a_locked_store_leaves_the_other_routes_answering() {
    let place = Place::new();
    place.create("open", 1, 100_000);
    place.create("slow", 1, 100);
    let mut config = place.config();
    config.preload = vec!["open".into()];
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));
    let status = |key: &str| prompt(&server, &format!("/v1/segment/{key}/status"));
    assert_eq!(status("open").status, 200);

    // The store's write lock, held as a slow or stuck store would hold it: the allocation
    // that opens "slow" waits the store's busy timeout (5 s) for it.
    let holder = rusqlite::Connection::open(place.store_path()).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();

    std::thread::scope(|scope| {
        let base = &server.base;
        let opening = scope.spawn(move || {
            common::answer(
                common::agent()
                    .get(&format!("{base}/api/segment/get/slow"))
                    .call(),
            )
        });
        let is_opening = || {
            let a = prompt(&server, "/v1/status");
            assert_eq!(a.status, 200);
            a.json()["segment"]["opening"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k == "slow")
        };
        let began = Instant::now();
        while !is_opening() {
            assert!(
                began.elapsed() < Duration::from_secs(10),
                "slow never began opening"
            );
        }

        // While it opens, the rest answers promptly.
        for _ in 0..20 {
            assert_eq!(prompt(&server, "/healthz").status, 200);
            assert_eq!(prompt(&server, "/v1/segment/open").status, 200);
            assert_eq!(prompt(&server, "/api/snowflake/get/x").status, 200);
        }
        assert_eq!(prompt(&server, "/readyz").status, 200);
        assert_eq!(prompt(&server, "/metrics").status, 200);
        assert_eq!(status("open").status, 200);
        // A status never opens a key: not "slow", which is opening, nor another.
        assert_eq!(status("slow").kind(), "KEY_NOT_OPEN");
        assert!(
            is_opening(),
            "the checks ran after the open ended, not during it"
        );

        holder.execute_batch("ROLLBACK").unwrap();
        let answer = opening.join().unwrap();
        // Whether the open outlasted the busy timeout (503) or got the lock once it was
        // let go (the first ID), it ended, and nothing else waited for it.
        assert!(answer.status == 200 || answer.status == 503, "{answer:?}");
    });
    server.stop();
}

#[test]
fn a_status_never_allocates_a_segment() {
    let place = Place::new();
    place.create("cold", 1, 100);
    let server = place.start(place.config());
    let before = place.max_id("cold");
    let a = server.get("/v1/segment/cold/status");
    assert_eq!(
        (a.status, a.kind().as_str()),
        (404, "KEY_NOT_OPEN"),
        "{a:?}"
    );
    assert!(a.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("first ID request"));
    assert_eq!(
        place.max_id("cold"),
        before,
        "the status allocated a segment"
    );
    let status = server.get("/v1/status").json();
    assert_eq!(status["segment"]["keys"], serde_json::json!([]));

    assert_eq!(server.get("/v1/segment/cold").ids(), vec![1]);
    let open = server.get("/v1/segment/cold/status");
    assert_eq!(open.status, 200);
    assert_eq!(open.json()["key"], "cold");
    server.stop();
}

/// Snowflake batches whose requests timed out stop taking IDs: with `js53` (4,096 IDs a
/// second) six abandoned batches of 10,000 would otherwise hold the node's IDs for about
/// fifteen seconds, for nobody, and keep a stop waiting until they end.
#[test]
fn abandoned_snowflake_batches_stop_taking_ids() {
    let place = Place::new();
    let mut config = place.config();
    config.layout = "js53".into();
    config.lease_ttl_ms = Some(4000);
    config.lease_max_ttl_ms = Some(4000);
    config.segment = false;
    config.max_batch = 10_000;
    config.request_timeout_ms = 1500;
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));

    std::thread::scope(|scope| {
        let batches: Vec<_> = (0..6)
            .map(|_| scope.spawn(|| server.get("/v1/snowflake/k?count=10000")))
            .collect();
        for batch in batches {
            let a = batch.join().unwrap();
            assert_eq!((a.status, a.kind().as_str()), (503, "TIMEOUT"), "{a:?}");
        }
    });
    let after = server.get("/v1/snowflake/k?count=2000");
    assert_eq!((after.status, after.ids().len()), (200, 2000), "{after:?}");
    // The stop waits for the work left on the blocking pool: abandoned batches that went
    // on would hold it for the ~13 s of IDs they still wanted; stopped, within a tick.
    let began = Instant::now();
    server.stop();
    let took = began.elapsed();
    assert!(
        took < Duration::from_secs(4),
        "the stop waited {took:?} for abandoned batches"
    );
}
