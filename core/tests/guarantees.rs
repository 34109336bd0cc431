//! One test per guarantee in the `Generator` docs, on a manual clock.

use std::collections::HashSet;

use ferroflake::{Clock, Counters, Error, Generator, Layout, ManualClock, Options};

const NOW: u64 = 1_700_000_000_000;

fn options(drift: u64, max_wait: u64) -> Options {
    let mut o = Options::default();
    o.max_drift_ticks = drift;
    o.max_backward_wait_ms = max_wait;
    o
}

/// A clock that never moves, even when waited on: the generator must bound its waits.
struct FrozenClock(u64);

impl Clock for FrozenClock {
    fn now_ms(&self) -> u64 {
        self.0
    }
    fn wait_until_ms(&self, _target_ms: u64) {}
}

#[test]
fn ids_are_unique_and_strictly_increasing_as_the_clock_moves() {
    let clock = ManualClock::new(NOW);
    let g = Generator::with_clock(Layout::twitter(), 9, &clock, Options::default()).unwrap();
    let mut last = 0;
    for i in 0..100_000u64 {
        if i % 1000 == 0 {
            clock.advance_ms(1);
        }
        let id = g.next_id().unwrap();
        assert!(id > last, "id {id} after {last}");
        assert_eq!(Layout::twitter().decode(id).unwrap().node, 9);
        last = id;
    }
}

#[test]
fn try_next_id_gives_none_where_next_id_would_wait_and_moves_no_clock() {
    let clock = ManualClock::new(NOW);
    let layout = Layout::twitter();
    let g = Generator::with_clock(layout, 1, &clock, Options::default()).unwrap();
    let tried: Vec<u64> = (0..4096)
        .map(|_| g.try_next_id().unwrap().unwrap())
        .collect();
    assert!(tried.windows(2).all(|w| w[0] < w[1]));
    // The tick is used up: no ID, no wait (a wait would move the manual clock).
    assert_eq!(g.try_next_id().unwrap(), None);
    assert_eq!(clock.now_ms(), NOW, "try_next_id waited");
    assert_eq!(g.counters().waits, 0);
    // next_id waits as before, and the IDs go on increasing.
    let waited = g.next_id().unwrap();
    assert!(waited > tried[4095]);
    assert_eq!(clock.now_ms(), NOW + 1);
    assert!(g.try_next_id().unwrap().unwrap() > waited);
    // A clock gone back beyond the drift: no ID rather than the backward wait.
    clock.rewind_ms(50);
    assert_eq!(g.try_next_id().unwrap(), None);
}

#[test]
fn a_used_up_sequence_waits_for_the_next_tick_and_never_wraps() {
    let clock = ManualClock::new(NOW);
    let layout = Layout::twitter();
    let g = Generator::with_clock(layout, 1, &clock, Options::default()).unwrap();
    let ids: Vec<u64> = (0..4096 + 10).map(|_| g.next_id().unwrap()).collect();
    let parts: Vec<_> = ids.iter().map(|&id| layout.decode(id).unwrap()).collect();
    // The first 4096 IDs fill tick NOW; the 4097th waited for NOW + 1 with sequence 0.
    assert!(parts[..4096].iter().all(|p| p.timestamp_ms == NOW));
    assert_eq!(parts[4095].sequence, 4095);
    assert_eq!(
        (parts[4096].timestamp_ms, parts[4096].sequence),
        (NOW + 1, 0)
    );
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        clock.now_ms(),
        NOW + 1,
        "the wait moved the manual clock one tick"
    );
    assert_eq!(g.counters().waits, 1);
}

#[test]
fn a_clock_that_stops_gives_a_typed_error_after_a_bounded_wait() {
    let g =
        Generator::with_clock(Layout::twitter(), 1, FrozenClock(NOW), Options::default()).unwrap();
    for _ in 0..4096 {
        g.next_id().unwrap();
    }
    // One 1 ms tick plus the default 5 ms allowance, then a typed error.
    assert_eq!(g.next_id(), Err(Error::ClockStalled { waited_ms: 6 }));
}

#[test]
fn drift_borrows_up_to_n_ticks_ahead_and_no_further() {
    let layout = Layout::twitter();
    let g = Generator::with_clock(layout, 1, FrozenClock(NOW), options(3, 5)).unwrap();
    let ids: Vec<u64> = (0..4 * 4096).map(|_| g.next_id().unwrap()).collect();
    assert_eq!(
        layout.decode(ids[ids.len() - 1]).unwrap().timestamp_ms,
        NOW + 3
    );
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(matches!(g.next_id(), Err(Error::ClockStalled { .. })));
    assert_eq!(g.counters().borrowed_ticks, 3);
}

#[test]
fn a_rollback_within_the_drift_is_ridden_out_without_waiting() {
    let clock = ManualClock::new(NOW);
    let g = Generator::with_clock(Layout::twitter(), 1, &clock, options(2, 0)).unwrap();
    let before = g.next_id().unwrap();
    clock.rewind_ms(2);
    let after = g.next_id().unwrap();
    assert!(after > before);
    assert_eq!(clock.now_ms(), NOW - 2, "no wait was needed");
    assert_eq!(g.counters(), Counters::default());
}

fn rollback(back_ms: u64, max_wait_ms: u64) -> (Result<u64, Error>, u64, Counters, u64) {
    let clock = ManualClock::new(NOW);
    let g = Generator::with_clock(Layout::twitter(), 1, &clock, options(0, max_wait_ms)).unwrap();
    let first = g.next_id().unwrap();
    clock.rewind_ms(back_ms);
    let result = g.next_id();
    (result, first, g.counters(), clock.now_ms())
}

#[test]
fn rollbacks_of_1_and_5_ms_are_waited_out_within_the_leaf_bound() {
    for back in [1, 5] {
        let (result, first, counters, now) = rollback(back, 5);
        let id = result.unwrap();
        assert!(id > first, "{back} ms: {id} must follow {first}");
        assert_eq!(
            Layout::twitter().decode(id).unwrap().timestamp_ms,
            NOW,
            "{back} ms"
        );
        assert_eq!(now, NOW, "{back} ms: waited until the clock was back");
        assert_eq!(counters.rollbacks, 1);
    }
}

#[test]
fn rollbacks_of_1_s_and_1_h_are_typed_errors_with_the_distance() {
    for back in [1_000, 3_600_000] {
        let (result, _, counters, now) = rollback(back, 5);
        assert_eq!(result, Err(Error::ClockMovedBackwards { behind_ms: back }));
        assert_eq!(
            now,
            NOW - back,
            "refused without waiting longer than allowed"
        );
        assert_eq!(counters.rollbacks, 1, "the refused rollback is counted");
    }
    // A 6 ms rollback exceeds the 5 ms bound as well; with a 0 ms bound even 1 ms does.
    assert!(matches!(
        rollback(6, 5).0,
        Err(Error::ClockMovedBackwards { behind_ms: 6 })
    ));
    assert!(matches!(
        rollback(1, 0).0,
        Err(Error::ClockMovedBackwards { behind_ms: 1 })
    ));
}

#[test]
fn nothing_is_reissued_across_a_rollback_and_recovery() {
    let clock = ManualClock::new(NOW);
    let g = Generator::with_clock(Layout::twitter(), 1, &clock, Options::default()).unwrap();
    let mut seen = HashSet::new();
    for _ in 0..3000 {
        assert!(seen.insert(g.next_id().unwrap()));
    }
    clock.rewind_ms(3_600_000);
    for _ in 0..10 {
        assert!(matches!(
            g.next_id(),
            Err(Error::ClockMovedBackwards { .. })
        ));
    }
    clock.set_ms(NOW);
    for _ in 0..3000 {
        assert!(
            seen.insert(g.next_id().unwrap()),
            "re-issued an ID after recovery"
        );
    }
}

#[test]
fn an_exhausted_time_field_is_a_typed_error_and_the_sign_bit_stays_clear() {
    // 8 time bits of 1 ms from 200 ms ago: 56 ticks left.
    let layout = Layout::builder(8, 43, 12)
        .epoch_ms((NOW - 200) as i64)
        .build()
        .unwrap();
    assert_eq!(layout.total_bits(), 63);
    let clock = ManualClock::new(NOW);
    let g = Generator::with_clock(layout, layout.max_node(), &clock, Options::default()).unwrap();
    clock.set_ms(layout.exhausts_at() - 1);
    let last = g.next_id().unwrap();
    assert!(last < 1 << 63);
    assert_eq!(
        layout.decode(last).unwrap().timestamp_ms,
        layout.exhausts_at() - 1
    );
    for _ in 0..4095 {
        assert!(g.next_id().unwrap() < 1 << 63);
    }
    assert_eq!(
        g.next_id(),
        Err(Error::LayoutExhausted {
            exhausts_at_ms: layout.exhausts_at()
        })
    );
    clock.set_ms(layout.exhausts_at() + 10);
    assert!(matches!(g.next_id(), Err(Error::LayoutExhausted { .. })));
}

#[test]
fn a_fence_stops_issuing_at_its_tick_and_lifting_it_resumes() {
    let clock = ManualClock::new(NOW);
    let g = Generator::with_clock(Layout::sonyflake(), 1, &clock, Options::default()).unwrap();
    g.set_fence_ms(NOW + 25); // sonyflake ticks are 10 ms: ticks starting before +25 pass
    assert_eq!(g.fence_ms(), Some(NOW + 30));
    g.next_id().unwrap();
    clock.set_ms(NOW + 29);
    g.next_id().unwrap();
    clock.set_ms(NOW + 30);
    assert_eq!(g.next_id(), Err(Error::LeaseExpired { fence_ms: NOW + 30 }));
    g.clear_fence();
    assert!(g.next_id().is_ok());
}

#[test]
fn resuming_after_a_high_water_mark_skips_its_whole_tick() {
    let clock = ManualClock::new(NOW);
    let mut o = Options::default();
    o.resume_after_ms = Some(NOW + 2);
    let g = Generator::with_clock(Layout::twitter(), 1, &clock, o).unwrap();
    // The clock is behind the mark by 2 ms: waited out within the 5 ms bound.
    let id = g.next_id().unwrap();
    assert_eq!(Layout::twitter().decode(id).unwrap().timestamp_ms, NOW + 3);
    // Far behind the mark: refused when the generator is made, with both times.
    o.resume_after_ms = Some(NOW + 60_000);
    assert_eq!(
        Generator::with_clock(Layout::twitter(), 1, &clock, o).unwrap_err(),
        Error::ResumeInFuture {
            resume_after_ms: NOW + 60_000,
            now_ms: NOW + 3 // where the first generator's wait left the clock
        }
    );
}

#[test]
fn batches_are_consecutive_and_cross_ticks() {
    let clock = ManualClock::new(NOW);
    let layout = Layout::twitter();
    let g = Generator::with_clock(layout, 5, &clock, Options::default()).unwrap();
    let first = g.next_id().unwrap();
    let mut ids = vec![0; 10_000];
    g.next_ids(&mut ids).unwrap();
    assert!(ids[0] > first);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let last = layout.decode(ids[9_999]).unwrap();
    assert_eq!(
        last.timestamp_ms,
        NOW + 2,
        "10,001 IDs span three 4096-ID ticks"
    );
    assert_eq!(
        g.next_id().unwrap(),
        layout.pack_for_test(NOW + 2, 5, last.sequence + 1)
    );
}

trait PackForTest {
    fn pack_for_test(&self, ms: u64, node: u64, seq: u64) -> u64;
}
impl PackForTest for Layout {
    fn pack_for_test(&self, ms: u64, node: u64, sequence: u64) -> u64 {
        self.compose(&ferroflake::Parts {
            timestamp_ms: ms,
            node,
            sequence,
            shard: 0,
        })
        .unwrap()
    }
}

#[test]
fn shards_land_in_the_lowest_bits_and_are_range_checked() {
    let clock = ManualClock::new(NOW);
    let layout = Layout::sharded();
    let g = Generator::with_clock(layout, 3, &clock, Options::default()).unwrap();
    let a = g.next_id_for_shard(12).unwrap();
    let b = g.next_id_for_shard(0).unwrap();
    assert!(b > a);
    assert_eq!(layout.decode(a).unwrap().shard, 12);
    assert_eq!(a & 15, 12);
    assert_eq!(
        g.next_id_for_shard(16),
        Err(Error::ShardOutOfRange { shard: 16, max: 15 })
    );
    let plain = Generator::with_clock(Layout::twitter(), 3, &clock, Options::default()).unwrap();
    assert_eq!(
        plain.next_id_for_shard(1),
        Err(Error::ShardOutOfRange { shard: 1, max: 0 })
    );
}

#[test]
fn construction_refuses_bad_nodes_and_unusable_layouts() {
    let clock = ManualClock::new(NOW);
    let bad = |layout, node| Generator::with_clock(layout, node, &clock, Options::default()).err();
    assert_eq!(
        bad(Layout::twitter(), 1024),
        Some(Error::NodeOutOfRange {
            node: 1024,
            max: 1023
        })
    );
    let future = Layout::builder(41, 10, 12)
        .epoch_ms(NOW as i64 + 1)
        .build()
        .unwrap();
    assert!(matches!(bad(future, 0), Some(Error::EpochInFuture { .. })));
    let short = Layout::builder(10, 10, 12).build().unwrap();
    assert!(matches!(bad(short, 0), Some(Error::LayoutExhausted { .. })));
}

#[test]
fn a_manual_clock_saturates_instead_of_wrapping() {
    let clock = ManualClock::new(u64::MAX - 1);
    clock.advance_ms(10);
    assert_eq!(clock.now_ms(), u64::MAX);
    clock.rewind_ms(u64::MAX);
    assert_eq!(clock.now_ms(), 0);
}
