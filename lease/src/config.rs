//! The timings and options of a leased generator.

use std::path::PathBuf;
use std::time::Duration;

use ferroflake::Options;

use crate::protocol::{
    widest_clock_skew, DEFAULT_MAX_TTL, DEFAULT_QUARANTINE, LONGEST_RENEW_EVERY, LONGEST_WINDOW,
};
use crate::LeaseError;

/// How a [`LeasedGenerator`](crate::LeasedGenerator) holds its lease.
///
/// The defaults suit a service: a 10 s TTL renewed every 3.3 s, issuing stopped 1 s before
/// the TTL could lapse, 2 s of quarantine, 1 s of clock-skew allowance. Build with
/// [`LeaseConfig::with_ttl`], which scales the timings to the TTL, then adjust fields.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseConfig {
    /// How long a claim lives without renewal.
    pub ttl: Duration,
    /// The longest TTL any holder of the registry uses; every holder of one registry must
    /// use the same value (default [`DEFAULT_MAX_TTL`], 10 s). After the registry loses
    /// records, new claims wait this long plus the quarantine, so that a holder of the
    /// lost records has stopped issuing before anyone else starts.
    pub max_ttl: Duration,
    /// How often the background thread renews (default TTL / 3, at most
    /// [`LONGEST_RENEW_EVERY`], 3.3 s, so that a holder with a long TTL still sees a loss
    /// within the floor a claimant with default timings waits).
    pub renew_every: Duration,
    /// How soon a failed renewal is retried (default TTL / 20, at least 10 ms).
    pub retry_every: Duration,
    /// The local deadline is the last successful renewal's send time + TTL − this margin,
    /// so the holder stops before the registry can expire the claim (default TTL / 10).
    pub safety_margin: Duration,
    /// How long an expired claim stays unclaimable (asked of the registry; default TTL / 5).
    pub quarantine: Duration,
    /// How far past the previous holder's high-water mark the clock must be before this
    /// generator issues: covers clock differences between hosts (default 1 s).
    pub skew_allowance: Duration,
    /// How far the generator's clock may be from the registry's
    /// ([`Registry::wall_clock_ms`](crate::Registry::wall_clock_ms)), checked before the
    /// first ID and at every renewal: beyond it the start is refused and a running holder
    /// stops issuing until its clock is back within it ([`LeaseError::ClockSkew`]).
    /// `None` (the default): half of quarantine + safety margin (1.5 s by default), which
    /// is also the most it may be. Not checked for a clock that does not follow real time
    /// (a `ManualClock`), nor on a registry that reports no clock (etcd).
    pub max_clock_skew: Option<Duration>,
    /// How far ahead of the clock each renewal reserves the high-water mark (default TTL).
    pub reserve_ahead: Duration,
    /// How long a start may hold back its first ID, in all: for the registry's floor
    /// after lost records, then for the clock to pass the previous holder's mark. A floor
    /// longer than this fails the start at once ([`LeaseError::StartWaitTooLong`]); a
    /// clock still behind the mark when it runs out fails it with
    /// [`LeaseError::BehindHighWater`]. Either way the claim is given back. `None` (the
    /// default): 30 s, or, if longer, the longest start the timings ask for
    /// ([`longest_start`](Self::longest_start)), so that a start without a limit of its
    /// own never fails for waiting.
    pub max_start_wait: Option<Duration>,
    /// Who holds the lease, recorded for operators (default `host:pid`): 1 to
    /// [`MAX_HOLDER_BYTES`] bytes, not blank, each character [`shown_in_holder`].
    pub holder: String,
    /// A file where the holder keeps its claim (default `None`: none), so that a process
    /// restarted on the same host while the registry cannot be reached resumes the claim
    /// and issues until its deadline, and one restarted later asks for the same node id
    /// first. It holds the owner token: it must be the caller's alone (mode 0600, in a
    /// directory no other user can write), and one live process uses it at a time. See
    /// [`LeasedGenerator`](crate::LeasedGenerator)'s guarantees.
    pub state_file: Option<PathBuf>,
    /// The generator's options; `resume_after_ms` is raised to the previous holder's mark.
    pub options: Options,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        let mut config = Self::with_ttl(Duration::from_secs(10));
        config.quarantine = DEFAULT_QUARANTINE;
        config.safety_margin = Duration::from_secs(1);
        config
    }
}

impl LeaseConfig {
    /// Timings scaled to `ttl` (see the field docs), with a 1 s skew allowance, and
    /// `max_ttl` the larger of `ttl` and [`DEFAULT_MAX_TTL`].
    pub fn with_ttl(ttl: Duration) -> Self {
        LeaseConfig {
            ttl,
            max_ttl: ttl.max(DEFAULT_MAX_TTL),
            renew_every: (ttl / 3).min(LONGEST_RENEW_EVERY),
            retry_every: (ttl / 20).max(Duration::from_millis(10)),
            safety_margin: ttl / 10,
            quarantine: ttl / 5,
            skew_allowance: Duration::from_secs(1),
            reserve_ahead: ttl,
            max_clock_skew: None,
            max_start_wait: None,
            holder: default_holder(),
            state_file: None,
            options: Options::default(),
        }
    }

    /// The start's limit in force: [`max_start_wait`](Self::max_start_wait), or its
    /// default.
    pub fn start_wait_limit(&self) -> Duration {
        self.max_start_wait
            .unwrap_or_else(|| self.longest_start().max(Duration::from_secs(30)))
    }

    /// The longest a start can be held back under these timings: the lost-records window
    /// (`max_ttl + quarantine`), then a previous holder's reservation (`reserve_ahead`)
    /// plus the skew allowance. A limit at least this long never fails a start for
    /// waiting.
    pub fn longest_start(&self) -> Duration {
        self.max_ttl
            .saturating_add(self.quarantine)
            .saturating_add(self.reserve_ahead)
            .saturating_add(self.skew_allowance)
    }

    /// The clock skew in force: [`max_clock_skew`](Self::max_clock_skew), or its default.
    pub fn clock_skew_limit(&self) -> Duration {
        self.max_clock_skew
            .unwrap_or_else(|| widest_clock_skew(self.quarantine, self.safety_margin))
    }

    /// Checks that the timings can keep a lease: renewals come before the deadline, and
    /// the deadline comes before the TTL.
    ///
    /// # Errors
    /// [`LeaseError::InvalidConfig`] saying which setting to change.
    pub fn validate(&self) -> Result<(), LeaseError> {
        let bad = |detail: String| Err(LeaseError::InvalidConfig { detail });
        if self.ttl < Duration::from_millis(10) {
            return bad(format!("ttl {:?} is below 10 ms", self.ttl));
        }
        if self.safety_margin >= self.ttl {
            return bad(format!(
                "safety_margin {:?} must be below ttl {:?}",
                self.safety_margin, self.ttl
            ));
        }
        if self.renew_every.is_zero() || self.renew_every >= self.ttl - self.safety_margin {
            return bad(format!(
                "renew_every {:?} must be above 0 and below ttl - safety_margin ({:?})",
                self.renew_every,
                self.ttl - self.safety_margin
            ));
        }
        if self.ttl > self.max_ttl {
            return bad(format!(
                "ttl {:?} exceeds max_ttl {:?} (the longest TTL the registry's holders use)",
                self.ttl, self.max_ttl
            ));
        }
        if self.max_ttl.saturating_add(self.quarantine) > LONGEST_WINDOW {
            return bad(format!(
                "max_ttl {:?} + quarantine {:?} exceeds {LONGEST_WINDOW:?}, the longest any \
                 registry makes claims wait after lost records",
                self.max_ttl, self.quarantine
            ));
        }
        if self.max_clock_skew == Some(Duration::ZERO) {
            return bad(
                "max_clock_skew 0 allows no distance at all from the registry's clock, which \
                 no measurement over a network meets: give at least 1 ms, or leave it out for \
                 the default"
                    .to_owned(),
            );
        }
        let widest = widest_clock_skew(self.quarantine, self.safety_margin);
        if self.clock_skew_limit() > widest {
            return bad(format!(
                "max_clock_skew {:?} exceeds {widest:?}, half of quarantine + safety_margin: \
                 two holders that far from the registry's clock on either side could issue \
                 one ID twice after the registry loses its records",
                self.clock_skew_limit()
            ));
        }
        if self.retry_every.is_zero() {
            return bad("retry_every must be above 0".into());
        }
        if let Some(why) = unreadable_holder(&self.holder) {
            return bad(format!("holder {why}"));
        }
        if self
            .state_file
            .as_ref()
            .is_some_and(|p| p.as_os_str().is_empty())
        {
            return bad("state_file is empty: give a file's path, or leave it out".into());
        }
        Ok(())
    }
}

/// The longest [`LeaseConfig::holder`], in bytes.
pub const MAX_HOLDER_BYTES: usize = 256;

/// Whether `c` shows as itself in a holder's name: ASCII's printable characters and the
/// space, and beyond ASCII only letters and digits (of any script) that show something.
/// Everything else beyond ASCII can hide text or make a name read as another: format
/// characters (bidirectional overrides, zero-width ones, tags), line separators, other
/// spaces, combining marks, symbols, private-use and unassigned code points, and the Hangul
/// fillers (letters that show nothing).
pub fn shown_in_holder(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_graphic() || c == ' '
    } else {
        c.is_alphanumeric() && !matches!(c, '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}')
    }
}

/// Why `holder` (a claim's or a reservation's) is not a name operators can read, if it is
/// not. It is shown by `lease list` and in logs and kept in every record: a name, not a
/// payload, so it is 1 to [`MAX_HOLDER_BYTES`] bytes, not blank, and every character is
/// [`shown_in_holder`].
pub(crate) fn unreadable_holder(holder: &str) -> Option<String> {
    let readable = !holder.trim().is_empty()
        && holder.len() <= MAX_HOLDER_BYTES
        && holder.chars().all(shown_in_holder);
    (!readable).then(|| {
        format!(
            "must be 1 to {MAX_HOLDER_BYTES} bytes, not blank, of printable ASCII and spaces or \
             letters and digits of any script (operators read it); this one has {} bytes",
            holder.len()
        )
    })
}

/// `host:pid`, so an operator can tell who holds an id.
fn default_holder() -> String {
    let uname = rustix::system::uname();
    format!(
        "{}:{}",
        uname.nodename().to_string_lossy(),
        std::process::id()
    )
}
