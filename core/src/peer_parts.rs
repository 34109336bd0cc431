//! An ID's parts as other ID libraries show them: [`PeerParts`].

use core::fmt;

use crate::layout_spec::UtcFields;
use crate::{Error, Layout, Parts};

/// An ID's parts as another ID library shows them, so that tooling written for that
/// library reads ferroflake's decode output unchanged.
///
/// Each form is one line of JSON, written by `Display` (no allocation), with the peer's own
/// field names and value types:
///
/// | form | what it mirrors | fields |
/// |---|---|---|
/// | `bwmarrin` | bwmarrin/snowflake's `ID.Time()`, `Node()`, `Step()`; the ID as its JSON form | `id` (quoted decimal), `time` (Unix ms), `node`, `step` |
/// | `sonyflake` | sonyflake v1's `Decompose` as Go's `json.Marshal` writes it (keys sorted) | `id`, `machine-id`, `msb`, `sequence`, `time` (ticks since the start time) |
/// | `sonyflake-v2` | sonyflake v2's `Decompose` | `id`, `machine`, `sequence`, `time` (ticks since the start time) |
/// | `leaf` | Leaf's `/decodeSnowflakeId`, keys in its `HashMap`'s order | `workerId`, `sequenceId`, `timestamp` as `MS(yyyy-MM-dd HH:mm:ss.SSS)`, all strings |
/// | `cosid` | CosId's `SnowflakeIdState`, its `LocalDateTime` as Java's ISO form | `id`, `machineId`, `sequence`, `timestamp`, `friendlyId` (`yyyyMMddHHmmssSSS-MACHINE-SEQUENCE`) |
///
/// The layout says where the parts are; the form only names them. Leaf and CosId print
/// times in their server's time zone; these forms always use UTC.
///
/// ```
/// use ferroflake::{Layout, PeerParts};
/// let leaf = PeerParts::Leaf.show(&Layout::twitter(), 1_541_815_603_606_036_480)?;
/// assert_eq!(
///     leaf.to_string(),
///     r#"{"workerId":"378","sequenceId":"0","timestamp":"1656432460105(2022-06-28 16:07:40.105)"}"#
/// );
/// # Ok::<(), ferroflake::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeerParts {
    /// bwmarrin/snowflake (Go).
    Bwmarrin,
    /// sony/sonyflake v1 (Go).
    Sonyflake,
    /// sony/sonyflake v2 (Go).
    SonyflakeV2,
    /// Meituan's Leaf, snowflake mode.
    Leaf,
    /// CosId's snowflake IDs.
    Cosid,
}

impl PeerParts {
    /// Every form, in the order of [`PeerParts::NAMES`].
    pub const ALL: [PeerParts; 5] = [
        PeerParts::Bwmarrin,
        PeerParts::Sonyflake,
        PeerParts::SonyflakeV2,
        PeerParts::Leaf,
        PeerParts::Cosid,
    ];

    /// The names [`PeerParts::from_name`] reads, as the CLI's `--as` and the service's
    /// `as=` take them.
    pub const NAMES: [&'static str; 5] = ["bwmarrin", "sonyflake", "sonyflake-v2", "leaf", "cosid"];

    /// The form's name.
    pub const fn name(self) -> &'static str {
        match self {
            PeerParts::Bwmarrin => "bwmarrin",
            PeerParts::Sonyflake => "sonyflake",
            PeerParts::SonyflakeV2 => "sonyflake-v2",
            PeerParts::Leaf => "leaf",
            PeerParts::Cosid => "cosid",
        }
    }

    /// The form called `name`, exactly as [`PeerParts::NAMES`] spells it.
    pub fn from_name(name: &str) -> Option<PeerParts> {
        PeerParts::ALL.into_iter().find(|p| p.name() == name)
    }

    /// `id`, decoded with `layout`, in this form.
    ///
    /// # Errors
    /// [`Error::IdOutOfRange`] for an ID wider than the layout, as [`Layout::decode`].
    pub fn show(self, layout: &Layout, id: u64) -> Result<PeerView, Error> {
        let parts = layout.decode(id)?;
        Ok(PeerView {
            peer: self,
            id,
            ticks: id >> layout.time_shift(),
            parts,
        })
    }
}

impl fmt::Display for PeerParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An ID's parts in one peer's form: one line of JSON from `Display`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerView {
    peer: PeerParts,
    id: u64,
    /// The raw time field: ticks since the layout's epoch.
    ticks: u64,
    parts: Parts,
}

impl PeerView {
    /// The form this view is in.
    pub const fn peer(&self) -> PeerParts {
        self.peer
    }

    /// The parts, as [`Layout::decode`] gives them.
    pub const fn parts(&self) -> Parts {
        self.parts
    }
}

impl fmt::Display for PeerView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Parts {
            timestamp_ms,
            node,
            sequence,
            ..
        } = self.parts;
        let (id, ticks) = (self.id, self.ticks);
        let t = UtcFields::of(timestamp_ms);
        match self.peer {
            PeerParts::Bwmarrin => write!(
                f,
                r#"{{"id":"{id}","time":{timestamp_ms},"node":{node},"step":{sequence}}}"#
            ),
            PeerParts::Sonyflake => write!(
                f,
                r#"{{"id":{id},"machine-id":{node},"msb":{},"sequence":{sequence},"time":{ticks}}}"#,
                id >> 63
            ),
            PeerParts::SonyflakeV2 => write!(
                f,
                r#"{{"id":{id},"machine":{node},"sequence":{sequence},"time":{ticks}}}"#
            ),
            PeerParts::Leaf => {
                // The keys in the order Leaf's HashMap of them iterates.
                write!(
                    f,
                    r#"{{"workerId":"{node}","sequenceId":"{sequence}","timestamp":"{timestamp_ms}("#
                )?;
                t.write(f, ["-", " ", ":"])?;
                write!(f, r#".{:03})"}}"#, t.milli)
            }
            PeerParts::Cosid => {
                // SnowflakeIdState's fields in their order; the LocalDateTime as Java's
                // ISO_LOCAL_DATE_TIME writes it (no zero fraction, no trailing zeros).
                write!(
                    f,
                    r#"{{"id":{id},"machineId":{node},"sequence":{sequence},"timestamp":""#
                )?;
                t.write(f, ["-", "T", ":"])?;
                match t.milli {
                    0 => {}
                    ms if ms % 100 == 0 => write!(f, ".{}", ms / 100)?,
                    ms if ms % 10 == 0 => write!(f, ".{:02}", ms / 10)?,
                    ms => write!(f, ".{ms:03}")?,
                }
                f.write_str(r#"","friendlyId":""#)?;
                t.write(f, ["", "", ""])?;
                write!(f, r#"{:03}-{node}-{sequence}"}}"#, t.milli)
            }
        }
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use std::format;
    use std::string::{String, ToString};

    fn shown(peer: PeerParts, layout: &Layout, id: u64) -> String {
        peer.show(layout, id).unwrap().to_string()
    }

    #[test]
    fn names_read_back() {
        for (peer, name) in PeerParts::ALL.into_iter().zip(PeerParts::NAMES) {
            assert_eq!(peer.name(), name);
            assert_eq!(PeerParts::from_name(name), Some(peer));
        }
        assert_eq!(PeerParts::from_name("Leaf"), None);
        assert_eq!(PeerParts::from_name(""), None);
    }

    #[test]
    fn each_form_names_the_parts_its_peer_names() {
        let sonyflake = Layout::sonyflake();
        // 39/16/8: time 3 ticks, sequence 2, machine 7.
        let id = 3 << 24 | 2 << 16 | 7;
        assert_eq!(
            shown(PeerParts::Sonyflake, &sonyflake, id),
            r#"{"id":50462727,"machine-id":7,"msb":0,"sequence":2,"time":3}"#
        );
        assert_eq!(
            shown(PeerParts::SonyflakeV2, &sonyflake, id),
            r#"{"id":50462727,"machine":7,"sequence":2,"time":3}"#
        );
        let twitter = Layout::twitter();
        let id = twitter
            .compose(&Parts {
                timestamp_ms: 1_656_432_460_105,
                node: 5,
                sequence: 9,
                shard: 0,
            })
            .unwrap();
        assert_eq!(
            shown(PeerParts::Bwmarrin, &twitter, id),
            r#"{"id":"1541815603604508681","time":1656432460105,"node":5,"step":9}"#
        );
        assert_eq!(
            shown(PeerParts::Cosid, &twitter, id),
            concat!(
                r#"{"id":1541815603604508681,"machineId":5,"sequence":9,"#,
                r#""timestamp":"2022-06-28T16:07:40.105","friendlyId":"20220628160740105-5-9"}"#
            )
        );
        assert_eq!(
            shown(PeerParts::Leaf, &twitter, id),
            r#"{"workerId":"5","sequenceId":"9","timestamp":"1656432460105(2022-06-28 16:07:40.105)"}"#
        );
    }

    #[test]
    fn times_past_i64_show_their_real_date_and_past_u64_are_refused() {
        // An epoch at i64::MAX ms: its times need more than an i64, and a year of 9 digits.
        let far = Layout::parse("41/10/12@9223372036854775807").unwrap();
        let leaf = shown(PeerParts::Leaf, &far, 1 << 22);
        assert!(
            leaf.ends_with(r#""timestamp":"9223372036854775808(292278994-08-17 07:12:55.808)"}"#),
            "{leaf}"
        );
        // Ticks so long that the ID's tick starts past u64 ms: no generator made it.
        let huge = Layout::parse("41/10/12@0,tick=10000000000000ms").unwrap();
        for peer in PeerParts::ALL {
            assert_eq!(
                peer.show(&huge, huge.max_id()),
                Err(Error::TimestampOutOfRange {
                    timestamp_ms: u64::MAX
                })
            );
        }
    }

    #[test]
    fn cosids_timestamp_drops_the_fraction_java_would_not_print() {
        let twitter = Layout::twitter();
        for (ms, shown_as) in [(0, "05"), (100, "05.1"), (120, "05.12"), (192, "05.192")] {
            let id = twitter
                .compose(&Parts {
                    timestamp_ms: 1_700_000_045_000 + ms,
                    ..Parts::default()
                })
                .unwrap();
            let text = shown(PeerParts::Cosid, &twitter, id);
            let expected = format!(r#""timestamp":"2023-11-14T22:14:{shown_as}","friendlyId""#);
            assert!(text.contains(&expected), "{text}");
            assert!(text.contains(&format!(r#""friendlyId":"20231114221405{ms:03}-0-0""#)));
        }
    }

    #[test]
    fn every_form_is_json_and_refuses_what_decode_refuses() {
        let js53 = Layout::js53();
        for peer in PeerParts::ALL {
            let text = shown(peer, &js53, js53.max_id());
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert!(value.is_object(), "{peer}: {text}");
            assert_eq!(
                peer.show(&js53, js53.max_id() + 1),
                Err(Error::IdOutOfRange {
                    id: js53.max_id() + 1,
                    bits: js53.total_bits()
                })
            );
        }
    }
}
