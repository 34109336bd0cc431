//! The model: what each actor may do next, and what it changes.
//!
//! Holders follow `LeasedGenerator` (`leased.rs`): claim; wait out the floor and the
//! previous holder's mark, renewing meanwhile (any failure aborts the start and releases);
//! the first `renew_once`, which opens the fence; then issue below the fence and renew in
//! the background; on `Lost` close the fence for good; on a failed renewal close it if the
//! monotonic deadline has passed; on shutdown close it and release with the final mark.
//! Every `renew_once` first reads the holder's clock against the registry's: beyond the
//! limit it reserves no mark and leaves the fence closed (the first one fails the start).
//! The registry follows the embedded registry (`records.rs`, `embedded.rs`) with per-record
//! loss: a claim that finds the record missing starts a floor. The environment advances
//! time, steps wall clocks (see [`LeaseModel::clock_steps`]), delivers, delays, reorders
//! and drops messages, times calls out, stops processes (a process that does nothing while
//! time passes is paused), crashes them, and wipes the registry's records. A holder that
//! reaches the registry through a service with several servers (`RemoteRegistry`) may give
//! up on a renewal or a release and send it again (see [`Action::Retry`]): the copy it gave
//! up on stays in flight, so a request may be applied twice, and late.

use std::ops::RangeInclusive;

use stateright::{Model, Property};

use ferroflake_lease::protocol::Standing;

use crate::bounds::Bounds;
use crate::decisions;
use crate::state::{Body, Ghost, HeldGrant, Holder, Msg, Pending, Phase, Record, Registry, State};

/// The ticks from `first` to `last`, as a mask.
fn span_mask(first: u64, last: u64) -> u64 {
    let (lo, hi) = (first.min(last), first.max(last));
    (u64::MAX >> (63 - hi)) & (u64::MAX << lo)
}

/// The span of the ticks a holder issued under its current claim.
fn span(holder: &Holder) -> u64 {
    match (holder.first_issued, holder.last_issued) {
        (Some(first), Some(last)) => span_mask(first, last),
        _ => 0,
    }
}

/// One step.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Action {
    /// True time advances one unit, and the wall clocks step (or drift) to new offsets
    /// (see [`LeaseModel::clock_steps`]): holder h's offset is `(offsets >> 4h) & 0xf`.
    Tick {
        /// The new offsets, four bits each.
        offsets: u64,
    },
    /// Holder `h` sends a claim.
    Claim(u8),
    /// Holder `h` sends a renewal, reading its wall clock at true time + the offset (see
    /// [`LeaseModel::clock_steps`]).
    Renew(u8, u64),
    /// Holder `h` gives up on its pending call (client timeout).
    Timeout(u8),
    /// Holder `h` gives up on its pending renewal at one server (its timeout) and sends it
    /// to the next one, within the same call: `renew_once` keeps its send time and mark,
    /// and reads only the second server's answer. The first copy stays in flight, unread,
    /// and may still be applied, before or after the second, or after the holder moved on.
    Retry(u8),
    /// A release in flight is sent again (its sender gave up on the first server): both
    /// copies may be applied, in any order, at any later time, or never.
    Resend(Msg),
    /// Holder `h` shuts its generator down (stop issuing, release with the final mark).
    Shutdown(u8),
    /// Holder `h`'s process dies (and a new one may start from scratch).
    Crash(u8),
    /// A message arrives.
    Deliver(Msg),
    /// A message is lost.
    Drop(Msg),
    /// The registry loses its records (deleted, evicted, wiped).
    Wipe,
    /// The registry's records are restored from a backup taken before the latest claim.
    Restore,
}

/// The lease protocol for one node id, with [`Bounds`].
#[derive(Debug, Clone)]
pub struct LeaseModel {
    /// Sizes, timings and the mutant.
    pub bounds: Bounds,
}

/// The property names.
pub mod names {
    /// No tick is issued under two claims.
    pub const UNIQUE: &str = "no tick issued under two claims";
    /// A holder stops issuing at its monotonic deadline.
    pub const DEADLINE: &str = "a holder stops issuing by its local deadline";
    /// A dead holder's id is claimable again in time.
    pub const RECYCLED: &str = "a dead holder's id is free TTL + quarantine after its last write";
    /// Sanity: a takeover happens and issues.
    pub const TAKEOVER: &str = "a second claim issues";
    /// Sanity: the lost-records path is reached and issues.
    pub const AFTER_WIPE: &str = "a claim issues after the records were lost";
    /// A holder's local deadline lies a safety margin before its claim can lapse.
    pub const WITHIN_CLAIM: &str =
        "a holder's local deadline lies a safety margin before its claim lapses in the registry";
    /// Sanity (retries modelled): a late claim holds the id for nobody.
    pub const ORPHAN: &str = "a claim is granted after its claimant gave up on it";
    /// Sanity (retries modelled): the copy given up on of a renewal sent again is applied
    /// after the holder read the other copy's answer, while it issues.
    pub const LATE_RENEWAL: &str =
        "a renewal sent again is applied twice, the first copy after the holder read the answer";
}

impl LeaseModel {
    fn send(&self, s: &mut State, h: usize, body: Body) {
        s.net.push(Msg {
            holder: h as u8,
            live: true,
            body,
        });
        s.net.sort();
        s.holders[h].sent = true;
    }

    /// The holder stops waiting for its messages: they stay in flight, unread.
    fn orphan(s: &mut State, h: usize) {
        for m in &mut s.net {
            if usize::from(m.holder) == h {
                m.live = false;
            }
        }
        // Responses nobody reads change nothing: drop them at once.
        s.net.retain(|m| m.live || m.body.is_request());
        s.net.sort();
        s.holders[h].pending = None;
    }

    /// The holder's generator is gone: its claim's ticks join the history; the process
    /// may start again from scratch.
    fn reset(&self, s: &mut State, h: usize) {
        Self::orphan(s, h);
        let (token, issued) = {
            let holder = &s.holders[h];
            (holder.token(), span(holder))
        };
        if let (Some(token), Some(rec)) = (token, s.registry.record) {
            if rec.token == Some(token) && s.ghost.owner_gone_at.is_none() {
                s.ghost.owner_gone_at = Some(s.now);
            }
        }
        s.ghost.history |= issued;
        s.holders[h] = Holder::idle(self.bounds.behind);
    }

    /// Sends a release nobody waits for (shutdown, or a start that failed).
    fn release_and_reset(&self, s: &mut State, h: usize, mark: u64) {
        if let Some(token) = s.holders[h].token() {
            Self::orphan(s, h);
            s.net.push(Msg {
                holder: h as u8,
                live: false,
                body: Body::Release { token, mark },
            });
            s.net.sort();
        }
        self.reset(s, h);
    }

    fn can_send(&self, s: &State, h: usize) -> bool {
        let holder = &s.holders[h];
        holder.pending.is_none() && !holder.sent && s.net.len() < self.bounds.max_in_flight
    }

    /// The request holder `h` would send again for its pending call, if it may: a renewal
    /// (during the start or `renew_once`), with the same token, mark and version; a claim
    /// only where [`decisions::resend_claim`] allows it (with a new token, which the
    /// service's registry makes for each `acquire`).
    fn resendable(&self, s: &State, h: usize) -> Option<Body> {
        let b = &self.bounds;
        let holder = &s.holders[h];
        if holder.sent || s.net.len() >= b.max_in_flight {
            return None;
        }
        let renew = |mark| {
            let grant = holder.grant.expect("a renewal holds a claim");
            Body::Renew {
                token: grant.token,
                mark,
                version: grant.version,
            }
        };
        match holder.pending? {
            // Bounded by the claims, not the retries: the state it leads to is the one a
            // timeout followed by a new claim leads to.
            Pending::Claim => (decisions::resend_claim(b) && s.claims < b.max_claims)
                .then_some(Body::Claim { token: s.claims }),
            _ if s.retries >= b.max_retries => None,
            Pending::StartRenew => Some(renew(holder.grant?.previous_mark)),
            Pending::Renew { mark, .. } => Some(renew(mark)),
        }
    }

    /// The registry handles a request at store time `now`.
    fn registry_handles(&self, s: &mut State, m: Msg) {
        let b = &self.bounds;
        let now = s.now;
        let track_version = b.mutant == crate::Mutant::VersionOnlyRenewal;
        if s.registry.stale {
            // Every operation checks the records against the witness first (`with_records`).
            s.registry.stale = false;
            s.registry.floor_until = decisions::floor_after_restore(b, now, s.registry.floor_until);
        }
        let reply = match m.body {
            Body::Claim { token } => {
                let mut floor = s.registry.floor_until;
                if s.registry.record.is_none() {
                    floor = decisions::floor_after_loss(b, now, floor);
                    s.registry.floor_until = floor;
                }
                let record = s.registry.record;
                if decisions::standing(record.as_ref(), now) == Standing::Free {
                    if b.max_restores > 0 {
                        s.registry.before_claim = record;
                    }
                    let previous_mark = record.map_or(0, |r| r.mark);
                    let epoch = decisions::epoch(record.map_or(0, |r| r.epoch), now);
                    let version = match record {
                        Some(r) if track_version => r.version + 1,
                        _ if track_version => 1,
                        _ => 0,
                    };
                    s.registry.record = Some(Record {
                        token: Some(token),
                        expires: now + b.ttl,
                        quarantine: b.quarantine,
                        mark: previous_mark,
                        epoch,
                        version,
                    });
                    s.ghost.owner_gone_at = if m.live { None } else { Some(now) };
                    if !m.live && b.max_retries > 0 {
                        s.ghost.orphan_claim = true;
                    }
                    Body::Granted {
                        token,
                        previous_mark,
                        floor_wait: decisions::floor_wait(floor, now),
                        version,
                    }
                } else {
                    Body::Busy
                }
            }
            Body::Renew {
                token,
                mark,
                version,
            } => {
                let record = s.registry.record;
                match decisions::prove_renewal(b, record.as_ref(), token, version, now) {
                    Ok(()) => {
                        let r = s.registry.record.as_mut().expect("proved");
                        r.expires = now + b.ttl;
                        r.mark = r.mark.max(mark);
                        if track_version {
                            r.version += 1;
                        }
                        let owner_alive = s.holders.iter().any(|x| x.token() == r.token);
                        if !owner_alive {
                            s.ghost.owner_gone_at = Some(now);
                        }
                        // The copy given up on of a call whose answer (to the copy sent
                        // again) the holder read: its mark is the one the holder reserved.
                        if !m.live
                            && b.max_retries > 0
                            && s.holders.iter().any(|x| {
                                x.token() == r.token
                                    && x.phase == Phase::Running
                                    && x.fence > 0
                                    && x.reserved == mark
                            })
                        {
                            s.ghost.late_renewal = true;
                        }
                        Body::Renewed { version: r.version }
                    }
                    Err(loss) => Body::Lost(loss),
                }
            }
            Body::Release { token, mark } => {
                if let Some(r) = s.registry.record.as_mut() {
                    if r.token == Some(token) {
                        r.token = None;
                        r.expires = 0;
                        r.mark = mark;
                        if track_version {
                            r.version += 1;
                        }
                        s.ghost.owner_gone_at = None;
                    }
                }
                return;
            }
            _ => unreachable!("not a request"),
        };
        if m.live {
            s.net.push(Msg {
                holder: m.holder,
                live: true,
                body: reply,
            });
            s.net.sort();
        }
    }

    /// Holder `h` reads the response to its pending call.
    fn holder_handles(&self, s: &mut State, h: usize, body: Body) {
        let b = &self.bounds;
        let now = s.now;
        let wall = s.wall(h);
        let Some(pending) = s.holders[h].pending.take() else {
            return;
        };
        match (pending, body) {
            (
                Pending::Claim,
                Body::Granted {
                    token,
                    previous_mark,
                    floor_wait,
                    version,
                    ..
                },
            ) => {
                let holder = &mut s.holders[h];
                holder.phase = Phase::Starting;
                holder.grant = Some(HeldGrant {
                    token,
                    previous_mark,
                    floor_end: now + floor_wait,
                    resume_after: decisions::resume_after(b, previous_mark),
                    version,
                    floored: floor_wait > 0,
                });
                holder.reserved = previous_mark;
                holder.fence = 0;
            }
            (Pending::Claim, _) => s.holders[h].phase = Phase::Idle,
            (Pending::StartRenew, Body::Renewed { version }) => {
                if let Some(g) = s.holders[h].grant.as_mut() {
                    g.version = version;
                }
            }
            (
                Pending::Renew {
                    sent,
                    mark,
                    skewed: true,
                    ..
                },
                Body::Renewed { version },
            ) => {
                // `renew_once` renewed, keeping the mark, and returns `ClockSkew`: the fence
                // stays closed; a start fails and releases with the previous mark.
                let holder = &mut s.holders[h];
                if let Some(g) = holder.grant.as_mut() {
                    g.version = version;
                }
                holder.reserved = mark;
                holder.deadline = decisions::local_deadline(b, sent, now);
                holder.fence = 0;
                if holder.phase == Phase::Starting {
                    let previous = holder.grant.map_or(0, |g| g.previous_mark);
                    self.release_and_reset(s, h, previous);
                }
            }
            (
                Pending::Renew {
                    sent,
                    sent_wall,
                    mark,
                    skewed: false,
                },
                Body::Renewed { version },
            ) => {
                let deadline = decisions::local_deadline(b, sent, now);
                let fence = decisions::fence(b, mark, deadline, now, wall, sent_wall);
                let holder = &mut s.holders[h];
                if let Some(g) = holder.grant.as_mut() {
                    g.version = version;
                }
                holder.reserved = mark;
                holder.deadline = deadline;
                holder.fence = fence;
                holder.phase = Phase::Running;
                // The fence is a wall-clock time: the holder issues below it, so it must not
                // lie beyond the deadline as the wall clock reads now (nothing issued past the
                // deadline, unless the wall clock is stepped back later, where no fence can
                // help and the tick values still stay below this fence).
                let wall_at_deadline = if deadline > now {
                    wall + (deadline - now)
                } else {
                    0
                };
                if fence > wall_at_deadline && s.ghost.late.is_none() {
                    s.ghost.late = Some((h as u8, now, fence, wall_at_deadline));
                }
            }
            (_, Body::Lost(_)) => self.renewal_failed(s, h, true),
            _ => unreachable!("response {body:?} to {pending:?}"),
        }
    }

    /// A renewal failed (`lost`: the registry said so; else it timed out).
    fn renewal_failed(&self, s: &mut State, h: usize, lost: bool) {
        let now = s.now;
        let holder = &mut s.holders[h];
        holder.pending = None;
        match holder.phase {
            // `start` fails and releases with the previous mark.
            Phase::Starting => {
                let mark = holder.grant.map_or(0, |g| g.previous_mark);
                self.release_and_reset(s, h, mark);
            }
            Phase::Running if lost => {
                holder.fence = 0;
                holder.phase = Phase::Lost;
            }
            Phase::Running if now >= holder.deadline => {
                holder.fence = 0;
            }
            Phase::Claiming => holder.phase = Phase::Idle,
            _ => {}
        }
    }

    /// Holder `h` issues in the tick its wall clock reads. The model lets every holder
    /// issue whenever its generator permits (fence open, past the resume point), so a
    /// claim's span is the span of every tick it was permitted: the worst case of any
    /// choice to issue or not. (After a backward step the generator would wait for its
    /// last tick instead; such ticks lie inside the span already.)
    fn issue(&self, s: &mut State, h: usize) {
        let wall = s.wall(h);
        let others = s
            .holders
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != h)
            .fold(s.ghost.history, |acc, (_, x)| acc | span(x));
        let holder = &mut s.holders[h];
        // The span this claim covers with this tick: from its first tick to this one.
        let first = holder.first_issued.unwrap_or(wall);
        let grown = span_mask(
            first.min(wall),
            holder.last_issued.unwrap_or(wall).max(wall),
        );
        if others & grown != 0 && s.ghost.duplicate.is_none() {
            s.ghost.duplicate = Some((h as u8, wall));
        }
        if others != 0 {
            s.ghost.takeover_issued = true;
        }
        if holder.grant.is_some_and(|g| g.floored) {
            s.ghost.issued_after_wipe = true;
        }
        holder.first_issued = Some(first.min(wall));
        holder.last_issued = Some(holder.last_issued.map_or(wall, |l| l.max(wall)));
    }

    /// Where holder `h`'s wall clock may be at the next tick (`tick`) or when it sends a
    /// renewal (`!tick`), as offsets: anywhere in the range (`behind` to `ahead` of the
    /// registry's clock), a step of any size, except:
    ///
    /// - during a `renew_once` (from its reading of the clocks to the fence it sets) it
    ///   stays within `step_in_renewal` of its reading (the protocol assumes 0);
    /// - while its fence is open it does not fall back (what it issues stays within the
    ///   reading's limit; a step forward is stopped by the fence).
    ///
    /// A holder reads its clock only to renew and, fence open, to issue. Otherwise (idle,
    /// claiming, starting, fenced) its clock is left unsaid (kept at the registry's, so that
    /// such holders differ in nothing else) until the renewal that reads it, which may find
    /// it anywhere: the same steps, with far fewer states.
    pub fn clock_steps(&self, holder: &Holder, tick: bool) -> RangeInclusive<u64> {
        let b = &self.bounds;
        let top = b.behind + b.ahead;
        match holder.pending {
            Some(Pending::Renew {
                sent, sent_wall, ..
            }) => {
                let read = sent_wall - sent;
                read.saturating_sub(b.step_in_renewal)..=(read + b.step_in_renewal).min(top)
            }
            _ if holder.phase == Phase::Running && holder.fence > 0 => {
                if tick {
                    holder.offset..=top
                } else {
                    holder.offset..=holder.offset
                }
            }
            _ if tick => b.behind..=b.behind,
            _ => 0..=top,
        }
    }

    /// Leaves unsaid the clocks that nothing reads until their next renewal (see
    /// [`clock_steps`](Self::clock_steps)).
    fn forget_unread_clocks(&self, s: &mut State) {
        for holder in &mut s.holders {
            if !holder.reads_clock() {
                holder.offset = self.bounds.behind;
            }
        }
    }

    fn may_issue(&self, s: &State, h: usize) -> bool {
        let holder = &s.holders[h];
        let wall = s.wall(h);
        holder.phase == Phase::Running
            && wall < holder.fence
            && holder.last_issued != Some(wall)
            && !holder
                .grant
                .and_then(|g| g.resume_after)
                .is_some_and(|r| wall <= r)
    }
}

impl Model for LeaseModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        let b = &self.bounds;
        // Idle holders' clocks are unsaid until their first renewal.
        vec![State {
            now: 0,
            holders: vec![Holder::idle(b.behind); b.holders],
            // A registry in use: the record exists (released, no mark yet).
            registry: Registry {
                before_claim: None,
                stale: false,
                record: Some(Record {
                    token: None,
                    expires: 0,
                    quarantine: b.quarantine,
                    mark: 0,
                    epoch: 0,
                    version: u32::from(b.mutant == crate::Mutant::VersionOnlyRenewal),
                }),
                floor_until: 0,
            },
            net: Vec::new(),
            claims: 0,
            wipes: 0,
            restores: 0,
            retries: 0,
            ghost: Ghost::default(),
        }]
    }

    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        let b = &self.bounds;
        if s.now < b.max_time {
            let mut choices = vec![0u64];
            for (h, holder) in s.holders.iter().enumerate() {
                let steps = self.clock_steps(holder, true);
                choices = choices
                    .into_iter()
                    .flat_map(|c| steps.clone().map(move |o| c | (o << (4 * h))))
                    .collect();
            }
            actions.extend(choices.into_iter().map(|offsets| Action::Tick { offsets }));
        }
        for (h, holder) in s.holders.iter().enumerate() {
            let hu = h as u8;
            match holder.phase {
                Phase::Idle if s.claims < b.max_claims && self.can_send(s, h) => {
                    actions.push(Action::Claim(hu));
                }
                Phase::Starting | Phase::Running if self.can_send(s, h) => {
                    for offset in self.clock_steps(holder, false) {
                        actions.push(Action::Renew(hu, offset));
                    }
                }
                _ => {}
            }
            if holder.pending.is_some() {
                actions.push(Action::Timeout(hu));
            }
            if self.resendable(s, h).is_some() {
                actions.push(Action::Retry(hu));
            }
            if holder.phase == Phase::Running {
                actions.push(Action::Shutdown(hu));
            }
            if holder.phase != Phase::Idle {
                actions.push(Action::Crash(hu));
            }
        }
        for (i, m) in s.net.iter().enumerate() {
            if i > 0 && s.net[i - 1] == *m {
                continue;
            }
            actions.push(Action::Deliver(*m));
            // A live message that is lost is a call that times out: `Timeout` covers it.
            if !m.live {
                actions.push(Action::Drop(*m));
            }
            if matches!(m.body, Body::Release { .. })
                && s.retries < b.max_retries
                && s.net.len() < b.max_in_flight
            {
                actions.push(Action::Resend(*m));
            }
        }
        if s.wipes < b.max_wipes && s.registry.record.is_some() {
            actions.push(Action::Wipe);
        }
        if s.restores < b.max_restores && s.registry.before_claim.is_some() {
            actions.push(Action::Restore);
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let b = &self.bounds;
        let mut s = last.clone();
        match action {
            Action::Tick { offsets } => {
                s.now += 1;
                for (h, holder) in s.holders.iter_mut().enumerate() {
                    holder.offset = (offsets >> (4 * h)) & 0xf;
                    holder.sent = false;
                }
            }
            Action::Claim(h) => {
                let h = usize::from(h);
                let token = s.claims;
                s.claims += 1;
                self.send(&mut s, h, Body::Claim { token });
                s.holders[h].phase = Phase::Claiming;
                s.holders[h].pending = Some(Pending::Claim);
            }
            Action::Renew(h, offset) => {
                let h = usize::from(h);
                s.holders[h].offset = offset;
                let wall = s.wall(h);
                let holder = &s.holders[h];
                let grant = holder.grant.expect("a claim to renew");
                let ready =
                    s.now >= grant.floor_end && !grant.resume_after.is_some_and(|r| wall <= r);
                let (pending, mark) = if holder.phase == Phase::Starting && !ready {
                    (Pending::StartRenew, grant.previous_mark)
                } else {
                    // `renew_once`: the clocks first, then the mark.
                    let skewed = decisions::clock_skewed(b, wall, s.registry_wall(b.behind));
                    let mark = if skewed {
                        holder.reserved
                    } else {
                        decisions::reserve_mark(b, holder.reserved, wall)
                    };
                    (
                        Pending::Renew {
                            sent: s.now,
                            sent_wall: wall,
                            mark,
                            skewed,
                        },
                        mark,
                    )
                };
                self.send(
                    &mut s,
                    h,
                    Body::Renew {
                        token: grant.token,
                        mark,
                        version: grant.version,
                    },
                );
                s.holders[h].pending = Some(pending);
            }
            Action::Timeout(h) => {
                let h = usize::from(h);
                let was = s.holders[h].pending;
                Self::orphan(&mut s, h);
                match was {
                    Some(Pending::Claim) => s.holders[h].phase = Phase::Idle,
                    _ => self.renewal_failed(&mut s, h, false),
                }
            }
            Action::Retry(h) => {
                let h = usize::from(h);
                let body = self.resendable(&s, h)?;
                let pending = s.holders[h].pending;
                Self::orphan(&mut s, h);
                if let Body::Claim { .. } = body {
                    s.claims += 1;
                } else {
                    s.retries += 1;
                }
                self.send(&mut s, h, body);
                s.holders[h].pending = pending;
            }
            Action::Resend(m) => {
                s.retries += 1;
                s.net.push(m);
                s.net.sort();
            }
            Action::Shutdown(h) => {
                let h = usize::from(h);
                let holder = &mut s.holders[h];
                holder.fence = 0;
                let grant = holder.grant.expect("running holds a claim");
                let last_issued = holder.last_issued.or(grant.resume_after).unwrap_or(0);
                let mark = decisions::final_mark(last_issued, grant.previous_mark);
                self.release_and_reset(&mut s, h, mark);
            }
            Action::Crash(h) => self.reset(&mut s, usize::from(h)),
            Action::Deliver(m) => {
                let i = s.net.iter().position(|x| *x == m)?;
                s.net.remove(i);
                if m.body.is_request() {
                    self.registry_handles(&mut s, m);
                } else if m.live {
                    self.holder_handles(&mut s, usize::from(m.holder), m.body);
                }
            }
            Action::Drop(m) => {
                let i = s.net.iter().position(|x| *x == m)?;
                s.net.remove(i);
            }
            Action::Wipe => {
                s.wipes += 1;
                s.registry = Registry {
                    record: None,
                    floor_until: 0,
                    before_claim: None,
                    stale: false,
                };
                s.ghost.owner_gone_at = None;
            }
            Action::Restore => {
                s.restores += 1;
                s.registry = Registry {
                    record: s.registry.before_claim,
                    floor_until: 0,
                    before_claim: None,
                    stale: true,
                };
                s.ghost.owner_gone_at = None;
            }
        }
        // Every holder issues whatever its generator permits now: the worst case, so the
        // issue choices need no actions (see `issue`).
        for h in 0..s.holders.len() {
            if self.may_issue(&s, h) {
                self.issue(&mut s, h);
            }
        }
        self.forget_unread_clocks(&mut s);
        Some(s)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut properties = vec![
            Property::always(names::UNIQUE, |_, s: &State| s.ghost.duplicate.is_none()),
            Property::always(names::DEADLINE, |_, s: &State| s.ghost.late.is_none()),
            Property::always(names::RECYCLED, |m: &LeaseModel, s: &State| {
                let b = &m.bounds;
                match s.ghost.owner_gone_at {
                    Some(gone) if s.now >= gone + b.ttl + b.quarantine => {
                        decisions::standing(s.registry.record.as_ref(), s.now) == Standing::Free
                    }
                    _ => true,
                }
            }),
            // The local deadline is what stops a holder (the property above checks the fence
            // against it); the registry lets the claim lapse TTL after the last renewal it
            // applied under the holder's token, which is never before that renewal was sent.
            Property::always(names::WITHIN_CLAIM, |m: &LeaseModel, s: &State| {
                let margin = m.bounds.safety_margin;
                let Some(Record {
                    token: Some(token),
                    expires,
                    ..
                }) = s.registry.record
                else {
                    return true;
                };
                s.holders.iter().all(|x| {
                    x.token() != Some(token) || x.deadline == 0 || x.deadline + margin <= expires
                })
            }),
            Property::sometimes(names::TAKEOVER, |_, s: &State| s.ghost.takeover_issued),
            Property::sometimes(names::AFTER_WIPE, |_, s: &State| s.ghost.issued_after_wipe),
        ];
        // Their ghost facts are tracked only then: without retries, they would be checked
        // on every state for nothing.
        if self.bounds.max_retries > 0 {
            properties.extend([
                Property::sometimes(names::ORPHAN, |_, s: &State| s.ghost.orphan_claim),
                Property::sometimes(names::LATE_RENEWAL, |_, s: &State| s.ghost.late_renewal),
            ]);
        }
        properties
    }
}

/// Holders are interchangeable: the state with the holders sorted stands for every
/// permutation of them (symmetry reduction).
pub fn representative(s: &State) -> State {
    let mut order: Vec<usize> = (0..s.holders.len()).collect();
    order.sort_by(|&a, &b| s.holders[a].cmp(&s.holders[b]));
    if order.iter().enumerate().all(|(i, &o)| i == o) {
        return s.clone();
    }
    // new index of old holder i
    let mut new_index = vec![0u8; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new as u8;
    }
    let mut r = s.clone();
    r.holders = order.iter().map(|&old| s.holders[old].clone()).collect();
    for m in &mut r.net {
        m.holder = new_index[usize::from(m.holder)];
    }
    r.net.sort();
    if let Some((h, t)) = r.ghost.duplicate {
        r.ghost.duplicate = Some((new_index[usize::from(h)], t));
    }
    if let Some((h, n, f, w)) = r.ghost.late {
        r.ghost.late = Some((new_index[usize::from(h)], n, f, w));
    }
    r
}
