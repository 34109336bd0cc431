//! The lease protocol's decisions, as pure functions of plain numbers.
//!
//! Every registry (the embedded one in this crate, the stores in `ferroflake-lease-stores`),
//! the [`LeasedGenerator`](crate::LeasedGenerator) and the model checker (`lease/model`)
//! call these, so a change here is a change the model checks. Registries do the I/O and the
//! atomicity (a lock, a transaction, a compare-and-swap); these functions say what the
//! outcome must be.
//!
//! Two clocks appear. *Store time* is the registry's own clock, shared by everyone who
//! talks to it (the host's `CLOCK_BOOTTIME` for the embedded registry, the server's clock
//! for a store): expiry and floors are judged on it. *Issuing time* is the generator's wall
//! clock, whose ticks go into IDs: high-water marks and fences are on it.

use std::time::Duration;

/// The longest TTL a holder may ask for unless its [`LeaseConfig`](crate::LeaseConfig)
/// says otherwise. Registries size the lost-records floor by it.
pub const DEFAULT_MAX_TTL: Duration = Duration::from_secs(10);

/// The longest lost-records window (max_ttl + quarantine) any registry honours: a request
/// for more is refused, and a longer one found in a registry's records (hand-edited) is
/// cut to this, so no floor stalls claims for longer.
pub const LONGEST_WINDOW: Duration = Duration::from_secs(600);

/// The most node ids a registry hands out among: 16 node bits, the widest preset's
/// (sonyflake). A registry looks through the ids for a free one, so a request among more
/// (a layout with more node bits, or a client asking for 2^64) is refused rather than left
/// to take a server's CPU and memory.
pub const MOST_NODE_IDS: u64 = 1 << 16;

/// The longest a holder goes between renewals unless its
/// [`LeaseConfig`](crate::LeaseConfig) says otherwise, whatever its TTL: a third of
/// [`DEFAULT_MAX_TTL`].
///
/// A holder learns at its next renewal that the registry lost its record. When the
/// registry lost its record of the holders' longest TTL too (every file or key gone), a
/// claimant floors by its own window, which default timings make at least
/// `DEFAULT_MAX_TTL`; a holder with a longer TTL renewing at a third of it would go on
/// issuing past that floor. At this cadence it sees the loss in time.
pub const LONGEST_RENEW_EVERY: Duration = Duration::from_millis(3_333);

/// The quarantine of [`LeaseConfig::default`](crate::LeaseConfig): with
/// [`DEFAULT_MAX_TTL`] it makes the default lost-records window.
pub const DEFAULT_QUARANTINE: Duration = Duration::from_secs(2);

/// The owner token of a reservation ([`Registry::reserve`](crate::Registry::reserve)):
/// not hex, so no claim's random token equals it, and a claim's renewals and releases never
/// touch a reservation.
pub const RESERVED_TOKEN: &str = "reserved";

/// The expiry a reservation records: it never lapses. The largest signed 64-bit number,
/// which every store's number type holds (PostgreSQL's `bigint` too).
pub const NEVER_MS: u64 = i64::MAX as u64;

/// What [`Registry::reserve`](crate::Registry::reserve) may do with a node id's record,
/// from its owner token and [`standing`]: a free record (or none) is reserved, a
/// reservation is left as it is, and a live or quarantined claim is not taken from its
/// holder.
pub fn reservation_over(token: Option<&str>, standing: Standing) -> Reservation {
    if token == Some(RESERVED_TOKEN) {
        Reservation::Already
    } else if standing == Standing::Free {
        Reservation::Made
    } else {
        Reservation::Refused
    }
}

/// What [`Registry::reserve`](crate::Registry::reserve) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reservation {
    /// The id is reserved now: no claim takes it until it is unreserved.
    Made,
    /// It was reserved already; nothing changed.
    Already,
    /// A claim holds it (or its quarantine runs): nothing changed. Stop that holder, or
    /// wait for it to lapse, and reserve again.
    Refused,
}

impl Reservation {
    /// A lower-case word for output: "reserved", "already reserved", "held".
    pub fn as_str(self) -> &'static str {
        match self {
            Reservation::Made => "reserved",
            Reservation::Already => "already reserved",
            Reservation::Refused => "held",
        }
    }
}

/// Where a node id's record stands at a given store time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Held and within its TTL: only its holder may renew it, nobody may claim it.
    Live,
    /// Past its TTL but within its quarantine: nobody may claim it, its holder may not renew.
    Quarantined,
    /// Released, or past TTL + quarantine: claimable.
    Free,
}

/// A record's standing: `held` (it has an owner token), `expires_ms` (store time at which
/// the claim lapses unless renewed) and `quarantine_ms` (how long after that it stays
/// unclaimable). A record that expires at [`NEVER_MS`] (a reservation) stays live
/// whatever the clock says.
pub fn standing(held: bool, expires_ms: u64, quarantine_ms: u64, now_ms: u64) -> Standing {
    if !held {
        Standing::Free
    } else if now_ms < expires_ms || expires_ms >= NEVER_MS {
        Standing::Live
    } else if now_ms < expires_ms.saturating_add(quarantine_ms) {
        Standing::Quarantined
    } else {
        Standing::Free
    }
}

/// A node id a claim could take: its record is [`Standing::Free`], or missing although the
/// id was claimed before (`lost`: it carries a floor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// The node id.
    pub id: u64,
    /// Its recorded high-water mark (issuing time, Unix ms; 0 if none).
    pub mark_ms: u64,
    /// Its record was lost: a claim must wait out a floor.
    pub lost: bool,
}

/// Which node id a claim takes: `prefer` (the request's
/// [`prefer_node`](crate::LeaseRequest::prefer_node)) if it is among the `free` ids and its
/// record was not lost, so that a holder that restarts takes its id back rather than use
/// up another; else the id its holder waits least for: an id never claimed
/// (`never_claimed`: the lowest id with no record that was never claimed, if any, below the
/// node count); else a free id with a recorded mark, lowest mark first (the new holder waits
/// until its clock passes the mark plus the skew allowance); ids whose record was lost last;
/// ties to the lowest id. `None` if there is no candidate.
///
/// A preferred id never claimed is not taken out of turn: ids are first claimed lowest
/// first, which the stores rely on to tell a lost record from an id never claimed.
pub fn pick_node(
    prefer: Option<u64>,
    never_claimed: Option<u64>,
    free: impl IntoIterator<Item = Candidate>,
) -> Option<u64> {
    let free: Vec<Candidate> = free.into_iter().collect();
    if let Some(wanted) = prefer.filter(|&p| free.iter().any(|c| c.id == p && !c.lost)) {
        return Some(wanted);
    }
    never_claimed.or_else(|| {
        free.iter()
            .min_by_key(|c| (c.lost, c.mark_ms, c.id))
            .map(|c| c.id)
    })
}

/// Why a claim is no longer held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Loss {
    /// The registry has no record of the id at all: its records were deleted, evicted or
    /// wiped. A new holder may be issuing once the lost-records floor has passed.
    Missing,
    /// Another claim (another owner token) holds the id now.
    Taken,
    /// The claim's TTL passed without renewal (it may still be untaken).
    Expired,
    /// The record no longer names a holder: the claim was released, or the id reserved.
    Released,
}

impl Loss {
    /// Every loss, for tables and tests.
    pub const ALL: [Loss; 4] = [Loss::Missing, Loss::Taken, Loss::Expired, Loss::Released];

    /// The loss's stable name, for JSON and the service's answers: `MISSING`, `TAKEN`,
    /// `EXPIRED` or `RELEASED`.
    pub fn name(self) -> &'static str {
        match self {
            Loss::Missing => "MISSING",
            Loss::Taken => "TAKEN",
            Loss::Expired => "EXPIRED",
            Loss::Released => "RELEASED",
        }
    }

    /// The loss named `name` ([`Loss::name`]), if it is one.
    pub fn from_name(name: &str) -> Option<Loss> {
        Loss::ALL.into_iter().find(|loss| loss.name() == name)
    }

    /// A short phrase for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Loss::Missing => "the registry has no record of it (deleted, evicted or wiped)",
            Loss::Taken => "another holder has claimed it",
            Loss::Expired => "its TTL passed without a renewal",
            // A holder that releases its own claim stops with it; one that finds its record
            // without a holder lost it to someone else.
            Loss::Released => "its record has no holder now (released, or reserved by an operator)",
        }
    }
}

/// What a registry holds for one node id, as far as a renewal needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordView<'a> {
    /// The current owner token; `None` once released.
    pub token: Option<&'a str>,
    /// Store time at which the claim lapses unless renewed.
    pub expires_ms: u64,
}

/// Whether a renewal (or anything else that acts on a claim) under `token` may proceed:
/// the record must exist, carry this very token (not merely a matching version number, which a
/// recreated record can repeat), and still be within its TTL. An expired claim is lost
/// even if nobody has taken it, so a stale renewal applied late never revives it.
///
/// # Errors
/// The [`Loss`] that stops the holder.
pub fn prove_held(record: Option<RecordView<'_>>, token: &str, now_ms: u64) -> Result<(), Loss> {
    let record = record.ok_or(Loss::Missing)?;
    match record.token {
        None => Err(Loss::Released),
        Some(t) if t != token => Err(Loss::Taken),
        Some(_) if now_ms >= record.expires_ms => Err(Loss::Expired),
        Some(_) => Ok(()),
    }
}

/// How long after records are found missing a claim may issue: the longest TTL any holder
/// may have been granted, plus the claimant's quarantine.
///
/// A holder of the lost records renewed last before the loss, so its local deadline (last
/// renewal's send time + TTL − margin) falls within `max_ttl` of the moment the loss is
/// found, and it stops issuing by then. The quarantine on top covers the clock skew between
/// that holder's ticks and the new holder's.
pub fn lost_records_window(max_ttl: Duration, quarantine: Duration) -> Duration {
    max_ttl.saturating_add(quarantine)
}

/// The lost-records window a registry floors by: the widest window any holder of the
/// registry asked for (`recorded_ms`, kept beside the records; 0 if none is kept) or the
/// claimant's own (`asked`), whichever is wider, never above [`LONGEST_WINDOW`] (a longer
/// one recorded was not written by a claim, which would have been refused).
///
/// Holders of one registry may disagree on `max_ttl`: a claimant with a short one must
/// still wait out a holder of the lost records that was granted a long TTL.
pub fn widest_window(asked: Duration, recorded_ms: u64) -> Duration {
    asked
        .max(Duration::from_millis(recorded_ms))
        .min(LONGEST_WINDOW)
}

/// The store time until which claims must wait, for records found missing at `now_ms`.
pub fn floor_until(now_ms: u64, window: Duration) -> u64 {
    now_ms.saturating_add(ms(window))
}

/// How long a claim granted at store time `now_ms` must wait before its holder issues,
/// under a floor that lasts until `floor_until_ms` (0: no floor).
pub fn floor_wait(floor_until_ms: u64, now_ms: u64) -> Duration {
    Duration::from_millis(floor_until_ms.saturating_sub(now_ms))
}

/// As [`floor_wait`], never longer than `window` (the registry's lost-records window). A
/// floor set further ahead cannot come from this registry's clock (another time namespace
/// wrote it, or the clock stepped back since), and waiting the whole window from now is
/// safe whatever was lost.
pub fn floor_wait_within(floor_until_ms: u64, now_ms: u64, window: Duration) -> Duration {
    floor_wait(floor_until_ms, now_ms).min(window)
}

/// The epoch of a new claim: above every earlier one recorded for the id, and at least the
/// store's clock in microseconds, so that it keeps growing when the records (and the
/// counter with them) are lost, as long as the store's clock does.
pub fn next_epoch(recorded: u64, now_us: u64) -> u64 {
    recorded.saturating_add(1).max(now_us)
}

/// The high-water mark a renewal reserves (issuing time, Unix ms): `reserve_ahead` past the
/// clock, never below what is reserved already.
pub fn reserve_mark(reserved_ms: u64, clock_now_ms: u64, reserve_ahead: Duration) -> u64 {
    reserved_ms.max(clock_now_ms.saturating_add(ms(reserve_ahead)))
}

/// The local deadline of a renewal sent at `sent_ms` on the holder's monotonic clock: the
/// registry cannot expire the claim before `sent + ttl`, so the holder stops a safety
/// margin earlier.
pub fn local_deadline_ms(sent_ms: u64, ttl: Duration, safety_margin: Duration) -> u64 {
    sent_ms.saturating_add(ms(ttl.saturating_sub(safety_margin)))
}

/// The generator's fence after a successful renewal: the earlier of the reserved mark and
/// the local deadline expressed on the issuing clock; closed (0) once the deadline passed.
///
/// `deadline_left` is how long remains until the deadline on the monotonic clock (`None`
/// when it has passed): it is never derived from the wall clock, which can step.
pub fn fence_ms(mark_ms: u64, deadline_left: Option<Duration>, clock_now_ms: u64) -> u64 {
    match deadline_left {
        Some(left) if !left.is_zero() => mark_ms.min(clock_now_ms.saturating_add(ms(left))),
        _ => 0,
    }
}

/// The issuing time a new holder must pass before it issues: the previous holder's mark
/// plus the skew allowance (`None` if there was no previous mark).
pub fn resume_after(previous_mark_ms: u64, skew_allowance: Duration) -> Option<u64> {
    (previous_mark_ms != 0).then(|| previous_mark_ms.saturating_add(ms(skew_allowance)))
}

/// The mark a release records: the end of the last issued tick, never below the mark the
/// holder inherited.
pub fn final_mark(last_issued_ms: u64, tick_ms: u64, inherited_mark_ms: u64) -> u64 {
    last_issued_ms
        .saturating_add(tick_ms)
        .max(inherited_mark_ms)
}

/// A holder's wall clock read against its registry's: the holder's clock just before it
/// asked (`before_ms`) and just after the answer (`after_ms`), and the registry's clock in
/// the answer (`store_ms`), which a true clock would put in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockReading {
    /// The holder's clock minus the registry's, in ms, from the middle of the round trip
    /// (positive: the holder is ahead).
    pub skew_ms: i64,
    /// Half the round trip, in ms: the true skew is within this of `skew_ms`.
    pub uncertainty_ms: u64,
}

impl ClockReading {
    /// The reading of one round trip. A holder's clock that stepped back during it counts
    /// as a round trip the other way.
    pub fn new(before_ms: u64, store_ms: u64, after_ms: u64) -> ClockReading {
        let (low, high) = (before_ms.min(after_ms), before_ms.max(after_ms));
        let middle = low + (high - low) / 2;
        let skew = i128::from(middle) - i128::from(store_ms);
        ClockReading {
            skew_ms: skew.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
            uncertainty_ms: (high - low).div_ceil(2),
        }
    }

    /// How far apart the clocks are at the least: the skew less its uncertainty.
    pub fn least_skew_ms(&self) -> u64 {
        self.skew_ms
            .unsigned_abs()
            .saturating_sub(self.uncertainty_ms)
    }

    /// Whether the clocks are surely further apart than `limit`.
    pub fn beyond(&self, limit: Duration) -> bool {
        self.least_skew_ms() > ms(limit)
    }
}

/// The widest skew from the registry's clock a holder may issue with: half of quarantine +
/// safety margin. After lost records, safety needs any two holders' wall clocks within
/// quarantine + safety margin of each other; two holders each within half of it of the
/// registry's clock, on either side, are.
pub fn widest_clock_skew(quarantine: Duration, safety_margin: Duration) -> Duration {
    quarantine.saturating_add(safety_margin) / 2
}

/// The peer check of a holder that starts: its own reading of the registry's clock
/// (`own`) against the clock skews the registry's other live holders recorded at their
/// last renewals (`peers_ms`). `Some(average of peers_ms)` if the holder's skew is surely
/// (less its reading's uncertainty) further than `limit` from that average: the start is
/// refused. `None` if it is within, or there are no peers to compare with.
///
/// Each holder checks its own skew against the registry's clock at every renewal
/// ([`ClockReading::beyond`]), but that measures every clock against one that may itself
/// be off. When the registry's clock is off by nearly the limit and the fleet agrees with
/// itself, a newcomer whose clock is off the other way passes that check while it is up to
/// twice the limit from every holder; compared with the fleet's average, it is refused.
pub fn peer_clock_skew(own: &ClockReading, peers_ms: &[i64], limit: Duration) -> Option<i64> {
    if peers_ms.is_empty() {
        return None;
    }
    let sum: i128 = peers_ms.iter().map(|&s| i128::from(s)).sum();
    let count = i128::try_from(peers_ms.len()).unwrap_or(i128::MAX);
    // The mean of i64s fits an i64.
    let average = i64::try_from(sum / count).unwrap_or(0);
    let apart = (i128::from(own.skew_ms) - i128::from(average)).unsigned_abs();
    let least = apart.saturating_sub(u128::from(own.uncertainty_ms));
    (least > u128::from(ms(limit))).then_some(average)
}

/// Whole milliseconds, saturating.
pub fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_loss_is_read_back_by_its_name() {
        for loss in Loss::ALL {
            assert_eq!(Loss::from_name(loss.name()), Some(loss));
        }
        assert_eq!(Loss::from_name("missing"), None);
        assert_eq!(Loss::from_name(""), None);
    }

    #[test]
    fn a_clock_reading_takes_the_middle_of_the_round_trip() {
        let ahead = ClockReading::new(1_000, 900, 1_010);
        assert_eq!((ahead.skew_ms, ahead.uncertainty_ms), (105, 5));
        assert_eq!(ahead.least_skew_ms(), 100);
        assert!(ahead.beyond(Duration::from_millis(99)));
        assert!(!ahead.beyond(Duration::from_millis(100)));
        let behind = ClockReading::new(1_000, 1_500, 1_000);
        assert_eq!((behind.skew_ms, behind.uncertainty_ms), (-500, 0));
        // A clock stepped back in the middle of the trip: a trip the other way round.
        assert_eq!(ClockReading::new(1_010, 1_005, 1_000).uncertainty_ms, 5);
        // A slow answer makes no claim it cannot back.
        assert!(!ClockReading::new(0, 1_000, 4_000).beyond(Duration::from_millis(1)));
        assert_eq!(ClockReading::new(u64::MAX, 0, u64::MAX).skew_ms, i64::MAX);
        assert_eq!(
            widest_clock_skew(Duration::from_secs(2), Duration::from_secs(1)),
            Duration::from_millis(1_500)
        );
    }

    #[test]
    fn standing_follows_ttl_then_quarantine() {
        assert_eq!(standing(true, 100, 50, 99), Standing::Live);
        assert_eq!(standing(true, 100, 50, 100), Standing::Quarantined);
        assert_eq!(standing(true, 100, 50, 149), Standing::Quarantined);
        assert_eq!(standing(true, 100, 50, 150), Standing::Free);
        assert_eq!(standing(false, 100, 50, 0), Standing::Free);
        assert_eq!(standing(true, u64::MAX, u64::MAX, 5), Standing::Live);
    }

    #[test]
    fn picks_fresh_ids_then_low_marks_then_lost_ones() {
        let c = |id, mark_ms, lost| Candidate { id, mark_ms, lost };
        let free = [
            c(0, 900, false),
            c(1, 0, true),
            c(2, 500, false),
            c(3, 500, false),
        ];
        assert_eq!(pick_node(None, Some(7), free), Some(7));
        assert_eq!(pick_node(None, None, free), Some(2));
        assert_eq!(
            pick_node(None, None, [c(1, 0, true), c(4, 0, true)]),
            Some(1)
        );
        assert_eq!(pick_node(None, None, []), None);
    }

    #[test]
    fn a_preferred_id_is_taken_if_free_and_not_lost() {
        let c = |id, mark_ms, lost| Candidate { id, mark_ms, lost };
        let free = [
            c(0, 900, false),
            c(1, 0, true),
            c(2, 500, false),
            c(3, 500, false),
        ];
        assert_eq!(
            pick_node(Some(0), Some(7), free),
            Some(0),
            "before a fresh id"
        );
        assert_eq!(
            pick_node(Some(3), None, free),
            Some(3),
            "before a lower mark"
        );
        assert_eq!(
            pick_node(Some(1), None, free),
            Some(2),
            "a lost record: as before"
        );
        assert_eq!(
            pick_node(Some(5), None, free),
            Some(2),
            "not free: as before"
        );
        assert_eq!(
            pick_node(Some(9), Some(7), free),
            Some(7),
            "never claimed: in turn"
        );
        assert_eq!(pick_node(Some(0), None, []), None);
    }

    #[test]
    fn the_peer_check_compares_with_the_fleets_average() {
        let limit = Duration::from_millis(100);
        let at = |skew_ms, uncertainty_ms| ClockReading {
            skew_ms,
            uncertainty_ms,
        };
        assert_eq!(peer_clock_skew(&at(5_000, 0), &[], limit), None, "no peers");
        assert_eq!(peer_clock_skew(&at(-80, 0), &[90, 110], limit), Some(100));
        assert_eq!(
            peer_clock_skew(&at(0, 0), &[90, 110], limit),
            None,
            "100 apart"
        );
        assert_eq!(peer_clock_skew(&at(201, 0), &[90, 110], limit), Some(100));
        assert_eq!(
            peer_clock_skew(&at(230, 30), &[90, 110], limit),
            None,
            "uncertain"
        );
        assert_eq!(
            peer_clock_skew(&at(0, 0), &[i64::MAX, i64::MAX], limit),
            Some(i64::MAX),
            "no overflow"
        );
        assert_eq!(
            peer_clock_skew(&at(i64::MIN, 0), &[i64::MAX], limit),
            Some(i64::MAX)
        );
    }

    #[test]
    fn renewal_proves_token_and_liveness() {
        let live = RecordView {
            token: Some("a"),
            expires_ms: 100,
        };
        assert_eq!(prove_held(Some(live), "a", 99), Ok(()));
        assert_eq!(prove_held(Some(live), "a", 100), Err(Loss::Expired));
        assert_eq!(prove_held(Some(live), "b", 50), Err(Loss::Taken));
        assert_eq!(prove_held(None, "a", 50), Err(Loss::Missing));
        let released = RecordView {
            token: None,
            expires_ms: 0,
        };
        assert_eq!(prove_held(Some(released), "a", 0), Err(Loss::Released));
    }

    #[test]
    fn floor_covers_the_longest_ttl() {
        let window = lost_records_window(Duration::from_secs(10), Duration::from_secs(2));
        let until = floor_until(1_000, window);
        assert_eq!(until, 13_000);
        assert_eq!(floor_wait(until, 1_000), Duration::from_secs(12));
        assert_eq!(floor_wait(until, 13_000), Duration::ZERO);
        assert_eq!(floor_wait(0, 5), Duration::ZERO);
        assert_eq!(
            floor_wait_within(u64::MAX, 1_000, window),
            window,
            "a floor from another clock is cut to one window"
        );
        assert_eq!(
            floor_wait_within(until, 2_000, window),
            Duration::from_secs(11)
        );
    }

    #[test]
    fn the_widest_window_asked_for_wins() {
        let short = Duration::from_secs(3);
        assert_eq!(widest_window(short, 0), short, "nothing recorded");
        assert_eq!(widest_window(short, 32_000), Duration::from_secs(32));
        assert_eq!(
            widest_window(Duration::from_secs(40), 32_000),
            Duration::from_secs(40)
        );
        assert_eq!(
            widest_window(short, u64::MAX),
            LONGEST_WINDOW,
            "a window no claim could ask for is cut to the longest"
        );
    }

    #[test]
    fn epochs_grow_past_lost_counters() {
        assert_eq!(next_epoch(7, 0), 8);
        assert_eq!(next_epoch(0, 1_700_000_000_000_000), 1_700_000_000_000_000);
        assert_eq!(next_epoch(u64::MAX, 0), u64::MAX);
    }

    #[test]
    fn fence_is_the_earlier_of_mark_and_deadline() {
        let left = Some(Duration::from_millis(500));
        assert_eq!(fence_ms(10_000, left, 9_000), 9_500);
        assert_eq!(fence_ms(9_200, left, 9_000), 9_200);
        assert_eq!(fence_ms(10_000, None, 9_000), 0);
        assert_eq!(fence_ms(10_000, Some(Duration::ZERO), 9_000), 0);
    }

    #[test]
    fn marks() {
        assert_eq!(reserve_mark(5_000, 1_000, Duration::from_secs(10)), 11_000);
        assert_eq!(reserve_mark(50_000, 1_000, Duration::from_secs(10)), 50_000);
        assert_eq!(resume_after(0, Duration::from_secs(1)), None);
        assert_eq!(resume_after(5, Duration::from_secs(1)), Some(1_005));
        assert_eq!(final_mark(1_000, 1, 0), 1_001);
        assert_eq!(final_mark(1_000, 1, 7_000), 7_000);
        assert_eq!(
            local_deadline_ms(100, Duration::from_secs(10), Duration::from_secs(1)),
            9_100
        );
    }
}
