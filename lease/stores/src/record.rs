//! The record formats the Redis and ZooKeeper registries share: a namespace marker and
//! one record per node id, as short space-separated text (times on the store's clock, ms).

use ferroflake_lease::protocol::{self, Candidate, RecordView, Standing};
use ferroflake_lease::{LeaseRequest, NodeState, NodeView};

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
}

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
    }

    pub fn encode(&self) -> String {
        format!(
            "{} {} {} {} {} {} {}",
            self.epoch,
            self.mark,
            self.expires_ms,
            self.quarantine_ms,
            self.floor_until_ms,
            self.token.as_deref().unwrap_or("-"),
            self.holder
        )
    }

    /// `None` unless `raw` has all seven fields [`Record::encode`] writes (the holder, last,
    /// may be empty or hold spaces): a truncated record is garbled, not a record with
    /// zeros or no holder.
    pub fn decode(raw: &str) -> Option<Record> {
        let mut parts = raw.splitn(7, ' ');
        let mut next_number = || number(parts.next()?);
        let (epoch, mark, expires_ms, quarantine_ms, floor_until_ms) = (
            next_number()?,
            next_number()?,
            next_number()?,
            next_number()?,
            next_number()?,
        );
        let token = parts.next().filter(|t| !t.is_empty())?;
        let holder = parts.next()?;
        Some(Record {
            epoch,
            mark,
            expires_ms,
            quarantine_ms,
            floor_until_ms,
            token: (token != "-").then(|| token.to_owned()),
            holder: holder.to_owned(),
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
        }
    }

    /// This record renewed at `now_ms` for `ttl`, its mark raised to `high_water_ms`
    /// (never lowered).
    pub fn renewed(&self, now_ms: u64, ttl: std::time::Duration, high_water_ms: u64) -> Record {
        Record {
            expires_ms: now_ms.saturating_add(protocol::ms(ttl)),
            mark: self.mark.max(high_water_ms),
            ..self.clone()
        }
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
        };
        assert_eq!(Record::decode(&record.encode()), Some(record.clone()));
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
        ] {
            assert_eq!(Record::decode(garbled), None, "{garbled:?}");
        }
        for garbled in ["", "3", "3 4 5", "3 4 ", " 3 4", "3 -4", "x 4"] {
            assert_eq!(Marker::decode(garbled), None, "{garbled:?}");
        }
    }
}
