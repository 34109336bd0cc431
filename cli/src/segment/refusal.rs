//! Segment errors as the user sees them: a message that says what to do, an exit status,
//! and a stable kind for JSON output.

use ferroflake_segment::{SegmentError, LIMIT_JS};
use serde_json::{json, Value};

use crate::failure::Failure;

/// A segment command's failure, with the kind its JSON output names.
#[derive(Debug)]
pub struct Refusal {
    /// `UNKNOWN_KEY`, `EXHAUSTED`, ... (see [`kind`]), or `INTERRUPTED`, `USAGE`.
    pub kind: String,
    /// The message and exit status.
    pub failure: Failure,
}

impl Refusal {
    /// A refusal for `e`, with `message` (usually [`explain`]ed): exit status 2 for what
    /// the user typed (a key or setting the table cannot hold, a store address that cannot
    /// work), 1 for the state of the table or the store (a missing, existing or exhausted
    /// key, a store that fails).
    pub fn of(e: &SegmentError, message: String) -> Self {
        let failure = if e.is_invalid_input() {
            Failure::Input(message)
        } else {
            Failure::Run(message)
        };
        Refusal {
            kind: kind(e),
            failure,
        }
    }

    /// `{"kind":..,"message":..}`.
    pub fn json(&self) -> Value {
        json!({ "kind": self.kind, "message": self.failure.to_string() })
    }
}

/// Prints the outcome of a command that changes one key: on success `shown` (one JSON
/// object) or `said` (a line of text); on failure, in JSON, `{"key":..,"error":..}`. The
/// failure is the command's, even if that write fails.
pub fn print_outcome(
    out: &mut impl std::io::Write,
    key: &str,
    json: bool,
    outcome: Result<(Value, String), Refusal>,
) -> Result<(), Failure> {
    match outcome {
        Ok((shown, _)) if json => Ok(writeln!(out, "{shown}")?),
        Ok((_, said)) => Ok(writeln!(out, "{said}")?),
        Err(refusal) => {
            if json {
                let failed = json!({ "key": key, "error": refusal.json() });
                let _ = writeln!(out, "{failed}");
            }
            Err(refusal.failure)
        }
    }
}

/// The stable name of `e`'s kind in JSON output.
pub fn kind(e: &SegmentError) -> String {
    e.name().to_owned()
}

/// `e`'s message, with what to do about it where the message does not say, and which
/// store answered (`store`: its label, once it is open).
pub fn explain(e: &SegmentError, store: Option<&str>) -> String {
    let mut message = e.to_string();
    match e {
        SegmentError::UnknownKey { .. } => {
            message.push_str(", e.g. `ferroflake segment create KEY --start 1 --step 1000`");
        }
        SegmentError::NotBuilt { .. } => {
            message.push_str(&format!("; {}", ferroflake_serve::BUILD_WITH_STORES));
        }
        SegmentError::Exhausted { limit, .. } if *limit == LIMIT_JS => {
            message.push_str(" (--js keeps IDs at or below 2^53 - 1)");
        }
        _ => {}
    }
    if let Some(store) = store {
        message.push_str(&format!(" (store: {store})"));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_errors_exit_2_and_the_rest_1() {
        let cases = [
            (
                SegmentError::InvalidKey {
                    key: String::new(),
                    detail: "empty".into(),
                },
                "INVALID_KEY",
                2,
            ),
            (
                SegmentError::InvalidConfig {
                    detail: "step 0".into(),
                },
                "INVALID_CONFIG",
                2,
            ),
            (
                SegmentError::UnknownKey { key: "k".into() },
                "UNKNOWN_KEY",
                1,
            ),
            (
                SegmentError::Exhausted {
                    key: "k".into(),
                    limit: LIMIT_JS,
                },
                "EXHAUSTED",
                1,
            ),
            (
                SegmentError::Unavailable {
                    store: "sqlite".into(),
                    detail: "busy".into(),
                },
                "UNAVAILABLE",
                1,
            ),
        ];
        for (e, name, code) in cases {
            let refusal = Refusal::of(&e, explain(&e, Some("the SQLite file /x.db")));
            assert_eq!(refusal.kind, name);
            assert_eq!(refusal.failure.exit_code(), code);
            let message = refusal.json()["message"].as_str().unwrap().to_owned();
            assert!(
                message.ends_with("(store: the SQLite file /x.db)"),
                "{message}"
            );
        }
    }
}
