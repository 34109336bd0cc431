//! A holder's state file: a process restarted while its registry cannot be reached resumes
//! its claim and issues, above everything issued before, until the claim's deadline; it
//! renews with its token once the registry answers; and a copy, a second live process or a
//! stale file resumes nothing.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflake::{Error, Layout, SystemClock};
use ferroflake_lease::{
    EmbeddedRegistry, LeaseConfig, LeaseError, LeaseStatus, LeasedGenerator, Registry,
};
use support::{wait_for, Mode, Switchable};

fn config(state_file: &Path) -> LeaseConfig {
    let mut config = LeaseConfig::with_ttl(Duration::from_millis(2_000));
    config.max_ttl = config.ttl;
    config.skew_allowance = Duration::from_millis(50);
    config.state_file = Some(state_file.to_owned());
    config
}

/// An embedded registry behind a switch, and where the state file goes.
fn setup() -> (tempfile::TempDir, Arc<Switchable>, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let real: Arc<dyn Registry> = Arc::new(EmbeddedRegistry::open(dir.path().join("r")).unwrap());
    let state = dir.path().join("state").join("lease.state");
    (dir, Switchable::new(real), state)
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
fn issue(generator: &Leased, n: usize) -> Vec<u64> {
    let ids: Vec<u64> = (0..n).map(|_| generator.next_id().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    ids
}

/// A holder that stopped cleanly while the registry was away, and the restart that
/// resumes its claim from the state file.
fn stopped_during_an_outage(registry: &Arc<Switchable>, state: &Path) -> (u64, u64, Instant) {
    let first = start(registry, state, &mut Vec::new()).unwrap();
    let last = *issue(&first, 1_000).last().unwrap();
    let node = first.node();
    registry.set(Mode::Unreachable);
    let outage = Instant::now();
    let released = first.shutdown();
    assert!(
        matches!(released, Err(LeaseError::Unavailable { .. })),
        "the release cannot reach the registry: {released:?}"
    );
    (node, last, outage)
}

#[test]
fn a_restart_during_an_outage_issues_above_the_last_id_until_the_deadline() {
    let (_dir, registry, state) = setup();
    let (node, last, outage) = stopped_during_an_outage(&registry, &state);

    let mut said = Vec::new();
    let resumed = start(&registry, &state, &mut said).expect("resumes without the registry");
    assert_eq!(resumed.node(), node);
    assert!(
        said.iter().any(|l| l.contains("resuming node id")),
        "the start says it resumes: {said:?}"
    );
    assert!(matches!(resumed.status(), LeaseStatus::Failing { .. }));

    // Issue until refused: every ID above the stopped holder's, and the refusal comes
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
        assert!(outage.elapsed() < Duration::from_secs(10), "never refused");
    };
    assert!(issued > 0, "the resumed claim issued nothing");
    assert!(
        outage.elapsed() < Duration::from_millis(2_000),
        "issued past the TTL since the last renewal: {:?}",
        outage.elapsed()
    );
    assert!(
        resumed.explain(&refused).contains("renewals"),
        "{}",
        resumed.explain(&refused)
    );
}

#[test]
fn a_resumed_claim_renews_with_its_token_once_the_registry_answers() {
    let (_dir, registry, state) = setup();
    let (node, last, _) = stopped_during_an_outage(&registry, &state);
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

#[test]
fn a_claim_the_registry_says_is_gone_is_claimed_afresh() {
    let (_dir, registry, state) = setup();
    let first = start(&registry, &state, &mut Vec::new()).unwrap();
    let grant = first.grant().clone();
    let last = *issue(&first, 10).last().unwrap();
    let mark = first.reserved_high_water_ms();
    registry.set(Mode::Unreachable);
    assert!(first.shutdown().is_err());
    // The claim ends at the registry meanwhile (an operator, or its TTL).
    registry.set(Mode::Pass);
    registry.inner.release(&grant, mark).unwrap();
    let mut said = Vec::new();
    let fresh = start(&registry, &state, &mut said).unwrap();
    assert!(
        said.iter().any(|l| l.contains("claiming afresh")),
        "{said:?}"
    );
    assert_ne!(fresh.grant().epoch, grant.epoch, "a new claim");
    assert!(issue(&fresh, 10)[0] > last);
}

#[test]
fn one_live_process_per_state_file() {
    let (_dir, registry, state) = setup();
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
    let (dir, registry, state) = setup();
    stopped_during_an_outage(&registry, &state);
    let copy = dir.path().join("state").join("copy.state");
    std::fs::copy(&state, &copy).unwrap();
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

#[test]
fn a_state_file_past_its_deadline_resumes_nothing() {
    let (_dir, registry, state) = setup();
    let (_, _, outage) = stopped_during_an_outage(&registry, &state);
    // The claim's deadline is within a TTL of the last renewal, before the outage.
    wait_for("the claim's deadline", Duration::from_secs(5), || {
        outage.elapsed() > Duration::from_millis(2_000)
    });
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

/// A manual clock that waiting does not move: only the test sets it.
struct SetClock(ferroflake::ManualClock);
impl ferroflake::Clock for SetClock {
    fn now_ms(&self) -> u64 {
        self.0.now_ms()
    }
    fn wait_until_ms(&self, _target_ms: u64) {}
    fn tracks_real_time(&self) -> bool {
        false
    }
}

#[test]
fn a_restart_with_the_clock_set_back_waits_for_the_saved_mark() {
    const T0: u64 = 1_700_000_000_000;
    let (_dir, registry, state) = setup();
    let clock = Arc::new(SetClock(ferroflake::ManualClock::new(T0)));
    let start = |config: LeaseConfig| {
        LeasedGenerator::start(
            Layout::twitter(),
            Arc::clone(&clock),
            registry.clone(),
            config,
        )
    };
    let first = start(config(&state)).unwrap();
    let last = first.next_id().unwrap();
    registry.set(Mode::Unreachable);
    assert!(first.shutdown().is_err());
    let mut quick = config(&state);
    quick.max_start_wait = Some(Duration::from_millis(100));

    // Set back a second: resuming would issue below the stopped holder's IDs.
    clock.0.set_ms(T0 - 1_000);
    let behind = start(quick.clone()).unwrap_err();
    assert!(
        matches!(behind, LeaseError::BehindHighWater { .. }),
        "{behind:?}"
    );
    clock.0.set_ms(T0 + 5);
    let resumed = start(quick).unwrap();
    assert!(resumed.next_id().unwrap() > last);
}

#[test]
fn keeping_the_local_mark_never_reopens_a_fence_shut_by_a_skewed_clock() {
    let (_dir, registry, state) = setup();
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
