//! The ZooKeeper registry: one persistent znode per node id and one namespace marker.
//! Every operation reads the znodes and the server's clock (the `mtime` of a write to a
//! clock znode), decides in Rust with [`ferroflake_lease::protocol`], and writes the
//! outcome guarded by the versions it read (a `multi` for a claim), so a write lands only
//! if nothing changed since the read.
//!
//! Znodes under the base path `B` (times on the server's clock, ms):
//! - `B/namespace` = `FLOOR_UNTIL CLAIMED`: the namespace floor, and how many ids have
//!   ever been claimed (ids are first claimed lowest-first, so every id below it has a
//!   znode);
//! - `B/nodes/ID` = `EPOCH MARK EXPIRES QUARANTINE FLOOR_UNTIL TOKEN HOLDER` (`TOKEN` `-`
//!   once released);
//! - `B/window` = the widest lost-records window (max_ttl + quarantine, ms) any claim of
//!   the namespace asked for;
//! - `B/history/SERVER` = when server `SERVER` (its id, 0-255) started, as the last claim
//!   made through it read that (see below);
//! - `B/clock`, written to read the server's time;
//! - `B/registry` = the registry's id ([`Registry::identity`]), 32 random hex digits, a
//!   persistent znode made with its data by the first registry to connect and read back
//!   by every other. Claims do not read it: a base whose other znodes were lost still
//!   floors, whatever it says.
//!
//! A renewal proves the claim by its token and expiry
//! ([`prove_held`](ferroflake_lease::protocol::prove_held)) before it writes, and writes
//! with the version it read: a version alone proves nothing, because a namespace deleted
//! and made again restarts versions at 0. The expiry is judged at the clock read just
//! before the write (one round trip earlier).
//!
//! **Lost records.** A missing marker (a new namespace, the base znode deleted, a server
//! restarted with its data wiped) starts a floor of [`LeaseRequest::floor_window`] on the
//! server's clock, and claims until then report the rest in [`Grant::floor_wait`]. An id
//! below `CLAIMED` with no znode lost only its own and gets a floor of its own. Every such
//! floor lasts the widest window recorded in `B/window` (or the claimant's own, if wider),
//! so a claimant with a short TTL still waits out a holder with a long one. Missing
//! base znodes are made again by the next claim.
//!
//! **Restores.** A data directory copied back from a backup brings the znodes back as
//! they were, forgetting the claims made since, and nothing in them tells: the zxid goes
//! back with the data (a standalone server keeps its epoch). It takes a server restart,
//! though, and a server shows when it started: it numbers the sessions it makes from its
//! start time (ms on its monotonic clock, in bits 16 to 55 of the session id; its id in
//! the top byte). Every claim runs in a session made by the running server (a session that
//! has lost its connection since it was made is replaced first), and records that start in
//! `B/history/SERVER`; a claim that finds another start recorded for its server (or none)
//! starts a namespace floor. So does any restart of the server, as Redis's restart floor
//! does, and in an ensemble the first claim through each server; a server that has made
//! 65,536 sessions since it started moves the stamp on once more (another floor).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

use ferroflake_lease::protocol;
use ferroflake_lease::{
    check_reservation, Grant, LeaseError, LeaseRequest, Loss, Registry, RegistryView, Renewal,
    Reservation,
};
use zookeeper_client::{
    Acls, Client, CreateMode, Error as ZkError, MultiWriteError, Stat, StateWatcher,
};

use crate::blocking::{renew_limit, Blocking, CALL_TIMEOUT, CONNECT_TIMEOUT};
use crate::record::{candidates, number, Marker, Record};
use ferroflake_lease::new_token;

/// The session timeout asked of the server (it clamps it to its own bounds). Liveness of
/// claims comes from renewals; the session only carries the calls.
const SESSION_TIMEOUT: Duration = Duration::from_secs(6);

/// How often an operation reads again after another client changed what it read.
const ROUNDS: usize = 64;

/// Node ids leased from ZooKeeper.
pub struct ZooKeeperRegistry {
    io: Blocking,
    hosts: String,
    root: String,
    /// What [`Registry::locator`] says.
    locator: String,
    /// What [`Registry::identity`] says: [`Self::identity_path`] as read at connect.
    identity: String,
    client: Mutex<Session>,
}

/// A client, and a watcher of its session's state made with it, so that a session that
/// lost its connection at any time since (a server restart does that) can be told.
struct Session {
    client: Client,
    watcher: StateWatcher,
}

impl Session {
    fn new(client: Client) -> Session {
        let watcher = client.state_watcher();
        Session { client, watcher }
    }

    /// Whether the session's state has changed since it was made (disconnected at least
    /// once): its server may have restarted under it since.
    async fn interrupted(&self) -> bool {
        let mut watcher = self.watcher.clone();
        tokio::time::timeout(Duration::ZERO, watcher.changed())
            .await
            .is_ok()
    }
}

fn persistent() -> zookeeper_client::CreateOptions<'static> {
    CreateMode::Persistent.with_acls(Acls::anyone_all())
}

impl ZooKeeperRegistry {
    /// Connects to `hosts` (`host:port[,host:port...]`), keeping znodes under `root`
    /// (created if missing), and checks that ZooKeeper answers.
    ///
    /// # Errors
    /// [`LeaseError::Unavailable`] if no session is established within a few seconds;
    /// [`LeaseError::Store`] if the registry's id is unreadable (the error names the znode).
    pub fn connect(hosts: &str, root: &str) -> Result<Self, LeaseError> {
        let io = Blocking::new("zookeeper")?;
        let client = io.run(
            "connecting to ZooKeeper",
            CONNECT_TIMEOUT,
            Self::open(&io, hosts),
        )?;
        let registry = ZooKeeperRegistry {
            io,
            hosts: hosts.to_owned(),
            root: root.to_owned(),
            locator: crate::address::locator("zookeeper", hosts, root),
            identity: String::new(),
            client: Mutex::new(Session::new(client.clone())),
        };
        let identity = registry
            .io
            .run("creating the base znodes", CALL_TIMEOUT * 2, async {
                registry.ensure_base(&client).await?;
                registry.read_or_make_identity(&client).await
            })?;
        Ok(ZooKeeperRegistry {
            identity,
            ..registry
        })
    }

    /// The id at [`Self::identity_path`], made (random, once) by the first registry to
    /// connect to the base.
    async fn read_or_make_identity(&self, client: &Client) -> Result<String, LeaseError> {
        let path = self.identity_path();
        for _ in 0..ROUNDS {
            match client.get_data(&path).await {
                Ok((data, _)) => {
                    return crate::identity::readable(&data).ok_or_else(|| {
                        self.io.store_error(format!(
                            "unreadable registry id in znode {path}; {}",
                            crate::identity::DELETE_IT
                        ))
                    })
                }
                Err(ZkError::NoNode) => {}
                Err(e) => return Err(self.failed("reading the registry's id", e)),
            }
            let fresh = crate::identity::new_id("zookeeper")?;
            match client.create(&path, fresh.as_bytes(), &persistent()).await {
                Ok(_) => return Ok(fresh),
                Err(ZkError::NodeExists) => {} // another registry's won: read it back
                Err(ZkError::NoNode) => self.ensure_base(client).await?,
                Err(e) => return Err(self.failed("recording the registry's id", e)),
            }
        }
        Err(self
            .io
            .unavailable(format!("the registry's id at {path} keeps changing")))
    }

    pub(crate) async fn open(io: &Blocking, hosts: &str) -> Result<Client, LeaseError> {
        Client::connector()
            .with_session_timeout(SESSION_TIMEOUT)
            .with_connection_timeout(CONNECT_TIMEOUT)
            .with_fail_eagerly()
            .connect(hosts)
            .await
            .map_err(|e| io.unavailable(format!("no session with {hosts}: {e}")))
    }

    /// Makes the base znodes if missing (they may have been deleted under us).
    async fn ensure_base(&self, client: &Client) -> Result<(), LeaseError> {
        client
            .mkdir(&format!("{}/nodes", self.root), &persistent())
            .await
            .map_err(|e| self.failed("creating the base znodes", e))?;
        match client.create(&self.clock_path(), b"", &persistent()).await {
            Ok(_) | Err(ZkError::NodeExists) => Ok(()),
            Err(e) => Err(self.failed("creating the clock znode", e)),
        }
    }

    /// The client, replaced by a new session if the old one expired.
    fn client(&self) -> Result<Client, LeaseError> {
        let current = self
            .client
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .client
            .clone();
        if !current.state().is_terminated() {
            return Ok(current);
        }
        self.new_session()
    }

    /// Replaces the session by a new one.
    fn new_session(&self) -> Result<Client, LeaseError> {
        let fresh = self.io.run(
            "connecting to ZooKeeper",
            CONNECT_TIMEOUT,
            Self::open(&self.io, &self.hosts),
        )?;
        *self.client.lock().unwrap_or_else(|p| p.into_inner()) = Session::new(fresh.clone());
        Ok(fresh)
    }

    fn failed(&self, what: &str, e: ZkError) -> LeaseError {
        self.io.unavailable(format!("{what}: {e}"))
    }

    fn node_path(&self, node_id: u64) -> String {
        format!("{}/nodes/{node_id}", self.root)
    }

    fn marker_path(&self) -> String {
        format!("{}/namespace", self.root)
    }

    fn clock_path(&self) -> String {
        format!("{}/clock", self.root)
    }

    fn window_path(&self) -> String {
        format!("{}/window", self.root)
    }

    /// The registry's id ([`Registry::identity`]).
    fn identity_path(&self) -> String {
        format!("{}/registry", self.root)
    }

    fn history_path(&self, server: u64) -> String {
        format!("{}/history/{server}", self.root)
    }

    /// The client for a claim: its session was made by the server that runs now, so its
    /// id shows when that server started. A session that has lost its connection since it
    /// was made may have been made by an earlier run of the server: it is replaced.
    fn fresh_client(&self) -> Result<Client, LeaseError> {
        let (client, watcher) = {
            let session = self.client.lock().unwrap_or_else(|p| p.into_inner());
            (session.client.clone(), session.watcher.clone())
        };
        let session = Session { client, watcher };
        let interrupted = self.io.run("checking the session", CALL_TIMEOUT, async {
            Ok(session.interrupted().await)
        })?;
        if interrupted || session.client.state().is_terminated() {
            self.new_session()
        } else {
            Ok(session.client)
        }
    }

    /// Starts a namespace floor of `window` if the server that made `client`'s session
    /// started since the last claim through it recorded its start, or none did (see the
    /// module docs); then records the start.
    async fn check_server_start(
        &self,
        client: &Client,
        window: Duration,
    ) -> Result<(), LeaseError> {
        let (server, started) = server_start(client.session_id().0);
        let path = self.history_path(server);
        let recorded = match client.get_data(&path).await {
            Ok((data, stat)) => {
                let start = std::str::from_utf8(&data)
                    .ok()
                    .and_then(number)
                    .ok_or_else(|| self.unreadable(&path))?;
                Some((start, stat.version))
            }
            Err(ZkError::NoNode) => None,
            Err(e) => return Err(self.failed("reading the server's start", e)),
        };
        if recorded.is_some_and(|(start, _)| start == started) {
            return Ok(());
        }
        // The floor first: recorded with no floor, the start would vouch for nothing.
        self.start_floor(client, window).await?;
        let value = started.to_string();
        let written = match recorded {
            Some((_, version)) => client
                .set_data(&path, value.as_bytes(), Some(version))
                .await
                .map(drop),
            None => match client.create(&path, value.as_bytes(), &persistent()).await {
                Err(ZkError::NoNode) => {
                    client
                        .mkdir(&format!("{}/history", self.root), &persistent())
                        .await
                        .map_err(|e| self.failed("creating the history znode", e))?;
                    client
                        .create(&path, value.as_bytes(), &persistent())
                        .await
                        .map(drop)
                }
                other => other.map(drop),
            },
        };
        match written {
            // Another claim recorded it meanwhile, after its own floor.
            Ok(()) | Err(ZkError::BadVersion | ZkError::NodeExists | ZkError::NoNode) => Ok(()),
            Err(e) => Err(self.failed("recording the server's start", e)),
        }
    }

    /// Raises the marker's floor to `window` from now; returns the floor.
    async fn start_floor(&self, client: &Client, window: Duration) -> Result<Duration, LeaseError> {
        for _ in 0..ROUNDS {
            if let Some(floor) = self.try_start_floor(client, window).await? {
                return Ok(floor);
            }
        }
        Err(self
            .io
            .unavailable(format!("starting a floor: lost {ROUNDS} races in a row")))
    }

    /// Records `asked` in the window znode if it is wider than what is recorded there;
    /// returns the window floors last ([`protocol::widest_window`]). Done before a claim
    /// is written, so a holder's window is on record before it may issue.
    async fn widen_window(&self, client: &Client, asked: Duration) -> Result<Duration, LeaseError> {
        let path = self.window_path();
        let asked_ms = protocol::ms(asked);
        let value = asked_ms.to_string();
        for _ in 0..ROUNDS {
            let written = match client.get_data(&path).await {
                Ok((data, stat)) => {
                    let recorded = std::str::from_utf8(&data)
                        .ok()
                        .and_then(number)
                        .ok_or_else(|| self.unreadable(&path))?;
                    if recorded >= asked_ms {
                        return Ok(protocol::widest_window(asked, recorded));
                    }
                    client
                        .set_data(&path, value.as_bytes(), Some(stat.version))
                        .await
                        .map(drop)
                }
                Err(ZkError::NoNode) => client
                    .create(&path, value.as_bytes(), &persistent())
                    .await
                    .map(drop),
                Err(e) => return Err(self.failed("reading the lost-records window", e)),
            };
            match written {
                Ok(()) => return Ok(protocol::widest_window(asked, asked_ms)),
                // Changed meanwhile: read again.
                Err(ZkError::BadVersion | ZkError::NodeExists) => {}
                Err(ZkError::NoNode) => self.ensure_base(client).await?,
                Err(e) => return Err(self.failed("recording the lost-records window", e)),
            }
        }
        Err(self
            .io
            .unavailable("the lost-records window keeps changing"))
    }

    /// A znode whose data no registry wrote: an error, never read as missing or as zeros.
    fn unreadable(&self, path: &str) -> LeaseError {
        let then = if path == self.marker_path() {
            "the namespace then waits out a floor"
        } else if path == self.window_path() {
            "claims then floor by their own window until one records it again"
        } else if path.starts_with(&format!("{}/history/", self.root)) {
            "the namespace then waits out a floor"
        } else {
            "its id then waits out a floor"
        };
        self.io
            .store_error(format!("unreadable znode {path}; delete it ({then})"))
    }

    /// The server's clock in ms: the `mtime` of a write to the clock znode (made again if
    /// it was deleted).
    async fn server_now_ms(&self, client: &Client) -> Result<u64, LeaseError> {
        let stat = match client.set_data(&self.clock_path(), b"", None).await {
            Ok(stat) => stat,
            Err(ZkError::NoNode) => {
                self.ensure_base(client).await?;
                client
                    .set_data(&self.clock_path(), b"", None)
                    .await
                    .map_err(|e| self.failed("reading the server clock", e))?
            }
            Err(e) => return Err(self.failed("reading the server clock", e)),
        };
        clock_ms(stat.mtime).ok_or_else(|| {
            self.io.store_error(format!(
                "the server clock read from {} is {} ms, before 1970; check the ZooKeeper \
                 server's clock",
                self.clock_path(),
                stat.mtime
            ))
        })
    }

    /// A znode's record and stat, `None` if it does not exist.
    async fn read_node(
        &self,
        client: &Client,
        node_id: u64,
    ) -> Result<Option<(Record, Stat)>, LeaseError> {
        let path = self.node_path(node_id);
        match client.get_data(&path).await {
            Ok((data, stat)) => {
                let text = std::str::from_utf8(&data).map_err(|_| self.unreadable(&path))?;
                let record = Record::decode(text).ok_or_else(|| self.unreadable(&path))?;
                Ok(Some((record, stat)))
            }
            Err(ZkError::NoNode) => Ok(None),
            Err(e) => Err(self.failed("reading a record", e)),
        }
    }

    /// The marker and its version, made (with a floor from `now_ms`) if missing.
    async fn marker(
        &self,
        client: &Client,
        now_ms: u64,
        window: Duration,
    ) -> Result<(Marker, i32), LeaseError> {
        let path = self.marker_path();
        for _ in 0..ROUNDS {
            match client.get_data(&path).await {
                Ok((data, stat)) => {
                    let marker = std::str::from_utf8(&data)
                        .ok()
                        .and_then(Marker::decode)
                        .ok_or_else(|| self.unreadable(&path))?;
                    return Ok((marker, stat.version));
                }
                Err(ZkError::NoNode) => {}
                Err(e) => return Err(self.failed("reading the namespace marker", e)),
            }
            // New namespace, or its records were lost: a floor from now.
            let marker = Marker {
                floor_until_ms: protocol::floor_until(now_ms, window),
                claimed: 0,
            };
            match client
                .create(&path, marker.encode().as_bytes(), &persistent())
                .await
            {
                Ok(_) | Err(ZkError::NodeExists) => {} // read back what won
                Err(ZkError::NoNode) => self.ensure_base(client).await?,
                Err(e) => return Err(self.failed("creating the namespace marker", e)),
            }
        }
        Err(self.io.unavailable("the namespace marker keeps changing"))
    }

    /// Raises the marker's floor to `window` from now, with the version read: `None` if
    /// another client changed it meanwhile. Returns the floor.
    async fn try_start_floor(
        &self,
        client: &Client,
        window: Duration,
    ) -> Result<Option<Duration>, LeaseError> {
        let now_ms = self.server_now_ms(client).await?;
        let (marker, version) = self.marker(client, now_ms, window).await?;
        let raised = Marker {
            floor_until_ms: marker
                .floor_until_ms
                .max(protocol::floor_until(now_ms, window)),
            ..marker
        };
        match client
            .set_data(
                &self.marker_path(),
                raised.encode().as_bytes(),
                Some(version),
            )
            .await
        {
            Ok(_) => Ok(Some(protocol::floor_wait(raised.floor_until_ms, now_ms))),
            Err(ZkError::BadVersion | ZkError::NoNode) => Ok(None),
            Err(e) => Err(self.failed("starting a floor", e)),
        }
    }

    /// One claim attempt: `Ok(Err(()))` if another client changed what was read.
    async fn try_claim(
        &self,
        client: &Client,
        request: &LeaseRequest,
        token: &str,
        window: Duration,
    ) -> Result<Result<Option<Grant>, ()>, LeaseError> {
        let now_ms = self.server_now_ms(client).await?;
        let now_us = now_ms.saturating_mul(1000);
        let (marker, marker_version) = self.marker(client, now_ms, window).await?;
        let present: BTreeSet<u64> =
            match client.list_children(&format!("{}/nodes", self.root)).await {
                Ok(names) => names.iter().filter_map(|n| n.parse().ok()).collect(),
                Err(ZkError::NoNode) => BTreeSet::new(),
                Err(e) => return Err(self.failed("listing records", e)),
            };
        let quarantine = protocol::ms(request.quarantine);
        // An id never claimed needs no reads; only when every id has been claimed once are
        // the records read, to recycle the free one whose holder left the lowest mark.
        let never_claimed = (marker.claimed..request.node_count).find(|id| !present.contains(id));
        // The preferred id's record is read in any case: it may be taken before one never
        // claimed.
        let to_read: Vec<u64> = if never_claimed.is_none() {
            (0..request.node_count).collect()
        } else {
            request.prefer_node.into_iter().collect()
        };
        let mut records = BTreeMap::new();
        for node_id in to_read {
            if node_id < request.node_count && present.contains(&node_id) {
                if let Some(found) = self.read_node(client, node_id).await? {
                    records.insert(node_id, found);
                }
            }
        }
        let free = candidates(
            marker.claimed,
            (0..request.node_count).map(|id| (id, records.get(&id).map(|(r, _)| r))),
            quarantine,
            now_ms,
        );
        let Some(node_id) = protocol::pick_node(request.prefer_node, never_claimed, free) else {
            return Ok(Ok(None));
        };
        let found = records.remove(&node_id);
        let new = Record::claimed(
            found.as_ref().map(|(r, _)| r),
            node_id < marker.claimed,
            request,
            token,
            now_ms,
            now_us,
            window,
        );
        let (mark, node_floor) = (new.mark, new.floor_until_ms);
        let bad_path = |e: ZkError| self.io.store_error(format!("bad znode path: {e}"));
        let mut multi = client.new_multi_writer();
        let raised = Marker {
            claimed: marker.claimed.max(node_id + 1),
            ..marker
        };
        if raised == marker {
            multi
                .add_check_version(&self.marker_path(), marker_version)
                .map_err(bad_path)?;
        } else {
            multi
                .add_set_data(
                    &self.marker_path(),
                    raised.encode().as_bytes(),
                    Some(marker_version),
                )
                .map_err(bad_path)?;
        }
        let path = self.node_path(node_id);
        match &found {
            Some((_, stat)) => multi
                .add_set_data(&path, new.encode().as_bytes(), Some(stat.version))
                .map_err(bad_path)?,
            None => multi
                .add_create(&path, new.encode().as_bytes(), &persistent())
                .map_err(bad_path)?,
        }
        match multi.commit().await {
            Ok(_) => Ok(Ok(Some(Grant {
                node_id,
                token: token.to_owned(),
                epoch: new.epoch,
                previous_high_water_ms: mark,
                floor_wait: protocol::floor_wait_within(
                    marker.floor_until_ms.max(node_floor),
                    now_ms,
                    window,
                ),
            }))),
            Err(MultiWriteError::OperationFailed {
                source: ZkError::NodeExists | ZkError::BadVersion | ZkError::NoNode,
                ..
            }) => Ok(Err(())),
            Err(e) => Err(self.failed("claiming a node id", e.into())),
        }
    }

    /// Reads `grant`'s record, proves it held ([`protocol::prove_held`]) on the server's
    /// clock, and writes `change`'s record with the version read. `allow_expired` lets a
    /// release of a claim past its TTL (nobody else's yet) through.
    async fn update_held(
        &self,
        client: Client,
        grant: &Grant,
        allow_expired: bool,
        change: impl Fn(&Record, u64) -> Record,
    ) -> Result<Result<(), Loss>, LeaseError> {
        let path = self.node_path(grant.node_id);
        for _ in 0..ROUNDS {
            let Some((record, stat)) = self.read_node(&client, grant.node_id).await? else {
                return Ok(Err(Loss::Missing));
            };
            let now_ms = self.server_now_ms(&client).await?;
            match protocol::prove_held(Some(record.view()), &grant.token, now_ms) {
                Ok(()) => {}
                Err(Loss::Expired) if allow_expired => {}
                Err(loss) => return Ok(Err(loss)),
            }
            let new = change(&record, now_ms);
            match client
                .set_data(&path, new.encode().as_bytes(), Some(stat.version))
                .await
            {
                Ok(_) => return Ok(Ok(())),
                Err(ZkError::BadVersion | ZkError::NoNode) => {} // changed: read again
                Err(e) => return Err(self.failed("writing a record", e)),
            }
        }
        Err(self.io.unavailable("the record keeps changing"))
    }
}

impl ZooKeeperRegistry {
    /// Writes a reservation over `node_id`'s record if [`Record::reserved`] allows it,
    /// with the version read (or a create, where there is no record).
    async fn reserve_node(
        &self,
        client: &Client,
        node_id: u64,
        holder: &str,
    ) -> Result<Reservation, LeaseError> {
        self.ensure_base(client).await?;
        let path = self.node_path(node_id);
        for _ in 0..ROUNDS {
            let found = self.read_node(client, node_id).await?;
            let now_ms = self.server_now_ms(client).await?;
            let (outcome, new) = Record::reserved(found.as_ref().map(|(r, _)| r), holder, now_ms);
            let Some(new) = new else {
                return Ok(outcome);
            };
            let data = new.encode();
            let written = match &found {
                Some((_, stat)) => client
                    .set_data(&path, data.as_bytes(), Some(stat.version))
                    .await
                    .map(drop),
                None => client
                    .create(&path, data.as_bytes(), &persistent())
                    .await
                    .map(drop),
            };
            match written {
                Ok(()) => return Ok(outcome),
                Err(ZkError::BadVersion | ZkError::NoNode | ZkError::NodeExists) => {} // changed
                Err(e) => return Err(self.failed("reserving a node id", e)),
            }
        }
        Err(self.io.unavailable("the record keeps changing"))
    }
}

/// The server that made session `session_id` (its id) and when it started (ms on its
/// monotonic clock, 40 bits): ZooKeeper numbers the sessions of a server from
/// `(start_ms << 24) >>> 8 | id << 56`, one up per session.
fn server_start(session_id: i64) -> (u64, u64) {
    let bits = session_id as u64;
    (bits >> 56, (bits & ((1 << 56) - 1)) >> 16)
}

impl ZooKeeperRegistry {
    /// Refuses, as claims do, a garbled window or server start, which a listing does not
    /// otherwise read.
    async fn check_numbers_claims_read(&self, client: &Client) -> Result<(), LeaseError> {
        let servers: Vec<u64> = match client
            .list_children(&format!("{}/history", self.root))
            .await
        {
            Ok(names) => names.iter().filter_map(|n| n.parse().ok()).collect(),
            Err(ZkError::NoNode) => Vec::new(),
            Err(e) => return Err(self.failed("listing the servers' starts", e)),
        };
        let paths = servers.into_iter().map(|server| self.history_path(server));
        for path in std::iter::once(self.window_path()).chain(paths) {
            match client.get_data(&path).await {
                Ok((data, _)) => {
                    std::str::from_utf8(&data)
                        .ok()
                        .and_then(number)
                        .ok_or_else(|| self.unreadable(&path))?;
                }
                Err(ZkError::NoNode) => {}
                Err(e) => return Err(self.failed("reading a recorded number", e)),
            }
        }
        Ok(())
    }

    /// Every record and the namespace floor, judged at the server's clock read first (a
    /// write to the clock znode, the only way to read it: no record is written).
    async fn view(&self, client: &Client) -> Result<RegistryView, LeaseError> {
        let now_ms = self.server_now_ms(client).await?;
        self.check_numbers_claims_read(client).await?;
        let marker_path = self.marker_path();
        let floor_until_ms = match client.get_data(&marker_path).await {
            Ok((data, _)) => {
                std::str::from_utf8(&data)
                    .ok()
                    .and_then(Marker::decode)
                    .ok_or_else(|| self.unreadable(&marker_path))?
                    .floor_until_ms
            }
            Err(ZkError::NoNode) => 0,
            Err(e) => return Err(self.failed("reading the namespace marker", e)),
        };
        let ids: BTreeSet<u64> = match client.list_children(&format!("{}/nodes", self.root)).await {
            // A znode whose name is no id is no record a claim reads: not listed either.
            Ok(names) => names.iter().filter_map(|n| n.parse().ok()).collect(),
            Err(ZkError::NoNode) => BTreeSet::new(),
            Err(e) => return Err(self.failed("listing records", e)),
        };
        let mut nodes = Vec::new();
        for id in ids {
            // Deleted since the listing: no record now.
            let Some((r, _)) = self.read_node(client, id).await? else {
                continue;
            };
            nodes.push(r.node_view(id, now_ms));
        }
        Ok(RegistryView::new(now_ms, floor_until_ms, nodes))
    }
}

/// A znode's `mtime` as the server's clock: `None` if negative, which no running server
/// reports (read as 0, a renewal would date its claim's expiry in 1970, for the next
/// claimant to find long expired).
fn clock_ms(mtime: i64) -> Option<u64> {
    u64::try_from(mtime).ok()
}

impl Registry for ZooKeeperRegistry {
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError> {
        request.validate()?;
        let token = new_token("zookeeper")?;
        let client = self.fresh_client()?;
        let claimed = self.io.run("claiming a node id", CALL_TIMEOUT * 4, async {
            let window = self.widen_window(&client, request.floor_window()).await?;
            self.check_server_start(&client, window).await?;
            for _ in 0..ROUNDS {
                if let Ok(outcome) = self.try_claim(&client, request, &token, window).await? {
                    return Ok(outcome);
                }
            }
            Err(self
                .io
                .unavailable(format!("claiming: lost {ROUNDS} races in a row")))
        })?;
        claimed.ok_or(LeaseError::NoFreeNode {
            node_count: request.node_count,
        })
    }

    fn renew(&self, grant: &Grant, renewal: &Renewal) -> Result<(), LeaseError> {
        // The client is got outside the runtime: reconnecting blocks on it.
        let client = self.client()?;
        let proof = self.io.run(
            "renewing",
            renew_limit(renewal.ttl),
            self.update_held(client, grant, false, |record, now_ms| {
                record.renewed(now_ms, renewal)
            }),
        )?;
        proof.map_err(|why| grant.lost(why))
    }

    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError> {
        // The final mark as given: the holder has stopped issuing. Not held (any more):
        // nothing to give back, and not an error.
        let client = self.client()?;
        let _not_held = self.io.run(
            "releasing",
            CALL_TIMEOUT,
            self.update_held(client, grant, true, |record, _| Record {
                mark: high_water_ms,
                token: None,
                ..record.clone()
            }),
        )?;
        Ok(())
    }

    fn reserve(&self, node_id: u64, holder: &str) -> Result<Reservation, LeaseError> {
        check_reservation(node_id, holder)?;
        let client = self.client()?;
        self.io.run(
            "reserving a node id",
            CALL_TIMEOUT * 4,
            self.reserve_node(&client, node_id, holder),
        )
    }

    fn restored(&self, window: Duration) -> Result<Duration, LeaseError> {
        let client = self.client()?;
        self.io.run("starting a floor", CALL_TIMEOUT * 4, async {
            let window = self.widen_window(&client, window).await?;
            self.start_floor(&client, window).await
        })
    }

    fn list(&self) -> Result<RegistryView, LeaseError> {
        let client = self.client()?;
        self.io
            .run("listing the records", CALL_TIMEOUT * 2, self.view(&client))
    }

    fn wall_clock_ms(&self) -> Result<Option<u64>, LeaseError> {
        let client = self.client()?;
        let now_ms = self.io.run(
            "reading the clock",
            CALL_TIMEOUT,
            self.server_now_ms(&client),
        )?;
        Ok(Some(now_ms))
    }

    fn name(&self) -> &str {
        "zookeeper"
    }

    fn locator(&self) -> String {
        self.locator.clone()
    }

    fn identity(&self) -> Option<String> {
        Some(self.identity.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_show_the_server_and_its_start() {
        // Two sessions of a standalone server (id 1), then one after its restart.
        assert_eq!(server_start(0x0100_0488_5e39_0003), (1, 76_045_881));
        assert_eq!(server_start(0x0100_0488_5e39_0004), (1, 76_045_881));
        assert_eq!(server_start(0x0100_0488_b145_0000), (1, 76_067_141));
        assert_eq!(server_start(-1), (255, (1 << 40) - 1));
    }

    #[test]
    fn a_clock_before_1970_is_no_clock() {
        assert_eq!(clock_ms(1_700_000_000_123), Some(1_700_000_000_123));
        assert_eq!(clock_ms(0), Some(0));
        assert_eq!(clock_ms(-1), None);
        assert_eq!(clock_ms(i64::MIN), None);
    }
}
