//! Unix milliseconds as RFC 3339 (ISO 8601) UTC text.

use std::time::{Duration, UNIX_EPOCH};

/// 10000-01-01T00:00:00Z: RFC 3339 has four-digit years.
const YEAR_10000_MS: u64 = 253_402_300_800_000;

/// `2010-11-04T01:42:54.657Z`; instants past year 9999 are written as such.
pub fn iso_ms(unix_ms: u64) -> String {
    if unix_ms >= YEAR_10000_MS {
        return "after 9999-12-31T23:59:59.999Z".to_owned();
    }
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(unix_ms)).to_string()
}

#[cfg(test)]
mod tests {
    use super::iso_ms;

    #[test]
    fn formats_known_instants() {
        assert_eq!(iso_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_ms(1_288_834_974_657), "2010-11-04T01:42:54.657Z");
        assert_eq!(iso_ms(u64::MAX), "after 9999-12-31T23:59:59.999Z");
    }
}
