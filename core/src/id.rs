//! Decoded ID parts, and the checked mapping between parts and IDs.

use crate::{Error, Layout};

/// The fields of an ID, with time as Unix milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Parts {
    /// Start of the ID's tick, in ms since 1970-01-01T00:00:00Z.
    pub timestamp_ms: u64,
    /// The node (worker, machine) id.
    pub node: u64,
    /// The sequence number within the tick.
    pub sequence: u64,
    /// The shard (0 for layouts without shard bits).
    pub shard: u64,
}

/// A time past the last Unix ms 64 bits hold, which no clock reaches.
const PAST_U64_MS: Error = Error::TimestampOutOfRange {
    timestamp_ms: u64::MAX,
};

impl Layout {
    /// Packs a tick count and fields, all already known to fit. The one place the bit
    /// arithmetic of an ID lives; the generator calls it too.
    #[inline]
    pub(crate) const fn pack(&self, tick: u64, node: u64, sequence: u64, shard: u64) -> u64 {
        tick << self.time_shift()
            | node << self.node_shift()
            | sequence << self.sequence_shift()
            | shard
    }

    /// Builds the ID for `parts`. The timestamp is rounded down to the start of its tick,
    /// so `compose` of a wall-clock time gives the ID a generator would make then.
    ///
    /// ```
    /// use ferroflake::{Layout, Parts};
    /// let layout = Layout::builder(41, 10, 12).build()?; // Twitter widths, Unix epoch
    /// let id = layout.compose(&Parts { timestamp_ms: 1_572_057_648_000, ..Parts::default() })?;
    /// assert_eq!(id, 6_593_687_681_236_992_000);
    /// # Ok::<(), ferroflake::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::TimestampOutOfRange`], [`Error::NodeOutOfRange`],
    /// [`Error::SequenceOutOfRange`] or [`Error::ShardOutOfRange`].
    pub const fn compose(&self, parts: &Parts) -> Result<u64, Error> {
        let tick = match self.tick_at(parts.timestamp_ms) {
            Some(t) if t <= self.max_tick() => t,
            _ => {
                return Err(Error::TimestampOutOfRange {
                    timestamp_ms: parts.timestamp_ms,
                })
            }
        };
        if let Err(e) = self.check_node(parts.node) {
            return Err(e);
        }
        if parts.sequence > self.max_sequence() {
            return Err(Error::SequenceOutOfRange {
                sequence: parts.sequence,
                max: self.max_sequence(),
            });
        }
        if let Err(e) = self.check_shard(parts.shard) {
            return Err(e);
        }
        Ok(self.pack(tick, parts.node, parts.sequence, parts.shard))
    }

    /// The resume point (for [`Options::resume_after_ms`](crate::Options)) that puts
    /// every ID of this layout above `old_id`, the highest ID another generator issued
    /// with `old_layout` (this layout again when only the generator changes): new IDs
    /// come after the tick `old_id` was issued in, so they are later in time, and after
    /// the tick its bits stand for in this layout, so they are larger numbers too.
    ///
    /// ```
    /// use ferroflake::{Layout, Options};
    /// // A sonyflake fleet's highest ID, and a generator taking over with Twitter's layout.
    /// let old_id = 0x1234_5678_9abc_def0 >> 1;
    /// let twitter = Layout::twitter();
    /// let after = twitter.resume_after_id(old_id, &Layout::sonyflake())?;
    /// let first = twitter.compose(&ferroflake::Parts { timestamp_ms: after + 1, ..Default::default() })?;
    /// assert!(first > old_id);
    /// let _options = Options::given(None, None, Some(after));
    /// # Ok::<(), ferroflake::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::IdOutOfRange`] if `old_id` is wider than `old_layout` (it did not come from
    /// it) or than this layout (no ID of this layout is above it);
    /// [`Error::LayoutExhausted`] if this layout's time runs out before a tick after the
    /// point; [`Error::TimestampOutOfRange`] as [`decode`](Self::decode), for layouts of
    /// huge ticks.
    pub const fn resume_after_id(&self, old_id: u64, old_layout: &Layout) -> Result<u64, Error> {
        let issued = match old_layout.decode(old_id) {
            Ok(parts) => match parts.timestamp_ms.checked_add(old_layout.tick_ms() - 1) {
                Some(ms) => ms,
                None => return Err(PAST_U64_MS),
            },
            Err(e) => return Err(e),
        };
        let as_ours = match self.decode(old_id) {
            Ok(parts) => parts.timestamp_ms,
            Err(e) => return Err(e),
        };
        let after = if issued > as_ours { issued } else { as_ours };
        // The generator issues from the tick after the one containing `after`.
        match self.tick_at(after) {
            Some(tick) if tick >= self.max_tick() => Err(Error::LayoutExhausted {
                exhausts_at_ms: self.exhausts_at(),
            }),
            _ => Ok(after),
        }
    }

    /// Splits an ID made with this layout into its parts.
    ///
    /// ```
    /// let parts = ferroflake::Layout::twitter().decode(1_541_815_603_606_036_480)?;
    /// assert_eq!(parts.timestamp_ms, 1_656_432_460_105);
    /// # Ok::<(), ferroflake::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::IdOutOfRange`] if the ID has bits above the layout's width (it cannot have
    /// come from this layout); [`Error::TimestampOutOfRange`] if its tick starts past the
    /// last Unix ms 64 bits hold (a layout of huge ticks: no clock reaches it).
    pub const fn decode(&self, id: u64) -> Result<Parts, Error> {
        if id > self.max_id() {
            return Err(Error::IdOutOfRange {
                id,
                bits: self.total_bits(),
            });
        }
        let tick = id >> self.time_shift();
        // Past u64 ms (huge ticks) no clock reaches the tick: no generator made the ID.
        let Some(timestamp_ms) = self.checked_tick_start_ms(tick) else {
            return Err(PAST_U64_MS);
        };
        Ok(Parts {
            timestamp_ms,
            node: (id >> self.node_shift()) & self.max_node(),
            sequence: (id >> self.sequence_shift()) & self.max_sequence(),
            shard: id & self.max_shard(),
        })
    }
}
