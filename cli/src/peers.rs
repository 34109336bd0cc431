//! `ferroflake layout --like PEER`: the layout spelling that decodes another ID library's
//! IDs, from that library's defaults and the settings it lets its users change.
//!
//! Defaults, as each library documents or sets them:
//! - bwmarrin/snowflake: NodeBits 10, StepBits 12, Epoch 1288834974657; the time takes
//!   the remaining bits, node above step.
//! - sonyflake (v1): 39 bits of 10 ms time, 8 sequence, 16 machine id (lowest), start
//!   2014-09-01T00:00:00Z.
//! - sonyflake v2: BitsSequence 8, BitsMachineID 16, TimeUnit 10 ms, StartTime
//!   2025-01-01T00:00:00Z (v2 moved it from v1's); the time takes the remaining bits,
//!   sequence above machine id.
//! - Leaf (SnowflakeIDGenImpl), Hutool (Snowflake), MyBatis-Plus (Sequence): 41/10/12 from
//!   Twitter's epoch 1288834974657; Hutool and MyBatis-Plus split the node into a 5-bit
//!   datacenter id above a 5-bit worker id.
//! - ShardingSphere (SNOWFLAKE): 41/10/12 from 2016-11-01 00:00 in the JVM's time zone.
//! - CosId (MillisecondSnowflakeId): 41/10/12 from 2019-12-24T16:00:00Z.

use std::io::Write;

use clap::ValueEnum;
use ferroflake::{FieldOrder, Layout, TWITTER_EPOCH_MS};

use crate::args::LayoutArgs;
use crate::failure::{warn, Failure};
use crate::iso::instant_ms;

/// The libraries `--like` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Peer {
    /// bwmarrin/snowflake (Go).
    Bwmarrin,
    /// sony/sonyflake v1 (Go).
    Sonyflake,
    /// sony/sonyflake v2 (Go), with its BitsSequence, BitsMachineID and TimeUnit.
    SonyflakeV2,
    /// Meituan's Leaf, snowflake mode.
    Leaf,
    /// Hutool's Snowflake.
    Hutool,
    /// MyBatis-Plus's Sequence (IdWorker).
    MybatisPlus,
    /// Apache ShardingSphere's SNOWFLAKE key generator.
    Shardingsphere,
    /// CosId's MillisecondSnowflakeId.
    Cosid,
    /// Apache Seata's IdWorker: no layout matches.
    Seata,
    /// yitter/IdGenerator: no layout matches.
    Yitter,
}

const SONYFLAKE_START: &str = "2014-09-01T00:00:00Z";
const SONYFLAKE_V2_START: &str = "2025-01-01T00:00:00Z";

/// Why no layout reads a peer's IDs.
fn no_layout_because(peer: Peer) -> Failure {
    let why = match peer {
        Peer::Seata => {
            "Seata's IdWorker puts the 10-bit node id above the timestamp and sequence (node | \
             time | sequence), so that IDs grow within one node; every ferroflake layout keeps \
             the time highest, so no layout decodes Seata's IDs"
        }
        _ => {
            "yitter/IdGenerator reserves its lowest sequence numbers (0 to 4 by default) for \
             clock rollback and, when a tick's sequence runs out, takes the next ticks' \
             sequences ahead of time: its time field is not when an ID was made and its \
             sequence is not a plain counter, so no layout describes its IDs"
        }
    };
    Failure::Run(format!("no layout matches {}: {why}", name(peer)))
}

/// The peer's settings given on the command line, refusing those the peer does not have.
fn check_settings(peer: Peer, args: &LayoutArgs) -> Result<(), Failure> {
    let given = [
        ("--node-bits", args.node_bits.is_some(), Peer::Bwmarrin),
        ("--step-bits", args.step_bits.is_some(), Peer::Bwmarrin),
        (
            "--bits-sequence",
            args.bits_sequence.is_some(),
            Peer::SonyflakeV2,
        ),
        (
            "--bits-machine-id",
            args.bits_machine_id.is_some(),
            Peer::SonyflakeV2,
        ),
        ("--time-unit", args.time_unit.is_some(), Peer::SonyflakeV2),
    ];
    for (flag, is_given, owner) in given {
        if is_given && peer != owner {
            return Err(Failure::Input(format!(
                "{flag} is a setting of --like {}, not of --like {}",
                name(owner),
                name(peer)
            )));
        }
    }
    Ok(())
}

fn name(peer: Peer) -> String {
    peer.to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

/// A Go-style duration in whole milliseconds: `10ms` or `1s`.
fn time_unit_ms(text: &str) -> Result<u64, Failure> {
    let (digits, scale) = match text.strip_suffix("ms") {
        Some(digits) => (digits, 1),
        None => (text.strip_suffix('s').unwrap_or("x"), 1000),
    };
    digits
        .parse::<u64>()
        .ok()
        .filter(|_| digits.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| {
            Failure::Input(format!(
                "--time-unit {text:?}: expected whole milliseconds, as 10ms or 1s"
            ))
        })
}

/// The peer's layout: widths, tick and order from its settings, the epoch (its own or
/// `--epoch`) read by core as part of the spelling.
pub fn layout_of(peer: Peer, args: &LayoutArgs) -> Result<Layout, Failure> {
    check_settings(peer, args)?;
    let twitter_epoch = TWITTER_EPOCH_MS.to_string();
    let (time, node, sequence, tick_ms, order, epoch) = match peer {
        Peer::Bwmarrin => {
            let node = args.node_bits.unwrap_or(10);
            let step = args.step_bits.unwrap_or(12);
            let time = 63u32.saturating_sub(node.saturating_add(step));
            (
                time,
                node,
                step,
                1,
                FieldOrder::NodeThenSequence,
                twitter_epoch,
            )
        }
        Peer::Sonyflake => (
            39,
            16,
            8,
            10,
            FieldOrder::SequenceThenNode,
            SONYFLAKE_START.into(),
        ),
        Peer::SonyflakeV2 => {
            let sequence = args.bits_sequence.unwrap_or(8);
            let machine = args.bits_machine_id.unwrap_or(16);
            let tick = args.time_unit.as_deref().map_or(Ok(10), time_unit_ms)?;
            let time = 63u32.saturating_sub(sequence.saturating_add(machine));
            (
                time,
                machine,
                sequence,
                tick,
                FieldOrder::SequenceThenNode,
                SONYFLAKE_V2_START.into(),
            )
        }
        Peer::Leaf | Peer::Hutool | Peer::MybatisPlus => {
            (41, 10, 12, 1, FieldOrder::NodeThenSequence, twitter_epoch)
        }
        Peer::Shardingsphere => (
            41,
            10,
            12,
            1,
            FieldOrder::NodeThenSequence,
            "2016-11-01T00:00:00Z".into(),
        ),
        Peer::Cosid => (
            41,
            10,
            12,
            1,
            FieldOrder::NodeThenSequence,
            "1577203200000".into(),
        ),
        Peer::Seata | Peer::Yitter => return Err(no_layout_because(peer)),
    };
    let epoch = match &args.epoch {
        Some(given) => {
            instant_ms("--epoch", given)?;
            given.clone()
        }
        None => epoch,
    };
    let spelling = format!(
        "{time}/{node}/{sequence}@{epoch},tick={tick_ms}ms,order={}",
        order.name()
    );
    Layout::parse(&spelling).map_err(|e| {
        let message = format!("--like {} gives no valid layout: {e}", name(peer));
        Failure::from_core(&e, message)
    })
}

/// `layout --like PEER`: the spelling on stdout, with what to keep in mind on stderr.
pub fn run(peer: Peer, args: &LayoutArgs, out: &mut impl Write) -> Result<(), Failure> {
    let layout = layout_of(peer, args)?;
    match peer {
        Peer::Shardingsphere if args.epoch.is_none() => warn(
            "note: ShardingSphere counts from 2016-11-01 00:00 in its JVM's time zone; this is that \
             midnight in UTC: give --epoch for another zone",
        ),
        Peer::Hutool | Peer::MybatisPlus => warn(
            "note: the node is the 5-bit datacenter id above the 5-bit worker id: \
             datacenterId * 32 + workerId",
        ),
        _ => {}
    }
    writeln!(out, "{layout}")?;
    Ok(())
}
