//! Instants on the command line: Unix milliseconds shown as RFC 3339 (ISO 8601) UTC
//! text, and instants read as a layout spelling reads its epoch.

use std::time::{Duration, UNIX_EPOCH};

use ferroflake::Layout;

use crate::failure::Failure;

/// 10000-01-01T00:00:00Z: RFC 3339 has four-digit years.
const YEAR_10000_MS: u64 = 253_402_300_800_000;

/// `2010-11-04T01:42:54.657Z`; instants past year 9999 are written as such.
pub fn iso_ms(unix_ms: u64) -> String {
    if unix_ms >= YEAR_10000_MS {
        return "after 9999-12-31T23:59:59.999Z".to_owned();
    }
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(unix_ms)).to_string()
}

/// `text` read as core reads a layout's epoch, `YYYY-MM-DDTHH:MM:SS[.fff]Z` or unix ms, so
/// that every option taking an instant takes the same ones; a refusal names `flag` and
/// points into `text`.
pub fn instant_ms(flag: &str, text: &str) -> Result<u64, Failure> {
    // The shortest spelling around it: `1/0/1@` is 6 bytes.
    const BEFORE: usize = 6;
    let refused = |why: String| Failure::Input(format!("{flag} {text:?}: {why}"));
    if text.contains(',') {
        return Err(refused("an instant has no ','".into()));
    }
    match Layout::parse(&format!("1/0/1@{text}")) {
        Ok(layout) => Ok(layout.epoch_ms()),
        // Core names what it reads after `@` an epoch; here it is any instant.
        Err(ferroflake::Error::InvalidLayoutSpelling { index, expected }) => Err(refused(format!(
            "expected {} at byte {}",
            expected.replacen("an epoch", "an instant", 1),
            index.saturating_sub(BEFORE)
        ))),
        Err(ferroflake::Error::EpochBeforeUnix { epoch_ms }) => Err(refused(format!(
            "{epoch_ms} ms is before 1970-01-01T00:00:00Z"
        ))),
        Err(e) => Err(refused(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::{instant_ms, iso_ms};

    #[test]
    fn formats_known_instants() {
        assert_eq!(iso_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_ms(1_288_834_974_657), "2010-11-04T01:42:54.657Z");
        assert_eq!(iso_ms(u64::MAX), "after 9999-12-31T23:59:59.999Z");
    }

    #[test]
    fn reads_instants_as_layout_epochs() {
        assert_eq!(instant_ms("--time", "0").ok(), Some(0));
        assert_eq!(
            instant_ms("--time", "2010-11-04T01:42:54.657Z").ok(),
            Some(1_288_834_974_657)
        );
        for (bad, why) in [
            ("2025-02-30T00:00:00Z", "at byte 8"),
            ("1,tick=2ms", "no ','"),
            ("1969-12-31T00:00:00Z", "before 1970"),
            ("", "at byte 0"),
        ] {
            let message = instant_ms("--time", bad).unwrap_err().to_string();
            assert!(message.starts_with("--time"), "{bad}: {message}");
            assert!(message.contains(why), "{bad}: {message}");
            assert!(!message.contains("epoch"), "{bad}: {message}");
        }
    }
}
