//! Segment mode (`ferroflake-segment`): the hot path next to the bare `fetch_add` it is
//! built on and to the core snowflake generator, two threads on one key, per-call latency on
//! SQLite while segments are being fetched, and what fetching one segment costs on each
//! store.
//!
//! Groups (criterion; throughput in IDs, so its rate line is IDs/s):
//!
//! - `segment_one_thread`: plain back-to-back loops of `AtomicU64::fetch_add(1, Relaxed)` (the
//!   limit: the hot path is three loads, this same increment and a bounds check) and of
//!   `KeyHandle::next_id().ok()` on a `MemoryStore` key whose segments are huge (table step
//!   1,000,000, `max_step` 2^31 - 1), so a fetch is rare and happens in the background.
//!   `segment_memory_result` black-boxes the whole `Result` instead (its error slot makes it
//!   72 bytes, stored on every call).
//! - `segment_one_thread_edge`: the core generator on the Twitter layout, timed as
//!   `per_id.rs` times it (bursts of 3,000 calls from a tick edge, below its 4,096-per-ms cap).
//! - `segment_two_threads`: two threads released together on one shared atomic and on one
//!   shared key; the figure is the wall time over the IDs of both.
//! - `segment_fetch`: one `SegmentStore::allocate(key, 1000)` on SQLite (a temporary file),
//!   and on PostgreSQL, MySQL/MariaDB and Redis when `FERROFLAKE_TEST_POSTGRES`,
//!   `FERROFLAKE_TEST_MYSQL` and `FERROFLAKE_TEST_REDIS` hold their addresses
//!   (`scripts/servers/with-servers.sh` sets them). Each run uses its own table
//!   (`bench_<pid>`) or key prefix (`bench<pid>`); they are left on the server. And through
//!   a `ferroflake serve` on SQLite (`ferroflake+http://`) when `FERROFLAKE_BENCH_SERVICE`
//!   holds its address (`benches/service.sh` sets it).
//!
//! Then, outside criterion, the latency of single `next_id` calls: several million calls on
//! one thread, a TSC stamp after each (`ferroflake_benches::Trace`), percentiles of the
//! per-call times. A SQLite key with table step 1,000 is run twice: with the default
//! settings (the step doubles each time a segment lasts under 15 minutes, up to 1,000,000,
//! so fetches thin out as the run goes on), and with `max_step` 1,000 (a fetch for every
//! 1,000 IDs, started 100 IDs into each segment). A `fetch_add` traced the same way gives
//! the floor: the stamp and the store of each call, and the run's own time check, one call
//! in 1,024. The stamps resolve about 10 ns on the 2-core VM of BENCHMARKS.md, so the
//! lower percentiles are that coarse.
//!
//! Then segments taken over HTTP (`segment_remote`), when `FERROFLAKE_BENCH_SERVICE` holds
//! the address of a running `ferroflake serve` (`ferroflake+http://127.0.0.1:PORT/`;
//! `benches/service.sh` starts one and sets it): one key on the service's store and one on
//! a local SQLite file, both created with table step 100,000 and opened with the default
//! settings, so that the step doubles with each range up to 1,000,000 (a warm-up takes
//! them there). Rounds of `next_id().ok()` calls, the local key then the remote key, each
//! run issuing 50 M IDs (50 ranges, refills included); the figures are the median IDs/s of
//! each key and the median of the rounds' remote / local ratios. Around each remote run, the service's CPU time
//! (`/proc/PID/stat` utime + stime, PID in `FERROFLAKE_BENCH_SERVICE_PID`) and the HTTP
//! requests it answered (`ferroflake_http_requests_total` at `/metrics`, the scrapes
//! themselves left out) give its cost per million IDs.
//!
//! These results are printed, and written as JSON lines to `$FERROFLAKE_SEGMENT_REPORT`
//! when set (`benches/run.sh` sets it; `benches/report.py` makes the table). An optional
//! filter argument, as with criterion, also selects among the latency runs and stores.

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use ferroflake::{Clock, Generator, Layout};
use ferroflake_benches::{
    count_order_breaks, on_two_threads, timed_bursts, wait_for_tick_change, Trace,
};
use ferroflake_segment::{
    KeyHandle, MemoryStore, SegmentAllocator, SegmentConfig, SegmentStore, SqliteStore, MAX_STEP,
};

/// The key every store and allocator here uses.
const KEY: &str = "bench";
/// IDs per tick-edge burst: three quarters of a Twitter tick's 4,096.
const BURST: u64 = 3_000;
/// Calls per latency run, unless its time limit comes first.
const LATENCY_CALLS: usize = 5_000_000;
/// The time limit of one latency run.
const LATENCY_LIMIT: Duration = Duration::from_secs(20);
/// The step the store-fetch group asks for.
const FETCH_STEP: u64 = 1_000;

/// The first argument that is not a flag: criterion's filter, applied by hand to the parts
/// criterion does not run.
fn filter() -> String {
    std::env::args()
        .skip(1)
        .find(|arg| !arg.starts_with("--"))
        .unwrap_or_default()
}

/// A key with its own allocator (kept alive with it) on `store`, created with `step`.
fn key_on(
    store: Arc<dyn SegmentStore>,
    step: u64,
    config: SegmentConfig,
) -> (SegmentAllocator, KeyHandle) {
    store.create(KEY, 1, step).expect("create the bench key");
    let allocator = SegmentAllocator::new(store, config).expect("allocator");
    let key = allocator.key(KEY).expect("open the bench key");
    (allocator, key)
}

/// A memory-store key whose segments are so large that fetches almost never happen.
fn large_segment_key() -> (SegmentAllocator, KeyHandle) {
    let config = SegmentConfig {
        max_step: MAX_STEP,
        ..SegmentConfig::default()
    };
    key_on(Arc::new(MemoryStore::new()), 1_000_000, config)
}

fn note_fetches(name: &str, key: &KeyHandle) {
    let status = key.status();
    eprintln!(
        "note: {name}: fetches {}, waits {}, step now {}",
        status.counters.fetches, status.counters.waits, status.step
    );
}

fn one_thread(c: &mut Criterion) {
    let mut group = c.benchmark_group("segment_one_thread");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(1));
    let counter = AtomicU64::new(0);
    group.bench_function("fetch_add", |b| {
        b.iter(|| counter.fetch_add(1, Ordering::Relaxed))
    });
    let (_allocator, key) = large_segment_key();
    // What a caller keeps is the ID: `.ok()` hands criterion a 16-byte `Option<u64>`.
    // Black-boxing the whole `Result` makes every call store its 72-byte error slot, which
    // no caller does; that figure is kept as its own row.
    group.bench_function("segment_memory", |b| b.iter(|| key.next_id().ok()));
    group.bench_function("segment_memory_result", |b| b.iter(|| key.next_id()));
    group.finish();
    note_fetches("one thread, memory key", &key);

    // The Twitter layout caps a node at 4,096 IDs per ms, so a plain loop would time the
    // cap: bursts from a tick edge time the call, as in per_id.rs.
    let mut group = c.benchmark_group("segment_one_thread_edge");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(400))
        .throughput(Throughput::Elements(1));
    let twitter = Generator::new(Layout::twitter(), 1).expect("twitter generator");
    group.bench_function("snowflake_twitter", |b| {
        b.iter_custom(|iters| {
            timed_bursts(
                iters,
                BURST,
                || wait_for_tick_change(|| twitter.clock().now_ms()),
                || twitter.next_id(),
            )
        })
    });
    group.finish();
    eprintln!(
        "note: snowflake twitter: waits {} (0: no call met the sequence cap)",
        twitter.counters().waits
    );
}

fn two_threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("segment_two_threads");
    group
        .sample_size(15)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(1));
    let counter = AtomicU64::new(0);
    group.bench_function("fetch_add_shared", |b| {
        b.iter_custom(|iters| on_two_threads(iters, || counter.fetch_add(1, Ordering::Relaxed)))
    });
    let (_allocator, key) = large_segment_key();
    group.bench_function("segment_memory_shared", |b| {
        b.iter_custom(|iters| on_two_threads(iters, || key.next_id().ok()))
    });
    group.finish();
    note_fetches("two threads, memory key", &key);
}

/// One line of the JSON report, built from (name, already-encoded value) pairs.
fn json_line(fields: &[(&str, String)]) -> String {
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", body.join(","))
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `url` with `name=value` added to its query.
fn with_param(url: &str, name: &str, value: &str) -> String {
    let joint = if url.contains('?') { '&' } else { '?' };
    format!("{url}{joint}{name}={value}")
}

/// The stores to fetch from: (name, address, or why it is skipped).
fn fetch_targets(sqlite_file: &Path) -> Vec<(&'static str, Result<String, String>)> {
    let pid = std::process::id();
    let server = |var: &str, param: &str, value: String| match std::env::var(var) {
        Ok(url) if !url.is_empty() => Ok(with_param(&url, param, &value)),
        _ => Err(format!("{var} not set")),
    };
    vec![
        ("sqlite", Ok(sqlite_file.display().to_string())),
        (
            "postgres",
            server("FERROFLAKE_TEST_POSTGRES", "table", format!("bench_{pid}")),
        ),
        (
            "mysql",
            server("FERROFLAKE_TEST_MYSQL", "table", format!("bench_{pid}")),
        ),
        (
            "redis",
            // The test Redis runs without an AOF.
            server("FERROFLAKE_TEST_REDIS", "prefix", format!("bench{pid}"))
                .map(|url| format!("{url}&accept=lost-writes")),
        ),
        (
            "remote",
            match std::env::var("FERROFLAKE_BENCH_SERVICE") {
                Ok(url) if !url.is_empty() => Ok(url),
                _ => Err("FERROFLAKE_BENCH_SERVICE not set".to_owned()),
            },
        ),
    ]
}

fn store_fetch(c: &mut Criterion, report: &mut Vec<String>) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let wanted = filter();
    let mut group = c.benchmark_group("segment_fetch");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for (name, address) in fetch_targets(&dir.path().join("fetch.db")) {
        if !format!("segment_fetch/{name}").contains(wanted.as_str()) {
            continue;
        }
        let line = |status: &str, detail: &str| {
            json_line(&[
                ("kind", json_str("fetch")),
                ("store", json_str(name)),
                ("status", json_str(status)),
                ("detail", json_str(detail)),
            ])
        };
        let address = match address {
            Ok(address) => address,
            Err(why) => {
                println!("segment_fetch/{name}: skipped ({why})");
                report.push(line("skipped", &why));
                continue;
            }
        };
        let store = match ferroflake_segment_stores::open(Some(&address))
            .and_then(|store| store.create(KEY, 1, FETCH_STEP).map(|()| store))
        {
            Ok(store) => store,
            Err(e) => {
                println!("segment_fetch/{name}: failed to open {address}: {e}");
                report.push(line("failed", &e.to_string()));
                continue;
            }
        };
        let errors = AtomicU64::new(0);
        group.bench_function(name, |b| {
            b.iter(|| {
                if store.allocate(KEY, FETCH_STEP).is_err() {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            })
        });
        let errors = errors.into_inner();
        if errors > 0 {
            println!("segment_fetch/{name}: {errors} allocations failed: the figure is not valid");
            report.push(line("failed", &format!("{errors} allocations failed")));
        } else {
            report.push(line("measured", &address));
        }
    }
    group.finish();
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Traces `next` and reports the percentiles of its per-call times; `key` (if any) gives
/// the fetch and wait counts.
fn latency_run(
    name: &str,
    key: Option<&KeyHandle>,
    next: impl FnMut() -> u64,
    report: &mut Vec<String>,
) {
    let trace = Trace::record(LATENCY_LIMIT, LATENCY_CALLS, next);
    // An error is recorded as ID 0 (no key issues 0 here: every key starts at 1).
    let errors = trace.ids.iter().filter(|&&id| id == 0).count();
    let issued: Vec<u64> = trace.ids.iter().copied().filter(|&id| id != 0).collect();
    let order_breaks = count_order_breaks(&issued);
    let mut ns = trace.call_ns();
    ns.sort_unstable_by(f64::total_cmp);
    let p = |q| percentile(&ns, q);
    let max = ns.last().copied().unwrap_or(0.0);
    let counters = key.map(|k| k.status());
    let count = |f: fn(&ferroflake_segment::KeyStatus) -> u64| {
        counters
            .as_ref()
            .map_or("null".to_string(), |s| f(s).to_string())
    };
    println!(
        "latency {name}: {} calls, {:.1} M IDs/s, p50 {:.0} ns, p99 {:.0} ns, p99.9 {:.0} ns, \
         p99.99 {:.0} ns, max {:.0} ns; fetches {}, waits {}, final step {}, errors {errors}, \
         order breaks {order_breaks}",
        trace.calls(),
        trace.per_second() / 1e6,
        p(0.50),
        p(0.99),
        p(0.999),
        p(0.9999),
        max,
        count(|s| s.counters.fetches),
        count(|s| s.counters.waits),
        count(|s| s.step),
    );
    report.push(json_line(&[
        ("kind", json_str("latency")),
        ("name", json_str(name)),
        ("calls", trace.calls().to_string()),
        ("per_second", format!("{:.0}", trace.per_second())),
        ("p50_ns", format!("{:.1}", p(0.50))),
        ("p99_ns", format!("{:.1}", p(0.99))),
        ("p999_ns", format!("{:.1}", p(0.999))),
        ("p9999_ns", format!("{:.1}", p(0.9999))),
        ("max_ns", format!("{max:.1}")),
        ("fetches", count(|s| s.counters.fetches)),
        ("waits", count(|s| s.counters.waits)),
        ("not_ready", count(|s| s.counters.not_ready)),
        ("final_step", count(|s| s.step)),
        ("errors", errors.to_string()),
        ("order_breaks", order_breaks.to_string()),
    ]));
}

fn latencies(report: &mut Vec<String>) {
    let wanted = filter();
    let wanted = |name: &str| format!("segment_latency/{name}").contains(wanted.as_str());

    if wanted("fetch_add") {
        let counter = AtomicU64::new(1);
        latency_run(
            "fetch_add",
            None,
            || counter.fetch_add(1, Ordering::Relaxed),
            report,
        );
    }
    let sqlite_runs = [
        ("sqlite_step_1000_default", SegmentConfig::default()),
        (
            "sqlite_step_1000_max_step_1000",
            SegmentConfig {
                max_step: 1_000,
                ..SegmentConfig::default()
            },
        ),
    ];
    for (name, config) in sqlite_runs {
        if !wanted(name) {
            continue;
        }
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = SqliteStore::open(dir.path().join("latency.db")).expect("SQLite store");
        let (allocator, key) = key_on(Arc::new(store), 1_000, config);
        latency_run(
            name,
            Some(&key),
            || black_box(key.next_id()).unwrap_or(0),
            report,
        );
        allocator.shutdown();
    }
}

/// The table step of both keys of the remote comparison. Their allocators have the
/// default settings: the step doubles with each range, up to `max_step` 1,000,000.
const REMOTE_STEP: u64 = 100_000;
/// IDs per timed run of one key: 50 ranges of the grown step.
const REMOTE_IDS: u64 = 50_000_000;
/// The time limit of one run, should refills stall.
const REMOTE_LIMIT: Duration = Duration::from_secs(30);

/// One run of `n` calls of `key.next_id()`: (IDs issued, calls that failed, seconds).
fn issue(key: &KeyHandle, n: u64) -> (u64, u64, f64) {
    let started = Instant::now();
    let (mut issued, mut errors) = (0, 0);
    while issued + errors < n {
        // The clock is read once per 65,536 calls: a fraction of a ns per ID.
        for _ in 0..(n - issued - errors).min(1 << 16) {
            match black_box(key.next_id().ok()) {
                Some(_) => issued += 1,
                None => errors += 1,
            }
        }
        if started.elapsed() > REMOTE_LIMIT {
            break;
        }
    }
    (issued, errors, started.elapsed().as_secs_f64())
}

/// The service's CPU time so far (utime + stime), in clock ticks.
fn service_ticks(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces): state is field 3, utime 14,
    // stime 15.
    let rest: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(rest.get(11)?.parse::<u64>().ok()? + rest.get(12)?.parse::<u64>().ok()?)
}

fn clock_ticks_per_second() -> Option<u64> {
    let out = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()?;
    String::from_utf8(out.stdout).ok()?.trim().parse().ok()
}

/// The HTTP requests the service has answered, but for its `/metrics` scrapes: the sum of
/// `ferroflake_http_requests_total`. HTTP/1.0, so the body is not chunked.
fn service_requests(host_port: &str) -> Option<u64> {
    let mut stream = TcpStream::connect(host_port).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET /metrics HTTP/1.0\r\nHost: {host_port}\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let mut total = 0;
    for line in answer.lines() {
        if line.starts_with("ferroflake_http_requests_total{")
            && !line.contains("route=\"/metrics\"")
        {
            total += line.rsplit(' ').next()?.parse::<u64>().ok()?;
        }
    }
    Some(total)
}

/// Nearest-rank median.
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    percentile(&sorted, 0.5)
}

/// IDs/s from a segment taken over HTTP against a local SQLite key, and what the service
/// spends per million of them.
fn remote(report: &mut Vec<String>) {
    if !"segment_remote".contains(filter().as_str()) {
        return;
    }
    let skipped = |why: &str| {
        println!("segment_remote: skipped ({why})");
        json_line(&[
            ("kind", json_str("remote")),
            ("face", json_str("rust")),
            ("status", json_str("skipped")),
            ("detail", json_str(why)),
        ])
    };
    let address = match std::env::var("FERROFLAKE_BENCH_SERVICE") {
        Ok(address) if !address.is_empty() => address,
        _ => return report.push(skipped("FERROFLAKE_BENCH_SERVICE not set")),
    };
    let pid = std::env::var("FERROFLAKE_BENCH_SERVICE_PID").unwrap_or_default();
    let host_port = address
        .trim_start_matches("ferroflake+http://")
        .trim_end_matches('/')
        .to_owned();
    let quick = std::env::args().any(|arg| arg == "--quick");
    let (rounds, ids) = if quick {
        (3, REMOTE_IDS / 5)
    } else {
        (7, REMOTE_IDS)
    };

    let dir = tempfile::tempdir().expect("temporary directory");
    let name = format!("remote_{}", std::process::id());
    let config = SegmentConfig::default();
    let open = |address: &str| -> Result<(SegmentAllocator, KeyHandle), String> {
        let store = ferroflake_segment_stores::open(Some(address)).map_err(|e| e.to_string())?;
        store
            .create(&name, 1, REMOTE_STEP)
            .map_err(|e| e.to_string())?;
        let allocator = SegmentAllocator::new(store, config.clone()).map_err(|e| e.to_string())?;
        let key = allocator.key(&name).map_err(|e| e.to_string())?;
        Ok((allocator, key))
    };
    let local_file = dir.path().join("local.db").display().to_string();
    let (local, remote) = match (open(&local_file), open(&address)) {
        (Ok(local), Ok(remote)) => (local, remote),
        (Err(e), _) | (_, Err(e)) => {
            println!("segment_remote: failed: {e}");
            return report.push(json_line(&[
                ("kind", json_str("remote")),
                ("face", json_str("rust")),
                ("status", json_str("failed")),
                ("detail", json_str(&e)),
            ]));
        }
    };
    // Warm-up: the connection, the files, and the ranges of 100,000 to 800,000 IDs before
    // the step reaches 1,000,000.
    issue(&local.1, 4_000_000);
    issue(&remote.1, 4_000_000);

    let counters = |key: &KeyHandle| key.status().counters;
    let (local_before, remote_before) = (counters(&local.1), counters(&remote.1));
    let (mut local_rates, mut remote_rates, mut ratios) = (vec![], vec![], vec![]);
    let (mut errors, mut service_ids, mut requests, mut ticks) = (0, 0, Some(0), Some(0));
    for _ in 0..rounds {
        let (issued, failed, seconds) = issue(&local.1, ids);
        errors += failed;
        let local_rate = issued as f64 / seconds;

        let requests_before = service_requests(&host_port);
        let ticks_before = service_ticks(&pid);
        let (issued, failed, seconds) = issue(&remote.1, ids);
        let ticks_after = service_ticks(&pid);
        let requests_after = service_requests(&host_port);
        errors += failed;
        service_ids += issued;
        requests = requests
            .zip(requests_after.zip(requests_before))
            .map(|(sum, (a, b))| sum + a - b);
        ticks = ticks
            .zip(ticks_after.zip(ticks_before))
            .map(|(sum, (a, b))| sum + a - b);
        let remote_rate = issued as f64 / seconds;

        local_rates.push(local_rate);
        remote_rates.push(remote_rate);
        ratios.push(remote_rate / local_rate);
    }
    let (local_after, remote_after) = (counters(&local.1), counters(&remote.1));
    let step = remote.1.status().step;
    local.0.shutdown();
    remote.0.shutdown();

    let tck = clock_ticks_per_second();
    let cpu = ticks.zip(tck).map(|(t, hz)| t as f64 / hz as f64);
    let (local_rate, remote_rate, ratio) =
        (median(&local_rates), median(&remote_rates), median(&ratios));
    let or_null = |v: Option<String>| v.unwrap_or_else(|| "null".to_owned());
    println!(
        "segment_remote: table step {REMOTE_STEP}, step now {step}, {rounds} rounds of {ids} \
         IDs per key: local SQLite {:.1} M IDs/s, over HTTP {:.1} M IDs/s, remote / local \
         {ratio:.3}; fetches {} local, {} remote; waits {} local, {} remote; errors {errors}; \
         the service: {} requests, {} s CPU for {service_ids} IDs",
        local_rate / 1e6,
        remote_rate / 1e6,
        local_after.fetches - local_before.fetches,
        remote_after.fetches - remote_before.fetches,
        local_after.waits - local_before.waits,
        remote_after.waits - remote_before.waits,
        or_null(requests.map(|r| r.to_string())),
        or_null(cpu.map(|c| format!("{c:.2}"))),
    );
    report.push(json_line(&[
        ("kind", json_str("remote")),
        ("face", json_str("rust")),
        ("status", json_str("measured")),
        ("table_step", REMOTE_STEP.to_string()),
        ("step", step.to_string()),
        ("rounds", rounds.to_string()),
        ("ids_per_run", ids.to_string()),
        ("local_per_second", format!("{local_rate:.0}")),
        ("remote_per_second", format!("{remote_rate:.0}")),
        ("ratio", format!("{ratio:.4}")),
        (
            "local_fetches",
            (local_after.fetches - local_before.fetches).to_string(),
        ),
        (
            "remote_fetches",
            (remote_after.fetches - remote_before.fetches).to_string(),
        ),
        (
            "local_waits",
            (local_after.waits - local_before.waits).to_string(),
        ),
        (
            "remote_waits",
            (remote_after.waits - remote_before.waits).to_string(),
        ),
        ("errors", errors.to_string()),
        ("service_ids", service_ids.to_string()),
        ("service_requests", or_null(requests.map(|r| r.to_string()))),
        ("service_cpu_s", or_null(cpu.map(|c| format!("{c:.3}")))),
        ("clk_tck", or_null(tck.map(|t| t.to_string()))),
    ]));
}

fn main() {
    let mut report = Vec::new();
    let mut c = Criterion::default().configure_from_args();
    one_thread(&mut c);
    two_threads(&mut c);
    store_fetch(&mut c, &mut report);
    // Criterion's test mode (no `--bench`, as under `cargo test --benches`) runs each
    // benchmark once to see that it works; the long latency runs are left out there.
    if std::env::args().any(|arg| arg == "--bench") {
        latencies(&mut report);
        remote(&mut report);
    }
    c.final_summary();
    if let Ok(path) = std::env::var("FERROFLAKE_SEGMENT_REPORT") {
        if let Err(error) = std::fs::write(&path, report.join("\n") + "\n") {
            eprintln!("could not write {path}: {error}");
        }
    }
}
