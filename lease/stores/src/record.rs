//! The record formats the Redis and ZooKeeper registries share: a namespace marker and
//! one record per node id, as short space-separated text (times on the store's clock, ms).
//!
//! A record is `epoch mark expires quarantine floor token holder` as earlier versions wrote
//! it, or, since claims and renewals record their times, the same with `t` first and
//! `since renewed skew` before the holder (each `-` when unknown; the skew signed): the
//! holder, last, may hold spaces, so the times cannot follow it, and an epoch is digits
//! only, so `t` tells the two apart. Both read; this version writes the second.

use ferroflake_lease::protocol::{self, Candidate, RecordView, Standing};
use ferroflake_lease::{LeaseRequest, NodeState, NodeView, Renewal, Reservation};

/// The namespace marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    pub floor_until_ms: u64,
    pub claimed: u64,
}

impl Marker {
    pub fn encode(&self) -> String {
        format!("{} {}", self.floor_until_ms, self.claimed)
    }

    /// `None` unless `raw` is exactly what [`Marker::encode`] writes: a truncated or
    /// padded marker is garbled, and its callers report it rather than guess.
    pub fn decode(raw: &str) -> Option<Marker> {
        let mut parts = raw.split(' ');
        let marker = Marker {
            floor_until_ms: number(parts.next()?)?,
            claimed: number(parts.next()?)?,
        };
        parts.next().is_none().then_some(marker)
    }
}

/// One node id's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub epoch: u64,
    pub mark: u64,
    pub expires_ms: u64,
    pub quarantine_ms: u64,
    pub floor_until_ms: u64,
    pub token: Option<String>,
    pub holder: String,
    /// When the current (or last) claim was made (store clock, ms).
    pub since_ms: Option<u64>,
    /// When it was last renewed (store clock, ms).
    pub renewed_ms: Option<u64>,
    /// The holder's clock skew at that renewal, ms.
    pub clock_skew_ms: Option<i64>,
}

/// The tag before a record with times.
const WITH_TIMES: &str = "t";

impl Record {
    /// What [`Registry::list`](ferroflake_lease::Registry::list) shows of node `id`'s
    /// record, judged at `now_ms` on the store's clock as a claim would judge it.
    pub fn node_view(self, id: u64, now_ms: u64) -> NodeView {
        let held = self.token.is_some();
        let standing = protocol::standing(held, self.expires_ms, self.quarantine_ms, now_ms);
        NodeView::new(
            id,
            Some(self.holder),
            self.epoch,
            NodeState::of(held, standing),
            self.expires_ms,
            self.mark,
        )
        .with_times(self.since_ms, self.renewed_ms, self.clock_skew_ms)
    }

    pub fn encode(&self) -> String {
        let or_dash = |n: Option<String>| n.unwrap_or_else(|| "-".to_owned());
        format!(
            "{WITH_TIMES} {} {} {} {} {} {} {} {} {} {}",
            self.epoch,
            self.mark,
            self.expires_ms,
            self.quarantine_ms,
            self.floor_until_ms,
            self.token.as_deref().unwrap_or("-"),
            or_dash(self.since_ms.map(|n| n.to_string())),
            or_dash(self.renewed_ms.map(|n| n.to_string())),
            or_dash(self.clock_skew_ms.map(|n| n.to_string())),
            self.holder
        )
    }

    /// `None` unless `raw` has all the fields [`Record::encode`] writes, or all seven an
    /// earlier version wrote (no times: `None`); the holder, last, may be empty or hold
    /// spaces. A truncated record is garbled, not a record with zeros or no holder.
    pub fn decode(raw: &str) -> Option<Record> {
        let (timed, raw) = match raw.strip_prefix(WITH_TIMES) {
            Some(rest) => (true, rest.strip_prefix(' ')?),
            None => (false, raw),
        };
        let mut parts = raw.splitn(if timed { 10 } else { 7 }, ' ');
        let mut next_number = || number(parts.next()?);
        let (epoch, mark, expires_ms, quarantine_ms, floor_until_ms) = (
            next_number()?,
            next_number()?,
            next_number()?,
            next_number()?,
            next_number()?,
        );
        let token = parts.next().filter(|t| !t.is_empty())?;
        let (since_ms, renewed_ms, clock_skew_ms) = if timed {
            (
                unknown_or(parts.next()?, number)?,
                unknown_or(parts.next()?, number)?,
                unknown_or(parts.next()?, signed)?,
            )
        } else {
            (None, None, None)
        };
        let holder = parts.next()?;
        Some(Record {
            epoch,
            mark,
            expires_ms,
            quarantine_ms,
            floor_until_ms,
            token: (token != "-").then(|| token.to_owned()),
            holder: holder.to_owned(),
            since_ms,
            renewed_ms,
            clock_skew_ms,
        })
    }

    /// The record of a new claim under `token` at store time `now_ms` (`now_us` for the
    /// epoch), over the id's `previous` record. A missing record of an id claimed before
    /// (`was_claimed`) was lost, not new: the claim gets a floor of its own, of `window`
    /// (the namespace's, see [`protocol::widest_window`]), stored in the record so that a
    /// later claimant still sees it.
    pub fn claimed(
        previous: Option<&Record>,
        was_claimed: bool,
        request: &LeaseRequest,
        token: &str,
        now_ms: u64,
        now_us: u64,
        window: std::time::Duration,
    ) -> Record {
        let (epoch, mark, floor_until_ms) = match previous {
            Some(r) => (r.epoch, r.mark, r.floor_until_ms),
            None if was_claimed => (0, 0, protocol::floor_until(now_ms, window)),
            None => (0, 0, 0),
        };
        Record {
            epoch: protocol::next_epoch(epoch, now_us),
            mark,
            expires_ms: now_ms.saturating_add(protocol::ms(request.ttl)),
            quarantine_ms: protocol::ms(request.quarantine),
            floor_until_ms,
            token: Some(token.to_owned()),
            holder: request.holder.clone(),
            since_ms: Some(now_ms),
            renewed_ms: None,
            clock_skew_ms: None,
        }
    }

    /// This record renewed at `now_ms` for `renewal.ttl`, its mark raised to
    /// `renewal.high_water_ms` (never lowered), the renewal's time and clock skew recorded.
    pub fn renewed(&self, now_ms: u64, renewal: &Renewal) -> Record {
        Record {
            expires_ms: now_ms.saturating_add(protocol::ms(renewal.ttl)),
            mark: self.mark.max(renewal.high_water_ms),
            renewed_ms: Some(now_ms),
            clock_skew_ms: renewal.clock_skew_ms,
            ..self.clone()
        }
    }

    /// What [`Registry::reserve`](ferroflake_lease::Registry::reserve) makes of
    /// `previous` (`None`: no record) at `now_ms`: the outcome, and the record to write if
    /// it is [`Reservation::Made`] (the epoch, mark and floor kept).
    pub fn reserved(
        previous: Option<&Record>,
        holder: &str,
        now_ms: u64,
    ) -> (Reservation, Option<Record>) {
        let outcome = match previous {
            None => Reservation::Made,
            Some(r) => {
                let held = r.token.is_some();
                let standing = protocol::standing(held, r.expires_ms, r.quarantine_ms, now_ms);
                protocol::reservation_over(r.token.as_deref(), standing)
            }
        };
        let record = (outcome == Reservation::Made).then(|| {
            let (epoch, mark, floor_until_ms) =
                previous.map_or((0, 0, 0), |r| (r.epoch, r.mark, r.floor_until_ms));
            Record {
                epoch,
                mark,
                expires_ms: protocol::NEVER_MS,
                quarantine_ms: 0,
                floor_until_ms,
                token: Some(protocol::RESERVED_TOKEN.to_owned()),
                holder: holder.to_owned(),
                since_ms: Some(now_ms),
                renewed_ms: None,
                clock_skew_ms: None,
            }
        });
        (outcome, record)
    }

    pub fn view(&self) -> RecordView<'_> {
        RecordView {
            token: self.token.as_deref(),
            expires_ms: self.expires_ms,
        }
    }
}

/// A number as the stores write it: decimal digits only (no sign, no spaces). Also what
/// Redis answers for `TIME` and `uptime_in_seconds`.
pub fn number(text: &str) -> Option<u64> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| text.parse().ok()).flatten()
}

/// A signed number as the stores write it: decimal digits with `-` first if negative.
pub fn signed(text: &str) -> Option<i64> {
    match text.strip_prefix('-') {
        Some(digits) => number(digits).and_then(|n| 0i64.checked_sub_unsigned(n)),
        None => number(text).and_then(|n| i64::try_from(n).ok()),
    }
}

/// `None` inside for `-` (unknown), else what `parse` reads; `None` outside if it reads
/// nothing.
fn unknown_or<T>(text: &str, parse: impl Fn(&str) -> Option<T>) -> Option<Option<T>> {
    if text == "-" {
        Some(None)
    } else {
        parse(text).map(Some)
    }
}

/// The ids a claim could take, for [`protocol::pick_node`]: ids whose record is free at
/// `now_ms` (judged with the longer of the holder's and the claimant's quarantine), and ids
/// below `claimed` whose record is missing (lost: they carry a floor).
pub fn candidates<'a>(
    claimed: u64,
    records: impl IntoIterator<Item = (u64, Option<&'a Record>)>,
    quarantine_ms: u64,
    now_ms: u64,
) -> Vec<Candidate> {
    records
        .into_iter()
        .filter_map(|(id, record)| match record {
            None if id < claimed => Some(Candidate {
                id,
                mark_ms: 0,
                lost: true,
            }),
            None => None,
            Some(r) => {
                let q = r.quarantine_ms.max(quarantine_ms);
                let free = protocol::standing(r.token.is_some(), r.expires_ms, q, now_ms)
                    == Standing::Free;
                free.then_some(Candidate {
                    id,
                    mark_ms: r.mark,
                    lost: false,
                })
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let record = Record {
            epoch: 7,
            mark: 1_700_000_000_123,
            expires_ms: 5,
            quarantine_ms: 2,
            floor_until_ms: 9,
            token: Some("ab".into()),
            holder: "host 12".into(),
            since_ms: Some(3),
            renewed_ms: Some(4),
            clock_skew_ms: Some(-12),
        };
        assert_eq!(Record::decode(&record.encode()), Some(record.clone()));
        assert_eq!(
            record.encode(),
            "t 7 1700000000123 5 2 9 ab 3 4 -12 host 12"
        );
        let untimed = Record {
            since_ms: None,
            renewed_ms: None,
            clock_skew_ms: None,
            ..record.clone()
        };
        assert_eq!(Record::decode(&untimed.encode()), Some(untimed.clone()));
        assert_eq!(
            Record::decode("7 1700000000123 5 2 9 ab host 12"),
            Some(untimed),
            "a record an earlier version wrote reads, with no times"
        );
        let released = Record {
            token: None,
            ..record
        };
        assert_eq!(Record::decode(&released.encode()), Some(released));
        assert_eq!(Record::decode("1 2 x"), None);
        let marker = Marker {
            floor_until_ms: 3,
            claimed: 4,
        };
        assert_eq!(Marker::decode(&marker.encode()), Some(marker));
    }

    #[test]
    fn garbled_records_do_not_decode() {
        let record = "7 1700000000123 5 2 9 ab host 12";
        assert!(Record::decode(record).is_some());
        assert!(
            Record::decode("7 1700000000123 5 2 9 - ").is_some(),
            "released, no holder"
        );
        for garbled in [
            "",
            "garbage",
            "7 1700000000123 5 2 9 ab",    // truncated: no holder field
            "7 1700000000123 5 2 9",       // no token
            "7 1700000000123 5 2 9  h",    // empty token
            "7 -1 5 2 9 ab h",             // negative mark
            "7 +1700000000123 5 2 9 ab h", // a sign no encoder writes
            "7 17000000001x3 5 2 9 ab h",
            "7 99999999999999999999 5 2 9 ab h", // past u64
            "t 7 1700000000123 5 2 9 ab 3 4 h",  // a time missing: the holder read as one
            "t 7 1700000000123 5 2 9 ab 3 4 +1 h",
            "t 7 1700000000123 5 2 9 ab 3 4 -- h",
            "t 7 1700000000123 5 2 9 ab 3 4 -9223372036854775809 h",
            "t 7 1700000000123 5 2 9 ab 3 x - h",
            "t 7 1700000000123 5 2 9 ab",
            "t7 1700000000123 5 2 9 ab - - - h",
            "x 7 1700000000123 5 2 9 ab - - - h",
        ] {
            assert_eq!(Record::decode(garbled), None, "{garbled:?}");
        }
        for garbled in ["", "3", "3 4 5", "3 4 ", " 3 4", "3 -4", "x 4"] {
            assert_eq!(Marker::decode(garbled), None, "{garbled:?}");
        }
    }
}
