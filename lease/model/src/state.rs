//! The model's state: true time, the holders, the registry, the messages in flight, and
//! ghost facts (what was issued) that only the properties read.

/// Owner tokens, by claim number: a claim's token is chosen by the claimant, as
/// `new_token` does, and never repeats.
pub const TOKENS: [&str; 12] = [
    "t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10", "t11",
];

/// The whole system at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct State {
    /// True time. It is also the registry's store clock and every holder's monotonic
    /// clock (they run at the same rate and never stop, not even under SIGSTOP).
    pub now: u64,
    /// The processes competing for node id 0.
    pub holders: Vec<Holder>,
    /// The registry's records for node id 0.
    pub registry: Registry,
    /// Requests and responses in flight, as a sorted multiset: delivered in any order,
    /// late, or never.
    pub net: Vec<Msg>,
    /// Claims made so far (the next claim's token number).
    pub claims: u8,
    /// Record losses so far.
    pub wipes: u8,
    /// Restores so far.
    pub restores: u8,
    /// Requests sent again so far.
    pub retries: u8,
    /// What the properties read.
    pub ghost: Ghost,
}

impl State {
    /// Holder `h`'s wall clock (its issuing clock: ticks go into IDs).
    pub fn wall(&self, h: usize) -> u64 {
        self.now + self.holders[h].offset
    }

    /// The registry's wall clock (`Registry::wall_clock_ms`): true time, shifted by
    /// `behind` so that clocks behind it read no less than 0.
    pub fn registry_wall(&self, behind: u64) -> u64 {
        self.now + behind
    }
}

/// Where a holder is in `LeasedGenerator`'s life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// No generator: free to claim.
    Idle,
    /// `registry.acquire` is in flight.
    Claiming,
    /// Granted; waiting out the floor (`wait_out_floor`) and the previous mark
    /// (`wait_past_mark`), then the first `renew_once`. Issues nothing.
    Starting,
    /// Issuing up to the fence; renewing in the background (held or failing).
    Running,
    /// A renewal said `Lost`: fenced for good.
    Lost,
}

/// What a holder knows of its claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HeldGrant {
    /// Index into [`TOKENS`].
    pub token: u8,
    /// `Grant::previous_high_water_ms`.
    pub previous_mark: u64,
    /// Monotonic time until which the floor is waited out.
    pub floor_end: u64,
    /// The wall time to pass before issuing (`protocol::resume_after`).
    pub resume_after: Option<u64>,
    /// The record version the holder last saw (only the version-only mutant reads it).
    pub version: u32,
    /// The registry reported a floor (ghost, for a sanity check).
    pub floored: bool,
}

/// The request a holder is blocked on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pending {
    /// `acquire`.
    Claim,
    /// A renewal while starting (`wait_out_floor` / `wait_past_mark`): it proves the claim
    /// and keeps it alive, but sets no fence.
    StartRenew,
    /// `renew_once`: sent at monotonic `sent` (wall `sent_wall`) reserving `mark`.
    Renew {
        /// Monotonic send time.
        sent: u64,
        /// Wall-clock send time, when the holder read the clocks.
        sent_wall: u64,
        /// The mark it reserves (the one reserved already, if `skewed`).
        mark: u64,
        /// The holder's clock was beyond the limit when it read it against the registry's:
        /// the renewal keeps the claim, but the fence stays closed.
        skewed: bool,
    },
}

/// One process using a `LeasedGenerator`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Holder {
    /// Wall clock = true time + offset; the registry's clock is true time +
    /// [`Bounds::behind`](crate::Bounds::behind), so the offset less that is how far the
    /// holder's clock is ahead of the registry's.
    pub offset: u64,
    /// Where it is.
    pub phase: Phase,
    /// Its claim, from the grant on.
    pub grant: Option<HeldGrant>,
    /// The call it is blocked on (one at a time, as the renewal thread).
    pub pending: Option<Pending>,
    /// It sent a request in this time unit: it sends at most one per unit (renewals and
    /// retries are at least a unit apart).
    pub sent: bool,
    /// `RenewalState::reserved_ms`.
    pub reserved: u64,
    /// `RenewalState::deadline` (monotonic), of the last successful `renew_once`.
    pub deadline: u64,
    /// The generator's fence (wall ms; ticks at or above it are refused; 0: closed).
    pub fence: u64,
    /// The generator's last issued tick.
    pub last_issued: Option<u64>,
    /// Ghost: the first tick issued under the current claim (`last_issued` is the last).
    pub first_issued: Option<u64>,
}

impl Holder {
    /// A process with no generator.
    pub fn idle(offset: u64) -> Self {
        Holder {
            offset,
            phase: Phase::Idle,
            grant: None,
            pending: None,
            sent: false,
            reserved: 0,
            deadline: 0,
            fence: 0,
            last_issued: None,
            first_issued: None,
        }
    }

    /// Whether anything reads its wall clock before it next renews: a `renew_once` in
    /// flight (the fence will be set on the clock it read), or an open fence (it issues on
    /// it). Otherwise the model leaves the clock unsaid until the next renewal reads it.
    pub fn reads_clock(&self) -> bool {
        matches!(self.pending, Some(Pending::Renew { .. }))
            || (self.phase == Phase::Running && self.fence > 0)
    }

    /// The owner token, while it has a claim.
    pub fn token(&self) -> Option<u8> {
        self.grant.map(|g| g.token)
    }
}

/// The registry's record for the node id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Record {
    /// The owner token; `None` once released.
    pub token: Option<u8>,
    /// Store time at which the claim lapses unless renewed.
    pub expires: u64,
    /// The holder's quarantine.
    pub quarantine: u64,
    /// The high-water mark (wall ms).
    pub mark: u64,
    /// The claim's epoch.
    pub epoch: u64,
    /// A version number, as a store's revision: 1 when the record is (re)created, +1 per
    /// write. Tracked only for the version-only mutant (else always 0).
    pub version: u32,
}

/// The registry: one record (or none: lost), and the lost-records floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Registry {
    /// The record of node id 0, if the registry has one.
    pub record: Option<Record>,
    /// Store time until which new claims wait (`Records::floor_until_ms`); lost with the
    /// records.
    pub floor_until: u64,
    /// The record as it was before the latest claim: what a restored backup brings back
    /// (tracked only when restores are modelled).
    pub before_claim: Option<Record>,
    /// The records are not the registry's latest (restored): their write count differs
    /// from the lock file's (`witness.rs`), which the restore did not touch.
    pub stale: bool,
}

/// A request or a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Body {
    /// `acquire` with the claimant's fresh token.
    Claim {
        /// Token number.
        token: u8,
    },
    /// `renew(grant, ttl, mark)`.
    Renew {
        /// Token number.
        token: u8,
        /// The mark to record.
        mark: u64,
        /// The version the holder last saw.
        version: u32,
    },
    /// `release(grant, mark)`.
    Release {
        /// Token number.
        token: u8,
        /// The final mark.
        mark: u64,
    },
    /// A claim granted.
    Granted {
        /// Token number.
        token: u8,
        /// `Grant::previous_high_water_ms`.
        previous_mark: u64,
        /// `Grant::floor_wait` in ms.
        floor_wait: u64,
        /// The record's version after the claim.
        version: u32,
    },
    /// `NoFreeNode`.
    Busy,
    /// A renewal accepted.
    Renewed {
        /// The record's version after the renewal.
        version: u32,
    },
    /// A renewal refused: `LeaseError::Lost { why }`.
    Lost(LossKind),
}

impl Body {
    /// Whether the registry handles it (else the holder does).
    pub fn is_request(&self) -> bool {
        matches!(
            self,
            Body::Claim { .. } | Body::Renew { .. } | Body::Release { .. }
        )
    }
}

/// `protocol::Loss`, ordered and hashable for the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LossKind {
    /// `Loss::Missing`.
    Missing,
    /// `Loss::Taken`.
    Taken,
    /// `Loss::Expired`.
    Expired,
    /// `Loss::Released`.
    Released,
}

/// A message in flight between holder `holder` and the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Msg {
    /// The holder it is from or to.
    pub holder: u8,
    /// `false` once the holder stopped waiting for it (timed out, restarted, shut down):
    /// a request is still applied if it arrives, but nobody reads its response.
    pub live: bool,
    /// What it says.
    pub body: Body,
}

/// Facts for the properties; no actor reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Ghost {
    /// The spans of ticks (first to last issued) of the claims that have ended, as a mask
    /// (bit t = tick t).
    pub history: u64,
    /// The first tick issued within the span of another claim: (holder, tick). The
    /// protocol keeps claims' spans apart (a later claim issues above every tick of an
    /// earlier one), which is stronger than "no tick issued twice" and needs only each
    /// claim's first and last tick in the state.
    pub duplicate: Option<(u8, u64)>,
    /// The first fence set beyond the holder's monotonic deadline as its wall clock read
    /// then: (holder, true time, fence, the wall clock's reading at the deadline).
    pub late: Option<(u8, u64, u64, u64)>,
    /// Store time since which the record's owner is gone (crashed, or its last message was
    /// applied after it gave up): the id must be claimable TTL + quarantine later.
    pub owner_gone_at: Option<u64>,
    /// A tick was issued under a claim granted after a loss of records (the floor path
    /// ran): a sanity check that the model reaches it.
    pub issued_after_wipe: bool,
    /// A second claim issued (a takeover happened): a sanity check.
    pub takeover_issued: bool,
    /// A claim was granted after its claimant gave up on it: the id is held for nobody.
    /// Tracked only when retries are modelled.
    pub orphan_claim: bool,
    /// The copy given up on of a renewal sent again was applied after the holder read the
    /// answer to the other copy, while the holder issued under the claim. Tracked only when
    /// retries are modelled.
    pub late_renewal: bool,
}
