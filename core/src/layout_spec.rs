//! The one text spelling of a layout, accepted wherever a preset name is:
//!
//! ```text
//! TIME/NODE/SEQUENCE[+SHARD]@EPOCH[,tick=Nms][,order=ORDER]
//! ```
//!
//! - the widths in bits, shard bits (the lowest field) only when there are any;
//! - `EPOCH` as an RFC 3339 UTC instant of the strict form `YYYY-MM-DDTHH:MM:SS[.fff]Z`
//!   (at most millisecond precision), or as whole milliseconds since the Unix epoch;
//! - `tick=` the time unit in whole milliseconds (default `1ms`);
//! - `order=` one of [`FieldOrder::NAMES`] (default `node_then_sequence`).
//!
//! [`Layout`]'s `Display` prints this spelling, so every layout round-trips through text:
//!
//! ```
//! use ferroflake::Layout;
//! let sonyflake = Layout::parse("39/16/8@2014-09-01T00:00:00Z,tick=10ms,order=sequence_then_node")?;
//! assert_eq!(sonyflake, Layout::sonyflake());
//! assert_eq!(
//!     Layout::twitter().to_string(),
//!     "41/10/12@2010-11-04T01:42:54.657Z"
//! );
//! for name in Layout::PRESET_NAMES {
//!     let preset = Layout::parse(name)?;
//!     assert_eq!(Layout::parse(&preset.to_string())?, preset);
//! }
//! # Ok::<(), ferroflake::Error>(())
//! ```

use core::fmt;
use core::str::FromStr;

use crate::{Error, FieldOrder, Layout};

const MS_PER_DAY: i64 = 86_400_000;

/// The refusal for a spelling that does not follow the grammar, pointing at the byte where
/// it went wrong.
const fn bad(index: usize, expected: &'static str) -> Error {
    Error::InvalidLayoutSpelling { index, expected }
}

/// Digits only, no sign: the whole of `text` as a number, or `None` when it is empty, has
/// another character, or exceeds `u64`.
fn digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.bytes().try_fold(0u64, |n, b| {
        n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

/// A bit width; widths too large for `u32` saturate so that the builder reports them as
/// too many bits rather than as bad syntax.
fn width(text: &str, at: usize, expected: &'static str) -> Result<u32, Error> {
    let n = digits(text).ok_or(bad(at, expected))?;
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// Days from 1970-01-01 to the given proleptic Gregorian date (negative before it).
const fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // Count years from March so the leap day ends the year, in 400-year eras.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let shifted_month = (month + 9) % 12; // March = 0
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date (year, month, day) `days` after 1970-01-01; the inverse of [`days_from_civil`].
const fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + if month <= 2 { 1 } else { 0 };
    (year, month, day)
}

const fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// An instant's calendar fields in UTC, for the texts that show one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UtcFields {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub milli: i64,
}

impl UtcFields {
    /// The fields of `unix_ms`, any of them: the year has as many digits as it needs.
    pub(crate) const fn of(unix_ms: u64) -> UtcFields {
        // u64::MAX ms is about 2.1e11 days: every day count fits i64.
        let (year, month, day) = civil_from_days((unix_ms / MS_PER_DAY as u64) as i64);
        let in_day = (unix_ms % MS_PER_DAY as u64) as i64;
        let seconds = in_day / 1000;
        UtcFields {
            year,
            month,
            day,
            hour: seconds / 3600,
            minute: seconds / 60 % 60,
            second: seconds % 60,
            milli: in_day % 1000,
        }
    }

    /// Writes year, month, day, hour, minute and second, zero-padded, with `[date, between,
    /// time]` as the separators: `["-", " ", ":"]` gives `2019-09-06 01:35:00`, three
    /// empty ones `20190906013500`. The caller writes the milliseconds its form shows.
    pub(crate) fn write(
        &self,
        f: &mut fmt::Formatter<'_>,
        [date, between, time]: [&str; 3],
    ) -> fmt::Result {
        write!(
            f,
            "{:04}{date}{:02}{date}{:02}{between}{:02}{time}{:02}{time}{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.f{1,3}]Z` as ms since the Unix epoch (negative before it, for the
/// builder to refuse as [`Error::EpochBeforeUnix`]). `at` is where `text` starts in the
/// whole spelling.
fn rfc3339_ms(text: &str, at: usize) -> Result<i64, Error> {
    const EXPECTED: &str = "an instant YYYY-MM-DDTHH:MM:SS[.fff]Z";
    let b = text.as_bytes();
    let field = |start: usize, len: usize, min: i64, max: i64| -> Result<i64, Error> {
        let part = text
            .get(start..start + len)
            .ok_or(bad(at + start, EXPECTED))?;
        match digits(part) {
            Some(n) if part.len() == len && (min..=max).contains(&(n as i64)) => Ok(n as i64),
            _ => Err(bad(at + start, EXPECTED)),
        }
    };
    let punct = |index: usize, want: u8| -> Result<(), Error> {
        if b.get(index) == Some(&want) {
            Ok(())
        } else {
            Err(bad(at + index, EXPECTED))
        }
    };
    let year = field(0, 4, 0, 9999)?;
    punct(4, b'-')?;
    let month = field(5, 2, 1, 12)?;
    punct(7, b'-')?;
    let day = field(8, 2, 1, days_in_month(year, month))?;
    punct(10, b'T')?;
    let hour = field(11, 2, 0, 23)?;
    punct(13, b':')?;
    let minute = field(14, 2, 0, 59)?;
    punct(16, b':')?;
    let second = field(17, 2, 0, 59)?;
    let mut end = 19;
    let mut millis = 0;
    if b.get(end) == Some(&b'.') {
        let fraction_len = b[end + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if !(1..=3).contains(&fraction_len) {
            return Err(bad(at + end + 1, "1 to 3 digits of a second"));
        }
        millis = field(end + 1, fraction_len, 0, 999)?;
        // ".5" is half a second: scale to milliseconds.
        millis *= [100, 10, 1][fraction_len - 1];
        end += 1 + fraction_len;
    }
    punct(end, b'Z')?;
    if end + 1 != b.len() {
        return Err(bad(at + end + 1, "the end of the instant after Z"));
    }
    let seconds = hour * 3600 + minute * 60 + second;
    Ok(days_from_civil(year, month, day) * MS_PER_DAY + seconds * 1000 + millis)
}

/// The epoch: unix ms when all digits, else an RFC 3339 instant.
fn epoch_ms(text: &str, at: usize) -> Result<i64, Error> {
    if text.len() <= 4 || text.as_bytes()[4] != b'-' {
        let ms = digits(text).ok_or(bad(
            at,
            "an epoch: unix milliseconds or YYYY-MM-DDTHH:MM:SS[.fff]Z",
        ))?;
        return i64::try_from(ms).map_err(|_| bad(at, "an epoch below 2^63 ms"));
    }
    rfc3339_ms(text, at)
}

impl Layout {
    /// A layout from its name or its spelling: one of [`Layout::PRESET_NAMES`] (ASCII
    /// case-insensitive, as [`Layout::from_name`]) or
    /// `TIME/NODE/SEQUENCE[+SHARD]@EPOCH[,tick=Nms][,order=ORDER]`, which [`Display`]
    /// prints. This is the one entry point for layouts given as text.
    ///
    /// ```
    /// use ferroflake::{Error, ErrorKind, FieldOrder, Layout};
    /// // bwmarrin/snowflake with NodeBits = 8, StepBits = 14 and its default epoch.
    /// let layout = Layout::parse("41/8/14@1288834974657")?;
    /// assert_eq!((layout.node_bits(), layout.sequence_bits()), (8, 14));
    /// assert_eq!(Layout::parse("SONYFLAKE")?, Layout::sonyflake());
    ///
    /// let sharded = Layout::parse("41/6/12+4@2020-01-01T00:00:00Z")?;
    /// assert_eq!(sharded, Layout::sharded());
    ///
    /// assert_eq!(Layout::parse("snowflake").unwrap_err().kind(), ErrorKind::UnknownLayout);
    /// assert_eq!(Layout::parse("41/10/12@2010-13-01T00:00:00Z").unwrap_err().kind(), ErrorKind::UnknownLayout);
    /// assert_eq!(Layout::parse("41/10/13@0"), Err(Error::TooManyBits { total: 64 }));
    /// assert_eq!(Layout::parse("41/10/12@0,tick=0ms"), Err(Error::ZeroTick));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownLayout`] for text that is neither a preset name nor a spelling,
    /// [`Error::InvalidLayoutSpelling`] (kind [`UnknownLayout`](crate::ErrorKind::UnknownLayout))
    /// for a spelling that breaks the grammar, or what [`LayoutBuilder::build`](crate::LayoutBuilder::build)
    /// refuses for widths, tick and epoch that make no layout.
    ///
    /// [`Display`]: core::fmt::Display
    pub fn parse(text: &str) -> Result<Layout, Error> {
        if !text.contains(['/', '@']) {
            return Self::from_name(text);
        }
        let (widths, rest) = text
            .split_once('@')
            .ok_or(bad(text.len(), "'@' and the epoch"))?;
        let epoch_at = widths.len() + 1;

        let (fields, shard) = match widths.split_once('+') {
            Some((fields, shard)) => (fields, Some(shard)),
            None => (widths, None),
        };
        let mut parts = fields.split('/');
        let mut at = 0;
        let mut next_width = |expected: &'static str| -> Result<u32, Error> {
            let part = parts.next().ok_or(bad(fields.len(), expected))?;
            let bits = width(part, at, expected)?;
            at += part.len() + 1;
            Ok(bits)
        };
        let time = next_width("time bits")?;
        let node = next_width("node bits")?;
        let sequence = next_width("sequence bits")?;
        if parts.next().is_some() {
            return Err(bad(at - 1, "'+' shard bits or '@' after three widths"));
        }
        let shard = match shard {
            Some(shard) => width(shard, fields.len() + 1, "shard bits")?,
            None => 0,
        };

        let mut options = rest.split(',');
        let epoch_text = options.next().unwrap_or_default();
        let epoch = epoch_ms(epoch_text, epoch_at)?;
        let mut builder = Layout::builder(time, node, sequence)
            .shard_bits(shard)
            .epoch_ms(epoch);

        let mut at = epoch_at + epoch_text.len() + 1;
        let (mut seen_tick, mut seen_order) = (false, false);
        for option in options {
            let (key, value) = option
                .split_once('=')
                .ok_or(bad(at, "an option tick=Nms or order=ORDER"))?;
            let value_at = at + key.len() + 1;
            match key {
                "tick" if !seen_tick => {
                    seen_tick = true;
                    let ms = value
                        .strip_suffix("ms")
                        .and_then(digits)
                        .ok_or(bad(value_at, "a tick in whole milliseconds, as 10ms"))?;
                    builder = builder.tick_ms(ms);
                }
                "order" if !seen_order => {
                    seen_order = true;
                    let order = FieldOrder::from_name(value)
                        .ok_or(bad(value_at, "node_then_sequence or sequence_then_node"))?;
                    builder = builder.order(order);
                }
                "tick" | "order" => return Err(bad(at, "each option at most once")),
                _ => return Err(bad(at, "an option tick=Nms or order=ORDER")),
            }
            at += option.len() + 1;
        }
        builder.build()
    }
}

impl FromStr for Layout {
    type Err = Error;

    /// The same as [`Layout::parse`].
    fn from_str(text: &str) -> Result<Layout, Error> {
        Layout::parse(text)
    }
}

/// The layout's spelling, which [`Layout::parse`] reads back to the same layout. The epoch
/// prints as an RFC 3339 instant (milliseconds only when there are any), or as unix ms
/// past year 9999; `tick` and `order` only when not the default.
impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}",
            self.time_bits, self.node_bits, self.sequence_bits
        )?;
        if self.shard_bits > 0 {
            write!(f, "+{}", self.shard_bits)?;
        }
        let epoch = self.epoch_ms;
        let t = UtcFields::of(epoch);
        if t.year <= 9999 {
            write!(
                f,
                "@{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
                t.year, t.month, t.day, t.hour, t.minute, t.second
            )?;
            if t.milli > 0 {
                write!(f, ".{:03}", t.milli)?;
            }
            f.write_str("Z")?;
        } else {
            write!(f, "@{epoch}")?;
        }
        if self.tick_ms != 1 {
            write!(f, ",tick={}ms", self.tick_ms)?;
        }
        if self.order != FieldOrder::NodeThenSequence {
            write!(f, ",order={}", self.order.name())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn dates_and_day_counts_agree_across_leap_years_and_eras() {
        for days in -800_000..800_000 {
            let (y, m, d) = civil_from_days(days);
            assert!((1..=12).contains(&m) && (1..=days_in_month(y, m)).contains(&d));
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(
            days_from_civil(2000, 3, 1) - days_from_civil(2000, 2, 28),
            2
        );
        assert_eq!(
            days_from_civil(1900, 3, 1) - days_from_civil(1900, 2, 28),
            1
        );
    }

    #[test]
    fn instants_are_read_as_utc_milliseconds() {
        let ms = |t: &str| rfc3339_ms(t, 0);
        assert_eq!(ms("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(ms("2010-11-04T01:42:54.657Z"), Ok(1_288_834_974_657));
        assert_eq!(ms("2014-09-01T00:00:00Z"), Ok(1_409_529_600_000));
        assert_eq!(ms("2024-02-29T23:59:59.5Z"), Ok(1_709_251_199_500));
        assert_eq!(ms("1969-12-31T23:59:59.99Z"), Ok(-10));
        for bad in [
            "2023-02-29T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:60:00Z",
            "2024-01-01T00:00:60Z",
            "2024-01-01 00:00:00Z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00+00:00",
            "2024-01-01T00:00:00.Z",
            "2024-01-01T00:00:00.1234Z",
            "2024-01-01t00:00:00z",
            "2024-1-01T00:00:00Z",
            "2024-01-01T00:00:00Zjunk",
            "+024-01-01T00:00:00Z",
            "2024-01-01T0é:00:00Z",
        ] {
            assert_eq!(
                ms(bad).map_err(|e| e.kind()),
                Err(ErrorKind::UnknownLayout),
                "{bad}"
            );
        }
    }

    #[test]
    fn garbage_is_refused_with_the_place_it_went_wrong() {
        for (text, index) in [
            ("41/10@0", 5),
            ("41/10/12", 8),
            ("41/10/12/1@0", 8),
            ("41/x/12@0", 3),
            ("41/10/-12@0", 6),
            ("41/10/12+@0", 9),
            ("41/10/12@", 9),
            ("41/10/12@now", 9),
            ("41/10/12@0,tick=10", 16),
            ("41/10/12@0,tick=ms", 16),
            ("41/10/12@0,order=sideways", 17),
            ("41/10/12@0,color=blue", 11),
            ("41/10/12@0,tick", 11),
            ("41/10/12@0,tick=2ms,tick=2ms", 20),
            ("41/10/12@0,", 11),
            ("41/10/12@99999999999999999999", 9),
            ("41/10/12@9223372036854775808", 9),
            ("/@", 0),
            ("@", 0),
        ] {
            match Layout::parse(text) {
                Err(Error::InvalidLayoutSpelling { index: found, .. }) => {
                    assert_eq!(found, index, "{text}")
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn widths_tick_and_epoch_are_checked_by_the_builder() {
        assert_eq!(
            Layout::parse("41/10/12+1@0"),
            Err(Error::TooManyBits { total: 64 })
        );
        assert_eq!(
            Layout::parse("99999999999/1/1@0"),
            Err(Error::TooManyBits { total: u32::MAX })
        );
        assert_eq!(Layout::parse("0/10/12@0"), Err(Error::NoTimeBits));
        assert_eq!(Layout::parse("41/10/0@0"), Err(Error::ZeroSequenceBits));
        assert_eq!(Layout::parse("41/10/12@0,tick=0ms"), Err(Error::ZeroTick));
        assert_eq!(
            Layout::parse("41/10/12@1969-12-31T23:59:59.999Z"),
            Err(Error::EpochBeforeUnix { epoch_ms: -1 })
        );
    }

    #[test]
    fn every_kind_of_layout_round_trips_through_its_spelling() {
        let orders = FieldOrder::ALL;
        for (time, node, sequence, shard) in [(41, 10, 12, 0), (1, 0, 1, 0), (20, 20, 20, 3)] {
            for epoch in [
                0,
                1,
                999,
                1_288_834_974_657,
                253_402_300_799_999,
                253_402_300_800_000,
                i64::MAX,
            ] {
                for tick in [1, 10, 1000, u64::MAX] {
                    for order in orders {
                        let layout = Layout::builder(time, node, sequence)
                            .shard_bits(shard)
                            .epoch_ms(epoch)
                            .tick_ms(tick)
                            .order(order)
                            .build()
                            .unwrap();
                        let mut text = [0u8; 128];
                        let spelled = write_to(&mut text, &layout);
                        assert_eq!(Layout::parse(spelled), Ok(layout), "{spelled}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_spelling_is_short_for_defaults_and_exact_otherwise() {
        let mut text = [0u8; 128];
        assert_eq!(
            write_to(&mut text, &Layout::sharded()),
            "41/6/12+4@2020-01-01T00:00:00Z"
        );
        assert_eq!(
            write_to(&mut text, &Layout::sonyflake()),
            "39/16/8@2014-09-01T00:00:00Z,tick=10ms,order=sequence_then_node"
        );
        let far = Layout::builder(41, 10, 12)
            .epoch_ms(253_402_300_800_000)
            .build()
            .unwrap();
        assert_eq!(write_to(&mut text, &far), "41/10/12@253402300800000");
        assert_eq!(
            "41/10/12@2010-11-04T01:42:54.657Z".parse::<Layout>(),
            Ok(Layout::twitter())
        );
    }

    /// Display into a stack buffer: the crate has no allocator without `std`.
    fn write_to<'a>(buffer: &'a mut [u8; 128], layout: &Layout) -> &'a str {
        struct Cursor<'b>(&'b mut [u8], usize);
        impl fmt::Write for Cursor<'_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                let end = self.1 + s.len();
                self.0
                    .get_mut(self.1..end)
                    .ok_or(fmt::Error)?
                    .copy_from_slice(s.as_bytes());
                self.1 = end;
                Ok(())
            }
        }
        let mut cursor = Cursor(buffer, 0);
        fmt::write(&mut cursor, format_args!("{layout}")).unwrap();
        let len = cursor.1;
        core::str::from_utf8(&buffer[..len]).unwrap()
    }
}
