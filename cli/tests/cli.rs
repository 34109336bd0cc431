//! The `ferroflake` command as a user runs it: next (with a node id, and leased), decode,
//! layout, and the refusals.
//!
//! A new embedded registry makes its first claims wait out the lost-records floor (about
//! 12 s with the default settings). So the leased tests share one registry, made and
//! warmed once per run ([`shared_registry`]); only a test that must wreck its registry
//! makes its own.

use std::collections::HashSet;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use ferroflake::{Format, Layout, Parts};
use rustix::fs::FlockOperation;

mod common;
use common::{
    exit_and_stderr, ferroflake, fresh_dir, signal_and_finish, stalled_on_its_output, stderr,
    stdout, wait_until_full, BIN,
};

/// One embedded registry for the leased tests, made by a first run that waits out the
/// new registry's floor, and says so on stderr (a wait is never silent). Under
/// cargo-nextest every test is a process of its own: the run's id names the registry they
/// share, and a lock file makes the others wait while the first one warms it.
fn shared_registry() -> &'static str {
    static DIR: OnceLock<String> = OnceLock::new();
    DIR.get_or_init(|| {
        let run =
            std::env::var("NEXTEST_RUN_ID").unwrap_or_else(|_| std::process::id().to_string());
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-shared-{run}"));
        let lock = File::create(dir.with_extension("lock")).unwrap();
        rustix::fs::flock(&lock, FlockOperation::LockExclusive).unwrap();
        let warmed = dir.with_extension("warmed");
        let dir = dir.to_str().unwrap().to_owned();
        if !warmed.exists() {
            let output = ferroflake(&["next", "--lease", &dir]);
            stdout(&output);
            let message = stderr(&output);
            assert!(
                message.starts_with("ferroflake: node id ")
                    && message.contains("cannot rule out that a holder it lost track of")
                    && message.contains("waiting 12s"),
                "the floor wait of a new registry is reported: {message:?}"
            );
            File::create(&warmed).unwrap();
        }
        dir
    })
}

/// The owner token of `node`'s record in the registry at `dir` (`None`: released).
fn token_of(dir: &str, node: u64) -> Option<String> {
    let text = std::fs::read_to_string(Path::new(dir).join("leases.json")).unwrap();
    let records: serde_json::Value = serde_json::from_str(&text).unwrap();
    let record = &records["nodes"][node.to_string()];
    assert!(record.is_object(), "node {node} has a record: {text}");
    record["token"].as_str().map(str::to_owned)
}

/// A running `ferroflake`, its stdout and stderr drained by threads (so it never blocks
/// on a full pipe).
struct Running {
    child: Child,
    out: Arc<Mutex<Vec<u8>>>,
    err: Arc<Mutex<Vec<u8>>>,
    drains: Vec<thread::JoinHandle<()>>,
}

fn drain(mut from: impl Read + Send + 'static) -> (Arc<Mutex<Vec<u8>>>, thread::JoinHandle<()>) {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&buffer);
    let handle = thread::spawn(move || {
        let mut chunk = [0u8; 65536];
        while let Ok(n @ 1..) = from.read(&mut chunk) {
            into.lock().unwrap().extend_from_slice(&chunk[..n]);
        }
    });
    (buffer, handle)
}

impl Running {
    fn spawn(args: &[&str]) -> Self {
        let mut child = Command::new(BIN)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (out, a) = drain(child.stdout.take().unwrap());
        let (err, b) = drain(child.stderr.take().unwrap());
        Running {
            child,
            out,
            err,
            drains: vec![a, b],
        }
    }

    /// Waits until at least `bytes` of output have arrived.
    fn wait_for_output(&self, bytes: usize) {
        let began = Instant::now();
        while self.out.lock().unwrap().len() < bytes {
            assert!(
                began.elapsed() < Duration::from_secs(60),
                "no output; stderr: {}",
                String::from_utf8_lossy(&self.err.lock().unwrap())
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until standard error says `text`.
    fn wait_for_stderr(&self, text: &str) {
        let began = Instant::now();
        while !String::from_utf8_lossy(&self.err.lock().unwrap()).contains(text) {
            assert!(
                began.elapsed() < Duration::from_secs(60),
                "stderr never said {text:?}: {}",
                String::from_utf8_lossy(&self.err.lock().unwrap())
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits (at most 30 s) for the exit: status code, stdout, stderr.
    fn finish(mut self) -> (Option<i32>, String, String) {
        let began = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if began.elapsed() > Duration::from_secs(30) {
                let _ = self.child.kill();
                panic!("ferroflake did not exit within 30 s");
            }
            thread::sleep(Duration::from_millis(50));
        };
        for drain in self.drains {
            drain.join().unwrap();
        }
        let text = |b: &Arc<Mutex<Vec<u8>>>| String::from_utf8(b.lock().unwrap().clone()).unwrap();
        (status.code(), text(&self.out), text(&self.err))
    }
}

#[test]
fn next_with_a_node_prints_increasing_ids_of_that_node() {
    let out = stdout(&ferroflake(&["next", "-n", "5000", "--node", "42"]));
    let ids: Vec<u64> = out.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 5000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(ids
        .iter()
        .all(|&id| Layout::twitter().decode(id).unwrap().node == 42));
}

/// A fleet switching from another generator: new IDs above the old fleet's highest, as
/// numbers and in time, leased or not. One-second ticks make it show: without the resume
/// point, IDs issued within the old ID's second would be below it.
#[test]
fn next_resumes_above_an_old_generators_highest_id() {
    let seconds = "41/10/12@2020-01-01T00:00:00Z,tick=1000ms";
    let layout = Layout::parse(seconds).unwrap();
    for lease in [None, Some(shared_registry())] {
        let first: u64 = stdout(&ferroflake(&["next", "--node", "7", "--layout", seconds]))
            .trim()
            .parse()
            .unwrap();
        // The old generator's highest: the last sequence number of that second.
        let old = first | layout.max_sequence();
        let old_text = old.to_string();
        let mut args = vec!["next", "-n", "3", "--layout", seconds];
        args.extend(["--resume-after-id", &old_text, "--resume-layout", seconds]);
        match lease {
            None => args.extend(["--node", "7"]),
            Some(dir) => args.extend(["--lease", dir]),
        }
        let out = stdout(&ferroflake(&args));
        for id in out.lines().map(|l| l.parse::<u64>().unwrap()) {
            assert!(id > old, "{args:?}: {id} <= {old}");
            let (new_ms, old_ms) = (layout.decode(id).unwrap(), layout.decode(old).unwrap());
            assert!(new_ms.timestamp_ms > old_ms.timestamp_ms, "{args:?}");
        }
    }

    // An old ID no ID of the layout is above, or one the clock has not reached: refused.
    let now: u64 = stdout(&ferroflake(&["next", "--node", "7"]))
        .trim()
        .parse()
        .unwrap();
    let ahead = (now + (60_000 << 22)).to_string();
    for (args, why) in [
        (
            &["--layout", "js53", "--resume-after-id", &now.to_string()][..],
            "above this layout",
        ),
        (&["--resume-after-id", &ahead], "ahead of the clock"),
        (&["--resume-layout", "sonyflake"], "--resume-after-id"),
        (&["--resume-after-id", "-1"], "'-1'"),
    ] {
        let output = ferroflake(&[&["next", "--node", "7"][..], args].concat());
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains(why),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn next_prints_each_string_format_and_the_layout_and_shard_asked_for() {
    for (name, format) in [
        ("base62", Format::Base62),
        ("base32", Format::Base32),
        ("dec", Format::Decimal),
    ] {
        let out = stdout(&ferroflake(&[
            "next", "-n", "3", "--node", "9", "--layout", "sharded", "--shard", "5", "--format",
            name,
        ]));
        for line in out.lines() {
            if let Some(width) = format.width() {
                assert_eq!(line.len(), width, "{name} is fixed-width");
            }
            let parts = Layout::sharded()
                .decode(format.parse(line).unwrap())
                .unwrap();
            assert_eq!((parts.node, parts.shard), (9, 5));
        }
    }
}

#[test]
fn next_without_a_node_leases_one_and_says_so_in_json() {
    let dir = shared_registry();
    let out = stdout(&ferroflake(&[
        "next", "-n", "3", "--format", "json", "--lease", dir,
    ]));
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["layout"], "twitter");
    assert_eq!(value["lease"]["registry"], "embedded");
    let node = value["node"].as_u64().unwrap();
    let ids: Vec<u64> = value["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    assert!(ids
        .iter()
        .all(|&id| Layout::twitter().decode(id).unwrap().node == node));
    assert_eq!(token_of(dir, node), None, "the lease is released at exit");
}

#[test]
fn two_leased_runs_at_once_get_different_node_ids() {
    let dir = shared_registry();
    // js53 issues 4096 IDs per second per node, so 12,000 IDs span 3 seconds' ticks and
    // take over a second: the two runs overlap, each holding its lease the whole time.
    let spawn = || {
        Command::new(BIN)
            .args([
                "next", "-n", "12000", "--layout", "js53", "--format", "json", "--lease", dir,
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let runs: Vec<serde_json::Value> = [a, b]
        .into_iter()
        .map(|child| serde_json::from_str(&stdout(&child.wait_with_output().unwrap())).unwrap())
        .collect();
    let node = |run: &serde_json::Value| run["node"].as_u64().unwrap();
    assert_ne!(
        node(&runs[0]),
        node(&runs[1]),
        "concurrent runs must not share a node id"
    );
    let span = |run: &serde_json::Value| {
        let times: Vec<u64> = run["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                Layout::js53()
                    .decode(v.as_str().unwrap().parse().unwrap())
                    .unwrap()
                    .timestamp_ms
            })
            .collect();
        (*times.iter().min().unwrap(), *times.iter().max().unwrap())
    };
    let ((a0, a1), (b0, b1)) = (span(&runs[0]), span(&runs[1]));
    assert!(
        a0 <= b1 && b0 <= a1,
        "the two runs really ran at the same time"
    );
    let all: HashSet<&str> = runs
        .iter()
        .flat_map(|r| r["ids"].as_array().unwrap())
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(all.len(), 24_000, "0 duplicates");
}

#[test]
fn without_a_usable_registry_next_refuses_and_guesses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("leases.json");
    std::fs::write(&records, "not json").unwrap();
    let output = ferroflake(&["next", "--lease", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(output.stdout.is_empty(), "no ID may be printed");
    let message = stderr(&output);
    assert!(
        message.contains(&format!(
            "cannot lease a node id from the embedded registry at {}",
            dir.path().display()
        )) && message.contains("unreadable"),
        "{message}"
    );
    assert!(
        message.contains("never guesses a node id") && message.contains("--node N"),
        "{message}"
    );
}

/// `--lease /` would write /leases.json, `--lease mailto:x` a directory `mailto:x` in the
/// working directory, `--lease FILE/leases` failed naming the wrong path.
#[test]
fn lease_addresses_that_are_no_registry_are_refused_as_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let file = file.to_str().unwrap();
    let under_file = format!("{file}/leases");
    let cases: [(&str, String); 7] = [
        ("/", "the filesystem root cannot hold a registry".into()),
        (
            "file:///",
            "the filesystem root cannot hold a registry".into(),
        ),
        ("mailto:x", "unknown scheme \"mailto\"".into()),
        (
            "leases",
            "a relative path names a different registry".into(),
        ),
        (file, "it exists and is not a directory".into()),
        (&under_file, format!("{file} is not a directory")),
        ("redis:localhost", "written redis://".into()),
    ];
    for (address, expected) in cases {
        let output = Command::new(BIN)
            .args(["next", "--lease", address])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{address}: {output:?}");
        assert!(output.stdout.is_empty());
        let message = stderr(&output);
        assert!(message.contains(&expected), "{address}: {message}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "nothing but the file was made: {left:?}");
    assert!(!Path::new("/leases.json").exists());
}

#[test]
fn store_urls_need_the_stores_feature_or_a_reachable_store() {
    // Port 1 on loopback: nothing listens there.
    let output = ferroflake(&["next", "--lease", "redis://127.0.0.1:1/"]);
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let message = stderr(&output);
    if cfg!(feature = "stores") {
        assert!(
            message.contains("cannot lease a node id from the registry at redis://"),
            "{message}"
        );
    } else {
        assert!(message.contains("--features stores"), "{message}");
        assert_eq!(output.status.code(), Some(2));
    }
    let output = ferroflake(&["next", "--lease", "ftp://x"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unknown scheme"));
    // A service on a registry this build leaves out does not start to wait for ever.
    if !cfg!(feature = "stores") {
        for args in [
            &["serve", "--lease", "redis://127.0.0.1:1/"][..],
            &[
                "serve",
                "--modes",
                "segment",
                "--store",
                "redis://127.0.0.1:1/",
            ],
            &["lease", "list", "--lease", "redis://127.0.0.1:1/"],
        ] {
            let output = ferroflake(args);
            assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
            assert!(stderr(&output).contains("--features stores"), "{args:?}");
        }
    }
}

#[test]
fn a_secret_on_the_command_line_is_warned_of_hidden_and_kept_out_by_the_variable() {
    let secret = "pw-on-the-command-line";
    let cases: [(&[&str], &str, &str); 6] = [
        (
            &["next", "--lease"],
            "redis://:PW@127.0.0.1:1/0",
            "FERROFLAKE_LEASE",
        ),
        (
            &["lease", "list", "--lease"],
            "postgres://u:PW@127.0.0.1:1/ids",
            "FERROFLAKE_LEASE",
        ),
        (
            &["segment", "status", "k", "--store"],
            "mysql://u:PW@127.0.0.1:1/ids",
            "FERROFLAKE_STORE",
        ),
        (
            // Refused (no key could open) once the command line is read: it returns.
            &["serve", "--max-keys", "0", "--store"],
            "postgres://u@127.0.0.1:1/ids?password=PW",
            "FERROFLAKE_STORE",
        ),
        // Mistyped (no colon after the scheme): refused as relative paths, which the
        // refusal must not show joined to the working directory, the password whole.
        (
            &["serve", "--store"],
            "postgres//admin:PW@dbhost/ids",
            "FERROFLAKE_STORE",
        ),
        (
            &["serve", "--lease"],
            "etcd//admin:PW@dbhost:2379",
            "FERROFLAKE_LEASE",
        ),
    ];
    for (args, address, variable) in cases {
        let address = address.replace("PW", secret);
        let mut given = args.to_vec();
        given.push(&address);
        let output = ferroflake(&given);
        let text = format!(
            "{}{}",
            stderr(&output),
            String::from_utf8_lossy(&output.stdout)
        );
        assert!(!text.contains(secret), "{given:?}: {text}");
        assert!(
            text.contains("warning: --")
                && text.contains("process list")
                && text.contains(variable),
            "{given:?}: {text}"
        );
        // The same address from the variable: no warning, and the secret still hidden.
        let output = Command::new(BIN)
            .args(&given[..given.len() - 2])
            .env(variable, &address)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            stderr(&output),
            String::from_utf8_lossy(&output.stdout)
        );
        assert!(!text.contains(secret), "{variable}: {text}");
        assert!(!text.contains("warning: --"), "{variable}: {text}");
    }
    // An address without a secret is no cause for a warning.
    let output = ferroflake(&["lease", "list", "--lease", "redis://127.0.0.1:1/0"]);
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
}

#[test]
fn a_node_beats_the_registry_variable_as_a_flag_beats_any_variable() {
    let output = Command::new(BIN)
        .args(["next", "--node", "7", "--format", "dec"])
        .env("FERROFLAKE_LEASE", "relative/not/a/registry")
        .output()
        .unwrap();
    let id: u64 = stdout(&output).trim().parse().unwrap();
    assert_eq!(Layout::twitter().decode(id).unwrap().node, 7);
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["next", "--node", "1", "--lease", "/tmp/x"],
            "cannot be used with",
        ),
        (
            &["next", "--node", "1024"],
            "node id 1024 is out of range 0..=1023",
        ),
        (
            &["next", "--layout", "nope", "--node", "1"],
            "invalid value 'nope'",
        ),
        (
            &["next", "-n", "0", "--node", "1"],
            "invalid value '0' for '--count",
        ),
        (
            &["next", "--node", "1", "--shard", "1"],
            "shard 1 is out of range 0..=0",
        ),
    ];
    for (args, expected) in cases {
        let output = ferroflake(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        assert!(
            stderr(&output).contains(expected),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn decode_shows_iso_time_node_sequence_and_shard() {
    // 2019-10-26T02:40:48.000Z = 1572057648000 ms.
    let parts = Parts {
        timestamp_ms: 1_572_057_648_000,
        node: 5,
        sequence: 7,
        shard: 0,
    };
    let id = Layout::twitter().compose(&parts).unwrap();
    let out = stdout(&ferroflake(&["decode", &id.to_string()]));
    assert!(out.contains("2019-10-26T02:40:48.000Z"), "{out}");
    assert!(
        out.contains("node      5\n")
            && out.contains("sequence  7\n")
            && out.contains("shard     0\n"),
        "{out}"
    );

    let parts = Parts {
        timestamp_ms: 1_700_000_000_123,
        node: 3,
        sequence: 9,
        shard: 12,
    };
    let id = Layout::sharded().compose(&parts).unwrap();
    let base32 = Format::Base32.encode(id).unwrap();
    let out = stdout(&ferroflake(&[
        "decode", &base32, "--format", "base32", "--layout", "sharded", "--json",
    ]));
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["id"], id.to_string());
    assert_eq!(value["time"], "2023-11-14T22:13:20.123Z");
    assert_eq!(
        (
            value["node"].as_u64(),
            value["sequence"].as_u64(),
            value["shard"].as_u64()
        ),
        (Some(3), Some(9), Some(12))
    );
}

#[test]
fn decode_refuses_bad_ids() {
    for (args, expected) in [
        (vec!["decode", "12x"], "invalid character"),
        (vec!["decode", "-5"], "never negative"),
        (vec!["decode", "99999999999999999999"], "longer than any ID"),
        (
            vec!["decode", "9223372036854775807", "--layout", "js53"],
            "not a js53 ID",
        ),
    ] {
        let output = ferroflake(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains(expected),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn layout_draws_bits_capacity_and_exhaustion() {
    let out = stdout(&ferroflake(&["layout"]));
    assert!(
        out.starts_with("twitter: 41 time + 10 node + 12 sequence bits"),
        "{out}"
    );
    assert!(
        out.contains("| 0 |")
            && out.contains("time 41")
            && out.contains("node 10")
            && out.contains("sequence 12")
    );
    assert!(out.contains("4096000 IDs/s per node"), "{out}");
    assert!(out.contains("exhausts  2080-07-10T17:30:30.209Z"), "{out}");
    assert!(out.contains("epoch     2010-11-04T01:42:54.657Z"), "{out}");

    let out = stdout(&ferroflake(&["layout", "--layout", "sonyflake"]));
    assert!(
        out.find("sequence 8").unwrap() < out.find("node 16").unwrap(),
        "sonyflake: machine lowest\n{out}"
    );
    assert!(out.contains("25600 IDs/s per node"), "{out}");

    let out = stdout(&ferroflake(&["layout", "--all"]));
    for name in Layout::PRESET_NAMES {
        assert!(out.contains(&format!("{name}: ")), "--all shows {name}");
    }
}

/// A run whose lease is lost (here: the registry's records deleted under it) stops, says
/// which node id, which registry and why (and does not claim to have released it), exits
/// 1, and ends its JSON as valid JSON with the error recorded after the IDs.
#[test]
fn a_lost_lease_stops_next_with_an_explanation_and_json_still_ends() {
    let dir = fresh_dir("cli", "lost");
    let dir = dir.to_str().unwrap();
    // js53 issues 4096 IDs per second: 10^9 IDs would take days.
    let base = [
        "next",
        "-n",
        "1000000000",
        "--layout",
        "js53",
        "--lease",
        dir,
    ];
    let dec = Running::spawn(&base);
    let json = Running::spawn(&[&base[..], &["--format", "json"]].concat());
    dec.wait_for_output(1);
    json.wait_for_output(1);
    std::fs::remove_file(Path::new(dir).join("leases.json")).unwrap();
    let (dec_code, dec_out, dec_err) = dec.finish();
    let (json_code, json_out, json_err) = json.finish();
    for (code, err) in [(dec_code, &dec_err), (json_code, &json_err)] {
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains("was lost: the embedded registry says the registry has no record of it")
                && err.contains(&format!("(registry: the embedded registry at {dir})"))
                && err.contains("stopped after "),
            "{err}"
        );
        assert!(
            !err.contains("renew the lease") && !err.contains("1577836800000"),
            "no advice that cannot be followed, no epoch as a deadline: {err}"
        );
        assert!(
            !err.contains("was released") && err.contains("nothing to release"),
            "a lost lease is not the process's to release: {err}"
        );
    }
    let node = Layout::js53()
        .decode(dec_out.lines().next().unwrap().parse().unwrap())
        .unwrap()
        .node;
    assert!(
        dec_err.contains(&format!("node id {node} was lost")),
        "{dec_err}"
    );
    let value: serde_json::Value = serde_json::from_str(&json_out).unwrap_or_else(|e| {
        panic!(
            "JSON ends valid ({e}): ...{}",
            &json_out[json_out.len().saturating_sub(200)..]
        )
    });
    assert!(!value["ids"].as_array().unwrap().is_empty());
    assert_eq!(value["error"]["kind"], "LEASE_EXPIRED");
    let message = value["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("node id {} was lost", value["node"])),
        "{message}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// SIGTERM or SIGINT stops issuing and releases the lease at once (it would otherwise
/// block the node id until its TTL ran out: a few interrupted runs could exhaust js53ms's
/// 16 ids), then exits 143 or 130; JSON output still ends valid.
#[test]
fn a_signal_stops_next_releases_its_lease_and_exits_128_plus_the_signal() {
    let dir = shared_registry();
    for (signal, code, format) in [("TERM", 143, "dec"), ("INT", 130, "json")] {
        let run = Running::spawn(&[
            "next",
            "-n",
            "1000000000",
            "--layout",
            "js53ms",
            "--lease",
            dir,
            "--format",
            format,
        ]);
        run.wait_for_output(100);
        run.signal(signal);
        let (status, out, err) = run.finish();
        assert_eq!(status, Some(code), "SIG{signal}: {err}");
        assert!(
            err.contains(&format!("interrupted by SIG{signal}")),
            "{err}"
        );
        let node = if format == "json" {
            let value: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(value["error"]["kind"], "INTERRUPTED");
            value["node"].as_u64().unwrap()
        } else {
            let first = out.lines().next().unwrap().parse().unwrap();
            Layout::js53ms().decode(first).unwrap().node
        };
        assert!(
            err.contains(&format!("node id {node} was released")),
            "{err}"
        );
        assert_eq!(
            token_of(dir, node),
            None,
            "SIG{signal}: the claim was released"
        );
    }
}

/// A reader that stopped reading does not hold a signal off: with the output's pipe full,
/// SIGTERM still stops `next` at once, releases the lease and exits 143.
#[test]
fn a_signal_stops_next_whose_reader_stopped_reading() {
    let dir = shared_registry();
    let mut command = Command::new(BIN);
    command.args([
        "next",
        "-n",
        "1000000000",
        "--layout",
        "js53ms",
        "--lease",
        dir,
    ]);
    let child = stalled_on_its_output(command);
    let (status, out, err) = signal_and_finish(child, "TERM");
    assert_eq!(status, Some(143), "{err}");
    assert!(err.contains("interrupted by SIGTERM"), "{err}");
    let first = out.lines().next().unwrap().parse().unwrap();
    let node = Layout::js53ms().decode(first).unwrap().node;
    assert!(
        err.contains(&format!("node id {node} was released")),
        "{err}"
    );
    assert_eq!(token_of(dir, node), None, "the claim was released");
}

/// An output its parent left non-blocking (a shared pipe with O_NONBLOCK set) is waited on
/// when full, not failed: every ID arrives and the run succeeds.
#[test]
fn a_non_blocking_output_gets_every_id() {
    let (read, write) = rustix::pipe::pipe().unwrap();
    rustix::fs::fcntl_setfl(&write, rustix::fs::OFlags::NONBLOCK).unwrap();
    let mut child = Command::new(BIN)
        .args([
            "next",
            "--node",
            "3",
            "-n",
            "300000",
            "--layout",
            "39/2/22@2020-01-01T00:00:00Z",
        ])
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Full: the run's next write finds no room and must wait for it.
    wait_until_full(&read, &mut child);
    let mut out = String::new();
    File::from(read).read_to_string(&mut out).unwrap();
    let (status, err) = exit_and_stderr(&mut child);
    assert!(status.success(), "{status}: {err}");
    let ids: Vec<u64> = out.lines().map(|line| line.parse().unwrap()).collect();
    assert_eq!(ids.len(), 300_000);
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "in order");
}

/// The first SIGTERM ends a start that waits (here the floor of a new registry) at once:
/// nothing is issued, the claim is given back, and the exit status is 143. A wait that
/// went on would issue after the operator asked it to stop.
#[test]
fn a_signal_ends_a_waiting_start_at_once() {
    for (signal, code) in [("TERM", 143), ("HUP", 129)] {
        let dir = fresh_dir("cli", &format!("waiting-start-{signal}"));
        let dir = dir.to_str().unwrap();
        let run = Running::spawn(&["next", "-n", "10", "--lease", dir]);
        run.wait_for_stderr("before issuing");
        run.signal(signal);
        let (status, out, err) = run.finish();
        assert_eq!(status, Some(code), "SIG{signal}: {err}");
        assert!(
            out.is_empty(),
            "nothing may be issued after SIG{signal}: {out}"
        );
        assert!(
            err.contains(&format!(
                "interrupted by SIG{signal} while waiting to issue under node id 0"
            )) && err.contains("the claim was given back"),
            "{err}"
        );
        assert_eq!(
            token_of(dir, 0),
            None,
            "SIG{signal}: the claim was given back"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Another user's default registry in use on the host means two registries, each handing
/// out node 0: the default is refused, saying why and what to use instead. Run in a mount
/// namespace of its own, with a private /var/tmp, so no other test sees the planted
/// registry (needs root, as CI runs).
#[test]
fn the_default_registry_is_refused_beside_another_users() {
    let script = format!(
        "mount -t tmpfs none /var/tmp && mkdir -m 700 /var/tmp/ferroflake-leases-4242 && \
         exec {BIN} next -n 1"
    );
    let output = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    let err = stderr(&output);
    if err.contains("mount:") || err.contains("unshare:") {
        eprintln!("skipped: needs a private mount namespace (root): {err}");
        return;
    }
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(output.stdout.is_empty(), "nothing issued");
    assert!(
        err.contains("/var/tmp/ferroflake-leases-4242 (uid 4242)")
            && err.contains("both could lease the same node id, and IDs can collide")
            && err.contains("run them as one user and name a registry directory explicitly")
            && err.contains("(etcd://, redis://, zk://, postgres://)"),
        "{err}"
    );
}

/// Inside a container the default registry is one of several on the host (each container
/// has its own /var/tmp): it is refused, saying that IDs can collide and what to use
/// instead, and nothing is issued; a directory named with --lease is accepted there. The
/// container is made known by its `container` variable (as systemd-nspawn, Podman and LXC
/// set it), so the test says the same inside CI's container and on a host.
#[test]
fn the_default_registry_is_refused_in_a_container() {
    let in_container = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .env("container", "ferroflake-test")
            .output()
            .unwrap()
    };
    let output = in_container(&["next", "-n", "1"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(output.stdout.is_empty(), "nothing issued: {err}");
    assert!(
        err.contains("runs in a container (container=ferroflake-test)")
            && err.contains("IDs can collide with other containers'")
            && err.contains("--lease DIR")
            && err.contains("shared by all of them, e.g. a mounted volume")
            && err.contains("(etcd://, redis://, zk://, postgres://)"),
        "{err}"
    );
    let named = in_container(&["next", "-n", "1", "--lease", shared_registry()]);
    assert_eq!(stdout(&named).lines().count(), 1, "{}", stderr(&named));
}

/// `lease restored` starts a floor that every claim then waits out, though the registry's
/// records look intact; a bad address is a usage error.
#[test]
fn lease_restored_makes_claims_wait_out_a_floor() {
    let dir = fresh_dir("cli", "restored");
    let dir = dir.to_str().unwrap();
    let output = ferroflake(&[
        "lease",
        "restored",
        "--lease",
        dir,
        "--max-ttl-ms",
        "1000",
        "--quarantine-ms",
        "500",
    ]);
    let said = stdout(&output);
    assert!(
        said.contains(&format!(
            "the embedded registry at {dir}: every claim waits 1s 500ms"
        )),
        "{said}"
    );
    let output = ferroflake(&["next", "-n", "1", "--lease", dir]);
    stdout(&output);
    let err = stderr(&output);
    assert!(
        err.contains("cannot rule out") && err.contains("waiting 1s"),
        "the claim waits out the floor `restored` started (not a new registry's 12 s): {err}"
    );
    let output = ferroflake(&["lease", "restored", "--lease", "relative/dir"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let _ = std::fs::remove_dir_all(dir);
}

/// IDs that cannot be written are lost: `next` must not exit 0 (nor panic) when standard
/// output is closed or its reader goes away, and a leased run still releases its lease.
#[test]
fn next_fails_when_its_output_is_closed_or_broken() {
    let closed = Command::new("sh")
        .args(["-c", "exec \"$0\" next --node 1 >&-", BIN])
        .output()
        .unwrap();
    assert_eq!(closed.status.code(), Some(1), "{closed:?}");
    assert!(
        stderr(&closed).contains("standard output is closed"),
        "{closed:?}"
    );

    let dir = shared_registry();
    for args in [
        &["next", "-n", "100000000", "--node", "3"][..],
        &["next", "-n", "100000000", "--lease", dir],
    ] {
        let mut child = Command::new(BIN)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 20];
        stdout.read_exact(&mut first).unwrap();
        drop(stdout); // the reader goes away, as `| head -1` does
        let output = child.wait_with_output().unwrap();
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {message}");
        assert!(
            message.contains("broken pipe") && !message.contains("panicked"),
            "{message}"
        );
        if args.contains(&"--lease") {
            let id = String::from_utf8_lossy(&first[..19]).parse().unwrap();
            let node = Layout::twitter().decode(id).unwrap().node;
            assert!(
                message.contains(&format!("node id {node} was released")),
                "{message}"
            );
            assert_eq!(token_of(dir, node), None, "released on the error too");
        }
    }
}

/// Positions and lengths count characters, not bytes, in the string as shown.
#[test]
fn decode_errors_count_characters_in_the_string_shown() {
    for (args, expected) in [
        (
            vec!["decode", " 12x"],
            "cannot read \"12x\" as a dec ID: invalid character 'x' at position 3",
        ),
        (vec!["decode", "ééx"], "invalid character 'é' at position 1"),
        (
            vec!["decode", "ééééé", "--format", "base62"],
            "5 characters, but a base62 ID is always 11 characters long",
        ),
        (
            vec!["decode", "12345678901234567é", "--format", "dec"],
            "'é' at position 18",
        ),
    ] {
        let output = ferroflake(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains(expected),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}
