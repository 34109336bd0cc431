//! One live generator per node id per process. Tests run on threads of one process and
//! share its table, so each test uses node ids of its own.

use std::sync::Arc;

use ferroflake::{AnyClock, ClaimedGenerator, Error, ErrorKind, Layout, ManualClock, Options};

const NOW_MS: u64 = 1_700_000_000_000;

fn manual(now_ms: u64) -> (AnyClock, Arc<ManualClock>) {
    AnyClock::manual(now_ms)
}

#[test]
fn a_second_live_generator_of_a_node_id_is_refused_whatever_its_layout_or_clock() {
    let (clock, _) = manual(NOW_MS);
    let first = ClaimedGenerator::new(Layout::twitter(), 11, clock, Options::default()).unwrap();
    for (layout, clock) in [
        (Layout::twitter(), AnyClock::system()),
        (Layout::js53(), AnyClock::system()),
        (Layout::twitter(), manual(NOW_MS).0),
    ] {
        let refused = ClaimedGenerator::new(layout, 11, clock, Options::default()).unwrap_err();
        assert_eq!(
            refused,
            Error::NodeInUse {
                node: 11,
                issued_until_ms: None,
                held_at_fork: false
            }
        );
        assert!(refused
            .to_string()
            .contains("node id 11 already has a live generator"));
    }
    // Other node ids are unaffected, and the first still issues.
    let _other = ClaimedGenerator::new(
        Layout::twitter(),
        12,
        AnyClock::system(),
        Options::default(),
    )
    .unwrap();
    first.next_id().unwrap();
}

#[test]
fn a_later_generator_continues_after_the_last_tick_an_earlier_one_issued_in() {
    let (clock, time) = manual(NOW_MS);
    let first = ClaimedGenerator::new(Layout::twitter(), 21, clock, Options::default()).unwrap();
    let last = first.next_id().unwrap();
    drop(first);

    // Same clock, not moved: the next ID is still above the last, in a later tick.
    let again = ClaimedGenerator::new(
        Layout::twitter(),
        21,
        AnyClock::Manual(time.clone()),
        Options::default(),
    )
    .unwrap();
    let next = again.next_id().unwrap();
    assert!(next > last);
    let layout = Layout::twitter();
    assert!(layout.decode(next).unwrap().timestamp_ms > layout.decode(last).unwrap().timestamp_ms);
}

#[test]
fn a_later_generator_whose_clock_is_behind_the_earlier_ids_is_refused() {
    // A 10 ms tick: the mark is the start of the tick the earlier generator issued in.
    let coarse = Layout::builder(39, 10, 12)
        .tick_ms(10)
        .epoch_ms(ferroflake::TWITTER_EPOCH_MS as i64)
        .build()
        .unwrap();
    let (clock, _) = manual(NOW_MS);
    let first = ClaimedGenerator::new(coarse, 31, clock, Options::default()).unwrap();
    first.next_id().unwrap();
    drop(first);

    let (behind, _) = manual(NOW_MS - 1_000);
    let refused =
        ClaimedGenerator::new(Layout::twitter(), 31, behind, Options::default()).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::NodeInUse);
    let tick_start = NOW_MS - (NOW_MS - ferroflake::TWITTER_EPOCH_MS) % 10;
    assert_eq!(
        refused,
        Error::NodeInUse {
            node: 31,
            issued_until_ms: Some(tick_start),
            held_at_fork: false
        }
    );
    assert!(refused.to_string().contains("could repeat them"));

    // A caller's own resume point past the inherited one is kept, and its refusal is its own.
    let (clock, _) = manual(NOW_MS);
    let ahead = Options::given(None, None, Some(NOW_MS + 60_000));
    let own = ClaimedGenerator::new(Layout::twitter(), 31, clock, ahead).unwrap_err();
    assert_eq!(own.kind(), ErrorKind::ResumeInFuture);
}

#[test]
fn a_refused_request_claims_nothing() {
    let (clock, _) = manual(NOW_MS);
    let out_of_range =
        ClaimedGenerator::new(Layout::js53(), 40_000, clock, Options::default()).unwrap_err();
    assert_eq!(out_of_range.kind(), ErrorKind::NodeOutOfRange);

    let (clock, _) = manual(NOW_MS);
    let future = Options::given(None, None, Some(NOW_MS + 60_000));
    let refused = ClaimedGenerator::new(Layout::twitter(), 41, clock, future).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::ResumeInFuture);
    // The node id is still free.
    let (clock, _) = manual(NOW_MS);
    ClaimedGenerator::new(Layout::twitter(), 41, clock, Options::default()).unwrap();
}

#[test]
fn threads_share_one_claimed_generator() {
    let generator = ClaimedGenerator::new(
        Layout::twitter(),
        51,
        AnyClock::system(),
        Options::default(),
    )
    .unwrap();
    let mut ids: Vec<u64> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    (0..10_000)
                        .map(|_| generator.next_id().unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let issued = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), issued);
}
