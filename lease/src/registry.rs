//! The registry abstraction: where node ids are claimed, renewed and released.
//!
//! Every backend (the embedded directory, etcd, Redis, ZooKeeper, PostgreSQL) implements
//! [`Registry`] and passes the same conformance suite. Calls are blocking, so the C, Python
//! and Node faces can wrap them without an async runtime of their own.

use std::time::Duration;

use crate::protocol::{
    lost_records_window, Loss, Reservation, Standing, LONGEST_WINDOW, MOST_NODE_IDS, NEVER_MS,
    RESERVED_TOKEN,
};
use crate::LeaseError;

/// What a process asks a registry for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRequest {
    /// Node ids are `0..node_count` (2^node_bits of the layout).
    pub node_count: u64,
    /// How long a claim lives without renewal.
    pub ttl: Duration,
    /// How long an expired claim stays unclaimable after its TTL, so that a paused holder
    /// has surely stopped (at its local deadline) before anyone else takes the id.
    pub quarantine: Duration,
    /// Who is asking (host, pid, ...), stored for operators.
    pub holder: String,
    /// The longest TTL any holder of this registry uses (all holders of one registry must
    /// agree; default [`DEFAULT_MAX_TTL`](crate::protocol::DEFAULT_MAX_TTL)). When the
    /// registry finds records missing, a holder of the lost records may go on issuing for
    /// this long, so new claims wait that out (see [`Grant::floor_wait`]).
    pub max_ttl: Duration,
    /// A node id to take first if a claim may take it now, as
    /// [`protocol::pick_node`](crate::protocol::pick_node) decides: a holder that restarts
    /// asks for the id it held, so that restarts do not use up node ids. `None`: any id.
    pub prefer_node: Option<u64>,
}

impl LeaseRequest {
    /// Checks what every registry must refuse before it claims anything.
    ///
    /// # Errors
    /// [`LeaseError::InvalidConfig`] if `ttl` exceeds `max_ttl`, since the lost-records floor
    /// would then be too short to outlast such a holder, or if `max_ttl` + `quarantine`
    /// exceeds [`LONGEST_WINDOW`], for a request among more than [`MOST_NODE_IDS`] ids, or
    /// for a holder name operators could not read as it is (kept in the record and shown
    /// by `lease list`; [`LeaseConfig::holder`](crate::LeaseConfig::holder) says which);
    /// [`LeaseError::NoFreeNode`] for a request among zero ids.
    pub fn validate(&self) -> Result<(), LeaseError> {
        if let Some(why) = crate::config::unreadable_holder(&self.holder) {
            return Err(LeaseError::InvalidConfig {
                detail: format!("holder {why}"),
            });
        }
        if self.node_count == 0 {
            return Err(LeaseError::NoFreeNode { node_count: 0 });
        }
        if self.node_count > MOST_NODE_IDS {
            return Err(LeaseError::InvalidConfig {
                detail: format!(
                    "a claim among {} node ids: a registry hands out at most {MOST_NODE_IDS} \
                     (16 node bits); a layout with more node bits takes its node ids from \
                     elsewhere (--node)",
                    self.node_count
                ),
            });
        }
        if self.floor_window() > LONGEST_WINDOW {
            return Err(LeaseError::InvalidConfig {
                detail: format!(
                    "max_ttl {:?} + quarantine {:?} exceeds {:?}, the longest any registry \
                     makes claims wait after lost records",
                    self.max_ttl, self.quarantine, LONGEST_WINDOW
                ),
            });
        }
        if self.ttl > self.max_ttl {
            return Err(LeaseError::InvalidConfig {
                detail: format!(
                    "ttl {:?} exceeds max_ttl {:?}: raise max_ttl (for every holder of the \
                     registry) or shorten the ttl",
                    self.ttl, self.max_ttl
                ),
            });
        }
        Ok(())
    }

    /// How long claims wait after the registry finds records missing.
    pub fn floor_window(&self) -> Duration {
        lost_records_window(self.max_ttl, self.quarantine)
    }
}

/// A claimed node id, and what is needed to prove the claim later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The node id now held.
    pub node_id: u64,
    /// A random owner token (at least 128 bits, hex), checked on renew and release.
    pub token: String,
    /// The holder's fencing epoch: above every earlier claim of this node id in the
    /// registry, and at least the registry's clock in microseconds at the claim
    /// ([`next_epoch`](crate::protocol::next_epoch)), so it keeps growing across lost
    /// records as long as the registry's clock does not go back.
    pub epoch: u64,
    /// The previous holder's high-water mark (Unix ms; 0 if none): the new holder issues
    /// nothing until its clock has passed it plus a skew allowance.
    pub previous_high_water_ms: u64,
    /// How long the new holder must wait (on its monotonic clock) before it issues,
    /// because the registry found records missing (a new, deleted, evicted or wiped
    /// namespace, or a lost record of this id) within the last
    /// [`LeaseRequest::floor_window`]: a holder of the lost records may still be issuing
    /// until then. Zero in the common case.
    pub floor_wait: Duration,
}

impl Grant {
    /// The error that says this claim is no longer held, and why.
    pub fn lost(&self, why: Loss) -> LeaseError {
        LeaseError::Lost {
            node_id: self.node_id,
            why,
        }
    }
}

/// What a holder asks of a renewal ([`Registry::renew`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renewal {
    /// The claim lives this long from the renewal, unless renewed again.
    pub ttl: Duration,
    /// The high-water mark to record (issuing time, Unix ms): it raises the recorded one,
    /// never lowers it.
    pub high_water_ms: u64,
    /// The holder's wall clock minus the registry's, in ms, as the holder read it just
    /// before this renewal ([`ClockReading`](crate::protocol::ClockReading)); `None` if it
    /// read none (the registry reports no clock, as etcd, or the holder's clock does not
    /// follow real time). Recorded for operators and for the peer check of holders that
    /// start later ([`protocol::peer_clock_skew`](crate::protocol::peer_clock_skew)).
    pub clock_skew_ms: Option<i64>,
}

impl Renewal {
    /// A renewal for `ttl` raising the mark to `high_water_ms`, with no clock reading.
    pub fn new(ttl: Duration, high_water_ms: u64) -> Renewal {
        Renewal {
            ttl,
            high_water_ms,
            clock_skew_ms: None,
        }
    }
}

/// Where a node id stands, as a claim made at the same instant would find it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NodeState {
    /// Held and within its TTL: nobody may claim it.
    Held,
    /// Past its TTL but within its holder's quarantine: nobody may claim it, and its
    /// holder may not renew it.
    Quarantined,
    /// Past its TTL and quarantine without a release: claimable (its holder stopped at its
    /// own deadline).
    Expired,
    /// Given back by its holder: claimable.
    Released,
    /// Reserved for a generator outside the registry ([`Registry::reserve`]): nobody may
    /// claim it until it is unreserved.
    Reserved,
}

impl NodeState {
    /// The state of a record that carries an owner token (`held`) and has `standing`, as
    /// [`protocol::standing`](crate::protocol::standing) judges it for a claim.
    pub fn of(held: bool, standing: Standing) -> NodeState {
        match (held, standing) {
            (false, _) => NodeState::Released,
            (true, Standing::Live) => NodeState::Held,
            (true, Standing::Quarantined) => NodeState::Quarantined,
            (true, Standing::Free) => NodeState::Expired,
        }
    }

    /// Whether a claim may take the id now.
    pub fn is_claimable(self) -> bool {
        matches!(self, NodeState::Expired | NodeState::Released)
    }

    /// A lower-case word for output: "held", "quarantined", "expired", "released",
    /// "reserved".
    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Reserved => "reserved",
            NodeState::Held => "held",
            NodeState::Quarantined => "quarantined",
            NodeState::Expired => "expired",
            NodeState::Released => "released",
        }
    }
}

/// What a registry records of one node id, for operators ([`Registry::list`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NodeView {
    /// The node id.
    pub node_id: u64,
    /// Who holds it, or held it last, as that holder named itself
    /// ([`LeaseRequest::holder`]; "host:pid" by default). `None` where the registry no
    /// longer records it (etcd forgets the holder of a claim that expired unreleased).
    pub holder: Option<String>,
    /// The epoch of the current (or last) claim.
    pub epoch: u64,
    /// Where it stands now.
    pub state: NodeState,
    /// When the claim lapses unless renewed, on the registry's clock (see
    /// [`RegistryView::now_ms`]); `None` unless [`NodeState::Held`] or
    /// [`NodeState::Quarantined`] (a reservation never expires). On etcd, which keeps no TTL apart from the quarantine,
    /// it is the end of the claim's etcd lease (TTL + quarantine), and a claim in its
    /// quarantine lists as held: claims find it taken either way.
    pub expires_ms: Option<u64>,
    /// The recorded high-water mark (issuing time, Unix ms; 0 if none).
    pub high_water_ms: u64,
    /// When the current (or last) claim was made, on the registry's clock (see
    /// [`RegistryView::now_ms`]). `None` in a record written before registries recorded
    /// it, and on the embedded registry for a claim of an earlier boot (its clock then
    /// was another).
    pub since_ms: Option<u64>,
    /// When the current (or last) claim was last renewed, on the registry's clock; `None`
    /// as for `since_ms`, and before the claim's first renewal.
    pub last_renewal_ms: Option<u64>,
    /// The holder's wall clock minus the registry's at its last renewal, in ms, as the
    /// holder read it ([`Renewal::clock_skew_ms`]). `None` if it read none (etcd reports
    /// no clock; a holder on a clock that does not follow real time), or as for
    /// `last_renewal_ms`.
    pub clock_skew_ms: Option<i64>,
}

impl NodeView {
    /// A view with the fields every registry records, and `None` for the rest. A held
    /// record that never expires ([`NEVER_MS`]) is a reservation.
    pub fn new(
        node_id: u64,
        holder: Option<String>,
        epoch: u64,
        state: NodeState,
        expires_ms: u64,
        high_water_ms: u64,
    ) -> NodeView {
        let state = match state {
            NodeState::Held if expires_ms >= NEVER_MS => NodeState::Reserved,
            other => other,
        };
        let unexpired = matches!(state, NodeState::Held | NodeState::Quarantined);
        NodeView {
            node_id,
            holder,
            epoch,
            state,
            expires_ms: unexpired.then_some(expires_ms),
            high_water_ms,
            since_ms: None,
            last_renewal_ms: None,
            clock_skew_ms: None,
        }
    }

    /// This view with the times a registry records at claims and renewals.
    pub fn with_times(
        self,
        since_ms: Option<u64>,
        last_renewal_ms: Option<u64>,
        clock_skew_ms: Option<i64>,
    ) -> NodeView {
        NodeView {
            since_ms,
            last_renewal_ms,
            clock_skew_ms,
            ..self
        }
    }
}

/// A registry's records as [`Registry::list`] reads them, at one instant of its clock.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegistryView {
    /// The registry's clock when it was read, in ms: Unix time on the servers (etcd: the
    /// reading host's wall clock, since etcd has none), the host's boot clock
    /// (`CLOCK_BOOTTIME`) for the embedded registry. Expiries and floors are on it.
    pub now_ms: u64,
    /// When the namespace's lost-records floor ends (registry clock), if one is running:
    /// claims made before then wait it out before their holders issue.
    pub floor_until_ms: Option<u64>,
    /// One entry per node id the registry has a record of, by node id.
    pub nodes: Vec<NodeView>,
}

impl RegistryView {
    /// A view at `now_ms`, keeping the floor only if it ends after `now_ms`, and sorting
    /// `nodes` by node id.
    pub fn new(now_ms: u64, floor_until_ms: u64, mut nodes: Vec<NodeView>) -> RegistryView {
        nodes.sort_by_key(|n| n.node_id);
        RegistryView {
            now_ms,
            floor_until_ms: (floor_until_ms > now_ms).then_some(floor_until_ms),
            nodes,
        }
    }

    /// The clock skews the live holders other than `node_id` recorded at their last
    /// renewals ([`NodeState::Held`] records with a [`NodeView::clock_skew_ms`]), for
    /// [`protocol::peer_clock_skew`](crate::protocol::peer_clock_skew).
    pub fn peer_clock_skews(&self, node_id: u64) -> Vec<i64> {
        self.nodes
            .iter()
            .filter(|n| n.node_id != node_id && n.state == NodeState::Held)
            .filter_map(|n| n.clock_skew_ms)
            .collect()
    }

    /// One node id's record, if the registry has one.
    pub fn node(&self, node_id: u64) -> Option<&NodeView> {
        self.nodes.iter().find(|n| n.node_id == node_id)
    }

    /// The view as JSON, the one shape `ferroflake lease list --format json` prints and the
    /// service's `GET /v1/admin/leases` answers: `registry` (the address as shown, without
    /// secrets) and `backend` beside the view's fields, remaining times in `*_in_ms`, times
    /// past in `*_ago_ms`, and
    /// each high-water mark also as RFC 3339 text.
    pub fn to_json(&self, registry: &str, backend: &str) -> serde_json::Value {
        let left = |until: u64| until.saturating_sub(self.now_ms);
        let nodes: Vec<serde_json::Value> = self.nodes.iter().map(|n| self.node_json(n)).collect();
        serde_json::json!({
            "registry": registry,
            "backend": backend,
            "now_ms": self.now_ms,
            "floor_until_ms": self.floor_until_ms,
            "floor_wait_ms": self.floor_until_ms.map(left),
            "nodes": nodes,
        })
    }

    /// One node id's record as JSON, as [`RegistryView::to_json`] writes each of its
    /// `nodes` (`ferroflake lease show` prints it), with times past in `*_ago_ms`.
    pub fn node_json(&self, n: &NodeView) -> serde_json::Value {
        let left = |until: u64| until.saturating_sub(self.now_ms);
        let ago = |at: u64| self.now_ms.saturating_sub(at);
        serde_json::json!({
            "node_id": n.node_id,
            "holder": n.holder,
            "epoch": n.epoch,
            "state": n.state.as_str(),
            "expires_ms": n.expires_ms,
            "expires_in_ms": n.expires_ms.map(left),
            "high_water_ms": n.high_water_ms,
            "high_water": (n.high_water_ms != 0).then(|| rfc3339_ms(n.high_water_ms)),
            "since_ms": n.since_ms,
            "since_ago_ms": n.since_ms.map(ago),
            "last_renewal_ms": n.last_renewal_ms,
            "last_renewal_ago_ms": n.last_renewal_ms.map(ago),
            "clock_skew_ms": n.clock_skew_ms,
        })
    }
}

/// Unix ms as RFC 3339 UTC text; instants past year 9999 (which RFC 3339 cannot write) as
/// such.
fn rfc3339_ms(unix_ms: u64) -> String {
    const YEAR_10000_MS: u64 = 253_402_300_800_000;
    if unix_ms >= YEAR_10000_MS {
        return "after 9999-12-31T23:59:59.999Z".to_owned();
    }
    let at = std::time::UNIX_EPOCH + Duration::from_millis(unix_ms);
    humantime::format_rfc3339_millis(at).to_string()
}

/// Refuses what [`Registry::reserve`] must not record: a node id no registry hands out,
/// or a holder name operators could not read (as [`LeaseConfig::holder`](crate::LeaseConfig::holder) is judged).
///
/// # Errors
/// [`LeaseError::InvalidConfig`] for an id of [`MOST_NODE_IDS`] or more, or a holder
/// that is blank, longer than [`MAX_HOLDER_BYTES`](crate::MAX_HOLDER_BYTES) or holds a
/// character that does not show as itself ([`shown_in_holder`](crate::shown_in_holder)),
/// as a claim's holder is checked.
pub fn check_reservation(node_id: u64, holder: &str) -> Result<(), LeaseError> {
    if node_id >= MOST_NODE_IDS {
        return Err(LeaseError::InvalidConfig {
            detail: format!(
                "node id {node_id}: a registry hands out ids below {MOST_NODE_IDS} (16 node \
                 bits), so it has none of this id to reserve"
            ),
        });
    }
    match crate::config::unreadable_holder(holder) {
        Some(why) => Err(LeaseError::InvalidConfig {
            detail: format!("a reservation's holder {why}"),
        }),
        None => Ok(()),
    }
}

/// Refuses a high-water mark for [`Registry::unreserve`] further ahead of `now_ms` (Unix
/// ms) than a holder with default settings waits at its start
/// ([`LeaseConfig::start_wait_limit`](crate::LeaseConfig::start_wait_limit)): marks only
/// rise, so the id's next holders would fail to start until the clock caught up (a mistyped
/// year holds the id off for good).
///
/// # Errors
/// [`LeaseError::InvalidConfig`] for such a mark.
pub fn check_unreserve_mark(high_water_ms: u64, now_ms: u64) -> Result<(), LeaseError> {
    let limit = crate::LeaseConfig::default().start_wait_limit();
    let ahead = high_water_ms.saturating_sub(now_ms);
    if ahead <= crate::protocol::ms(limit) {
        return Ok(());
    }
    Err(LeaseError::InvalidConfig {
        detail: format!(
            "high-water mark {high_water_ms} ms is {:?} ahead of this clock, more than a \
             holder waits at its start ({limit:?}): its next holders would fail to start; \
             give the last time the old generator issued",
            Duration::from_millis(ahead)
        ),
    })
}

/// A store that hands out node ids under leases.
pub trait Registry: Send + Sync {
    /// Claims a free node id (or one whose holder's TTL plus quarantine has passed),
    /// [`LeaseRequest::prefer_node`] first if it is one, and records the time of the claim
    /// (on the registry's clock) for [`list`](Self::list).
    ///
    /// A registry that finds no trace of its namespace, or of an id's record, must not
    /// assume that nobody holds it: it reports the rest of the lost-records floor in
    /// [`Grant::floor_wait`].
    ///
    /// Skips every reserved id ([`reserve`](Self::reserve)).
    ///
    /// Fails closed: an unreachable store is [`LeaseError::Unavailable`]; no free id is
    /// [`LeaseError::NoFreeNode`]; a request that fails [`LeaseRequest::validate`] is
    /// [`LeaseError::InvalidConfig`].
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError>;

    /// Extends the claim to `renewal.ttl` from now, raises the recorded high-water mark to
    /// `renewal.high_water_ms` (never lowers it), and records the time of the renewal (on
    /// the registry's clock) and the holder's clock skew ([`Renewal::clock_skew_ms`]) for
    /// [`list`](Self::list). [`LeaseError::Lost`] if the claim is no longer
    /// held under `grant.token`, as [`prove_held`](crate::protocol::prove_held) decides: a
    /// missing record, another token, or a TTL that has passed (even if nobody has taken the
    /// id yet), so issuing resumes only under a live claim.
    fn renew(&self, grant: &Grant, renewal: &Renewal) -> Result<(), LeaseError>;

    /// Gives the id back with `high_water_ms` as the final mark, recorded as given. It may
    /// be lower than the mark reserved by renewals: the holder has stopped issuing, so it
    /// is exact, and the next holder starts without waiting out the reserve. Releasing a
    /// claim that is no longer held is not an error (and then changes nothing).
    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError>;

    /// Reserves `node_id` for a generator that does not use this registry (an old fleet
    /// still issuing under it while the new one rolls out), naming it `holder`: no claim
    /// takes the id until [`unreserve`](Self::unreserve). A reservation never expires,
    /// survives restarts of the store and of this host, and lists as
    /// [`NodeState::Reserved`]. It claims the id as a claim would (a compare-and-set on
    /// the id's record, recorded under [`RESERVED_TOKEN`] and [`NEVER_MS`]), so it races
    /// no claim: an id a live claim holds, or whose quarantine runs, is not taken from
    /// its holder ([`Reservation::Refused`]).
    ///
    /// # Errors
    /// [`LeaseError::InvalidConfig`] as [`check_reservation`] refuses;
    /// [`LeaseError::Unavailable`] if the store cannot be reached; [`LeaseError::Store`]
    /// if the id's record is unreadable.
    fn reserve(&self, node_id: u64, holder: &str) -> Result<Reservation, LeaseError>;

    /// Lifts `node_id`'s reservation, recording `high_water_ms` as its high-water mark
    /// (Unix ms): the next holder issues nothing until its clock has passed it, so a
    /// generator that took over from the one the id was reserved for starts above what
    /// that one issued up to now. Not reserved: nothing changes, and not an error.
    fn unreserve(&self, node_id: u64, high_water_ms: u64) -> Result<(), LeaseError> {
        let reservation = Grant {
            node_id,
            token: RESERVED_TOKEN.to_owned(),
            epoch: 0,
            previous_high_water_ms: 0,
            floor_wait: Duration::ZERO,
        };
        self.release(&reservation, high_water_ms)
    }

    /// Starts a floor of `window` from now (or of the longest window the registry keeps, if
    /// longer): every claim waits it out before its holder issues. An operator asks for
    /// this when the registry's history moved back (restored from a backup or a snapshot, a
    /// lagging replica promoted), which a registry cannot always tell by itself. The
    /// restored records have forgotten the claims made since; the holders of those stop
    /// within the floor, because their renewals fail. Returns the floor's length.
    ///
    /// # Errors
    /// [`LeaseError::Unavailable`] if the store cannot be reached; nothing changed then.
    fn restored(&self, window: Duration) -> Result<Duration, LeaseError>;

    /// Reads every node id's record and the namespace's floor, for operators: holders,
    /// states decided as a claim at the same instant would decide them (on the registry's
    /// clock, with the protocol's functions), expiries and high-water marks.
    ///
    /// Reads only: it claims, renews, releases and starts nothing, not even the floor a
    /// claim would start on finding the records missing (an empty namespace lists no ids).
    ///
    /// # Errors
    /// [`LeaseError::Unavailable`] if the store cannot be reached; [`LeaseError::Store`]
    /// if a record is unreadable (as a claim would report it: never skipped).
    fn list(&self) -> Result<RegistryView, LeaseError>;

    /// The store's wall clock now, Unix ms, which holders compare theirs with
    /// ([`LeaseConfig::max_clock_skew`](crate::LeaseConfig::max_clock_skew)): Redis `TIME`,
    /// PostgreSQL `clock_timestamp()`, the `mtime` ZooKeeper gives a write, the host's
    /// `CLOCK_REALTIME` read from the kernel for the embedded registry. `None` where the
    /// store reports no clock (etcd, and the default).
    ///
    /// # Errors
    /// [`LeaseError::Unavailable`] if the store cannot be reached.
    fn wall_clock_ms(&self) -> Result<Option<u64>, LeaseError> {
        Ok(None)
    }

    /// A short name for messages: "embedded", "etcd", "redis", "zookeeper", "postgres".
    fn name(&self) -> &str;

    /// Which registry this is, for a holder's state file
    /// ([`LeaseConfig::state_file`](crate::LeaseConfig::state_file)): a claim kept there is
    /// resumed only by a holder of the registry with the same locator, since a claim resumed
    /// on another registry (another database, directory or namespace) would issue under a
    /// node id that registry may have given someone else. The backend's name and what
    /// locates its records: the directory, or a server's address without its password and
    /// the namespace. Never a secret. The default, the name alone, cannot tell two
    /// registries of one kind apart: a registry kept in state files must say more.
    fn locator(&self) -> String {
        self.name().to_owned()
    }

    /// The id the registry keeps in its own records, which no other registry has: what
    /// tells two registries apart when their locators read the same (one directory path
    /// on two hosts, one server address naming two servers). `None` where the registry
    /// keeps none; then only its locator names it.
    ///
    /// Made once, by the first registry to open the namespace (with an atomic
    /// create-if-absent), and read back by every other, so that every registry of one
    /// namespace reports the same. Read when the registry is opened: this is called for
    /// every answer a service gives, and must not reach the store. Every registry this
    /// project ships keeps one, and the conformance suite's
    /// `identity_is_kept_in_the_records` check requires it: a registry that keeps none
    /// fails that check, and a service over it cannot tell its clients apart from
    /// another registry at the same locator.
    fn identity(&self) -> Option<String> {
        None
    }
}
