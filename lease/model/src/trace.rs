//! Counterexamples as readable traces: one line per step, with true time and the wall
//! clocks (R: the registry's, A, B, C: the holders'), saying what happened and what it
//! changed.

use std::fmt::Write;

use stateright::Path;

use crate::model::Action;
use crate::state::{Body, Msg, Phase, State, TOKENS};

fn who(h: u8) -> char {
    char::from(b'A' + h)
}

fn body(b: &Body) -> String {
    let tok = |t: &u8| TOKENS[usize::from(*t)];
    match b {
        Body::Claim { token } => format!("claim (token {})", tok(token)),
        Body::Renew { token, mark, .. } => format!("renew (token {}, mark {mark})", tok(token)),
        Body::Release { token, mark } => format!("release (token {}, mark {mark})", tok(token)),
        Body::Granted {
            token,
            previous_mark,
            floor_wait,
            ..
        } => format!(
            "granted (token {}, previous mark {previous_mark}, floor wait {floor_wait})",
            tok(token)
        ),
        Body::Busy => "no free node".into(),
        Body::Renewed { .. } => "renewed".into(),
        Body::Lost(why) => format!("lost ({why:?})"),
    }
}

fn message(m: &Msg) -> String {
    let stale = if m.live { "" } else { " [nobody waits for it]" };
    if m.body.is_request() {
        format!("{}'s {}{stale}", who(m.holder), body(&m.body))
    } else {
        format!("reply to {}: {}{stale}", who(m.holder), body(&m.body))
    }
}

/// Where a clock at `offset` is against the registry's.
fn against(offset: u64, behind: u64) -> String {
    match offset.cmp(&behind) {
        std::cmp::Ordering::Equal => "its clock on the registry's".into(),
        std::cmp::Ordering::Greater => {
            format!("its clock {} ahead of the registry's", offset - behind)
        }
        std::cmp::Ordering::Less => format!("its clock {} behind the registry's", behind - offset),
    }
}

/// One step, told from the states before and after it; `behind` places the registry's
/// clock ([`Bounds::behind`](crate::Bounds::behind)).
pub fn step(before: &State, action: &Action, after: &State, behind: u64) -> String {
    let holder = |h: &u8| &after.holders[usize::from(*h)];
    match action {
        Action::Tick { .. } => {
            let mut out = String::from("time passes");
            for h in 0..after.holders.len() {
                let (was, is) = (before.holders[h].offset, after.holders[h].offset);
                if was != is {
                    let _ = write!(
                        out,
                        "; {}'s wall clock {} by {} against true time",
                        who(h as u8),
                        if is > was {
                            "steps forward"
                        } else {
                            "falls back"
                        },
                        is.abs_diff(was)
                    );
                }
            }
            out
        }
        Action::Claim(h) => format!("{} sends a claim", who(*h)),
        Action::Renew(h, offset) => {
            let kind = match holder(h).pending {
                Some(crate::state::Pending::Renew {
                    mark,
                    skewed: false,
                    ..
                }) => format!(
                    "renew_once reserving mark {mark} ({})",
                    against(*offset, behind)
                ),
                Some(crate::state::Pending::Renew {
                    mark, skewed: true, ..
                }) => format!(
                    "renew_once keeping mark {mark} ({}): beyond the limit, the fence stays \
                     closed",
                    against(*offset, behind)
                ),
                _ => "a renewal while starting (floor / previous mark)".into(),
            };
            format!("{} sends {kind}", who(*h))
        }
        Action::Timeout(h) => format!("{}'s call times out", who(*h)),
        Action::Retry(h) => {
            let sent = after
                .net
                .iter()
                .find(|m| m.holder == *h && m.live && m.body.is_request())
                .map_or_else(String::new, |m| body(&m.body));
            format!(
                "{} gives up on its call at one server and sends it to another: {sent} (the \
                 first copy stays in flight, unread)",
                who(*h)
            )
        }
        Action::Resend(m) => format!("sent again to another server: {}", message(m)),
        Action::Shutdown(h) => format!("{} shuts down and releases", who(*h)),
        Action::Crash(h) => format!("{}'s process dies", who(*h)),
        Action::Drop(m) => format!("lost in the network: {}", message(m)),
        Action::Wipe => "the registry loses its records".into(),
        Action::Restore => {
            "the registry's records are restored from a backup taken before the latest claim".into()
        }
        Action::Deliver(m) => {
            let mut out = format!("delivered: {}", message(m));
            if m.body.is_request() {
                if let Body::Renew { token, .. } = m.body {
                    // A copy applied twice in one unit changes nothing the second time, but
                    // is accepted: the record is its token's and live.
                    let changed = before.registry.record != after.registry.record;
                    let held = before
                        .registry
                        .record
                        .is_some_and(|r| r.token == Some(token) && before.now < r.expires);
                    out.push_str(if changed || held {
                        " ACCEPTED"
                    } else {
                        " refused"
                    });
                }
                let r = after.registry.record;
                let _ = match r {
                    Some(r) => write!(
                        out,
                        " -> record: token {}, expires {}, mark {}, floor until {}",
                        r.token.map_or("none", |t| TOKENS[usize::from(t)]),
                        r.expires,
                        r.mark,
                        after.registry.floor_until
                    ),
                    None => write!(out, " -> record missing"),
                };
            } else if m.live {
                let x = holder(&m.holder);
                let _ = write!(
                    out,
                    " -> {} {:?}, fence {}, deadline {}",
                    who(m.holder),
                    x.phase,
                    x.fence,
                    x.deadline
                );
                if x.phase == Phase::Starting {
                    if let Some(g) = x.grant {
                        let _ = write!(
                            out,
                            ", waits until time {} and wall > {:?}",
                            g.floor_end, g.resume_after
                        );
                    }
                }
            }
            out
        }
    }
}

/// The wall clocks: the registry's (true time + `behind`), then each holder's (`?` where
/// nothing reads it until its next renewal).
fn walls(s: &State, behind: u64) -> String {
    let mut out = format!("R={}", s.registry_wall(behind));
    for (h, holder) in s.holders.iter().enumerate() {
        if holder.reads_clock() {
            let _ = write!(out, " {}={}", who(h as u8), s.wall(h));
        } else {
            let _ = write!(out, " {}=?", who(h as u8));
        }
    }
    out
}

/// The whole path, one numbered line per step; `behind` is
/// [`Bounds::behind`](crate::Bounds::behind), which places the registry's clock.
pub fn render(path: &Path<State, Action>, behind: u64) -> String {
    let steps = path.clone().into_vec();
    let mut out = String::new();
    if let Some((first, _)) = steps.first() {
        let _ = writeln!(out, "start: time 0, wall clocks {}", walls(first, behind));
    }
    for (i, pair) in steps.windows(2).enumerate() {
        let (before, action) = &pair[0];
        let (after, _) = &pair[1];
        let Some(action) = action else { continue };
        let mut line = step(before, action, after, behind);
        for (h, (x, y)) in before.holders.iter().zip(&after.holders).enumerate() {
            if y.last_issued.is_some()
                && (x.first_issued, x.last_issued) != (y.first_issued, y.last_issued)
            {
                let _ = write!(
                    line,
                    "; {} issues tick {} (fence {}, deadline {})",
                    who(h as u8),
                    after.wall(h),
                    y.fence,
                    y.deadline
                );
            }
        }
        let _ = writeln!(
            out,
            "{:>3}. [time {:>2} | wall {}] {}",
            i + 1,
            after.now,
            walls(after, behind),
            line
        );
    }
    if let Some((last, _)) = steps.last() {
        if let Some((h, tick)) = last.ghost.duplicate {
            let _ = writeln!(
                out,
                "=> tick {tick} issued by {} was already issued under another claim",
                who(h)
            );
        }
        if let Some((h, t, fence, at_deadline)) = last.ghost.late {
            let _ = writeln!(
                out,
                "=> at time {t} {} set its fence to {fence}, but its wall clock reads {at_deadline} \
                 at its local deadline {}: it may issue past the deadline",
                who(h),
                last.holders[usize::from(h)].deadline
            );
        }
    }
    out
}
