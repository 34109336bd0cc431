//! The record formats the Redis and ZooKeeper registries share: a namespace marker and
//! one record per node id, as short space-separated text (times on the store's clock, ms).

use ferroflake_lease::protocol::{self, Candidate, RecordView, Standing};
use ferroflake_lease::LeaseRequest;

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

    pub fn decode(raw: &str) -> Option<Marker> {
        let mut parts = raw.split(' ');
        Some(Marker {
            floor_until_ms: parts.next()?.parse().ok()?,
            claimed: parts.next()?.parse().ok()?,
        })
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

    pub fn decode(raw: &str) -> Option<Record> {
        let mut parts = raw.splitn(7, ' ');
        let mut number = || parts.next()?.parse::<u64>().ok();
        let (epoch, mark, expires_ms, quarantine_ms, floor_until_ms) =
            (number()?, number()?, number()?, number()?, number()?);
        let token = parts.next()?;
        Some(Record {
            epoch,
            mark,
            expires_ms,
            quarantine_ms,
            floor_until_ms,
            token: (token != "-").then(|| token.to_owned()),
            holder: parts.next().unwrap_or("").to_owned(),
        })
    }

    /// The record of a new claim under `token` at store time `now_ms` (`now_us` for the
    /// epoch), over the id's `previous` record. A missing record of an id claimed before
    /// (`was_claimed`) was lost, not new: the claim gets a floor of its own, stored in the
    /// record so that a later claimant still sees it.
    pub fn claimed(
        previous: Option<&Record>,
        was_claimed: bool,
        request: &LeaseRequest,
        token: &str,
        now_ms: u64,
        now_us: u64,
    ) -> Record {
        let (epoch, mark, floor_until_ms) = match previous {
            Some(r) => (r.epoch, r.mark, r.floor_until_ms),
            None if was_claimed => (0, 0, protocol::floor_until(now_ms, request.floor_window())),
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
}
