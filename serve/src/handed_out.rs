//! The last range the store routes handed out for each key, and the ticket that came with
//! it: a give-back must show the ticket of the range it gives back.
//!
//! A give-back moves the key's table back, so that the range's unissued top is handed out
//! again. Without proof that the caller holds that range, any client that may take IDs of
//! the key could read the table and give back a range another client is issuing from,
//! which would then be handed out twice. Only the last range handed out can be given back
//! (the table must not have moved since); once it is, the one before is the last again,
//! as a client closing gives back its preloaded range and then the rest of its current
//! one. So the tickets of the last [`KEPT`] ranges of each key are kept, each good for its
//! own range once. A range handed out by another server, before this one started, or
//! more than [`KEPT`] ranges ago has no ticket here: its give-back is refused and the range
//! is wasted, never issued twice.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use ferroflake_segment::Range;
use subtle::ConstantTimeEq;

/// How many of a key's last ranges keep their tickets: a client's current range and the
/// one it preloaded, with room for a few clients between.
pub(crate) const KEPT: usize = 8;

/// The tickets of the last ranges handed out, by key, newest last.
#[derive(Default)]
pub(crate) struct HandedOut {
    last: Mutex<HashMap<String, VecDeque<(Range, u128)>>>,
}

impl HandedOut {
    /// Records `range` as the last one handed out for `key`, and returns its ticket.
    pub fn hand_out(&self, key: &str, range: Range) -> u128 {
        let mut bytes = [0u8; 16];
        // Without the system's randomness no ticket could be trusted: 0 is never issued,
        // so a give-back then always fails and the range is wasted.
        let ticket = match getrandom::fill(&mut bytes) {
            Ok(()) => u128::from_le_bytes(bytes).max(1),
            Err(_) => 0,
        };
        let mut last = self.lock();
        let kept = last.entry(key.to_owned()).or_default();
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back((range, ticket));
        ticket
    }

    /// Whether `rest` is the top of a range handed out for `key` whose `ticket` is shown
    /// (the store then checks that nobody took a range since). A ticket that matches is
    /// used up, whatever `rest` is.
    pub fn take_back(&self, key: &str, rest: Range, ticket: u128) -> bool {
        let mut last = self.lock();
        let Some(kept) = last.get_mut(key) else {
            return false;
        };
        let shown = |known: u128| {
            known != 0 && bool::from(known.to_le_bytes().ct_eq(&ticket.to_le_bytes()))
        };
        let Some(at) = kept.iter().position(|&(_, known)| shown(known)) else {
            return false;
        };
        let (range, _) = kept.remove(at).expect("found");
        if kept.is_empty() {
            last.remove(key);
        }
        rest.end == range.end && range.start <= rest.start && rest.start <= rest.end
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, VecDeque<(Range, u128)>>> {
        self.last.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start: u64, end: u64) -> Range {
        Range { start, end }
    }

    #[test]
    fn only_the_last_ranges_ticket_gives_back_its_top_once() {
        let handed = HandedOut::default();
        let first = handed.hand_out("k", range(100, 200));
        assert!(
            !handed.take_back("k", range(150, 200), first ^ 1),
            "a wrong ticket"
        );
        assert!(
            !handed.take_back("other", range(150, 200), first),
            "another key"
        );
        let second = handed.hand_out("k", range(200, 300));
        // Given back top first, as a client that closes: its preloaded range, then the
        // rest of its current one.
        assert!(handed.take_back("k", range(200, 300), second));
        assert!(!handed.take_back("k", range(200, 300), second), "used up");
        assert!(handed.take_back("k", range(150, 200), first));
        assert!(!handed.take_back("k", range(150, 200), first), "used up");
        // Only the last few ranges keep their tickets.
        let old = handed.hand_out("k", range(0, 1));
        for n in 0..KEPT as u64 {
            handed.hand_out("k", range(n + 1, n + 2));
        }
        assert!(!handed.take_back("k", range(0, 1), old), "too old");
        let third = handed.hand_out("k", range(200, 300));
        assert!(
            !handed.take_back("k", range(100, 300), third),
            "below the range"
        );
        let fourth = handed.hand_out("k", range(200, 300));
        assert!(
            !handed.take_back("k", range(250, 299), fourth),
            "not its top"
        );
    }
}
