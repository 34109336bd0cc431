//! The preset layouts, with where each comes from.

use crate::{Error, FieldOrder, Layout};

/// 2010-11-04T01:42:54.657Z, Twitter's snowflake epoch.
pub const TWITTER_EPOCH_MS: u64 = 1_288_834_974_657;
/// 2015-01-01T00:00:00Z, Discord's epoch.
pub const DISCORD_EPOCH_MS: u64 = 1_420_070_400_000;
/// 2014-09-01T00:00:00Z, sonyflake's default start time.
pub const SONYFLAKE_EPOCH_MS: u64 = 1_409_529_600_000;
/// 2020-01-01T00:00:00Z, the epoch of ferroflake's own layouts (js53, js53ms, sharded).
pub const FERROFLAKE_EPOCH_MS: u64 = 1_577_836_800_000;

const fn preset(
    time_bits: u8,
    node_bits: u8,
    sequence_bits: u8,
    shard_bits: u8,
    tick_ms: u64,
    epoch_ms: u64,
    order: FieldOrder,
) -> Layout {
    Layout {
        time_bits,
        node_bits,
        sequence_bits,
        shard_bits,
        order,
        tick_ms,
        epoch_ms,
    }
}

impl Layout {
    /// The names [`Layout::from_name`] accepts, one per preset.
    pub const PRESET_NAMES: [&'static str; 6] = [
        "twitter",
        "discord",
        "sonyflake",
        "js53",
        "js53ms",
        "sharded",
    ];

    /// Twitter's snowflake: 41 time / 10 node / 12 sequence, 1 ms, epoch 1288834974657.
    ///
    /// Source: Twitter's 2010 snowflake announcement and its `IdWorker`. 4,096,000 IDs/s per
    /// node until 2080-07-10. The 10 node bits are often split as 5 datacenter + 5 worker:
    /// see [`Layout::twitter_node`].
    pub const fn twitter() -> Layout {
        preset(
            41,
            10,
            12,
            0,
            1,
            TWITTER_EPOCH_MS,
            FieldOrder::NodeThenSequence,
        )
    }

    /// Discord's snowflake: 10 node (5 worker + 5 process) / 12 increment, 1 ms, epoch
    /// 2015-01-01.
    ///
    /// Source: Discord's API reference ("Snowflakes"), which draws a 42-bit timestamp in an
    /// unsigned 64-bit integer. ferroflake keeps the sign bit 0, so the time field here is
    /// the low 41 of those 42 bits: every Discord ID made before 2084-09-06 (when Discord's
    /// own IDs would first set bit 63) encodes and decodes identically.
    pub const fn discord() -> Layout {
        preset(
            41,
            10,
            12,
            0,
            1,
            DISCORD_EPOCH_MS,
            FieldOrder::NodeThenSequence,
        )
    }

    /// sonyflake: 39 time in 10 ms ticks / 8 sequence / 16 machine (machine lowest), epoch
    /// 2014-09-01T00:00:00Z.
    ///
    /// Source: sony/sonyflake's README. 25,600 IDs/s per machine, until 2188.
    pub const fn sonyflake() -> Layout {
        preset(
            39,
            16,
            8,
            0,
            10,
            SONYFLAKE_EPOCH_MS,
            FieldOrder::SequenceThenNode,
        )
    }

    /// The classic 53-bit JavaScript-safe layout: 32 time in seconds / 8 node / 12 sequence,
    /// epoch 2020-01-01. Every ID is at most 2^53 − 1, so a JS `number` holds it exactly.
    ///
    /// Trade-off: 256 nodes and a life until 2156, but only 4,096 IDs/s per node and
    /// second-level time resolution. Use [`Layout::js53ms`] for higher rates.
    pub const fn js53() -> Layout {
        preset(
            32,
            8,
            12,
            0,
            1000,
            FERROFLAKE_EPOCH_MS,
            FieldOrder::NodeThenSequence,
        )
    }

    /// A JavaScript-safe layout with millisecond ticks: 41 time / 4 node / 8 sequence
    /// (53 bits), epoch 2020-01-01.
    ///
    /// Trade-off against [`Layout::js53`]: 256,000 IDs/s per node (62× more) and ms
    /// ordering, but only 16 nodes and a life until 2089-09-06.
    pub const fn js53ms() -> Layout {
        preset(
            41,
            4,
            8,
            0,
            1,
            FERROFLAKE_EPOCH_MS,
            FieldOrder::NodeThenSequence,
        )
    }

    /// Shard-suffix order IDs: 41 time / 6 node / 12 sequence / 4 shard, 1 ms, epoch
    /// 2020-01-01.
    ///
    /// The low 4 bits carry a shard (for example `user_id & 15`), so an order ID names the
    /// database shard it lives on. 64 nodes, 4,096,000 IDs/s per node, until 2089-09-06.
    pub const fn sharded() -> Layout {
        preset(
            41,
            6,
            12,
            4,
            1,
            FERROFLAKE_EPOCH_MS,
            FieldOrder::NodeThenSequence,
        )
    }

    /// The presets, in the order of [`Layout::PRESET_NAMES`].
    const PRESETS: [Layout; 6] = [
        Self::twitter(),
        Self::discord(),
        Self::sonyflake(),
        Self::js53(),
        Self::js53ms(),
        Self::sharded(),
    ];

    /// A preset by name: one of [`Layout::PRESET_NAMES`] (ASCII case-insensitive). Text
    /// that may also be a custom layout's spelling goes to [`Layout::parse`].
    ///
    /// # Errors
    /// [`Error::UnknownLayout`].
    pub fn from_name(name: &str) -> Result<Layout, Error> {
        Self::PRESET_NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .map(|i| Self::PRESETS[i])
            .ok_or(Error::UnknownLayout)
    }

    /// The name of the preset equal to this layout, or `None` for a custom one (whose
    /// `Display` spelling names it instead).
    ///
    /// ```
    /// use ferroflake::Layout;
    /// assert_eq!(Layout::parse("41/10/12@2015-01-01T00:00:00Z")?.preset_name(), Some("discord"));
    /// assert_eq!(Layout::parse("41/8/14@2015-01-01T00:00:00Z")?.preset_name(), None);
    /// # Ok::<(), ferroflake::Error>(())
    /// ```
    pub fn preset_name(&self) -> Option<&'static str> {
        Self::PRESETS
            .iter()
            .position(|preset| preset == self)
            .map(|i| Self::PRESET_NAMES[i])
    }

    /// A Twitter node id from its datacenter (5 bits) and worker (5 bits) halves.
    ///
    /// ```
    /// assert_eq!(ferroflake::Layout::twitter_node(3, 7), Ok(3 << 5 | 7));
    /// ```
    ///
    /// # Errors
    /// [`Error::NodeOutOfRange`] if either half exceeds 31.
    pub const fn twitter_node(datacenter: u64, worker: u64) -> Result<u64, Error> {
        if datacenter > 31 {
            return Err(Error::NodeOutOfRange {
                node: datacenter,
                max: 31,
            });
        }
        if worker > 31 {
            return Err(Error::NodeOutOfRange {
                node: worker,
                max: 31,
            });
        }
        Ok(datacenter << 5 | worker)
    }
}
