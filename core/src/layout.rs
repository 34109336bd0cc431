//! Bit layouts: how time, node, sequence and shard share the 63 bits below the sign bit.

use crate::Error;

/// Which of node and sequence sits directly below the time field.
///
/// ```text
/// NodeThenSequence (Twitter):   0 | time | node | sequence | shard
/// SequenceThenNode (sonyflake): 0 | time | sequence | node | shard
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FieldOrder {
    /// Node above sequence, as in Twitter's snowflake.
    #[default]
    NodeThenSequence,
    /// Sequence above node (machine id lowest), as in sonyflake.
    SequenceThenNode,
}

impl FieldOrder {
    /// Both orders, in the order of [`NAMES`](Self::NAMES).
    pub const ALL: [FieldOrder; 2] = [FieldOrder::NodeThenSequence, FieldOrder::SequenceThenNode];

    /// The name of each order, for messages that list the valid ones.
    pub const NAMES: [&'static str; 2] = [Self::ALL[0].name(), Self::ALL[1].name()];

    /// The order's name, as the faces, configuration and `vectors.json` spell it:
    /// `node_then_sequence` or `sequence_then_node`.
    ///
    /// ```
    /// use ferroflake::FieldOrder;
    /// assert_eq!(FieldOrder::SequenceThenNode.name(), "sequence_then_node");
    /// for order in FieldOrder::ALL {
    ///     assert_eq!(FieldOrder::from_name(order.name()), Some(order));
    /// }
    /// assert_eq!(FieldOrder::from_name("Node_Then_Sequence"), None);
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            FieldOrder::NodeThenSequence => "node_then_sequence",
            FieldOrder::SequenceThenNode => "sequence_then_node",
        }
    }

    /// The order with this [`name`](Self::name) (exact, lower case), if any.
    pub fn from_name(name: &str) -> Option<FieldOrder> {
        Self::ALL.into_iter().find(|o| o.name() == name)
    }
}

/// A validated bit layout: field widths, tick, epoch and field order.
///
/// Build one with a preset ([`Layout::twitter`], [`Layout::sonyflake`], ...) or with
/// [`Layout::builder`]. Every `Layout` value satisfies: time ≥ 1 bit, sequence ≥ 1 bit,
/// total ≤ 63 bits, tick ≥ 1 ms, epoch ≥ 1970. Whether the epoch is in the future or the
/// time field already exhausted depends on "now", so [`Layout::check_usable_at`] (called by
/// the generator) decides that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    pub(crate) time_bits: u8,
    pub(crate) node_bits: u8,
    pub(crate) sequence_bits: u8,
    pub(crate) shard_bits: u8,
    pub(crate) order: FieldOrder,
    pub(crate) tick_ms: u64,
    pub(crate) epoch_ms: u64,
}

/// Builds a custom [`Layout`]; see [`Layout::builder`].
#[derive(Debug, Clone, Copy)]
#[must_use]
pub struct LayoutBuilder {
    time_bits: u32,
    node_bits: u32,
    sequence_bits: u32,
    shard_bits: u32,
    order: FieldOrder,
    tick_ms: u64,
    epoch_ms: i64,
}

impl LayoutBuilder {
    /// Shard bits, always the lowest field. Default 0.
    pub fn shard_bits(mut self, bits: u32) -> Self {
        self.shard_bits = bits;
        self
    }
    /// The time unit in whole milliseconds. Default 1.
    pub fn tick_ms(mut self, tick_ms: u64) -> Self {
        self.tick_ms = tick_ms;
        self
    }
    /// The epoch in ms since 1970-01-01T00:00:00Z. Default 0 (the Unix epoch).
    pub fn epoch_ms(mut self, epoch_ms: i64) -> Self {
        self.epoch_ms = epoch_ms;
        self
    }
    /// Which of node and sequence sits below time. Default [`FieldOrder::NodeThenSequence`].
    pub fn order(mut self, order: FieldOrder) -> Self {
        self.order = order;
        self
    }

    /// Validates and returns the layout.
    ///
    /// # Errors
    /// [`Error::TooManyBits`], [`Error::NoTimeBits`], [`Error::ZeroSequenceBits`],
    /// [`Error::ZeroTick`] or [`Error::EpochBeforeUnix`].
    pub fn build(self) -> Result<Layout, Error> {
        let total = self
            .time_bits
            .saturating_add(self.node_bits)
            .saturating_add(self.sequence_bits)
            .saturating_add(self.shard_bits);
        if total > 63 {
            return Err(Error::TooManyBits { total });
        }
        if self.time_bits == 0 {
            return Err(Error::NoTimeBits);
        }
        if self.sequence_bits == 0 {
            return Err(Error::ZeroSequenceBits);
        }
        if self.tick_ms == 0 {
            return Err(Error::ZeroTick);
        }
        if self.epoch_ms < 0 {
            return Err(Error::EpochBeforeUnix {
                epoch_ms: self.epoch_ms,
            });
        }
        // All widths are ≤ 63 here, so the casts are lossless.
        Ok(Layout {
            time_bits: self.time_bits as u8,
            node_bits: self.node_bits as u8,
            sequence_bits: self.sequence_bits as u8,
            shard_bits: self.shard_bits as u8,
            order: self.order,
            tick_ms: self.tick_ms,
            epoch_ms: self.epoch_ms as u64,
        })
    }
}

const fn mask(bits: u8) -> u64 {
    // bits ≤ 63, so the shift never overflows.
    (1u64 << bits) - 1
}

impl Layout {
    /// Starts a custom layout with the three required widths.
    ///
    /// ```
    /// use ferroflake::{FieldOrder, Layout};
    /// let layout = Layout::builder(39, 16, 8)
    ///     .tick_ms(10)
    ///     .epoch_ms(1_409_529_600_000)
    ///     .order(FieldOrder::SequenceThenNode)
    ///     .build()?;
    /// assert_eq!(layout, Layout::sonyflake());
    /// # Ok::<(), ferroflake::Error>(())
    /// ```
    pub fn builder(time_bits: u32, node_bits: u32, sequence_bits: u32) -> LayoutBuilder {
        LayoutBuilder {
            time_bits,
            node_bits,
            sequence_bits,
            shard_bits: 0,
            order: FieldOrder::NodeThenSequence,
            tick_ms: 1,
            epoch_ms: 0,
        }
    }

    /// Width of the time field.
    pub const fn time_bits(&self) -> u32 {
        self.time_bits as u32
    }
    /// Width of the node field.
    pub const fn node_bits(&self) -> u32 {
        self.node_bits as u32
    }
    /// Width of the sequence field.
    pub const fn sequence_bits(&self) -> u32 {
        self.sequence_bits as u32
    }
    /// Width of the shard field (the lowest bits).
    pub const fn shard_bits(&self) -> u32 {
        self.shard_bits as u32
    }
    /// Sum of all widths, at most 63.
    pub const fn total_bits(&self) -> u32 {
        (self.time_bits + self.node_bits + self.sequence_bits + self.shard_bits) as u32
    }
    /// The order of node and sequence.
    pub const fn order(&self) -> FieldOrder {
        self.order
    }
    /// The tick (time unit) in milliseconds.
    pub const fn tick_ms(&self) -> u64 {
        self.tick_ms
    }
    /// The epoch in milliseconds since the Unix epoch.
    pub const fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }
    /// The largest node id.
    pub const fn max_node(&self) -> u64 {
        mask(self.node_bits)
    }
    /// The largest sequence number within one tick.
    pub const fn max_sequence(&self) -> u64 {
        mask(self.sequence_bits)
    }
    /// The largest shard.
    pub const fn max_shard(&self) -> u64 {
        mask(self.shard_bits)
    }
    /// The largest tick count the time field holds.
    pub const fn max_tick(&self) -> u64 {
        mask(self.time_bits)
    }
    /// The largest ID this layout can produce (all bits set).
    pub const fn max_id(&self) -> u64 {
        mask(self.total_bits() as u8)
    }

    /// IDs per second one node can issue at most: 2^sequence_bits per tick (saturating at
    /// `u64::MAX` for sequence fields of 55 bits and more).
    pub const fn capacity_per_second(&self) -> u64 {
        let per_second = (self.max_sequence() as u128 + 1) * 1000 / self.tick_ms as u128;
        if per_second > u64::MAX as u128 {
            u64::MAX
        } else {
            per_second as u64
        }
    }

    /// The first instant, in Unix ms, that the time field cannot hold. IDs can be made for
    /// any time strictly before it. Saturates at `u64::MAX` for layouts that never run out.
    pub const fn exhausts_at(&self) -> u64 {
        let span = (self.max_tick() as u128 + 1) * self.tick_ms as u128 + self.epoch_ms as u128;
        if span > u64::MAX as u128 {
            u64::MAX
        } else {
            span as u64
        }
    }

    /// Checks that IDs can be made at `now_ms`: the epoch has begun and the time field has
    /// not run out.
    ///
    /// # Errors
    /// [`Error::EpochInFuture`] or [`Error::LayoutExhausted`].
    pub const fn check_usable_at(&self, now_ms: u64) -> Result<(), Error> {
        if now_ms < self.epoch_ms {
            return Err(Error::EpochInFuture {
                epoch_ms: self.epoch_ms,
                now_ms,
            });
        }
        if now_ms >= self.exhausts_at() {
            return Err(Error::LayoutExhausted {
                exhausts_at_ms: self.exhausts_at(),
            });
        }
        Ok(())
    }

    /// The tick that contains `unix_ms`, or `None` before the epoch. May exceed
    /// [`max_tick`](Self::max_tick); callers check.
    #[inline]
    pub const fn tick_at(&self, unix_ms: u64) -> Option<u64> {
        if unix_ms < self.epoch_ms {
            None
        } else if self.tick_ms == 1 {
            // Most layouts tick in ms: skip a 64-bit division on the hot path.
            Some(unix_ms - self.epoch_ms)
        } else {
            Some((unix_ms - self.epoch_ms) / self.tick_ms)
        }
    }

    /// The Unix ms at which `tick` starts (saturating).
    #[inline]
    pub const fn tick_start_ms(&self, tick: u64) -> u64 {
        self.epoch_ms
            .saturating_add(tick.saturating_mul(self.tick_ms))
    }

    /// The Unix ms at which `tick` starts, or `None` past the last one 64 bits hold (a
    /// layout of huge ticks, whose later ticks no clock reaches).
    #[inline]
    pub(crate) const fn checked_tick_start_ms(&self, tick: u64) -> Option<u64> {
        match tick.checked_mul(self.tick_ms) {
            Some(since_epoch) => self.epoch_ms.checked_add(since_epoch),
            None => None,
        }
    }

    /// Where the shard field starts (always 0).
    pub const fn shard_shift(&self) -> u32 {
        0
    }
    /// Where the sequence field starts.
    pub const fn sequence_shift(&self) -> u32 {
        match self.order {
            FieldOrder::NodeThenSequence => self.shard_bits as u32,
            FieldOrder::SequenceThenNode => (self.shard_bits + self.node_bits) as u32,
        }
    }
    /// Where the node field starts.
    pub const fn node_shift(&self) -> u32 {
        match self.order {
            FieldOrder::NodeThenSequence => (self.shard_bits + self.sequence_bits) as u32,
            FieldOrder::SequenceThenNode => self.shard_bits as u32,
        }
    }
    /// Where the time field starts.
    pub const fn time_shift(&self) -> u32 {
        (self.shard_bits + self.node_bits + self.sequence_bits) as u32
    }

    /// Checks a node id against the node bits.
    ///
    /// # Errors
    /// [`Error::NodeOutOfRange`].
    pub const fn check_node(&self, node: u64) -> Result<u64, Error> {
        if node > self.max_node() {
            Err(Error::NodeOutOfRange {
                node,
                max: self.max_node(),
            })
        } else {
            Ok(node)
        }
    }

    /// Checks a shard against the shard bits.
    ///
    /// # Errors
    /// [`Error::ShardOutOfRange`].
    pub const fn check_shard(&self, shard: u64) -> Result<u64, Error> {
        if shard > self.max_shard() {
            Err(Error::ShardOutOfRange {
                shard,
                max: self.max_shard(),
            })
        } else {
            Ok(shard)
        }
    }
}
