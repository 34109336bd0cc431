//! A leased generator's settings as the faces and the service take them: numbers in
//! milliseconds, each one left out taking its default here.

use std::path::PathBuf;
use std::time::Duration;

use ferroflake::Options;

use crate::LeaseConfig;

/// The settings a user of a face (C, Python, Node) or of `ferroflake serve` gives a
/// leased generator, in milliseconds. A field left `None` takes its default, decided once
/// by [`config`](Self::config):
///
/// | setting | default |
/// |---|---|
/// | `ttl_ms` | 10,000 |
/// | `max_ttl_ms` | the larger of `ttl_ms` and 10,000 |
/// | `renew_every_ms` | `ttl_ms / 3`, at most 3,333 |
/// | `safety_margin_ms` | `ttl_ms / 10` |
/// | `quarantine_ms` | `ttl_ms / 5` |
/// | `max_start_wait_ms` | 30,000, or the longest start the timings ask for if longer |
/// | `max_clock_skew_ms` | half of quarantine + safety margin (also the most it may be) |
/// | `holder` | `host:pid` |
/// | `state_file` | none |
/// | `options` | [`Options::default`] (no drift allowed, 5 ms of backward wait) |
///
/// ```
/// use ferroflake_lease::LeaseSettings;
/// use std::time::Duration;
///
/// let mut settings = LeaseSettings::default();
/// settings.ttl_ms = Some(20_000);
/// let config = settings.config();
/// assert_eq!(config.max_ttl, Duration::from_secs(20));
/// assert_eq!(config.quarantine, Duration::from_secs(4));
/// config.validate()?;
/// # Ok::<(), ferroflake_lease::LeaseError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseSettings {
    /// How long a claim lives without renewal.
    pub ttl_ms: Option<u64>,
    /// The longest TTL any holder of the registry uses.
    pub max_ttl_ms: Option<u64>,
    /// How often the lease is renewed.
    pub renew_every_ms: Option<u64>,
    /// How long before its deadline the holder stops issuing.
    pub safety_margin_ms: Option<u64>,
    /// How long a released or expired node id rests before anyone may claim it.
    pub quarantine_ms: Option<u64>,
    /// The longest a start may hold back its first ID.
    pub max_start_wait_ms: Option<u64>,
    /// How far the generator's clock may be from the registry's.
    pub max_clock_skew_ms: Option<u64>,
    /// Who holds the lease, as the registry records it.
    pub holder: Option<String>,
    /// Where the holder keeps its claim on this host.
    pub state_file: Option<PathBuf>,
    /// The generator's options.
    pub options: Options,
}

impl LeaseSettings {
    /// The lease crate's settings: each field given replaces the default that
    /// [`LeaseConfig::with_ttl`] derives from the TTL (or [`LeaseConfig::default`]'s, without
    /// a TTL). Not checked: see [`LeaseConfig::validate`].
    pub fn config(&self) -> LeaseConfig {
        let ms = Duration::from_millis;
        let mut config = match self.ttl_ms {
            Some(ttl) => LeaseConfig::with_ttl(ms(ttl)),
            None => LeaseConfig::default(),
        };
        let set = |field: &mut Duration, given: Option<u64>| {
            if let Some(given) = given {
                *field = ms(given);
            }
        };
        set(&mut config.max_ttl, self.max_ttl_ms);
        set(&mut config.renew_every, self.renew_every_ms);
        set(&mut config.safety_margin, self.safety_margin_ms);
        set(&mut config.quarantine, self.quarantine_ms);
        config.max_start_wait = self.max_start_wait_ms.map(ms);
        config.max_clock_skew = self.max_clock_skew_ms.map(ms);
        if let Some(holder) = &self.holder {
            config.holder.clone_from(holder);
        }
        config.state_file.clone_from(&self.state_file);
        config.options = self.options;
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_given_is_the_default_config() {
        assert_eq!(LeaseSettings::default().config(), LeaseConfig::default());
    }

    #[test]
    fn a_ttl_alone_scales_the_timings_and_raises_max_ttl() {
        let settings = LeaseSettings {
            ttl_ms: Some(30_000),
            ..LeaseSettings::default()
        };
        let config = settings.config();
        assert_eq!(config, LeaseConfig::with_ttl(Duration::from_secs(30)));
        assert_eq!(config.max_ttl, Duration::from_secs(30));
        config.validate().unwrap();
    }

    #[test]
    fn each_given_field_replaces_its_default() {
        let mut options = Options::default();
        options.max_drift_ticks = 7;
        let settings = LeaseSettings {
            ttl_ms: Some(1_000),
            max_ttl_ms: Some(12_000),
            renew_every_ms: Some(200),
            safety_margin_ms: Some(150),
            quarantine_ms: Some(50),
            max_start_wait_ms: Some(40_000),
            max_clock_skew_ms: Some(60),
            holder: Some("web-1".into()),
            state_file: Some("/run/app/lease".into()),
            options,
        };
        let config = settings.config();
        let ms = Duration::from_millis;
        assert_eq!(
            (config.ttl, config.max_ttl, config.renew_every),
            (ms(1_000), ms(12_000), ms(200))
        );
        assert_eq!((config.safety_margin, config.quarantine), (ms(150), ms(50)));
        assert_eq!(
            (config.max_start_wait, config.max_clock_skew),
            (Some(ms(40_000)), Some(ms(60)))
        );
        assert_eq!(config.holder, "web-1");
        assert_eq!(config.state_file, Some(PathBuf::from("/run/app/lease")));
        assert_eq!(config.options.max_drift_ticks, 7);
    }
}
