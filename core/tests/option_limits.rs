//! Options and layouts at the edges of their ranges: the largest backward wait, ticks near
//! `u64::MAX`, and resume points the generator could never (or not soon) issue after. Each
//! gives an ID or a typed error: never an overflow panic, a false error, or a wait that
//! does not end.

use ferroflake::{Clock, Error, Generator, Layout, ManualClock, Options};

const NOW: u64 = 1_700_000_000_000;
const DAY_MS: u64 = 86_400_000;

fn options(drift: u64, max_wait: u64, resume: Option<u64>) -> Options {
    let mut o = Options::default();
    o.max_drift_ticks = drift;
    o.max_backward_wait_ms = max_wait;
    o.resume_after_ms = resume;
    o
}

/// A clock that never moves, even when waited on.
struct FrozenClock(u64);

impl Clock for FrozenClock {
    fn now_ms(&self) -> u64 {
        self.0
    }
    fn wait_until_ms(&self, _target_ms: u64) {}
}

/// One time bit of `tick_ms` from a second before NOW, one sequence bit: two IDs per tick.
fn huge_tick(tick_ms: u64) -> Layout {
    Layout::builder(1, 0, 1)
        .tick_ms(tick_ms)
        .epoch_ms((NOW - 1_000) as i64)
        .build()
        .unwrap()
}

#[test]
fn the_largest_backward_wait_still_waits_one_tick_for_a_used_up_sequence() {
    // tick_ms + max_backward_wait_ms overflowed here: a panic in debug builds, and in
    // release a wrapped budget of 0 ms, so a false ClockStalled instead of a 1 ms wait.
    let clock = ManualClock::new(NOW);
    let g =
        Generator::with_clock(Layout::twitter(), 1, &clock, options(0, u64::MAX, None)).unwrap();
    let ids: Vec<u64> = (0..4097).map(|_| g.next_id().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        Layout::twitter().decode(ids[4096]).unwrap().timestamp_ms,
        NOW + 1
    );
    assert_eq!(g.counters().waits, 1);
}

#[test]
fn the_largest_backward_wait_means_up_to_a_day() {
    let clock = ManualClock::new(NOW);
    let g =
        Generator::with_clock(Layout::twitter(), 1, &clock, options(0, u64::MAX, None)).unwrap();
    let first = g.next_id().unwrap();
    clock.rewind_ms(DAY_MS - 1);
    assert!(
        g.next_id().unwrap() > first,
        "a rollback within a day is waited out"
    );
    clock.rewind_ms(DAY_MS + 1);
    assert_eq!(
        g.next_id(),
        Err(Error::ClockMovedBackwards {
            behind_ms: DAY_MS + 1
        }),
        "beyond a day: refused at once, with the distance"
    );
}

#[test]
fn waiting_on_a_clock_that_never_moves_ends_even_with_the_largest_wait() {
    // Without the cap the budget was u64::MAX ms: the call below would loop for ever.
    let clock = FrozenClock(NOW);
    let resume = NOW + 3_600_000; // an hour ahead: within the day the options allow
    let g = Generator::with_clock(
        Layout::twitter(),
        1,
        clock,
        options(0, u64::MAX, Some(resume)),
    )
    .unwrap();
    assert_eq!(
        g.next_id(),
        Err(Error::ClockMovedBackwards {
            behind_ms: 3_600_000
        })
    );
}

#[test]
fn a_tick_near_u64_max_issues_its_ids_then_refuses_to_wait_for_the_next() {
    for tick_ms in [u64::MAX, u64::MAX / 2, u64::MAX / 4 + 1, 2 * DAY_MS] {
        for max_wait in [0, 5, u64::MAX] {
            let clock = ManualClock::new(NOW);
            let layout = huge_tick(tick_ms);
            let g = Generator::with_clock(layout, 0, &clock, options(0, max_wait, None))
                .unwrap_or_else(|e| panic!("tick {tick_ms}, wait {max_wait}: {e}"));
            // State 0 marks (tick 0, sequence 0) as used: sequence 1 is this tick's last ID.
            assert_eq!(g.next_id(), Ok(1), "tick {tick_ms}, wait {max_wait}");
            // The next tick is more than a day away: a typed error at once, no wait.
            assert_eq!(
                g.next_id(),
                Err(Error::ClockStalled { waited_ms: 0 }),
                "tick {tick_ms}, wait {max_wait}"
            );
            assert_eq!(clock.now_ms(), NOW, "nothing was waited");
        }
    }
}

#[test]
fn a_tick_near_u64_max_on_the_system_clock_neither_panics_nor_blocks() {
    // The system clock's wait computed `Instant::now() + gap`, which panics for such gaps.
    let mut o = Options::default();
    o.max_backward_wait_ms = u64::MAX;
    for tick_ms in [u64::MAX, u64::MAX / 3] {
        let layout = Layout::builder(1, 0, 1).tick_ms(tick_ms).build().unwrap();
        let g = Generator::with_clock(layout, 0, ferroflake::SystemClock, o).unwrap();
        assert_eq!(g.next_id(), Ok(1));
        assert_eq!(g.next_id(), Err(Error::ClockStalled { waited_ms: 0 }));
    }
}

#[test]
fn a_resume_point_ahead_of_the_clock_is_refused_when_the_generator_is_made() {
    let clock = ManualClock::new(NOW);
    for (resume, drift, wait) in [
        (NOW + 60_000, 0, 5),
        (NOW + 6, 0, 5),
        (NOW + 1, 0, 0),
        (NOW + 20, 10, 5),
        (NOW + DAY_MS, 0, u64::MAX),
    ] {
        assert_eq!(
            Generator::with_clock(
                Layout::twitter(),
                1,
                &clock,
                options(drift, wait, Some(resume))
            )
            .unwrap_err(),
            Error::ResumeInFuture {
                resume_after_ms: resume,
                now_ms: NOW
            },
            "resume {resume} - now = {}, drift {drift}, wait {wait}",
            resume - NOW
        );
    }
}

#[test]
fn a_resume_point_the_drift_or_the_wait_bridges_is_accepted_and_respected() {
    // (resume - NOW, drift, wait, the tick of the first ID - NOW)
    for (ahead, drift, wait, first) in [
        (0, 0, 0, 1),                      // the lease's case: the clock has passed the mark
        (4, 0, 5, 5),                      // waited out, as a rollback of 5 ms would be
        (3, 4, 0, 4),                      // borrowed within the drift, no wait
        (DAY_MS - 1, 0, u64::MAX, DAY_MS), // "as long as it takes", up to a day
    ] {
        let clock = ManualClock::new(NOW);
        let o = options(drift, wait, Some(NOW + ahead));
        let g = Generator::with_clock(Layout::twitter(), 1, &clock, o)
            .unwrap_or_else(|e| panic!("ahead {ahead}, drift {drift}, wait {wait}: {e}"));
        let id = g.next_id().unwrap();
        assert_eq!(
            Layout::twitter().decode(id).unwrap().timestamp_ms,
            NOW + first,
            "ahead {ahead}, drift {drift}, wait {wait}"
        );
    }
    // A resume point in the past, or before the epoch, changes nothing but the start.
    let clock = ManualClock::new(NOW);
    for resume in [0, NOW - 10] {
        let g = Generator::with_clock(Layout::twitter(), 1, &clock, options(0, 5, Some(resume)));
        assert!(g.unwrap().next_id().is_ok());
    }
}

#[test]
fn a_resume_point_with_no_tick_after_it_is_refused_as_exhaustion() {
    // 8 time bits of 1 ms from 200 ms ago: the last tick starts at NOW + 55.
    let layout = Layout::builder(8, 10, 12)
        .epoch_ms((NOW - 200) as i64)
        .build()
        .unwrap();
    let clock = ManualClock::new(NOW);
    let exhausted = Err(Error::LayoutExhausted {
        exhausts_at_ms: layout.exhausts_at(),
    });
    for resume in [layout.exhausts_at() - 1, layout.exhausts_at(), u64::MAX] {
        // Even a wait that would bridge the distance cannot make a tick after the last.
        let g = Generator::with_clock(layout, 1, &clock, options(0, u64::MAX, Some(resume)));
        assert_eq!(g.map(|_| ()), exhausted, "resume {resume}");
    }
    // The tick before the last still leaves one tick to issue.
    let g = Generator::with_clock(layout, 1, &clock, options(0, u64::MAX, Some(NOW + 54)));
    assert_eq!(
        layout
            .decode(g.unwrap().next_id().unwrap())
            .unwrap()
            .timestamp_ms,
        NOW + 55
    );
}

#[test]
fn capacity_saturates_for_the_widest_sequence_fields() {
    let layout = Layout::builder(1, 0, 62).build().unwrap();
    assert_eq!(layout.capacity_per_second(), u64::MAX);
    let layout = Layout::builder(1, 0, 62).tick_ms(u64::MAX).build().unwrap();
    assert_eq!(layout.capacity_per_second(), 250); // 2^62 * 1000 / (2^64 - 1)
    assert_eq!(Layout::twitter().capacity_per_second(), 4_096_000);
}
