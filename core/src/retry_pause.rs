//! Retry pauses spread at random: holders and allocators that failed together (a store
//! restarted) would otherwise all retry in lockstep and meet it together again.

use core::time::Duration;

/// `pause` shortened by between 0 and 20%, by `random`'s share: never longer than `pause`,
/// so every bound a caller's timings promise still holds. `random` is any value from a
/// random source (the leases and the segment allocators take the OS's); 0 keeps `pause`
/// whole.
///
/// ```
/// use core::time::Duration;
/// use ferroflake::shortened_at_random;
///
/// let pause = Duration::from_millis(1_000);
/// assert_eq!(shortened_at_random(pause, 0), pause);
/// assert_eq!(shortened_at_random(pause, 200), Duration::from_millis(800));
/// ```
pub fn shortened_at_random(pause: Duration, random: u32) -> Duration {
    let per_mille = random % 201;
    // Divided first: `pause * 200` overflows for the longest pauses.
    pause - (pause / 1000) * per_mille
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_is_cut_by_at_most_a_fifth_and_never_lengthened() {
        for pause in [
            Duration::ZERO,
            Duration::from_nanos(999),
            Duration::from_millis(1_000),
            Duration::MAX,
        ] {
            for random in [0, 1, 100, 200, 201, 12_345, u32::MAX] {
                let cut = shortened_at_random(pause, random);
                assert!(cut <= pause, "{pause:?} {random}: {cut:?}");
                assert!(cut >= pause - pause / 5, "{pause:?} {random}: {cut:?}");
            }
        }
        let pause = Duration::from_millis(1_000);
        let spread: std::collections::BTreeSet<_> =
            (0..201).map(|r| shortened_at_random(pause, r)).collect();
        assert_eq!(spread.len(), 201, "every share gives its own pause");
    }
}
