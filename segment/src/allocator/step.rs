//! How big a key's next segment is. The rule reads no clock: the fetch worker measures how
//! long the last segment lasted and passes it in, so any duration can be tested at once.

use std::time::Duration;

use crate::SegmentConfig;

/// Leaf's rule: a segment used up in under `fast_segment` doubles the step (up to
/// `max_step`); one that lasted `slow_segment` or more halves it (never below the table's
/// step). A caller that had to wait (`hungry`) also doubles it.
///
/// `step` is the key's step now and `table_step` the step in the key's row, the floor. A
/// `table_step` above `max_step` is used as it is. `lasted` is the time since the key's
/// previous fetch landed, `None` before its first background fetch, which keeps `step`
/// (the table's, read when the key opened) unless a caller waited.
pub(super) fn next_step(
    step: u64,
    table_step: u64,
    lasted: Option<Duration>,
    hungry: bool,
    config: &SegmentConfig,
) -> u64 {
    let top = config.max_step.max(table_step);
    let step = if hungry || lasted.is_some_and(|d| d < config.fast_segment) {
        step.saturating_mul(2)
    } else if lasted.is_some_and(|d| d >= config.slow_segment) {
        step / 2
    } else {
        step
    };
    step.clamp(table_step, top)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Duration = Duration::from_secs(60);
    const NS: Duration = Duration::from_nanos(1);

    /// Leaf's settings (15 and 30 minutes) with a `max_step` small enough to reach.
    fn config() -> SegmentConfig {
        SegmentConfig {
            max_step: 1000,
            ..SegmentConfig::default()
        }
    }

    fn after(lasted: Duration, step: u64, table_step: u64) -> u64 {
        next_step(step, table_step, Some(lasted), false, &config())
    }

    #[test]
    fn used_up_under_fast_segment_doubles_up_to_max_step() {
        assert_eq!(after(MIN, 100, 100), 200);
        assert_eq!(after(15 * MIN - NS, 100, 100), 200);
        assert_eq!(after(Duration::ZERO, 300, 100), 600);
        assert_eq!(after(MIN, 800, 100), 1000);
        assert_eq!(after(MIN, 1000, 100), 1000);
    }

    #[test]
    fn lasting_from_fast_to_slow_segment_keeps_the_step() {
        assert_eq!(after(15 * MIN, 400, 100), 400);
        assert_eq!(after(20 * MIN, 400, 100), 400);
        assert_eq!(after(30 * MIN - NS, 400, 100), 400);
    }

    #[test]
    fn lasting_slow_segment_or_more_halves_down_to_the_table_step() {
        assert_eq!(after(30 * MIN, 400, 100), 200);
        assert_eq!(after(45 * MIN, 400, 100), 200);
        assert_eq!(after(45 * MIN, 150, 100), 100);
        assert_eq!(after(24 * 60 * MIN, 100, 100), 100);
        assert_eq!(after(45 * MIN, 1, 1), 1);
    }

    #[test]
    fn a_table_step_above_max_step_is_used_as_it_is() {
        assert_eq!(after(MIN, 5000, 5000), 5000);
        assert_eq!(after(20 * MIN, 5000, 5000), 5000);
        assert_eq!(after(45 * MIN, 5000, 5000), 5000);
        assert_eq!(next_step(5000, 5000, None, true, &config()), 5000);
    }

    #[test]
    fn the_first_fetch_keeps_the_step() {
        assert_eq!(next_step(100, 100, None, false, &config()), 100);
        assert_eq!(next_step(400, 100, None, false, &config()), 400);
    }

    #[test]
    fn a_caller_that_waited_doubles_the_step_however_long_it_lasted() {
        let doubled = |lasted| next_step(100, 100, lasted, true, &config());
        assert_eq!(doubled(None), 200);
        assert_eq!(doubled(Some(20 * MIN)), 200);
        assert_eq!(doubled(Some(45 * MIN)), 200);
        assert_eq!(next_step(800, 100, Some(45 * MIN), true, &config()), 1000);
    }
}
