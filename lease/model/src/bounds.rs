//! The sizes of a model run, the protocol's timings in model units, and the mutants.

use std::time::Duration;

/// One model time unit is one millisecond, and one tick of the generator's layout is one
/// unit: the protocol functions see plain milliseconds, as they do in production.
pub const TICK_MS: u64 = 1;

/// Which guard of the protocol the model wiring breaks on purpose (see
/// [`decisions`](crate::decisions)). The real protocol is [`Mutant::None`]; each other
/// variant must yield a counterexample, but [`Mutant::ClaimResent`] (see there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mutant {
    /// The protocol as `ferroflake_lease::protocol` decides it.
    None,
    /// A claim that finds the record missing starts no lost-records floor.
    NoFloor,
    /// A renewal proves only that the record's version number is the one the holder last
    /// saw (and that the record is live), not its owner token. A recreated record starts
    /// its versions again, so it can repeat one.
    VersionOnlyRenewal,
    /// The fence after a renewal is the renewal's send time on the wall clock plus
    /// TTL − safety margin, instead of the time left on the monotonic deadline.
    WallClockFence,
    /// The registry takes restored records (older than its last write) as they are,
    /// instead of as lost records with a floor.
    NoRestoreCheck,
    /// A holder does not read its clock against the registry's: it starts and issues
    /// whatever its clock says.
    NoClockCheck,
    /// A holder checks its clock against a limit one unit wider than
    /// `protocol::widest_clock_skew` (a `max_clock_skew` that `LeaseConfig::validate`
    /// refuses).
    WideClockSkew,
    /// A holder gives up on a claim it may have sent and sends it again, to another server,
    /// as `RemoteRegistry::acquire` does: the service's registry makes a new token for each
    /// copy, so the first copy, if applied, holds the id for nobody. Not a broken guard but
    /// the client's behaviour, kept out of the default run (its states): with one node id it
    /// leads only to states that a timeout followed by a new claim leads to, which the
    /// protocol allows, and its test shows that.
    ClaimResent,
    /// The local deadline of a renewal is taken from when its answer arrived, instead of
    /// from when the holder sent it (`protocol::local_deadline_ms` given the wrong instant).
    DeadlineFromAnswer,
}

impl Mutant {
    /// Every mutant (not `None`).
    pub const ALL: [Mutant; 8] = [
        Mutant::NoFloor,
        Mutant::VersionOnlyRenewal,
        Mutant::WallClockFence,
        Mutant::NoRestoreCheck,
        Mutant::NoClockCheck,
        Mutant::WideClockSkew,
        Mutant::ClaimResent,
        Mutant::DeadlineFromAnswer,
    ];
}

/// The sizes and timings of one run. Times are model units (ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounds {
    /// Processes that compete for the one node id (2 or 3).
    pub holders: usize,
    /// True time runs from 0 to this, in unit steps.
    pub max_time: u64,
    /// How far behind the registry's clock (true time) a holder's wall clock may be. The
    /// range reaches past the clock-skew limit, so that the check has clocks to refuse.
    pub behind: u64,
    /// How far ahead of the registry's clock a holder's wall clock may be.
    pub ahead: u64,
    /// How far a holder's wall clock may step (either way) during one `renew_once`, from
    /// its reading of the clocks to the fence the renewal sets. The protocol assumes 0 (see
    /// `lease/PROTOCOL.md`); the wall-clock-fence mutant needs a step to show.
    pub step_in_renewal: u64,
    /// How often the registry may lose its records (deleted, evicted, wiped).
    pub max_wipes: u8,
    /// How often the registry's records may be restored from a backup: they go back to
    /// what they were before the latest claim (the backup that forgets a live holder).
    pub max_restores: u8,
    /// Claims (owner tokens) in the whole run, over all holders.
    pub max_claims: u8,
    /// Messages in flight at once (requests and responses); a holder cannot send while full.
    pub max_in_flight: usize,
    /// Requests sent again, over the whole run: a holder that reaches its registry through a
    /// `ferroflake+http://` address with several servers gives up on a renewal or a release
    /// at its timeout and sends it to the next server. The first copy stays in flight: it may
    /// still be applied, before or after the second, or after the holder moved on.
    pub max_retries: u8,
    /// The lease timings, as in `LeaseConfig`.
    pub ttl: u64,
    /// `LeaseConfig::safety_margin`.
    pub safety_margin: u64,
    /// `LeaseConfig::quarantine`.
    pub quarantine: u64,
    /// `LeaseConfig::skew_allowance`.
    pub skew_allowance: u64,
    /// `LeaseConfig::max_ttl`, agreed by every holder.
    pub max_ttl: u64,
    /// `LeaseConfig::reserve_ahead` (the default: the TTL).
    pub reserve_ahead: u64,
    /// Checker threads.
    pub threads: usize,
    /// For a mutant: search breadth-first, for the shortest counterexample (`true`), or
    /// depth-first, for any (`false`): far fewer states when the shortest lies past the
    /// lost-records floor, but a longer trace.
    pub shortest: bool,
    /// The broken guard, if any.
    pub mutant: Mutant,
}

impl Bounds {
    /// The bounds the test command uses: small enough for a few minutes on two cores.
    pub fn small() -> Self {
        Bounds {
            holders: 2,
            max_time: 5,
            behind: 2,
            ahead: 2,
            step_in_renewal: 0,
            max_wipes: 1,
            max_restores: 0,
            max_claims: 2,
            max_in_flight: 2,
            max_retries: 0,
            ttl: 3,
            safety_margin: 1,
            quarantine: 1,
            skew_allowance: 1,
            max_ttl: 3,
            reserve_ahead: 3,
            threads: 2,
            shortest: true,
            mutant: Mutant::None,
        }
    }

    /// [`small`](Self::small), overridden by the environment:
    /// `FERROFLAKE_MODEL_HOLDERS`, `FERROFLAKE_MODEL_TIME`, `FERROFLAKE_MODEL_BEHIND`,
    /// `FERROFLAKE_MODEL_AHEAD`, `FERROFLAKE_MODEL_WIPES`, `FERROFLAKE_MODEL_RESTORES`,
    /// `FERROFLAKE_MODEL_CLAIMS`, `FERROFLAKE_MODEL_IN_FLIGHT`, `FERROFLAKE_MODEL_RETRIES`,
    /// `FERROFLAKE_MODEL_TTL`,
    /// `FERROFLAKE_MODEL_QUARANTINE`, `FERROFLAKE_MODEL_THREADS`.
    ///
    /// # Panics
    /// If a variable is set but is not a number.
    pub fn from_env() -> Self {
        let mut b = Self::small();
        let var = |name: &str| {
            std::env::var(name).ok().filter(|v| !v.is_empty()).map(|v| {
                v.parse::<u64>()
                    .unwrap_or_else(|_| panic!("{name}={v:?} is not a whole number"))
            })
        };
        if let Some(v) = var("FERROFLAKE_MODEL_HOLDERS") {
            b.holders = v as usize;
        }
        if let Some(v) = var("FERROFLAKE_MODEL_TIME") {
            b.max_time = v;
        }
        if let Some(v) = var("FERROFLAKE_MODEL_BEHIND") {
            b.behind = v;
        }
        if let Some(v) = var("FERROFLAKE_MODEL_AHEAD") {
            b.ahead = v;
        }
        if let Some(v) = var("FERROFLAKE_MODEL_WIPES") {
            b.max_wipes = v as u8;
        }
        if let Some(v) = var("FERROFLAKE_MODEL_RESTORES") {
            b.max_restores = v as u8;
        }
        if let Some(v) = var("FERROFLAKE_MODEL_CLAIMS") {
            b.max_claims = v as u8;
        }
        if let Some(v) = var("FERROFLAKE_MODEL_IN_FLIGHT") {
            b.max_in_flight = v as usize;
        }
        if let Some(v) = var("FERROFLAKE_MODEL_RETRIES") {
            b.max_retries = v as u8;
        }
        if let Some(v) = var("FERROFLAKE_MODEL_TTL") {
            // Scaled as LeaseConfig::with_ttl does, rounded to whole units.
            b.ttl = v;
            b.max_ttl = v;
            b.reserve_ahead = v;
            b.safety_margin = (v / 10).max(1);
        }
        if let Some(v) = var("FERROFLAKE_MODEL_QUARANTINE") {
            b.quarantine = v;
        }
        if let Some(v) = var("FERROFLAKE_MODEL_THREADS") {
            b.threads = v as usize;
        }
        assert!(
            (1..=3).contains(&b.holders),
            "FERROFLAKE_MODEL_HOLDERS must be 1, 2 or 3"
        );
        assert!(
            b.behind + b.ahead < 16 && b.max_time + b.behind + b.ahead + b.reserve_ahead < 64,
            "ticks must fit a 64-bit mask: lower FERROFLAKE_MODEL_TIME, _BEHIND or _AHEAD"
        );
        assert!(usize::from(b.max_claims) < crate::state::TOKENS.len());
        b
    }

    /// The same bounds with every wall clock on the registry's (true time): for checks
    /// whose counterexamples need no skew, on a much smaller search.
    pub fn exact_clocks(mut self) -> Self {
        self.behind = 0;
        self.ahead = 0;
        self
    }

    /// The same bounds with `mutant`.
    pub fn with_mutant(mut self, mutant: Mutant) -> Self {
        self.mutant = mutant;
        self
    }

    /// A duration of `units` model units.
    pub fn units(units: u64) -> Duration {
        Duration::from_millis(units)
    }
}
