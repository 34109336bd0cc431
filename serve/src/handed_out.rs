//! The last range the store routes handed out for each key, and the ticket that came with
//! it: a give-back must show the ticket of the range it gives back.
//!
//! A give-back moves the key's table back, so that the range's unissued top is handed out
//! again. Without proof that the caller holds that range, any client that may take IDs of
//! the key could read the table and give back a range another client is issuing from,
//! which would then be handed out twice. Only the last range handed out can be given back
//! (the table must not have moved since), so one ticket per key is kept; a give-back
//! takes it, and the next range handed out replaces it. A range handed out by another
//! server, or before this one started, has no ticket here: its give-back is refused and
//! the range is wasted, never issued twice.

use std::collections::HashMap;
use std::sync::Mutex;

use ferroflake_segment::Range;
use subtle::ConstantTimeEq;

/// The tickets of the last ranges handed out, by key.
#[derive(Default)]
pub(crate) struct HandedOut {
    last: Mutex<HashMap<String, (Range, u128)>>,
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
        self.lock().insert(key.to_owned(), (range, ticket));
        ticket
    }

    /// Whether `rest` is the top of the last range handed out for `key`, shown with its
    /// `ticket`. A ticket that matches is used up, whatever `rest` is.
    pub fn take_back(&self, key: &str, rest: Range, ticket: u128) -> bool {
        let mut last = self.lock();
        let Some(&(range, known)) = last.get(key) else {
            return false;
        };
        let shown = known != 0 && bool::from(known.to_le_bytes().ct_eq(&ticket.to_le_bytes()));
        if !shown {
            return false;
        }
        last.remove(key);
        rest.end == range.end && range.start <= rest.start && rest.start <= rest.end
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Range, u128)>> {
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
        let second = handed.hand_out("k", range(100, 200));
        assert!(
            !handed.take_back("k", range(150, 200), first),
            "a replaced ticket"
        );
        assert!(handed.take_back("k", range(150, 200), second));
        assert!(!handed.take_back("k", range(150, 200), second), "used up");
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
