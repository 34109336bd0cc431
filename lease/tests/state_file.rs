//! A holder's state file: a process killed while it held its claim, restarted while the
//! registry cannot be reached, resumes the claim and issues, above everything issued before,
//! until the claim's deadline; it renews with its token once the registry answers. A clean
//! stop, a copy, a restored file, a second live process or a stale file resumes nothing.
//!
//! The killed holder is this test binary run again as a child (`holder_run_as_a_child`),
//! so that it dies by SIGKILL with its threads, its lock and its file as they were.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflake::{Clock, Error, Layout, ManualClock, SystemClock};
use ferroflake_lease::{
    EmbeddedRegistry, Grant, LeaseConfig, LeaseError, LeaseStatus, LeasedGenerator, NodeState,
};
use support::{wait_for, Mode, Switchable};

const TTL: Duration = Duration::from_millis(2_000);
/// The wall clock of the tests on a set clock.
const T0: u64 = 1_700_000_000_000;
/// How a child learns what to hold: the registry's directory, the state file, and the
/// set clock's time (empty: the system clock), one per line.
const CHILD: &str = "FERROFLAKE_TEST_STATE_FILE_CHILD";

fn config(state_file: &Path) -> LeaseConfig {
    let mut config = LeaseConfig::with_ttl(TTL);
    config.max_ttl = config.ttl;
    config.skew_allowance = Duration::from_millis(50);
    config.state_file = Some(state_file.to_owned());
    config
}

/// A registry directory, and where the state file goes.
fn place() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("r");
    let state = dir.path().join("state").join("lease.state");
    (dir, registry, state)
}

/// The embedded registry in `dir`, behind a switch.
fn switchable(dir: &Path) -> Arc<Switchable> {
    Switchable::new(Arc::new(EmbeddedRegistry::open(dir).unwrap()))
}

type Leased = LeasedGenerator<SystemClock>;

fn start(
    registry: &Arc<Switchable>,
    state: &Path,
    said: &mut Vec<String>,
) -> Result<Leased, LeaseError> {
    LeasedGenerator::start_reporting(
        Layout::twitter(),
        SystemClock,
        registry.clone(),
        config(state),
        &mut |line| said.push(line.to_owned()),
    )
}

/// Issues `n` IDs, which must increase.
fn issue<C: Clock + Send + Sync>(generator: &LeasedGenerator<C>, n: usize) -> Vec<u64> {
    let ids: Vec<u64> = (0..n).map(|_| generator.next_id().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    ids
}

/// A clock that only the test sets (waiting does not move it), not checked against the
/// registry's.
struct SetClock(ManualClock);
impl Clock for SetClock {
    fn now_ms(&self) -> u64 {
        self.0.now_ms()
    }
    fn wait_until_ms(&self, _target_ms: u64) {}
    fn tracks_real_time(&self) -> bool {
        false
    }
}

/// Not a test of its own: the holder the other tests kill, when run as a child with
/// [`CHILD`] set. It leases a node id with the state file, issues 1,000 IDs, prints its node
/// id and last ID, and waits to be killed.
#[test]
fn holder_run_as_a_child() {
    let Ok(what) = std::env::var(CHILD) else {
        return;
    };
    let mut lines = what.lines();
    let (dir, state, clock_ms) = (
        lines.next().unwrap(),
        lines.next().unwrap(),
        lines.next().unwrap_or(""),
    );
    let registry = switchable(Path::new(dir));
    let (node, last) = if clock_ms.is_empty() {
        let generator = start(&registry, Path::new(state), &mut Vec::new()).unwrap();
        let last = *issue(&generator, 1_000).last().unwrap();
        let node = generator.node();
        std::mem::forget(generator);
        (node, last)
    } else {
        let clock = SetClock(ManualClock::new(clock_ms.parse().unwrap()));
        let generator =
            LeasedGenerator::start(Layout::twitter(), clock, registry, config(Path::new(state)))
                .unwrap();
        let last = *issue(&generator, 1_000).last().unwrap();
        let node = generator.node();
        std::mem::forget(generator);
        (node, last)
    };
    println!("{node} {last}");
    std::io::stdin().read_line(&mut String::new()).unwrap();
}

/// A holder of a claim in `state`, killed with SIGKILL while it held it: its node id, its
/// last ID, and when it died. `clock_ms`: on a set clock at that time.
fn killed_holder(registry: &Path, state: &Path, clock_ms: Option<u64>) -> (u64, u64, Instant) {
    let what = format!(
        "{}\n{}\n{}",
        registry.display(),
        state.display(),
        clock_ms.map_or(String::new(), |ms| ms.to_string())
    );
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "holder_run_as_a_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, what)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    // libtest's own lines come first ("running 1 test").
    let (node, last) = loop {
        said.clear();
        assert!(
            out.read_line(&mut said).unwrap() > 0,
            "the child said nothing"
        );
        let fields: Vec<u64> = said
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        if let [node, last] = fields[..] {
            break (node, last);
        }
    };
    child.kill().unwrap();
    child.wait().unwrap();
    (node, last, Instant::now())
}

/// The claim the state file holds, as the registry granted it.
fn saved_grant(state: &Path) -> Grant {
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state).unwrap()).unwrap();
    Grant {
        node_id: saved["node_id"].as_u64().unwrap(),
        token: saved["claim"]["token"].as_str().unwrap().to_owned(),
        epoch: saved["claim"]["epoch"].as_u64().unwrap(),
        previous_high_water_ms: 0,
        floor_wait: Duration::ZERO,
    }
}

#[test]
fn a_restart_during_an_outage_issues_above_the_killed_holders_ids_until_the_deadline() {
    let (_dir, dir, state) = place();
    let (_, last, killed) = killed_holder(&dir, &state, None);
    let node = saved_grant(&state).node_id;
    let registry = switchable(&dir);
    registry.set(Mode::Unreachable);

    let mut said = Vec::new();
    let resumed = start(&registry, &state, &mut said).expect("resumes without the registry");
    assert_eq!(resumed.node(), node);
    assert!(
        said.iter().any(|l| l.contains("resuming node id")),
        "the start says it resumes: {said:?}"
    );
    assert!(matches!(resumed.status(), LeaseStatus::Failing { .. }));

    // Issue until refused: every ID above the killed holder's, and the refusal comes
    // before the claim's TTL could have lapsed at the registry.
    let mut previous = last;
    let mut issued = 0u64;
    let refused = loop {
        match resumed.next_id() {
            Ok(id) => {
                assert!(id > previous, "{id} is not above {previous}");
                previous = id;
                issued += 1;
            }
            Err(e @ Error::LeaseExpired { .. }) => break e,
            Err(e) => panic!("{e}"),
        }
        assert!(killed.elapsed() < Duration::from_secs(10), "never refused");
    };
    assert!(issued > 0, "the resumed claim issued nothing");
    assert!(
        killed.elapsed() < TTL,
        "issued past the TTL since the killed holder's last renewal: {:?}",
        killed.elapsed()
    );
    assert!(
        resumed.explain(&refused).contains("renewals"),
        "{}",
        resumed.explain(&refused)
    );
}

#[test]
fn a_resumed_claim_renews_with_its_token_once_the_registry_answers() {
    let (_dir, dir, state) = place();
    let (_, last, _) = killed_holder(&dir, &state, None);
    let node = saved_grant(&state).node_id;
    let registry = switchable(&dir);
    registry.set(Mode::Unreachable);
    let resumed = start(&registry, &state, &mut Vec::new()).unwrap();
    let reserved = resumed.reserved_high_water_ms();
    registry.set(Mode::Pass);
    wait_for(
        "a renewal under the saved token",
        Duration::from_secs(5),
        || resumed.status() == LeaseStatus::Held && resumed.reserved_high_water_ms() > reserved,
    );
    assert_eq!(resumed.node(), node);
    assert!(issue(&resumed, 100)[0] > last);
    resumed.shutdown().unwrap();

    // Released: the next start claims afresh, and asks for the same id first (without
    // the file it would take the lowest id never claimed, 1).
    let next = start(&registry, &state, &mut Vec::new()).unwrap();
    assert_eq!(next.node(), node);
    assert!(issue(&next, 10)[0] > last);
}

/// A release can be applied while its answer is lost: a clean stop gives the claim up in
/// the file before it releases, so a restart that cannot reach the registry resumes
/// nothing (and cannot issue beside whoever took the released id).
#[test]
fn a_clean_stop_resumes_nothing_even_when_its_release_failed() {
    let (_dir, dir, state) = place();
    let registry = switchable(&dir);
    let first = start(&registry, &state, &mut Vec::new()).unwrap();
    issue(&first, 10);
    // Renewals still pass: a renewal failing first would make the stop keep the claim.
    registry.set(Mode::UnreachableButRenewals);
    assert!(matches!(
        first.shutdown(),
        Err(LeaseError::Unavailable { .. })
    ));
    let refused = start(&registry, &state, &mut Vec::new()).unwrap_err();
    assert!(
        matches!(refused, LeaseError::Unavailable { .. }),
        "a fresh claim, which needs the registry: {refused:?}"
    );
}

/// A stop while renewals fail sends no release (it could be applied with its answer
/// lost): the file keeps the claim with the exact final mark, and a restart resumes it at
/// once, without the registry.
#[test]
fn a_clean_stop_while_renewals_fail_keeps_the_claim_for_a_restart() {
    let (_dir, dir, state) = place();
    let registry = switchable(&dir);
    let first = start(&registry, &state, &mut Vec::new()).unwrap();
    let (node, last) = (first.node(), *issue(&first, 10).last().unwrap());
    registry.set(Mode::Unreachable);
    wait_for("a failed renewal", Duration::from_secs(5), || {
        matches!(first.status(), LeaseStatus::Failing { .. })
    });
    assert!(matches!(
        first.shutdown(),
        Err(LeaseError::Unavailable { .. })
    ));
    let resumed = start(&registry, &state, &mut Vec::new()).unwrap();
    assert_eq!(resumed.node(), node);
    assert!(resumed.next_id().unwrap() > last);
    registry.set(Mode::Pass);
    let view = registry.inner.list().unwrap();
    let record = view.nodes.iter().find(|n| n.node_id == node).unwrap();
    assert_eq!(record.state, NodeState::Held, "no release was sent");
}

#[test]
fn a_claim_the_registry_says_is_gone_is_claimed_afresh() {
    let (_dir, dir, state) = place();
    let (_, last, _) = killed_holder(&dir, &state, None);
    let grant = saved_grant(&state);
    // The claim ends at the registry meanwhile (an operator, or its TTL).
    let registry = switchable(&dir);
    registry.inner.release(&grant, 0).unwrap();
    let mut said = Vec::new();
    let fresh = start(&registry, &state, &mut said).unwrap();
    assert!(said.iter().any(|l| l.contains("is gone")), "{said:?}");
    assert_ne!(fresh.grant().epoch, grant.epoch, "a new claim");
    assert!(issue(&fresh, 10)[0] > last);
}

#[test]
fn one_live_process_per_state_file() {
    let (_dir, dir, state) = place();
    let registry = switchable(&dir);
    let _first = start(&registry, &state, &mut Vec::new()).unwrap();
    let second = start(&registry, &state, &mut Vec::new()).unwrap_err();
    assert_eq!(second.name(), "STATE_FILE");
    assert!(
        second.to_string().contains("another live process"),
        "{second}"
    );
}

#[test]
fn a_copied_state_file_resumes_nothing() {
    let (dir_root, dir, state) = place();
    killed_holder(&dir, &state, None);
    let copy = dir_root.path().join("state").join("copy.state");
    std::fs::copy(&state, &copy).unwrap();
    let registry = switchable(&dir);
    registry.set(Mode::Unreachable);
    let mut said = Vec::new();
    let refused = start(&registry, &copy, &mut said).unwrap_err();
    assert!(
        matches!(refused, LeaseError::Unavailable { .. }),
        "a fresh claim, which needs the registry: {refused:?}"
    );
    assert!(said.iter().any(|l| l.contains("a copy")), "{said:?}");
    // The original still resumes.
    start(&registry, &state, &mut Vec::new()).unwrap();
}

/// Both files put back as a backup had them (in place, the lock file keeping its inode,
/// and its count): the older local mark would let a restart whose clock is behind issue
/// IDs again, so the lock file's change time tells the restore.
#[test]
fn state_and_lock_files_restored_together_resume_nothing() {
    let (_dir, dir, state) = place();
    killed_holder(&dir, &state, None);
    let lock = state.with_file_name("lease.state.lock");
    let (older_state, older_lock) = (
        std::fs::read(&state).unwrap(),
        std::fs::read(&lock).unwrap(),
    );
    let generation = |state: &[u8]| {
        serde_json::from_slice::<serde_json::Value>(state).unwrap()["generation"]
            .as_u64()
            .unwrap()
    };
    let registry = switchable(&dir);
    let resumed = start(&registry, &state, &mut Vec::new()).unwrap();
    wait_for("a later write of the file", Duration::from_secs(5), || {
        generation(&std::fs::read(&state).unwrap()) > generation(&older_state)
    });
    resumed.shutdown().unwrap();
    std::fs::write(&lock, &older_lock).unwrap();
    std::fs::write(&state, &older_state).unwrap();
    registry.set(Mode::Unreachable);
    let mut said = Vec::new();
    let refused = start(&registry, &state, &mut said).unwrap_err();
    assert!(
        matches!(refused, LeaseError::Unavailable { .. }),
        "not resumed: {refused:?}"
    );
    assert!(
        said.iter().any(|l| l.contains("not the latest")),
        "{said:?}"
    );
}

#[test]
fn a_state_file_past_its_deadline_resumes_nothing() {
    let (_dir, dir, state) = place();
    let (_, _, killed) = killed_holder(&dir, &state, None);
    // The claim's deadline is within a TTL of the last renewal, before the kill.
    wait_for("the claim's deadline", Duration::from_secs(5), || {
        killed.elapsed() > TTL
    });
    let registry = switchable(&dir);
    registry.set(Mode::Unreachable);
    let mut said = Vec::new();
    let refused = start(&registry, &state, &mut said).unwrap_err();
    assert!(
        matches!(refused, LeaseError::Unavailable { .. }),
        "{refused:?}"
    );
    assert!(
        said.iter().any(|l| l.contains("deadline has passed")),
        "{said:?}"
    );
}

#[test]
fn a_restart_with_the_clock_set_back_waits_for_the_saved_mark() {
    let (_dir, dir, state) = place();
    let (_, last, _) = killed_holder(&dir, &state, Some(T0));
    let registry = switchable(&dir);
    registry.set(Mode::Unreachable);
    let clock = Arc::new(SetClock(ManualClock::new(T0 - 1_000)));
    let mut quick = config(&state);
    quick.max_start_wait = Some(Duration::from_millis(100));
    let start = |config: LeaseConfig, said: &mut Vec<String>| {
        LeasedGenerator::start_reporting(
            Layout::twitter(),
            Arc::clone(&clock),
            registry.clone(),
            config,
            &mut |line| said.push(line.to_owned()),
        )
    };

    // Set back a second: resuming would issue below the killed holder's IDs.
    let mut said = Vec::new();
    let behind = start(quick.clone(), &mut said).unwrap_err();
    assert!(
        matches!(behind, LeaseError::BehindHighWater { .. }),
        "{behind:?}"
    );
    assert!(
        said.iter().any(|l| l.contains("set back")),
        "the wait says why: {said:?}"
    );
    // Past the local mark the killed holder kept ahead of its clock.
    clock.0.set_ms(T0 + 1_000);
    let resumed = start(quick, &mut Vec::new()).unwrap();
    assert!(resumed.next_id().unwrap() > last);
}

#[test]
fn keeping_the_local_mark_never_reopens_a_fence_shut_by_a_skewed_clock() {
    let (_dir, dir, state) = place();
    let registry = switchable(&dir);
    let generator = start(&registry, &state, &mut Vec::new()).unwrap();
    generator.next_id().unwrap();
    // The registry's clock an hour away: the next renewal shuts the fence.
    registry.set_clock_offset_ms(3_600_000);
    let renewals = registry.renewals();
    wait_for(
        "a renewal that sees the skew",
        Duration::from_secs(5),
        || registry.renewals() >= renewals + 2 && generator.next_id().is_err(),
    );
    // Refused throughout several periods of the state file's thread (it keeps the mark
    // every 50 ms under this TTL) and of the renewals.
    let (seen, began) = (registry.renewals(), Instant::now());
    while registry.renewals() < seen + 4 {
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "renewals stopped"
        );
        if let Ok(id) = generator.next_id() {
            panic!("issued {id} on a clock an hour from the registry's");
        }
    }
    let refused = generator.next_id().unwrap_err();
    assert!(
        generator
            .explain(&refused)
            .contains("beyond max_clock_skew"),
        "{}",
        generator.explain(&refused)
    );
}

/// The system clock set back by a fixed offset: checked against the registry's.
struct BehindClock(u64);
impl Clock for BehindClock {
    fn now_ms(&self) -> u64 {
        SystemClock.now_ms() - self.0
    }
    fn wait_until_ms(&self, target_ms: u64) {
        SystemClock.wait_until_ms(target_ms + self.0);
    }
}

/// A restart whose clock was set two minutes back, with the registry answering: refused at
/// once for the clock, not after waiting out the start's limit for its own earlier mark.
#[test]
fn a_resume_on_a_clock_set_far_back_is_refused_for_the_clock_at_once() {
    let (_dir, dir, state) = place();
    killed_holder(&dir, &state, None);
    let began = Instant::now();
    let refused = LeasedGenerator::start(
        Layout::twitter(),
        BehindClock(120_000),
        switchable(&dir),
        config(&state),
    )
    .unwrap_err();
    assert!(
        matches!(refused, LeaseError::ClockSkew { .. }),
        "{refused:?}"
    );
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "{:?}",
        began.elapsed()
    );
}

/// A claim kept for one registry is never resumed on another of the same kind (another
/// directory here; another database or namespace on a server): that one may have given the
/// node id to someone else.
#[test]
fn a_claim_is_resumed_only_on_its_own_registry() {
    let (dir_root, dir, state) = place();
    killed_holder(&dir, &state, None);
    let other = switchable(&dir_root.path().join("other"));
    other.set(Mode::Unreachable);
    let mut said = Vec::new();
    let refused = start(&other, &state, &mut said).unwrap_err();
    assert!(
        matches!(refused, LeaseError::Unavailable { .. }),
        "a fresh claim, which needs the registry: {refused:?}"
    );
    assert!(
        said.iter().any(|l| l.contains("another registry")),
        "{said:?}"
    );
}
