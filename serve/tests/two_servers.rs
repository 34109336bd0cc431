//! Two servers sharing one SQLite store and one embedded lease registry, asked for about a
//! million IDs of each mode at once, in batches and one at a time through the Leaf routes:
//! not one ID is answered twice.

mod common;

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{agent, answer, Place};

const PER_MODE: u64 = 1_000_000;
const BATCH: u64 = 5_000;
const THREADS_PER_SERVER_AND_MODE: u64 = 2;
const LEAF_CALLS_PER_THREAD: u64 = 500;

#[test]
fn a_million_ids_per_mode_from_two_servers_have_no_duplicate() {
    let place = Place::new();
    place.create("shared", 1, 1000);
    let config = || {
        let mut c = place.config();
        c.preload = vec!["shared".into()];
        c
    };
    let servers = [place.start(config()), place.start(config())];
    for s in &servers {
        s.wait_ready(Duration::from_secs(15));
    }
    let nodes: Vec<u64> = servers
        .iter()
        .map(|s| s.get("/readyz").json()["lease"]["node"].as_u64().unwrap())
        .collect();
    assert_ne!(
        nodes[0], nodes[1],
        "the registry gave both servers one node id"
    );

    let segment_ids = Mutex::new(Vec::<u64>::new());
    let snowflake_ids = Mutex::new(Vec::<u64>::new());
    let batches = PER_MODE / BATCH / (2 * THREADS_PER_SERVER_AND_MODE);
    let began = Instant::now();
    std::thread::scope(|scope| {
        for server in &servers {
            for (route, sink) in [
                ("/v1/segment/shared", &segment_ids),
                ("/v1/snowflake/k", &snowflake_ids),
            ] {
                for _ in 0..THREADS_PER_SERVER_AND_MODE {
                    let base = server.base.clone();
                    scope.spawn(move || {
                        let client = agent();
                        let mut mine = Vec::new();
                        for _ in 0..batches {
                            let a =
                                answer(client.get(&format!("{base}{route}?count={BATCH}")).call());
                            assert_eq!(a.status, 200, "{route}: {}", a.body);
                            let ids = a.ids();
                            assert_eq!(ids.len() as u64, BATCH);
                            assert!(ids.windows(2).all(|w| w[0] < w[1]), "a batch increases");
                            mine.extend(ids);
                        }
                        sink.lock().unwrap().extend(mine);
                    });
                }
            }
            // Single IDs through Leaf's routes, at the same time.
            for (route, sink) in [
                ("/api/segment/get/shared", &segment_ids),
                ("/api/snowflake/get/k", &snowflake_ids),
            ] {
                let base = server.base.clone();
                scope.spawn(move || {
                    let client = agent();
                    let mut mine = Vec::new();
                    for _ in 0..LEAF_CALLS_PER_THREAD {
                        let a = answer(client.get(&format!("{base}{route}")).call());
                        assert_eq!(a.status, 200, "{route}: {}", a.body);
                        mine.push(a.body.parse::<u64>().unwrap());
                    }
                    sink.lock().unwrap().extend(mine);
                });
            }
        }
    });
    let took = began.elapsed();
    let expected = batches * BATCH * 2 * THREADS_PER_SERVER_AND_MODE + 2 * LEAF_CALLS_PER_THREAD;
    for (mode, ids) in [("segment", segment_ids), ("snowflake", snowflake_ids)] {
        let ids = ids.into_inner().unwrap();
        assert_eq!(ids.len() as u64, expected, "{mode}");
        let unique: HashSet<u64> = ids.iter().copied().collect();
        assert_eq!(
            unique.len(),
            ids.len(),
            "{mode}: {} duplicates",
            ids.len() - unique.len()
        );
    }
    eprintln!("{} IDs per mode from two servers in {took:?}", expected);
    for server in servers {
        let report = server.stop();
        assert!(report.drained);
    }
}
