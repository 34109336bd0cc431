//! The leased generator on the manual clock: reservation, fencing, failing and recovering
//! renewals, loss, restarts with the clock set back, and failing closed.

mod support;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflake::{ClaimedGenerator, Clock, Error, Layout, ManualClock, Options, TWITTER_EPOCH_MS};
use ferroflake_lease::{
    EmbeddedRegistry, LeaseConfig, LeaseError, LeaseRequest, LeaseStatus, LeasedGenerator,
    NodeState, Registry, Renewal,
};
use support::{wait_for, Mode, Switchable};

const T0: u64 = 1_700_000_000_000;

/// One node id only, so every holder of the registry shares it.
fn single_node_layout() -> Layout {
    Layout::builder(41, 0, 12)
        .epoch_ms(TWITTER_EPOCH_MS as i64)
        .build()
        .unwrap()
}

fn quick_config() -> LeaseConfig {
    let mut config = LeaseConfig::with_ttl(Duration::from_millis(1_000));
    config.renew_every = Duration::from_millis(300);
    config.retry_every = Duration::from_millis(20);
    config.safety_margin = Duration::from_millis(100);
    config.quarantine = Duration::from_millis(200);
    config.skew_allowance = Duration::from_millis(50);
    config.max_ttl = config.ttl;
    config
}

fn embedded() -> (tempfile::TempDir, Arc<dyn Registry>) {
    let dir = tempfile::tempdir().unwrap();
    let registry = Arc::new(EmbeddedRegistry::open(dir.path()).unwrap());
    (dir, registry)
}

/// A Twitter-layout generator leased from an embedded registry behind a switch that can
/// make it unreachable or lose renewals, on a manual clock at `T0`.
fn leased_on_switchable() -> (
    tempfile::TempDir,
    Arc<Switchable>,
    Arc<ManualClock>,
    LeasedGenerator<Arc<ManualClock>>,
) {
    leased_on_switchable_after(0)
}

/// [`leased_on_switchable`], on a registry whose node ids below `taken` another holder
/// has, so that its generator gets node id `taken`.
fn leased_on_switchable_after(
    taken: u64,
) -> (
    tempfile::TempDir,
    Arc<Switchable>,
    Arc<ManualClock>,
    LeasedGenerator<Arc<ManualClock>>,
) {
    let (dir, real) = embedded();
    for _ in 0..taken {
        let config = quick_config();
        real.acquire(&LeaseRequest {
            node_count: 1 << 10,
            ttl: config.max_ttl,
            quarantine: config.quarantine,
            holder: "another".into(),
            max_ttl: config.max_ttl,
            prefer_node: None,
        })
        .unwrap();
    }
    let registry = Switchable::new(real);
    let clock = Arc::new(ManualClock::new(T0));
    let generator = LeasedGenerator::start(
        Layout::twitter(),
        Arc::clone(&clock),
        registry.clone(),
        quick_config(),
    )
    .unwrap();
    (dir, registry, clock, generator)
}

/// Issues `count` IDs, moving the clock 1 ms every 500 IDs.
fn issue(
    generator: &LeasedGenerator<Arc<ManualClock>>,
    clock: &ManualClock,
    count: usize,
) -> Vec<u64> {
    (0..count)
        .map(|i| {
            if i % 500 == 499 {
                clock.advance_ms(1);
            }
            generator.next_id().expect("issuing under a held lease")
        })
        .collect()
}

#[test]
fn reserves_the_mark_before_issuing_and_fences_below_it() {
    let (_dir, registry) = embedded();
    let clock = Arc::new(ManualClock::new(T0));
    let config = quick_config();
    let generator = LeasedGenerator::start(
        Layout::twitter(),
        Arc::clone(&clock),
        registry,
        config.clone(),
    )
    .unwrap();
    let reserved = generator.reserved_high_water_ms();
    assert!(
        reserved >= T0 + 1_000,
        "the mark is reserved a TTL ahead: {reserved}"
    );
    let fence = generator
        .generator()
        .fence_ms()
        .expect("a leased generator is always fenced");
    assert!(
        fence > T0 && fence <= reserved,
        "fence {fence} must lie in (now, mark {reserved}]"
    );
    assert!(
        fence <= T0 + 900,
        "fence {fence} must not pass the local deadline (TTL - margin)"
    );
    let id = generator.next_id().unwrap();
    assert_eq!(Layout::twitter().decode(id).unwrap().node, generator.node());
    assert_eq!(generator.status(), LeaseStatus::Held);
}

#[test]
fn failing_renewals_issue_until_the_fence_then_recover_the_same_lease() {
    let (_dir, registry, clock, generator) = leased_on_switchable();
    let token = generator.grant().token.clone();
    registry.set(Mode::Unreachable);
    wait_for("a failed renewal", Duration::from_secs(5), || {
        matches!(generator.status(), LeaseStatus::Failing { .. })
    });
    generator
        .next_id()
        .expect("before the deadline, a failing lease still issues");
    // Past the fence on the generator's clock: refused, whatever real time says.
    clock.advance_ms(4_000);
    assert!(matches!(
        generator.next_id(),
        Err(Error::LeaseExpired { .. })
    ));
    recovers_the_same_lease(&registry, &generator, &token);
}

/// A renewal refused as a setting that cannot work proves nothing of the claim: issuing
/// stops at once, well before the deadline, and resumes with the same lease if a renewal
/// succeeds again.
#[test]
fn a_renewal_refused_as_a_setting_stops_issuing_at_once() {
    let (_dir, registry, _clock, generator) = leased_on_switchable();
    let token = generator.grant().token.clone();
    registry.set(Mode::RefuseRenewalsAsSettings);
    wait_for("a refused renewal", Duration::from_secs(5), || {
        matches!(generator.status(), LeaseStatus::Failing { .. })
    });
    // The manual clock stands still: the deadline is far off on it.
    assert!(matches!(
        generator.next_id(),
        Err(Error::LeaseExpired { .. })
    ));
    recovers_the_same_lease(&registry, &generator, &token);
}

/// With the registry answering again, the lease holding `token` is renewed and issues.
fn recovers_the_same_lease(
    registry: &Switchable,
    generator: &LeasedGenerator<Arc<ManualClock>>,
    token: &str,
) {
    registry.set(Mode::Pass);
    wait_for("the renewal to recover", Duration::from_secs(5), || {
        generator.status() == LeaseStatus::Held
    });
    assert_eq!(generator.grant().token, token, "the same lease resumes");
    generator
        .next_id()
        .expect("issuing resumes once the same lease is renewed");
}

#[test]
fn deadline_passing_unrenewed_stops_issuing_and_expiry_loses_the_lease() {
    let (_dir, registry, clock, generator) = leased_on_switchable();
    registry.set(Mode::Unreachable);
    // The manual clock stands still; only real time passes. The renewal thread closes the
    // fence itself at the local deadline (TTL - margin = 900 ms after the last renewal).
    wait_for(
        "the fence to close at the deadline",
        Duration::from_secs(5),
        || matches!(generator.next_id(), Err(Error::LeaseExpired { .. })),
    );
    // The registry's TTL has passed too: when it answers again, the lease is gone.
    std::thread::sleep(Duration::from_millis(1_200));
    registry.set(Mode::Pass);
    wait_for(
        "the lease to be reported lost",
        Duration::from_secs(5),
        || generator.status() == LeaseStatus::Lost,
    );
    clock.advance_ms(10);
    assert!(matches!(
        generator.next_id(),
        Err(Error::LeaseExpired { .. })
    ));
}

/// A holder whose renewals did not run until its local deadline passed (a paused process)
/// is told so, not that its clock jumped ahead.
#[test]
fn a_deadline_passed_unrenewed_is_explained_as_such() {
    let (_dir, registry, clock, generator) = leased_on_switchable();
    registry.set(Mode::StallRenewals);
    let renewals = registry.renewals();
    wait_for("a renewal to stall", Duration::from_secs(5), || {
        registry.renewals() > renewals
    });
    // The local deadline is TTL - margin = 900 ms after the last renewal, in real time.
    std::thread::sleep(Duration::from_millis(1_000));
    clock.advance_ms(2_000);
    let error = generator.next_id().expect_err("past the fence");
    let why = generator.explain(&error);
    registry.set(Mode::Pass);
    assert!(
        why.contains("local deadline passed before a renewal") && !why.contains("clock jumped"),
        "{why}"
    );
}

/// A node id that a generator of this process holds: the grant is given back and the start
/// refused, whichever registry granted it; once the generator is gone, it is granted again.
#[test]
fn a_node_id_this_process_holds_is_refused_and_its_claim_given_back() {
    let (_dir, registry) = embedded();
    let held = ClaimedGenerator::new(
        Layout::twitter(),
        0,
        ferroflake::SystemClock,
        Options::default(),
    )
    .unwrap();
    let refused = LeasedGenerator::start(
        single_node_layout(),
        ferroflake::SystemClock,
        Arc::clone(&registry),
        quick_config(),
    );
    assert!(
        matches!(
            refused,
            Err(LeaseError::Generator(Error::NodeInUse { node: 0, .. }))
        ),
        "{refused:?}"
    );
    // Given back, not held until its TTL: a holder with a day's TTL could take it at once.
    let view = registry.list().unwrap();
    assert!(
        view.nodes.iter().all(|n| n.state != NodeState::Held),
        "{view:?}"
    );
    drop(held);
    let leased = LeasedGenerator::start(
        single_node_layout(),
        ferroflake::SystemClock,
        registry,
        quick_config(),
    )
    .unwrap();
    assert_eq!(leased.node(), 0);
    leased.next_id().unwrap();
}

#[test]
fn lost_stops_for_good() {
    let (_dir, registry, _clock, generator) = leased_on_switchable();
    registry.set(Mode::LoseRenewals);
    wait_for("the lease to be lost", Duration::from_secs(5), || {
        generator.status() == LeaseStatus::Lost
    });
    assert!(matches!(
        generator.next_id(),
        Err(Error::LeaseExpired { .. })
    ));
    let renewals_at_loss = registry.renewals();
    registry.set(Mode::Pass);
    // Two renewal periods, counted on a witness with the same settings on a registry of
    // its own: had the lost lease's renewal thread gone on, it would have renewed by then.
    // The lost generator still holds node id 0 in this process, so the witness's registry
    // has it taken and grants node id 1.
    let (_witness_dir, witness_registry, _witness_clock, witness) = leased_on_switchable_after(1);
    let witness_start = witness_registry.renewals();
    wait_for(
        "two renewals of the witness",
        Duration::from_secs(10),
        || witness_registry.renewals() >= witness_start + 2,
    );
    assert_eq!(
        registry.renewals(),
        renewals_at_loss,
        "a lost lease is not renewed again"
    );
    assert_eq!(witness.status(), LeaseStatus::Held);
    assert_eq!(generator.status(), LeaseStatus::Lost);
    assert!(matches!(
        generator.next_id(),
        Err(Error::LeaseExpired { .. })
    ));
}

#[test]
fn restart_with_the_clock_set_back_never_reissues() {
    let (_dir, registry) = embedded();
    let layout = single_node_layout();
    let clock = Arc::new(ManualClock::new(T0));
    let first = LeasedGenerator::start(
        layout,
        Arc::clone(&clock),
        Arc::clone(&registry),
        quick_config(),
    )
    .unwrap();
    let before = issue(&first, &clock, 20_000);
    first.shutdown().unwrap();
    let last_before = *before.iter().max().unwrap();

    // The process restarts and the clock has been set back into the range already issued
    // (without the mark, the same (time, sequence) pairs would come again).
    clock.set_ms(T0 + 1);
    let second =
        LeasedGenerator::start(layout, Arc::clone(&clock), registry, quick_config()).unwrap();
    assert_eq!(second.node(), 0, "the only id is reused");
    assert!(
        second.grant().previous_high_water_ms >= layout.decode(last_before).unwrap().timestamp_ms
    );
    assert!(
        clock.now_ms() > second.grant().previous_high_water_ms,
        "start waited past the mark"
    );
    let after = issue(&second, &clock, 20_000);
    assert!(
        *after.iter().min().unwrap() > last_before,
        "the restart issues only above the old IDs"
    );
    let all: HashSet<u64> = before.iter().chain(&after).copied().collect();
    assert_eq!(all.len(), before.len() + after.len(), "0 duplicates");
}

#[test]
fn crash_then_clock_set_back_never_reissues() {
    let (_dir, real) = embedded();
    let layout = single_node_layout();
    let clock = Arc::new(ManualClock::new(T0));
    let doomed = Switchable::new(Arc::clone(&real));
    let config = quick_config();
    let first =
        LeasedGenerator::start(layout, Arc::clone(&clock), doomed.clone(), config.clone()).unwrap();
    let before = issue(&first, &clock, 20_000);
    // Crash: no renewal and no release reach the registry any more.
    doomed.set(Mode::Unreachable);
    drop(first);
    let last_before = *before.iter().max().unwrap();

    clock.set_ms(T0 + 1);
    std::thread::sleep(config.ttl + config.quarantine + Duration::from_millis(100));
    let second = LeasedGenerator::start(layout, Arc::clone(&clock), real, config).unwrap();
    assert!(
        second.grant().previous_high_water_ms >= T0 + 1_000,
        "the crashed holder's reserved mark carries over"
    );
    let after = issue(&second, &clock, 20_000);
    assert!(*after.iter().min().unwrap() > last_before);
    let all: HashSet<u64> = before.iter().chain(&after).copied().collect();
    assert_eq!(all.len(), before.len() + after.len(), "0 duplicates");
}

/// A clock that never moves, even when waited on.
struct StuckClock(u64);
impl Clock for StuckClock {
    fn now_ms(&self) -> u64 {
        self.0
    }
    fn wait_until_ms(&self, _target_ms: u64) {}
}

#[test]
fn a_floor_longer_than_the_start_may_wait_is_refused_at_once_and_the_id_released() {
    let (_dir, registry) = embedded();
    let layout = single_node_layout();
    // A new registry's floor is max_ttl + quarantine: 20.2 s here, against a 100 ms limit.
    let mut config = quick_config();
    config.max_ttl = Duration::from_secs(20);
    config.max_start_wait = Some(Duration::from_millis(100));
    let began = Instant::now();
    let err = LeasedGenerator::start(
        layout,
        Arc::new(ManualClock::new(T0)),
        Arc::clone(&registry),
        config.clone(),
    )
    .expect_err("a 20 s floor cannot fit a 100 ms start");
    assert!(
        matches!(err, LeaseError::StartWaitTooLong { node_id: 0, floor_wait, max_start_wait }
            if floor_wait > Duration::from_secs(19) && max_start_wait == Duration::from_millis(100)),
        "{err:?}"
    );
    assert_eq!(err.name(), "START_WAIT_TOO_LONG");
    // Refused before waiting: far below the floor.
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    // The claim was given back: the layout's one node id is claimed again, and refused
    // for the same floor, not for want of a free id.
    let again = LeasedGenerator::start(layout, Arc::new(ManualClock::new(T0)), registry, config)
        .expect_err("the floor still holds");
    assert!(
        matches!(again, LeaseError::StartWaitTooLong { node_id: 0, .. }),
        "{again:?}"
    );
}

#[test]
fn the_default_start_limit_covers_the_longest_start_the_timings_ask_for() {
    let mut config = LeaseConfig::with_ttl(Duration::from_secs(60));
    config.max_ttl = Duration::from_secs(120);
    // 120 s + 12 s of quarantine, then 60 s reserved ahead + 1 s of skew allowance.
    assert_eq!(config.longest_start(), Duration::from_secs(193));
    assert_eq!(config.start_wait_limit(), Duration::from_secs(193));
    assert_eq!(
        LeaseConfig::default().start_wait_limit(),
        Duration::from_secs(30)
    );
    config.max_start_wait = Some(Duration::from_secs(1));
    assert_eq!(config.start_wait_limit(), Duration::from_secs(1));
}

#[test]
fn a_clock_behind_the_mark_is_refused_in_bounded_time_and_the_id_released() {
    let (_dir, registry) = embedded();
    let layout = single_node_layout();
    let clock = Arc::new(ManualClock::new(T0));
    let first = LeasedGenerator::start(
        layout,
        Arc::clone(&clock),
        Arc::clone(&registry),
        quick_config(),
    )
    .unwrap();
    first.next_id().unwrap();
    first.shutdown().unwrap();
    let mut config = quick_config();
    config.max_start_wait = Some(Duration::from_millis(100));
    let err = LeasedGenerator::start(
        layout,
        StuckClock(T0 - 60_000),
        Arc::clone(&registry),
        config.clone(),
    )
    .expect_err("a clock an hour behind the mark cannot start");
    assert!(
        matches!(err, LeaseError::BehindHighWater { now_ms, resume_after_ms, .. } if now_ms == T0 - 60_000 && resume_after_ms > T0),
        "{err:?}"
    );
    // The refused start gave the id back: a healthy clock gets it at once.
    LeasedGenerator::start(layout, Arc::clone(&clock), registry, config)
        .expect("id released after refusal");
}

#[test]
fn unreachable_registry_fails_closed_at_start() {
    let (_dir, real) = embedded();
    let registry = Switchable::new(real);
    registry.set(Mode::Unreachable);
    let err = LeasedGenerator::start(
        Layout::twitter(),
        ManualClock::new(T0),
        registry,
        quick_config(),
    )
    .unwrap_err();
    assert!(matches!(err, LeaseError::Unavailable { .. }), "{err:?}");

    let file = tempfile::NamedTempFile::new().unwrap();
    let err = EmbeddedRegistry::open(file.path().join("leases")).unwrap_err();
    assert!(
        matches!(err, LeaseError::Unavailable { ref registry, .. } if registry == "embedded"),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("cannot create lease directory"),
        "{err}"
    );
}

/// A child forked from the holder cannot issue under the parent's lease, and dropping its
/// inherited copy releases nothing: the parent still holds the only node id and issues on.
#[test]
fn a_forked_child_leaves_the_parents_lease_alone() {
    let (_dir, registry) = embedded();
    let layout = single_node_layout();
    let holder = LeasedGenerator::start(
        layout,
        ManualClock::new(T0),
        Arc::clone(&registry),
        quick_config(),
    )
    .unwrap();
    holder.next_id().unwrap();
    // SAFETY: the child only calls the generator (no lock, no allocation on this path)
    // and drops it, then `_exit`s without running the test harness's code.
    match unsafe { libc::fork() } {
        -1 => panic!("fork failed"),
        0 => {
            let refused = matches!(holder.next_id(), Err(Error::GeneratorForked { .. }));
            drop(holder);
            unsafe { libc::_exit(if refused { 0 } else { 1 }) }
        }
        child => {
            let mut status = 0;
            // SAFETY: waits for the child just made.
            assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
            assert!(
                libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
                "the child issued under the parent's lease (status {status})"
            );
        }
    }
    let err =
        LeasedGenerator::start(layout, ManualClock::new(T0), registry, quick_config()).unwrap_err();
    assert_eq!(
        err,
        LeaseError::NoFreeNode { node_count: 1 },
        "the child's drop released the parent's lease"
    );
    holder.next_id().unwrap();
}

#[test]
fn every_id_taken_is_no_free_node() {
    let (_dir, registry) = embedded();
    let layout = single_node_layout();
    let _holder = LeasedGenerator::start(
        layout,
        ManualClock::new(T0),
        Arc::clone(&registry),
        quick_config(),
    )
    .unwrap();
    let err =
        LeasedGenerator::start(layout, ManualClock::new(T0), registry, quick_config()).unwrap_err();
    assert_eq!(err, LeaseError::NoFreeNode { node_count: 1 });
}

#[test]
fn settings_that_cannot_keep_a_lease_are_refused() {
    let (_dir, registry) = embedded();
    let mut config = quick_config();
    config.safety_margin = config.ttl;
    let err = LeasedGenerator::start(Layout::twitter(), ManualClock::new(T0), registry, config)
        .unwrap_err();
    assert!(matches!(err, LeaseError::InvalidConfig { .. }), "{err:?}");
}

#[test]
fn a_leased_generator_can_be_shared_across_threads_and_wrapped_by_bindings() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<LeasedGenerator<ferroflake::AnyClock>>();
    send_sync::<LeasedGenerator<ferroflake::SystemClock>>();
    send_sync::<Arc<dyn Registry>>();

    let (_dir, registry) = embedded();
    let clock = Arc::new(ManualClock::new(T0));
    let generator = Arc::new(
        LeasedGenerator::start(
            Layout::twitter(),
            Arc::clone(&clock),
            registry,
            quick_config(),
        )
        .unwrap(),
    );
    let ids: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let generator = Arc::clone(&generator);
                s.spawn(move || {
                    (0..2_000)
                        .map(|_| generator.next_id().unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 8_000);
}

/// Grants without the floor a new registry starts with, so that a holder with a long TTL
/// can start at once; everything else goes to the real registry.
struct FloorSkipped(Arc<dyn Registry>);

impl Registry for FloorSkipped {
    fn acquire(
        &self,
        request: &ferroflake_lease::LeaseRequest,
    ) -> Result<ferroflake_lease::Grant, LeaseError> {
        let mut grant = self.0.acquire(request)?;
        grant.floor_wait = Duration::ZERO;
        Ok(grant)
    }
    fn renew(
        &self,
        grant: &ferroflake_lease::Grant,
        renewal: &ferroflake_lease::Renewal,
    ) -> Result<(), LeaseError> {
        self.0.renew(grant, renewal)
    }
    fn release(
        &self,
        grant: &ferroflake_lease::Grant,
        high_water_ms: u64,
    ) -> Result<(), LeaseError> {
        self.0.release(grant, high_water_ms)
    }
    fn restored(&self, window: Duration) -> Result<Duration, LeaseError> {
        self.0.restored(window)
    }
    fn reserve(
        &self,
        node_id: u64,
        holder: &str,
    ) -> Result<ferroflake_lease::Reservation, LeaseError> {
        self.0.reserve(node_id, holder)
    }
    fn list(&self) -> Result<ferroflake_lease::RegistryView, LeaseError> {
        self.0.list()
    }
    fn wall_clock_ms(&self) -> Result<Option<u64>, LeaseError> {
        self.0.wall_clock_ms()
    }
    fn name(&self) -> &str {
        self.0.name()
    }
}

/// Every file of the registry deleted under a holder with a 60 s TTL: the record of its
/// longest TTL goes too, so a claimant with default timings floors by its own 12 s. The
/// holder renews within 3.3 s whatever its TTL, sees the loss and stops before the
/// claimant issues its first ID.
#[test]
fn a_long_ttl_holder_stops_before_a_default_claimant_after_every_file_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    // The long holder is another process, as it would be: in this one, the node id it
    // holds would be refused to the claimant before any registry is asked.
    let mut long = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "long_holder_run_as_a_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(LONG_HOLDER, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(long.stdout.take().unwrap());
    let mut said = String::new();
    // libtest's own lines come first ("running 1 test").
    while !said.trim_end().ends_with("issuing") {
        said.clear();
        assert!(
            out.read_line(&mut said).unwrap() > 0,
            "the holder said nothing"
        );
    }
    for file in ["leases.json", "leases.lock"] {
        std::fs::remove_file(dir.path().join(file)).unwrap();
    }
    let registry: Arc<dyn Registry> = Arc::new(EmbeddedRegistry::open(dir.path()).unwrap());
    let claimant = LeasedGenerator::start(
        single_node_layout(),
        ferroflake::SystemClock,
        registry,
        LeaseConfig::default(),
    )
    .unwrap();
    let claimant_began = wall_us();
    let claimant_ids: Vec<u64> = (0..10_000)
        .map(|_| claimant.next_id().expect("the claimant issues"))
        .collect();
    // "<ids issued> <highest id> <when it saw its lease lost, unix µs>"
    let (count, highest, long_stopped) = loop {
        said.clear();
        assert!(
            out.read_line(&mut said).unwrap() > 0,
            "the holder ended silently"
        );
        let fields: Vec<u64> = said
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        if let [count, highest, stopped] = fields[..] {
            break (count, highest, stopped);
        }
    };
    assert!(long.wait().unwrap().success());
    assert!(count > 0);
    assert!(
        long_stopped < claimant_began,
        "the long holder went on issuing after the claimant began"
    );
    // One node id on one clock: every ID of the holder that stopped first is below the
    // claimant's first.
    assert!(
        highest < claimant_ids[0],
        "an ID issued by both holders of node 0"
    );
}

/// What [`a_long_ttl_holder_stops_before_a_default_claimant_after_every_file_is_lost`]'s
/// child holds: the registry's directory.
const LONG_HOLDER: &str = "FF_LEASE_TEST_LONG_HOLDER";

/// Not a test of its own: the long holder of the test above, in a process of its own. It
/// holds node 0 with a 60 s TTL and issues until its lease is lost (bounded: 70 s).
#[test]
fn long_holder_run_as_a_child() {
    let Ok(dir) = std::env::var(LONG_HOLDER) else {
        return;
    };
    let registry: Arc<dyn Registry> = Arc::new(EmbeddedRegistry::open(dir).unwrap());
    let long = LeasedGenerator::start(
        single_node_layout(),
        ferroflake::SystemClock,
        Arc::new(FloorSkipped(registry)),
        LeaseConfig::with_ttl(Duration::from_secs(60)),
    )
    .unwrap();
    let (mut count, mut highest) = (1, long.next_id().expect("the long holder issues"));
    println!("issuing");
    let give_up = Instant::now() + Duration::from_secs(70);
    while Instant::now() < give_up {
        match long.next_id() {
            Ok(id) => (count, highest) = (count + 1, highest.max(id)),
            Err(_) if long.status() == LeaseStatus::Lost => break,
            Err(_) => std::thread::yield_now(),
        }
    }
    println!("{count} {highest} {}", wall_us());
}

/// The wall clock in Unix microseconds: one clock for two processes.
fn wall_us() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    u64::try_from(since.as_micros()).unwrap()
}

/// Quick timings on the system clock: a 1 s TTL, so a clock check allows 150 ms.
fn quick_on_the_system_clock() -> (tempfile::TempDir, Arc<Switchable>, LeaseConfig) {
    let (dir, real) = embedded();
    (dir, Switchable::new(real), quick_config())
}

/// A generator of one node id on the system clock, leased from `registry`.
fn on_the_system_clock(
    registry: &Arc<Switchable>,
    config: LeaseConfig,
) -> Result<LeasedGenerator<ferroflake::SystemClock>, LeaseError> {
    LeasedGenerator::start(
        single_node_layout(),
        ferroflake::SystemClock,
        registry.clone(),
        config,
    )
}

#[test]
fn a_clock_too_far_from_the_registrys_is_refused_at_start_and_the_id_released() {
    let (_dir, registry, config) = quick_on_the_system_clock();
    assert_eq!(config.clock_skew_limit(), Duration::from_millis(150));
    for offset_ms in [-315_360_000_000, -10_000, 2_000] {
        registry.set_clock_offset_ms(offset_ms);
        let refused = on_the_system_clock(&registry, config.clone()).unwrap_err();
        let LeaseError::ClockSkew {
            skew_ms,
            uncertainty_ms,
            limit,
            ..
        } = &refused
        else {
            panic!("offset {offset_ms}: {refused:?}");
        };
        assert!(
            (skew_ms + offset_ms).unsigned_abs() <= uncertainty_ms + 20,
            "offset {offset_ms}: {refused}"
        );
        assert_eq!(*limit, Duration::from_millis(150));
        let text = refused.to_string();
        assert!(
            text.contains(if offset_ms < 0 { "ahead" } else { "behind" }),
            "{text}"
        );
        assert_eq!(refused.name(), "CLOCK_SKEW");
    }
    // No mark was reserved on the far clock: the registry holds none past this instant.
    let now_ms = ferroflake::SystemClock.now_ms();
    let view = registry.list().unwrap();
    assert!(
        view.nodes.iter().all(|n| n.high_water_ms <= now_ms),
        "a mark reserved on a clock far from the registry's: {view:?}"
    );
    // Each refused start gave node 0 back: a start on agreeing clocks takes it.
    registry.set_clock_offset_ms(0);
    let held = on_the_system_clock(&registry, config).unwrap();
    assert_eq!(held.node(), 0);
    let reading = held
        .clock_skew()
        .expect("the embedded registry reports a clock");
    assert!(reading.least_skew_ms() <= 20, "{reading:?}");
}

#[test]
fn a_holder_whose_clock_drifts_away_stops_issuing_until_it_agrees_again() {
    let (_dir, registry, config) = quick_on_the_system_clock();
    let held = on_the_system_clock(&registry, config).unwrap();
    held.next_id().expect("issues on agreeing clocks");
    registry.set_clock_offset_ms(5_000);
    wait_for(
        "a renewal to find the clocks apart",
        Duration::from_secs(5),
        || {
            matches!(
                held.status(),
                LeaseStatus::Failing {
                    last_error: LeaseError::ClockSkew { .. },
                    ..
                }
            )
        },
    );
    assert!(matches!(held.next_id(), Err(Error::LeaseExpired { .. })));
    assert!(held.clock_skew().unwrap().skew_ms < -4_000);
    registry.set_clock_offset_ms(0);
    wait_for(
        "a renewal on agreeing clocks",
        Duration::from_secs(5),
        || held.status() == LeaseStatus::Held,
    );
    held.next_id().expect("issues again once the clocks agree");
}

#[test]
fn a_manual_clock_is_not_checked_against_the_registry() {
    let (_dir, registry, config) = quick_on_the_system_clock();
    registry.set_clock_offset_ms(-3_600_000);
    let clock = Arc::new(ManualClock::new(T0));
    let held = LeasedGenerator::start(single_node_layout(), clock, registry, config).unwrap();
    held.next_id()
        .expect("a manual clock reads what it is told");
    assert_eq!(held.clock_skew(), None);
}

#[test]
fn a_clock_skew_limit_beyond_what_the_protocol_covers_is_refused() {
    let mut config = quick_config();
    config.max_clock_skew = Some(Duration::from_millis(151));
    let refused = config.validate().unwrap_err().to_string();
    assert!(refused.contains("max_clock_skew"), "{refused}");
    config.max_clock_skew = Some(Duration::from_millis(150));
    config.validate().unwrap();
    // None at all is a limit no clock meets: refused before any claim, not after.
    config.max_clock_skew = Some(Duration::ZERO);
    let refused = config.validate().unwrap_err().to_string();
    assert!(refused.contains("max_clock_skew 0"), "{refused}");
    config.max_clock_skew = Some(Duration::from_millis(1));
    config.validate().unwrap();
}

/// The holder's name is for operators: empty or blank, longer than 256 bytes, or holding
/// a control character (a terminal escape in `lease list`) or anything beyond ASCII but
/// letters and digits (a right-to-left override, a zero-width space, a line separator, a
/// soft hyphen, a Hangul filler, a tag, a combining mark, another space) is refused before
/// any claim.
#[test]
fn a_holder_name_operators_cannot_read_is_refused() {
    let mut config = quick_config();
    for bad in [
        String::new(),
        "x".repeat(ferroflake_lease::MAX_HOLDER_BYTES + 1),
        "web-1\u{1b}[2J".to_owned(),
        "web\n1".to_owned(),
        " \t ".to_owned(),
        "web-\u{202e}1-bew".to_owned(),
        "web\u{200b}-1".to_owned(),
        "\u{feff}web-1".to_owned(),
        "web\u{2028}1".to_owned(),
        "web\u{ad}-1".to_owned(),
        "\u{3164}\u{3164}".to_owned(),
        "web-1\u{e0041}".to_owned(),
        "web-1\u{301}".to_owned(),
        "web\u{a0}1".to_owned(),
    ] {
        config.holder = bad;
        let refused = config.validate().unwrap_err().to_string();
        assert!(
            refused.contains("holder must be 1 to 256 bytes"),
            "{refused}"
        );
        assert!(!refused.contains("\u{1b}"), "{refused}");
    }
    config.holder = "x".repeat(ferroflake_lease::MAX_HOLDER_BYTES);
    config.validate().unwrap();
    config.holder = "web-1 (façade)".to_owned();
    config.validate().unwrap();
    config.holder = "ウェブ-1 مرحبا".to_owned();
    config.validate().unwrap();
}

/// An empty state file path names nothing: the caller's mistake, refused before any claim
/// (it was a `STATE_FILE` error saying the path "names a directory").
#[test]
fn an_empty_state_file_path_is_a_setting_refused() {
    let mut config = quick_config();
    config.state_file = Some(std::path::PathBuf::new());
    let refused = config.validate().unwrap_err();
    assert_eq!(refused.name(), "INVALID_CONFIG");
    assert!(refused.is_invalid_input());
    assert!(
        refused.to_string().contains("state_file is empty"),
        "{refused}"
    );
    config.state_file = Some("state".into());
    config.validate().unwrap();
}

/// The system clock set `offset_ms` off, which a test moves: a host whose clock stepped.
struct SteppedClock {
    offset_ms: std::sync::atomic::AtomicI64,
}

impl Clock for SteppedClock {
    fn now_ms(&self) -> u64 {
        let offset = self.offset_ms.load(std::sync::atomic::Ordering::SeqCst);
        ferroflake::SystemClock
            .now_ms()
            .saturating_add_signed(offset)
    }
    fn wait_until_ms(&self, target_ms: u64) {
        let left = target_ms.saturating_sub(self.now_ms()).min(1_000);
        std::thread::sleep(Duration::from_millis(left));
    }
}

#[test]
fn a_clock_stepped_years_ahead_reserves_no_mark_on_it() {
    let (_dir, registry, config) = quick_on_the_system_clock();
    let clock = Arc::new(SteppedClock {
        offset_ms: std::sync::atomic::AtomicI64::new(0),
    });
    let held = LeasedGenerator::start(
        single_node_layout(),
        Arc::clone(&clock),
        registry.clone(),
        config,
    )
    .unwrap();
    held.next_id().expect("issues on agreeing clocks");
    // Ten years ahead: renewals go on keeping the lease, but raise no mark on that clock,
    // which would hold the id back from every later holder for ten years.
    clock
        .offset_ms
        .store(315_360_000_000, std::sync::atomic::Ordering::SeqCst);
    assert!(held.next_id().is_err(), "past the fence at once");
    wait_for(
        "a renewal to find the clock years ahead",
        Duration::from_secs(5),
        || {
            held.clock_skew()
                .is_some_and(|r| r.skew_ms > 300_000_000_000)
        },
    );
    let renewals = registry.renewals();
    wait_for("two more renewals", Duration::from_secs(5), || {
        registry.renewals() >= renewals + 2
    });
    let now_ms = ferroflake::SystemClock.now_ms();
    assert!(held.reserved_high_water_ms() < now_ms + 2_000);
    let mark = registry.list().unwrap().nodes[0].high_water_ms;
    assert!(mark < now_ms + 2_000, "a mark reserved years ahead: {mark}");
}

/// The peer check: a start whose clock agrees with the registry's within the limit, but
/// is further than the limit from the skews the live holders recorded (on average), is
/// refused with both named, and gives its id back; once the holders' recorded skews agree
/// with its own, it starts, and its renewals record its skew for the next starts.
#[test]
fn a_start_far_from_the_live_holders_clocks_is_refused() {
    let (_dir, registry, config) = quick_on_the_system_clock();
    // The new registry's floor, waited out once (on a manual clock: no peer check).
    LeasedGenerator::start(
        Layout::twitter(),
        Arc::new(ManualClock::new(T0)),
        registry.clone(),
        config.clone(),
    )
    .unwrap()
    .shutdown()
    .unwrap();
    let request = LeaseRequest {
        node_count: 1 << 10,
        ttl: config.ttl,
        quarantine: config.quarantine,
        holder: "peer".into(),
        max_ttl: config.max_ttl,
        prefer_node: None,
    };
    let peers = [
        registry.acquire(&request).unwrap(),
        registry.acquire(&request).unwrap(),
    ];
    let record_skews = |skews: [i64; 2]| {
        for (peer, skew) in peers.iter().zip(skews) {
            let renewal = Renewal {
                clock_skew_ms: Some(skew),
                ..Renewal::new(config.ttl, 0)
            };
            registry.inner.renew(peer, &renewal).unwrap();
        }
    };
    let start = || {
        LeasedGenerator::start(
            Layout::twitter(),
            ferroflake::SystemClock,
            registry.clone(),
            config.clone(),
        )
    };
    // The registry's clock 120 ms behind this one: within the 150 ms limit.
    registry.set_clock_offset_ms(-120);
    record_skews([-110, -130]);
    let refused = start().unwrap_err();
    let LeaseError::ClockSkew {
        skew_ms,
        peers_skew_ms,
        limit,
        ..
    } = &refused
    else {
        panic!("{refused:?}");
    };
    assert_eq!(
        *peers_skew_ms,
        Some(-120),
        "the holders' average: {refused}"
    );
    assert!((skew_ms - 120).abs() <= 20, "{refused}");
    assert_eq!(*limit, Duration::from_millis(150));
    assert_eq!(refused.name(), "CLOCK_SKEW");
    let text = refused.to_string();
    for words in [
        "ahead",
        "120ms behind",
        "other live holders",
        "max_clock_skew 150ms",
    ] {
        assert!(text.contains(words), "{words:?} in {text}");
    }
    let view = registry.list().unwrap();
    assert!(
        view.nodes
            .iter()
            .filter(|n| n.holder.as_deref() != Some("peer"))
            .all(|n| n.state != NodeState::Held),
        "the refused start gave its id back: {view:?}"
    );

    record_skews([110, 130]);
    let held = start().expect("a clock that agrees with the holders' starts");
    let view = registry.list().unwrap();
    let ours = view.node(held.node()).unwrap();
    let recorded = ours
        .clock_skew_ms
        .expect("the start's renewal records its skew");
    assert!((recorded - 120).abs() <= 20, "{ours:?}");
    assert!(
        ours.since_ms.is_some() && ours.last_renewal_ms.is_some(),
        "{ours:?}"
    );
    held.shutdown().unwrap();
}

/// The system clock, set off by an offset that a test can step.
struct StepClock(Arc<std::sync::atomic::AtomicI64>);
impl Clock for StepClock {
    fn now_ms(&self) -> u64 {
        let offset = self.0.load(std::sync::atomic::Ordering::SeqCst);
        ferroflake::SystemClock
            .now_ms()
            .saturating_add_signed(offset)
    }
    fn wait_until_ms(&self, target_ms: u64) {
        let offset = self.0.load(std::sync::atomic::Ordering::SeqCst);
        ferroflake::SystemClock.wait_until_ms(target_ms.saturating_add_signed(-offset));
    }
}

/// A registry whose renewals step the holder's clock while they are under way, after the
/// holder read it against the registry's.
struct StepsDuringRenewals {
    inner: Arc<dyn Registry>,
    offset: Arc<std::sync::atomic::AtomicI64>,
    step_ms: std::sync::atomic::AtomicI64,
}
impl Registry for StepsDuringRenewals {
    fn acquire(
        &self,
        request: &ferroflake_lease::LeaseRequest,
    ) -> Result<ferroflake_lease::Grant, LeaseError> {
        self.inner.acquire(request)
    }
    fn renew(&self, grant: &ferroflake_lease::Grant, renewal: &Renewal) -> Result<(), LeaseError> {
        let step = self.step_ms.load(std::sync::atomic::Ordering::SeqCst);
        self.offset
            .fetch_add(step, std::sync::atomic::Ordering::SeqCst);
        self.inner.renew(grant, renewal)
    }
    fn release(
        &self,
        grant: &ferroflake_lease::Grant,
        high_water_ms: u64,
    ) -> Result<(), LeaseError> {
        self.inner.release(grant, high_water_ms)
    }
    fn restored(&self, window: Duration) -> Result<Duration, LeaseError> {
        self.inner.restored(window)
    }
    fn reserve(
        &self,
        node_id: u64,
        holder: &str,
    ) -> Result<ferroflake_lease::Reservation, LeaseError> {
        self.inner.reserve(node_id, holder)
    }
    fn list(&self) -> Result<ferroflake_lease::RegistryView, LeaseError> {
        self.inner.list()
    }
    fn wall_clock_ms(&self) -> Result<Option<u64>, LeaseError> {
        self.inner.wall_clock_ms()
    }
    fn name(&self) -> &str {
        "steps"
    }
}

#[test]
fn a_clock_that_steps_during_the_first_renewal_is_refused() {
    let (_dir, real) = embedded();
    let offset = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let registry = Arc::new(StepsDuringRenewals {
        inner: real,
        offset: Arc::clone(&offset),
        step_ms: std::sync::atomic::AtomicI64::new(0),
    });
    let start = || {
        LeasedGenerator::start(
            single_node_layout(),
            StepClock(Arc::clone(&offset)),
            registry.clone(),
            quick_config(),
        )
    };
    // Past the new registry's floor, whose wait renews: the next start renews only once.
    start().unwrap().shutdown().unwrap();
    // The clock agrees when it is read; by the time the fence is set, after the renewal,
    // it is a second ahead: the fence must not be opened on it.
    registry
        .step_ms
        .store(1_000, std::sync::atomic::Ordering::SeqCst);
    let refused = start().unwrap_err();
    let LeaseError::ClockSkew { skew_ms, .. } = refused else {
        panic!("{refused:?}");
    };
    assert!(skew_ms >= 900, "{skew_ms}");
}
