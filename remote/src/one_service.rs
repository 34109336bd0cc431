//! One address, one service. Every answer names what its server serves (the table a
//! segment store's answers name, the lease registry a registry's answers name), and a
//! client keeps to the first one named: two tables hand out the same IDs, two registries
//! the same node ids.
//!
//! Waiting for a call to reach another server is not enough: clients that list the
//! servers in another order, or that started while the first was down, would each issue
//! from what their own first server serves, and never meet the other. So after the first
//! answer the client asks every other server what it serves, and keeps asking those that
//! did not answer, in the background, every [`ASK_AGAIN`], until each has. Once two are
//! found, or a server refuses the token the others take, every call is refused: which
//! of the two is right cannot be known here, and refusing is the side that issues no
//! duplicate. The refusal lasts until the client is made again.
//!
//! A store that lost its records loses its id with them: the services connected to it
//! before the loss and those connected after name it apart until each is restarted, and
//! their clients are refused meanwhile (a holder of the lost records is told `Lost`
//! anyway).

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use crate::servers::{Asked, Servers, SURVEY_WAIT};

/// How often the servers that have not answered what they serve are asked again.
pub const ASK_AGAIN: Duration = Duration::from_secs(1);

/// What a client's servers serve, as far as they said.
pub(crate) struct OneService {
    /// The field of an answer that names what its server serves.
    field: &'static str,
    /// Two of what the field names, for the refusal: "tables".
    plural: &'static str,
    /// What two of them would do, for the refusal: "hand out the same IDs".
    two_would: &'static str,
    /// The address, as refusals show it.
    shown: String,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// What the first answer named.
    first: Option<String>,
    /// Per server: whether it said it serves `first`.
    agreed: Vec<bool>,
    /// Why every call is refused, once one must be.
    refusal: Option<String>,
    /// Whether a thread is asking the servers that have not said.
    asking: bool,
}

impl OneService {
    /// `field` names what a server serves in its answers (`"table"`, `"registry"`);
    /// `plural` and `two_would` word the refusal ("tables", "hand out the same IDs").
    pub(crate) fn new(
        field: &'static str,
        plural: &'static str,
        two_would: &'static str,
        shown: String,
    ) -> Arc<Self> {
        Arc::new(OneService {
            field,
            plural,
            two_would,
            shown,
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Checks an answer that `servers` gave (naming what its server serves, or not, as a
    /// server that serves nothing of its own), and after the first one, asks the other
    /// servers (`path` is a `GET` that every server answers with the field). `Err` with
    /// the reason once every call must be refused.
    pub(crate) fn check(
        self: &Arc<Self>,
        servers: &Arc<Servers>,
        named: Option<&str>,
        path: impl FnOnce() -> String,
    ) -> Result<(), String> {
        let first = {
            let mut state = self.state();
            if let Some(refusal) = &state.refusal {
                return Err(refusal.clone());
            }
            let Some(named) = named else {
                return Ok(());
            };
            match state.first.as_deref() {
                Some(first) if first == named => return Ok(()),
                Some(first) => {
                    let refusal = self.two(first, named);
                    state.refusal = Some(refusal.clone());
                    return Err(refusal);
                }
                None => {
                    state.first = Some(named.to_owned());
                    state.agreed = vec![false; servers.len()];
                    state.agreed[servers.last_answered()] = true;
                    true
                }
            }
        };
        if first {
            let path = path();
            self.ask_those_not_agreed(servers, &path, SURVEY_WAIT);
            self.keep_asking(servers, path);
        }
        match &self.state().refusal {
            Some(refusal) => Err(refusal.clone()),
            None => Ok(()),
        }
    }

    /// Asks each server that has not said it serves the first one, waiting `wait` for
    /// each.
    fn ask_those_not_agreed(&self, servers: &Servers, path: &str, wait: Duration) {
        let asking: Vec<usize> = {
            let state = self.state();
            if state.refusal.is_some() {
                return;
            }
            (0..state.agreed.len())
                .filter(|&i| !state.agreed[i])
                .collect()
        };
        if asking.is_empty() {
            return;
        }
        let said = servers.ask_each(&asking, path, wait);
        let mut state = self.state();
        for (index, asked) in said {
            if state.refusal.is_some() {
                return;
            }
            match asked {
                Asked::Answer(answer) => match (answer[self.field].as_str(), &state.first) {
                    (Some(named), Some(first)) if named == first => state.agreed[index] = true,
                    (Some(named), Some(first)) => state.refusal = Some(self.two(first, named)),
                    // A server that names none serves nothing of its own to compare.
                    _ => {}
                },
                Asked::RefusedToken(status) => {
                    state.refusal = Some(format!(
                        "{} refuses this client's token ({status}), which the other servers \
                         of {} take, so what it serves cannot be checked: an address must \
                         name the servers of one service, each taking its tokens",
                        servers.base(index),
                        self.shown
                    ));
                }
                Asked::NoAnswer => {}
            }
        }
    }

    /// Asks the servers that have not said, every [`ASK_AGAIN`], until all have (or one
    /// must be refused), on a thread of its own that ends with the client.
    fn keep_asking(self: &Arc<Self>, servers: &Arc<Servers>, path: String) {
        {
            let mut state = self.state();
            if state.asking || state.refusal.is_some() || state.agreed.iter().all(|&a| a) {
                return;
            }
            state.asking = true;
        }
        let (this, servers): (Weak<Self>, Arc<Servers>) =
            (Arc::downgrade(self), Arc::clone(servers));
        let asking = std::thread::Builder::new()
            .name("ferroflake-servers".to_owned())
            .spawn(move || loop {
                std::thread::sleep(ASK_AGAIN);
                let Some(one) = this.upgrade() else {
                    return;
                };
                // As long as a call waits: a server slower than the first call's short
                // wait still answers calls, and must not go unasked for that.
                one.ask_those_not_agreed(&servers, &path, servers.timeout());
                let mut state = one.state();
                if state.refusal.is_some() || state.agreed.iter().all(|&a| a) {
                    state.asking = false;
                    return;
                }
            });
        if asking.is_err() {
            // Nobody would ask the servers that have not said: refuse rather than trust
            // them.
            self.state().refusal = Some(format!(
                "cannot start the thread that checks the servers of {}",
                self.shown
            ));
        }
    }

    fn two(&self, first: &str, other: &str) -> String {
        format!(
            "the servers of {} serve two {} ({first:?} and {other:?}), which {}: an address \
             must name the servers of one service (where one store lost its records, its id \
             among them, the services connected before and since name it apart: restart \
             each, then this client)",
            self.shown, self.plural, self.two_would
        )
    }
}
