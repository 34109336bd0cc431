//! `ferroflake segment` as a user runs it, each test on a SQLite file of its own in a
//! temporary directory: create, next (batches, give-back, the JavaScript limit, signals,
//! broken output), status, and every refusal in text and in JSON.

use std::collections::HashSet;
use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{
    exit_and_stderr, send_signal, signal_and_finish, stalled_on_its_output, stderr, stdout, BIN,
};

/// 2^53 - 1: the largest ID `--js` may print.
const LIMIT_JS: u64 = (1 << 53) - 1;

/// A temporary directory and the SQLite file `s.db` in it (created by the first command).
struct Store {
    /// Held for its lifetime: dropping it removes the directory.
    _dir: tempfile::TempDir,
    path: String,
}

impl Store {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db").to_str().unwrap().to_owned();
        Store { _dir: dir, path }
    }

    /// `ferroflake segment ARGS --store FILE`.
    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(BIN);
        command
            .arg("segment")
            .args(args)
            .args(["--store", &self.path])
            .env("FERROFLAKE_STATE_DIR", self._dir.path().join("state"));
        command
    }

    fn create(&self, key: &str, start: u64, step: u64) {
        let out = stdout(&self.run(&[
            "create",
            key,
            "--start",
            &start.to_string(),
            "--step",
            &step.to_string(),
        ]));
        assert!(
            out.starts_with(&format!("created segment key {key:?}")),
            "{out}"
        );
    }

    /// `next KEY -n COUNT`, as numbers.
    fn next(&self, key: &str, count: u64) -> Vec<u64> {
        ids(&stdout(&self.run(&["next", key, "-n", &count.to_string()])))
    }

    /// Deletes rows whose key matches `pattern` (SQL `LIKE`) behind the CLI's back; how many.
    fn delete_rows(&self, pattern: &str) -> usize {
        let conn = rusqlite::Connection::open(&self.path).unwrap();
        conn.execute("DELETE FROM leaf_alloc WHERE biz_tag LIKE ?1", [pattern])
            .unwrap()
    }

    /// The key's max_id, from `status --format json`.
    fn max_id(&self, key: &str) -> u64 {
        let value = json(&stdout(&self.run(&["status", key, "--format", "json"])));
        value["keys"][0]["max_id"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    }
}

/// Whether this process may run others as another user.
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n")
}

fn ids(text: &str) -> Vec<u64> {
    text.lines().map(|l| l.parse().unwrap()).collect()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The `ids` of a `next --format json` object, as numbers.
fn json_ids(value: &Value) -> Vec<u64> {
    value["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn next_starts_at_start_and_back_to_back_runs_continue_without_overlap_or_gap() {
    let store = Store::new();
    store.create("orders", 100, 10);
    assert_eq!(store.next("orders", 3), [100, 101, 102]);
    // The first run took 100..110 and gave 103..110 back: the second starts at 103.
    assert_eq!(store.next("orders", 3), [103, 104, 105]);
    assert_eq!(store.next("orders", 1), [106]);
    let value = json(&stdout(
        &store.run(&["next", "orders", "-n", "2", "--format", "json"]),
    ));
    assert_eq!(value["key"], "orders");
    assert_eq!(json_ids(&value), [107, 108]);
    assert!(value.get("error").is_none(), "{value}");
    assert_eq!(store.max_id("orders"), 109, "the rest was given back");
}

#[test]
fn create_without_start_or_step_takes_the_segment_crates_defaults() {
    let store = Store::new();
    let out = stdout(&store.run(&["create", "plain"]));
    assert!(out.starts_with("created segment key \"plain\""), "{out}");
    let row = json(&stdout(
        &store.run(&["status", "plain", "--format", "json"]),
    ));
    assert_eq!(row["keys"][0]["step"], 1000, "{row}");
    assert_eq!(store.next("plain", 2), [1, 2]);
}

/// A row deleted after the key issued IDs: creating it again at its start (what a
/// create-at-every-start script does) and taking IDs are both refused, until `recover`
/// raises it above the highest ID issued.
#[test]
fn a_lost_key_is_never_created_again_below_what_it_issued() {
    let store = Store::new();
    store.create("lost", 1, 10);
    assert_eq!(store.next("lost", 5), [1, 2, 3, 4, 5]);
    assert_eq!(store.delete_rows("lost"), 1);
    let again = store.run(&["create", "lost", "--start", "1", "--step", "10"]);
    assert!(!again.status.success(), "the create must be refused");
    let why = stderr(&again);
    assert!(
        why.contains("REWOUND") || why.contains("went back"),
        "a typed refusal: {why}"
    );
    assert!(
        why.contains("segment recover lost --above"),
        "says how to recover: {why}"
    );
    let next = store.run(&["next", "lost", "-n", "1"]);
    assert!(!next.status.success(), "next must be refused");
    assert!(next.stdout.is_empty(), "nothing issued");
    let recovered = stdout(&store.run(&["recover", "lost", "--above", "2", "--step", "10"]));
    assert!(
        recovered.contains("next range starts at 6"),
        "the store's own mark (5 issued, 6..11 given back) wins over a lower floor: {recovered}"
    );
    assert_eq!(store.next("lost", 2), [6, 7]);
    let value =
        json(&stdout(&store.run(&[
            "recover", "lost", "--above", "99", "--format", "json",
        ])));
    assert_eq!(value["max_id"], "100", "{value}");
    assert_eq!(store.next("lost", 1), [100]);
}

/// The whole table file deleted (an age-based cleaner, an operator), marks and all: this
/// host's record still refuses the key at its old start.
#[test]
fn a_table_file_lost_whole_is_refused_below_what_this_host_took() {
    let store = Store::new();
    store.create("orders", 1, 10);
    assert_eq!(store.next("orders", 25), (1..=25).collect::<Vec<_>>());
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", store.path));
    }
    let again = store.run(&["create", "orders", "--start", "1", "--step", "10"]);
    assert!(!again.status.success(), "the create must be refused");
    let why = stderr(&again);
    assert!(
        why.contains("this host's record") && why.contains("segment recover orders --above"),
        "{why}"
    );
    store.create("orders", 26, 10);
    assert_eq!(store.next("orders", 2), [26, 27]);
}

/// A user with no home has no state directory: the default table and this host's record
/// are refused, not put in /var/tmp, which the OS cleans.
#[test]
fn no_home_means_no_default_store() {
    if !is_root() {
        eprintln!("skipped: needs root to run as another user");
        return;
    }
    let out = Command::new("/usr/sbin/runuser")
        .args([
            "-u",
            "nobody",
            "--",
            "/usr/bin/env",
            "-i",
            BIN,
            "segment",
            "next",
            "k",
        ])
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stderr(&out).contains("no state directory"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_count_far_above_the_step_is_served_by_more_fetches() {
    let store = Store::new();
    store.create("small", 1, 10);
    let got = store.next("small", 1000);
    assert_eq!(got, (1..=1000).collect::<Vec<u64>>());
    assert_eq!(store.max_id("small"), 1001, "no ID skipped");
    assert_eq!(store.next("small", 2), [1001, 1002]);
}

#[test]
fn runs_at_once_share_the_table_without_duplicates() {
    let store = Store::new();
    store.create("shared", 1, 100);
    let children: Vec<_> = (0..4)
        .map(|_| {
            store
                .command(&["next", "shared", "-n", "5000"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut all = HashSet::new();
    for child in children {
        let got = ids(&stdout(&child.wait_with_output().unwrap()));
        assert_eq!(got.len(), 5000);
        assert!(got.windows(2).all(|w| w[0] < w[1]), "increasing per run");
        all.extend(got);
    }
    assert_eq!(all.len(), 20_000, "0 duplicates across 4 processes");
}

/// Each refusal: its exit status and message in text (nothing on stdout), and the same
/// status with a JSON object on stdout whose `error.kind` names it.
#[test]
fn refusals_are_typed_in_text_and_in_json() {
    let store = Store::new();
    store.create("taken", 1, 10);
    let long = "k".repeat(129);
    let cases: [(&[&str], i32, &str, &str); 9] = [
        (
            &["next", "missing"],
            1,
            "UNKNOWN_KEY",
            "no segment key \"missing\" in the table: create it if it is new; if the table \
             lost it, recover it",
        ),
        (
            &["create", "taken", "--start", "1", "--step", "10"],
            1,
            "KEY_EXISTS",
            "segment key \"taken\" already exists",
        ),
        (
            &["create", "", "--start", "1", "--step", "10"],
            2,
            "INVALID_KEY",
            "invalid segment key \"\": empty",
        ),
        (
            &["next", ""],
            2,
            "INVALID_KEY",
            "invalid segment key \"\": empty",
        ),
        (&["next", &long], 2, "INVALID_KEY", "longer than 128 bytes"),
        (
            &["create", &long, "--start", "1", "--step", "10"],
            2,
            "INVALID_KEY",
            "longer than 128 bytes",
        ),
        (
            &["create", "zero", "--start", "1", "--step", "0"],
            2,
            "INVALID_CONFIG",
            "step 0 is outside 1..=2^31 - 1",
        ),
        (
            &["create", "negative", "--start", "-5", "--step", "10"],
            2,
            "INVALID_CONFIG",
            "start -5 is below 1",
        ),
        (
            &["create", "zero", "--start", "0", "--step", "10"],
            2,
            "INVALID_CONFIG",
            "start 0 is below 1",
        ),
    ];
    for (args, code, kind, expected) in cases {
        let output = store.run(args);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {output:?}");
        assert!(output.stdout.is_empty(), "{args:?}: {output:?}");
        let message = stderr(&output);
        assert!(
            message.starts_with("ferroflake: ") && message.contains(expected),
            "{args:?}: {message}"
        );
        assert!(
            message.contains(&format!("(store: the SQLite file {})", store.path)),
            "{args:?}: {message}"
        );

        let output = store.run(&[args, &["--format", "json"]].concat());
        assert_eq!(output.status.code(), Some(code), "{args:?} json");
        let value = json(&String::from_utf8(output.stdout).unwrap());
        assert_eq!(value["error"]["kind"], kind, "{args:?}: {value}");
        let message = value["error"]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{args:?}: {message}");
        if args[0] == "next" {
            assert_eq!(value["ids"], serde_json::json!([]), "{args:?}");
        }
    }
    assert_eq!(store.max_id("taken"), 1, "no refusal changed the row");
    let output = store.run(&["status", "zero", "negative"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "the refused keys were not made"
    );
}

/// Near 2^53 - 1, `--js` prints the IDs up to the limit, then the exhaustion error, and
/// never an ID above it; later runs print none.
#[test]
fn js_keys_stop_at_2_pow_53_minus_1() {
    let store = Store::new();
    store.create("js", LIMIT_JS - 2, 10);
    let output = store.run(&["next", "js", "--js", "-n", "5", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let value = json(&String::from_utf8(output.stdout).unwrap());
    assert_eq!(json_ids(&value), [LIMIT_JS - 2, LIMIT_JS - 1, LIMIT_JS]);
    assert_eq!(value["error"]["kind"], "EXHAUSTED");
    let message = value["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("segment key \"js\" is exhausted")
            && message.contains("2^53 - 1")
            && message.contains("stopped after 3 IDs"),
        "{message}"
    );

    let output = store.run(&["next", "js", "--js", "-n", "5"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty(), "{output:?}");
    assert!(stderr(&output).contains("is exhausted"), "{output:?}");

    // Without --js the same key goes on past 2^53 (its limit is 2^63 - 1).
    let past = store.next("js", 1)[0];
    assert!(past > LIMIT_JS, "{past}");
}

#[test]
fn store_addresses_that_cannot_work_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("s.db", "a relative path names a different file"),
        ("sub/s.db", "a relative path names a different file"),
        ("sqlite://s.db", "absolute path"),
        ("sqlite:///tmp/s.db?mode=ro", "takes no parameters"),
        ("/dev/null", "not a regular file"),
        ("sqlite:///dev/null", "not a regular file"),
        ("ftp://host/x", "unknown scheme"),
        ("", "empty"),
    ];
    for (address, expected) in cases {
        let output = Command::new(BIN)
            .args(["segment", "next", "k", "--store", address])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{address}: {output:?}");
        let message = stderr(&output);
        assert!(message.contains(expected), "{address}: {message}");
    }
    let here = dir.path().join("s.db");
    let output = Command::new(BIN)
        .args(["segment", "status", "k", "--store", "s.db"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        stderr(&output).contains(&format!("(here: {})", here.display())),
        "{output:?}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "no file was made: {left:?}");
    assert!(
        !std::path::Path::new("/dev/null-journal").exists(),
        "nothing was made beside a device"
    );

    // A server store: unreachable here (port 1), or left out of this build.
    let output = Command::new(BIN)
        .args([
            "segment",
            "next",
            "k",
            "--store",
            "mysql://root:pw-7f3e@127.0.0.1:1/leaf",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success(), "{output:?}");
    let message = stderr(&output);
    assert!(
        !message.contains("pw-7f3e"),
        "the password is hidden: {message}"
    );
    if !cfg!(feature = "stores") {
        assert_eq!(output.status.code(), Some(2));
        assert!(message.contains("--features stores"), "{message}");
    }
}

#[test]
fn status_shows_rows_and_says_what_it_cannot_list() {
    let store = Store::new();
    store.create("a", 1, 10);
    store.create("bb", 500, 1000);
    store.next("a", 4);
    let out = stdout(&store.run(&["status", "a", "bb"]));
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines,
        [
            vec!["key", "max_id", "step"],
            vec!["a", "5", "10"],
            vec!["bb", "500", "1000"]
        ],
        "{out}"
    );

    let value = json(&stdout(&store.run(&["status", "bb", "--format", "json"])));
    assert_eq!(
        value,
        serde_json::json!({ "keys": [{ "key": "bb", "max_id": "500", "step": 1000 }] })
    );

    // A missing key: the others are still shown, and the exit status says it.
    let output = store.run(&["status", "a", "nope", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let value = json(&String::from_utf8(output.stdout).unwrap());
    assert_eq!(value["keys"][0]["key"], "a");
    assert_eq!(value["error"]["kind"], "UNKNOWN_KEY");

    // Without a key: the rows are read by key, and there is no call that lists them.
    for format in ["text", "json"] {
        let output = store.run(&["status", "--format", format]);
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        assert!(
            stderr(&output).contains("no call that lists every key"),
            "{output:?}"
        );
        if format == "json" {
            let value = json(&String::from_utf8(output.stdout).unwrap());
            assert_eq!(value["error"]["kind"], "USAGE");
        }
    }
}

/// SIGTERM or SIGINT stops issuing, gives the unissued rest back (the next run starts
/// right after the last ID printed) and exits 143 or 130; JSON output still ends valid.
#[test]
fn a_signal_stops_next_gives_the_rest_back_and_exits_128_plus_the_signal() {
    let store = Store::new();
    store.create("long", 1, 1000);
    for (signal, code, format) in [("TERM", 143, "json"), ("INT", 130, "text")] {
        let mut child = store
            .command(&["next", "long", "-n", "1000000000", "--format", format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let text = Arc::new(Mutex::new(Vec::new()));
        let into = Arc::clone(&text);
        let reader = thread::spawn(move || {
            let mut chunk = [0u8; 65536];
            while let Ok(n @ 1..) = out.read(&mut chunk) {
                into.lock().unwrap().extend_from_slice(&chunk[..n]);
            }
        });
        let began = Instant::now();
        while text.lock().unwrap().len() < 1000 {
            assert!(began.elapsed() < Duration::from_secs(30), "no output");
            thread::sleep(Duration::from_millis(20));
        }
        send_signal(&child, signal);
        let (status, err) = exit_and_stderr(&mut child);
        reader.join().unwrap();
        let text = String::from_utf8(text.lock().unwrap().clone()).unwrap();
        assert_eq!(status.code(), Some(code), "SIG{signal}: {err}");
        assert!(
            err.contains(&format!("interrupted by SIG{signal}: stopped after ")),
            "{err}"
        );
        let last = if format == "json" {
            let value = json(&text);
            assert_eq!(value["error"]["kind"], "INTERRUPTED");
            *json_ids(&value).last().unwrap()
        } else {
            *ids(&text).last().unwrap()
        };
        assert_eq!(
            store.max_id("long"),
            last + 1,
            "SIG{signal}: the rest was given back ({err})"
        );
    }
}

/// A reader that stopped reading does not hold a signal off: with the output's pipe full,
/// SIGTERM still stops `next` at once, gives the rest back and exits 143. The IDs the pipe
/// did not take are lost; the next run starts above every one of them, within a batch.
#[test]
fn a_signal_stops_next_whose_reader_stopped_reading() {
    let store = Store::new();
    store.create("stalled", 1, 1_000_000);
    for format in ["json", "text"] {
        let first = store.max_id("stalled");
        let child = stalled_on_its_output(store.command(&[
            "next",
            "stalled",
            "-n",
            "1000000000",
            "--format",
            format,
        ]));
        let (code, out, err) = signal_and_finish(child, "TERM");
        assert_eq!(code, Some(143), "{format}: {err}");
        assert!(
            err.contains("interrupted by SIGTERM: stopped after "),
            "{format}: {err}"
        );
        assert!(
            err.contains("unissued IDs were given back"),
            "{format}: {err}"
        );
        let issued: u64 = err
            .split("stopped after ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{format}: no count in {err}"));
        let printed: Vec<u64> = out
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .collect();
        assert!(printed.len() > 1000, "{format}: {} IDs read", printed.len());
        assert!(
            printed.iter().all(|&id| id < first + issued),
            "{format}: {err}"
        );
        // The batch being printed when the signal came is skipped, the rest given back.
        let next = store.next("stalled", 1)[0];
        assert!(
            (first + issued..=first + issued + 4096).contains(&next),
            "{format}: the next run starts at {next} ({err})"
        );
    }
}

/// A reader that was stalled when the signal came and then reads again gets everything:
/// every ID issued, in order, and JSON that ends valid with the interruption.
#[test]
fn a_reader_that_reads_again_after_a_signal_gets_every_id_and_valid_json() {
    let store = Store::new();
    store.create("resumed", 1, 1_000_000);
    let mut child = stalled_on_its_output(store.command(&[
        "next",
        "resumed",
        "-n",
        "1000000000",
        "--format",
        "json",
    ]));
    send_signal(&child, "TERM");
    let mut text = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let (status, err) = exit_and_stderr(&mut child);
    assert_eq!(status.code(), Some(143), "{err}");
    let value = json(&text);
    assert_eq!(value["error"]["kind"], "INTERRUPTED", "{err}");
    let ids = json_ids(&value);
    assert!(ids.len() > 1000, "{} IDs", ids.len());
    assert!(
        ids.iter().copied().eq(1..=ids.len() as u64),
        "every ID, in order"
    );
    assert_eq!(store.next("resumed", 1), [ids.len() as u64 + 1], "{err}");
}

/// A signal that comes while the store is busy (another writer holds the SQLite file)
/// stops `next` for the signal: exit 143, as between batches, not the store's failure.
#[test]
fn a_signal_while_the_store_is_locked_exits_128_plus_the_signal() {
    let store = Store::new();
    store.create("locked", 1, 1000);
    let holder = rusqlite::Connection::open(&store.path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let mut child = store
        .command(&["next", "locked", "-n", "10"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Signals are caught before the store is opened: once the file is open, the run waits
    // for the lock with its handler in place.
    let fds = format!("/proc/{}/fd", child.id());
    let began = Instant::now();
    while !std::fs::read_dir(&fds).unwrap().any(|fd| {
        std::fs::read_link(fd.unwrap().path()).is_ok_and(|target| target.ends_with("s.db"))
    }) {
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "s.db never opened"
        );
        thread::sleep(Duration::from_millis(10));
    }
    send_signal(&child, "TERM");
    let (status, err) = exit_and_stderr(&mut child);
    assert_eq!(status.code(), Some(143), "{err}");
    assert!(err.contains("interrupted by SIGTERM"), "{err}");
    holder.execute_batch("ROLLBACK").unwrap();
    assert_eq!(store.next("locked", 3), [1, 2, 3], "nothing was taken");
}

/// IDs that cannot be written are lost: a closed standard output takes nothing from the
/// table, a reader that goes away makes the run fail (exit 1, no panic).
#[test]
fn next_fails_when_its_output_is_closed_or_broken() {
    let store = Store::new();
    store.create("out", 1, 10);
    let closed = Command::new("sh")
        .args([
            "-c",
            "exec \"$0\" segment next out --store \"$1\" >&-",
            BIN,
            &store.path,
        ])
        .output()
        .unwrap();
    assert_eq!(closed.status.code(), Some(1), "{closed:?}");
    assert!(stderr(&closed).contains("standard output is closed"));
    assert_eq!(store.max_id("out"), 1, "nothing was taken");

    let mut child = store
        .command(&["next", "out", "-n", "100000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 2];
    out.read_exact(&mut first).unwrap();
    drop(out); // the reader goes away, as `| head -1` does
    let output = child.wait_with_output().unwrap();
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(
        message.contains("broken pipe")
            && message.contains("stopped after")
            && !message.contains("panicked"),
        "{message}"
    );
}

#[test]
fn help_names_the_default_store() {
    let out = stdout(
        &Command::new(BIN)
            .args(["segment", "next", "--help"])
            .output()
            .unwrap(),
    );
    assert!(
        out.contains("Default: the embedded SQLite file /") && out.contains("segments.db"),
        "{out}"
    );
}

#[test]
fn set_step_changes_the_stored_step_and_nothing_else() {
    let store = Store::new();
    store.create("orders", 1, 10);
    assert_eq!(store.next("orders", 3), [1, 2, 3]); // 4..11 given back: max_id 4
    let said = stdout(&store.run(&["set-step", "orders", "--step", "250"]));
    assert!(
        said.starts_with("segment key \"orders\" now has step 250 (next range starts at 4"),
        "{said}"
    );
    let value =
        json(&stdout(&store.run(&[
            "set-step", "orders", "--step", "300", "--format", "json",
        ])));
    assert_eq!(
        value,
        serde_json::json!({"key": "orders", "max_id": "4", "step": 300})
    );
    let status = json(&stdout(
        &store.run(&["status", "orders", "--format", "json"]),
    ));
    assert_eq!(status["keys"][0]["step"], 300);
    assert_eq!(store.next("orders", 1), [4]);
    assert_eq!(
        store.max_id("orders"),
        5,
        "one fetch of the new step, the rest given back"
    );

    for (args, code, kind) in [
        (
            &["set-step", "missing", "--step", "5"][..],
            1,
            "UNKNOWN_KEY",
        ),
        (
            &["set-step", "orders", "--step", "0"][..],
            2,
            "INVALID_CONFIG",
        ),
        (&["set-step", "", "--step", "5"][..], 2, "INVALID_KEY"),
    ] {
        let output = store.run(&[args, &["--format", "json"]].concat());
        assert_eq!(output.status.code(), Some(code), "{args:?}");
        let error = json(&String::from_utf8(output.stdout).unwrap());
        assert_eq!(error["error"]["kind"], kind, "{args:?}: {error}");
    }
}

/// One user's environments share one default table and one host record, whether or not
/// they set XDG_STATE_HOME (a desktop session does, cron does not): two would hand out the
/// same IDs.
#[test]
fn the_default_table_is_the_same_in_every_environment_of_a_user() {
    if !is_root() {
        eprintln!("skipped: needs root to run as another user");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(home.path(), Some(65534), Some(65534)).unwrap();
    let home_var = format!("HOME={}", home.path().display());
    let as_nobody = |xdg: &str, args: &[&str]| {
        let xdg_var = format!("XDG_STATE_HOME={}/{xdg}", home.path().display());
        Command::new("/usr/sbin/runuser")
            .args([
                "-u",
                "nobody",
                "--",
                "/usr/bin/env",
                "-i",
                &home_var,
                &xdg_var,
                BIN,
            ])
            .args(args)
            .env_clear()
            .output()
            .unwrap()
    };
    let created = as_nobody(
        "session",
        &["segment", "create", "k", "--start", "1", "--step", "10"],
    );
    assert!(created.status.success(), "{created:?}");
    let next = as_nobody("cron", &["segment", "next", "k"]);
    assert!(next.status.success(), "{}", stderr(&next));
    assert_eq!(String::from_utf8_lossy(&next.stdout).trim(), "1");
}
