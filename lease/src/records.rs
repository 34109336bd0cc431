//! The embedded registry's records: one entry per node id ever claimed, and the rules for
//! claiming, renewing and releasing them. Pure data and logic; `embedded.rs` does the I/O.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::protocol::Standing;
use crate::protocol::{self, Candidate, Loss, RecordView, Reservation, NEVER_MS, RESERVED_TOKEN};
use crate::Renewal;

/// The whole records file.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Records {
    /// Format version, so a future layout change is detected instead of misread.
    pub format: u32,
    /// The last epoch handed out, for any id (see [`protocol::next_epoch`]).
    pub next_epoch: u64,
    /// The registry's write count, which the lock file repeats (see `witness`): 0 in a
    /// file an earlier version wrote.
    #[serde(default)]
    pub generation: u64,
    /// The longest lost-records window any claim asked for, in ms (see `witness`).
    #[serde(default)]
    pub floor_window_ms: u64,
    /// The lock file's change time (ns) right after its witness was written with these
    /// records: a lock file copied back from a backup, by any tool, has a later one. 0 in a
    /// file an earlier version wrote.
    #[serde(default)]
    pub lock_ctime_ns: u64,
    /// Host-clock ms until which claims wait: set when the records were found missing
    /// (a new, deleted or moved-aside file), since a holder of the lost records may still
    /// be issuing until then.
    #[serde(default)]
    pub floor_until_ms: u64,
    /// The boot `floor_until_ms` belongs to (a floor from an earlier boot has passed: every
    /// holder of that boot is gone).
    #[serde(default)]
    pub floor_boot_id: String,
    /// Node id → its record. Entries stay after release: they carry the high-water mark.
    pub nodes: BTreeMap<u64, NodeRecord>,
}

/// One node id's record.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct NodeRecord {
    /// The current holder's owner token; `None` once released.
    pub token: Option<String>,
    /// Who holds (or last held) it, for operators.
    pub holder: String,
    /// The epoch of the current (or last) claim.
    pub epoch: u64,
    /// Host-clock ms (see `host_clock`) at which the claim lapses unless renewed.
    pub expires_ms: u64,
    /// How long after `expires_ms` the id stays unclaimable (the holder's quarantine).
    pub quarantine_ms: u64,
    /// The boot the times above belong to.
    pub boot_id: String,
    /// The highest Unix ms up to which the holder may issue (reserved ahead, raised on
    /// renewal, set to the last issued tick's end on release).
    pub high_water_ms: u64,
    /// Host-clock ms of the claim (of `boot_id`). Left out of the file when `None` (a
    /// record written before it was kept), so that such a file's digest (see `witness`)
    /// does not change on reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<u64>,
    /// Host-clock ms of the last renewal (of `boot_id`); `None` before the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renewed_ms: Option<u64>,
    /// The holder's clock skew at its last renewal, ms (see `Renewal::clock_skew_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_skew_ms: Option<i64>,
}

/// The file format this code writes and reads.
pub const FORMAT: u32 = 1;

impl NodeRecord {
    /// This record's standing at `now_ms` on the host clock of boot `boot_id`.
    pub fn standing(&self, now_ms: u64, boot_id: &str) -> Standing {
        // A reservation outlives boots: the generator it is for does not run here.
        let held = self.token.is_some()
            && (self.boot_id == boot_id || self.token.as_deref() == Some(RESERVED_TOKEN));
        protocol::standing(held, self.expires_ms, self.quarantine_ms, now_ms)
    }

    /// The times recorded at the claim and the last renewal, as
    /// [`NodeView::with_times`](crate::NodeView::with_times) takes them: none for a
    /// record of another boot, whose host clock was another.
    pub fn times(&self, boot_id: &str) -> (Option<u64>, Option<u64>, Option<i64>) {
        if self.boot_id == boot_id {
            (self.since_ms, self.renewed_ms, self.clock_skew_ms)
        } else {
            (None, None, None)
        }
    }

    /// The record as the protocol's renewal check sees it: a record from an earlier boot
    /// has expired, whatever its numbers say.
    fn view(&self, boot_id: &str) -> RecordView<'_> {
        RecordView {
            token: self.token.as_deref(),
            expires_ms: if self.boot_id == boot_id || self.token.as_deref() == Some(RESERVED_TOKEN)
            {
                self.expires_ms
            } else {
                0
            },
        }
    }
}

/// What a claim asks for (the registry-independent part of a `LeaseRequest`).
pub struct Claim<'a> {
    pub ttl_ms: u64,
    pub quarantine_ms: u64,
    pub holder: &'a str,
    pub token: String,
    /// The registry's clock in microseconds (Unix), for the epoch.
    pub now_us: u64,
}

impl Records {
    /// The digest the lock file keeps of these records (see `witness`): of everything
    /// but `lock_ctime_ns`, which is known only once the lock file is written.
    pub fn digest(&self) -> u64 {
        let written = Records {
            lock_ctime_ns: 0,
            ..self.clone()
        };
        // Serialising plain numbers, strings and an ordered map cannot fail, and gives
        // the same bytes for the same records.
        let bytes = serde_json::to_vec(&written).unwrap_or_default();
        crate::witness::digest(&bytes)
    }

    /// Picks a claimable id below `node_count`: `prefer` if it is free, else one never
    /// claimed if any (lowest first), else the free one with the lowest high-water mark, so
    /// a new holder rarely has to wait for a previous holder's mark (see
    /// [`protocol::pick_node`]). `None` if every id is live or quarantined.
    pub fn pick_free(
        &self,
        node_count: u64,
        prefer: Option<u64>,
        now_ms: u64,
        boot_id: &str,
    ) -> Option<u64> {
        // The records are one file, lost whole or not at all: an id without a record was
        // never claimed.
        let never_claimed = (0..node_count).find(|id| !self.nodes.contains_key(id));
        let free = self
            .nodes
            .range(..node_count)
            .filter(|(_, r)| r.standing(now_ms, boot_id) == Standing::Free)
            .map(|(&id, r)| Candidate {
                id,
                mark_ms: r.high_water_ms,
                lost: false,
            });
        protocol::pick_node(prefer, never_claimed, free)
    }

    /// Starts a floor of `window` at `now_ms`: the records were found missing.
    pub fn start_floor(&mut self, now_ms: u64, boot_id: &str, window: std::time::Duration) {
        self.floor_until_ms = protocol::floor_until(now_ms, window);
        self.floor_boot_id = boot_id.to_owned();
    }

    /// How long a claim made now must wait before its holder issues: never longer than
    /// `window` (see [`protocol::floor_wait_within`]).
    pub fn floor_wait(
        &self,
        now_ms: u64,
        boot_id: &str,
        window: std::time::Duration,
    ) -> std::time::Duration {
        if self.floor_boot_id == boot_id {
            protocol::floor_wait_within(self.floor_until_ms, now_ms, window)
        } else {
            std::time::Duration::ZERO
        }
    }

    /// Whether these records were written by this registry at all: every write carries a
    /// claim or a floor, so a file with neither (an emptied or planted one) was not.
    pub fn ever_written(&self) -> bool {
        !self.nodes.is_empty() || !self.floor_boot_id.is_empty()
    }

    /// Claims `node_id` for `claim`; returns (epoch, previous high-water mark).
    pub fn claim(
        &mut self,
        node_id: u64,
        claim: Claim<'_>,
        now_ms: u64,
        boot_id: &str,
    ) -> (u64, u64) {
        let recorded = self
            .nodes
            .get(&node_id)
            .map_or(self.next_epoch, |r| r.epoch.max(self.next_epoch));
        let epoch = protocol::next_epoch(recorded, claim.now_us);
        self.next_epoch = epoch;
        let previous_high_water_ms = self.nodes.get(&node_id).map_or(0, |r| r.high_water_ms);
        self.nodes.insert(
            node_id,
            NodeRecord {
                token: Some(claim.token),
                holder: claim.holder.to_owned(),
                epoch,
                expires_ms: now_ms.saturating_add(claim.ttl_ms),
                quarantine_ms: claim.quarantine_ms,
                boot_id: boot_id.to_owned(),
                high_water_ms: previous_high_water_ms,
                since_ms: Some(now_ms),
                renewed_ms: None,
                clock_skew_ms: None,
            },
        );
        (epoch, previous_high_water_ms)
    }

    /// Reserves `node_id` for `holder` if [`protocol::reservation_over`] allows it,
    /// keeping its epoch and high-water mark.
    pub fn reserve(
        &mut self,
        node_id: u64,
        holder: &str,
        now_ms: u64,
        boot_id: &str,
    ) -> Reservation {
        let record = self.nodes.get(&node_id);
        let outcome = match record {
            None => Reservation::Made,
            Some(r) => protocol::reservation_over(r.token.as_deref(), r.standing(now_ms, boot_id)),
        };
        if outcome == Reservation::Made {
            let (epoch, high_water_ms) = record.map_or((0, 0), |r| (r.epoch, r.high_water_ms));
            self.nodes.insert(
                node_id,
                NodeRecord {
                    token: Some(RESERVED_TOKEN.to_owned()),
                    holder: holder.to_owned(),
                    epoch,
                    expires_ms: NEVER_MS,
                    quarantine_ms: 0,
                    boot_id: boot_id.to_owned(),
                    high_water_ms,
                    since_ms: Some(now_ms),
                    renewed_ms: None,
                    clock_skew_ms: None,
                },
            );
        }
        outcome
    }

    /// Extends a live claim held under `token`, recording when and the holder's clock
    /// skew, or says why it is not held.
    pub fn renew(
        &mut self,
        node_id: u64,
        token: &str,
        renewal: &Renewal,
        now_ms: u64,
        boot_id: &str,
    ) -> Result<(), Loss> {
        let floor_active = self.floor_boot_id == boot_id && self.floor_until_ms > now_ms;
        let record = self.nodes.get_mut(&node_id);
        protocol::prove_held(record.as_ref().map(|r| r.view(boot_id)), token, now_ms).map_err(
            // Another token under a floor: the records were lost and the id claimed afresh.
            |why| match why {
                Loss::Taken if floor_active => Loss::Missing,
                other => other,
            },
        )?;
        if let Some(r) = record {
            r.expires_ms = now_ms.saturating_add(protocol::ms(renewal.ttl));
            r.high_water_ms = r.high_water_ms.max(renewal.high_water_ms);
            r.renewed_ms = Some(now_ms);
            r.clock_skew_ms = renewal.clock_skew_ms;
        }
        Ok(())
    }

    /// Releases a claim held under `token` (live or lapsed but not yet taken), recording
    /// the holder's final mark: the holder has stopped issuing, so its mark is exact and
    /// may be below what it had reserved. `false` (nothing changed) if not held.
    pub fn release(&mut self, node_id: u64, token: &str, high_water_ms: u64) -> bool {
        match self.nodes.get_mut(&node_id) {
            Some(r) if r.token.as_deref() == Some(token) => {
                r.token = None;
                r.expires_ms = 0;
                r.high_water_ms = high_water_ms;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOT: &str = "boot-a";

    fn renewal(high_water_ms: u64) -> Renewal {
        Renewal::new(std::time::Duration::from_millis(100), high_water_ms)
    }

    fn claim(records: &mut Records, node_count: u64, now: u64, token: &str) -> Option<u64> {
        let id = records.pick_free(node_count, None, now, BOOT)?;
        records.claim(
            id,
            Claim {
                ttl_ms: 100,
                quarantine_ms: 50,
                holder: "t",
                token: token.into(),
                now_us: 0,
            },
            now,
            BOOT,
        );
        Some(id)
    }

    /// A claim of an earlier boot has lapsed (its holder ran on this host); a reservation
    /// has not: the generator it is for runs elsewhere.
    #[test]
    fn reservations_outlive_boots_and_claims_do_not() {
        let mut r = Records::default();
        claim(&mut r, 1, 1_000, "a").unwrap();
        assert_eq!(r.reserve(1, "old fleet", 1_000, BOOT), Reservation::Made);
        assert_eq!(r.reserve(0, "old fleet", 1_000, BOOT), Reservation::Refused);
        let later_boot = "boot-b";
        assert_eq!(r.pick_free(2, Some(1), 5, later_boot), Some(0));
        assert_eq!(r.reserve(1, "other", 5, later_boot), Reservation::Already);
        assert_eq!(
            r.nodes[&1].standing(u64::MAX - 1, later_boot),
            Standing::Live
        );
        assert!(r.release(1, RESERVED_TOKEN, 7));
        assert_eq!(r.pick_free(2, Some(1), 5, later_boot), Some(1));
    }

    #[test]
    fn standing_follows_ttl_then_quarantine() {
        let mut r = Records::default();
        claim(&mut r, 1, 1_000, "a").unwrap();
        let rec = &r.nodes[&0];
        assert_eq!(rec.standing(1_099, BOOT), Standing::Live);
        assert_eq!(rec.standing(1_100, BOOT), Standing::Quarantined);
        assert_eq!(rec.standing(1_149, BOOT), Standing::Quarantined);
        assert_eq!(rec.standing(1_150, BOOT), Standing::Free);
        assert_eq!(
            rec.standing(1_000, "boot-b"),
            Standing::Free,
            "a reboot frees every id"
        );
    }

    #[test]
    fn picks_never_claimed_then_lowest_mark() {
        let mut r = Records::default();
        assert_eq!(claim(&mut r, 3, 0, "a"), Some(0));
        assert_eq!(claim(&mut r, 3, 0, "b"), Some(1));
        assert!(r.release(0, "a", 500));
        assert!(r.release(1, "b", 200));
        // id 2 was never claimed: it wins over released ones.
        assert_eq!(r.pick_free(3, None, 0, BOOT), Some(2));
        assert_eq!(claim(&mut r, 3, 0, "c"), Some(2));
        // Then the released id with the lower mark.
        assert_eq!(r.pick_free(3, None, 0, BOOT), Some(1));
        assert_eq!(
            r.pick_free(1, None, 0, BOOT),
            Some(0),
            "only ids below node_count count"
        );
    }

    #[test]
    fn renew_checks_token_and_never_lowers_mark() {
        let mut r = Records::default();
        claim(&mut r, 1, 0, "a").unwrap();
        assert_eq!(r.renew(0, "a", &renewal(900), 50, BOOT), Ok(()));
        assert_eq!(r.renew(0, "a", &renewal(400), 60, BOOT), Ok(()));
        assert_eq!(r.nodes[&0].high_water_ms, 900);
        assert_eq!(
            r.renew(0, "forged", &renewal(1), 60, BOOT),
            Err(Loss::Taken)
        );
        assert_eq!(
            r.renew(0, "a", &renewal(1), 160, BOOT),
            Err(Loss::Expired),
            "expired claims are lost"
        );
        assert_eq!(r.renew(5, "a", &renewal(1), 60, BOOT), Err(Loss::Missing));
        assert_eq!(
            r.renew(0, "a", &renewal(1), 60, "boot-b"),
            Err(Loss::Expired),
            "a claim from an earlier boot is gone"
        );
    }

    #[test]
    fn claims_and_renewals_record_their_times() {
        let mut r = Records::default();
        claim(&mut r, 1, 1_000, "a").unwrap();
        assert_eq!(r.nodes[&0].times(BOOT), (Some(1_000), None, None));
        let skewed = Renewal {
            clock_skew_ms: Some(-7),
            ..renewal(5)
        };
        r.renew(0, "a", &skewed, 1_050, BOOT).unwrap();
        assert_eq!(
            r.nodes[&0].times(BOOT),
            (Some(1_000), Some(1_050), Some(-7))
        );
        r.renew(0, "a", &renewal(5), 1_060, BOOT).unwrap();
        assert_eq!(r.nodes[&0].times(BOOT), (Some(1_000), Some(1_060), None));
        assert_eq!(
            r.nodes[&0].times("boot-b"),
            (None, None, None),
            "another boot's clock"
        );
    }

    /// A record an earlier version wrote reads with no times and writes back byte for
    /// byte, so the records' digest (see `witness`) does not change on an upgrade.
    #[test]
    fn a_record_written_before_the_times_reads_and_writes_back_alike() {
        let old = r#"{"token":"a","holder":"h","epoch":1,"expires_ms":5,"quarantine_ms":2,"boot_id":"b","high_water_ms":0}"#;
        let record: NodeRecord = serde_json::from_str(old).unwrap();
        assert_eq!(record.times("b"), (None, None, None));
        assert_eq!(serde_json::to_string(&record).unwrap(), old);
    }
}
