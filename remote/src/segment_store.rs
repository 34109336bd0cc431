//! [`RemoteStore`]: the service's segment store, called over HTTP.

use std::sync::Arc;

use ferroflake_segment::{Allocation, KeyRecord, Range, SegmentError, SegmentStore, MAX_TABLE_ID};
use serde_json::Value;

use crate::address::ServiceAddress;
use crate::one_service::OneService;
use crate::servers::{Failure, Resend, Servers};

/// How messages and [`SegmentError`]s name this store.
const NAME: &str = "ferroflake+http";

/// How many of a key's last ranges keep their tickets here: the current one and the one
/// preloaded, given back top first when the key closes, and a few more.
const TICKETS_KEPT: usize = 8;

/// A segment store whose table is the service's: every call goes to the first of the
/// address' servers that answers (see [`Servers`](crate::servers)). Allocating, reading
/// and stepping take the key's `issue` scope; creating, recovering and stepping a key are
/// the service's admin routes and take `admin`.
pub struct RemoteStore {
    servers: Arc<Servers>,
    shown: String,
    /// The table each answer names: one address is one table.
    table: Arc<OneService>,
    /// The last ranges taken for each key (at most [`TICKETS_KEPT`]) and their give-back
    /// tickets: the service gives a range back only to whoever shows its ticket.
    tickets: std::sync::Mutex<std::collections::HashMap<String, Vec<(Range, String)>>>,
}

impl RemoteStore {
    /// A store over the servers of `address`.
    ///
    /// # Errors
    /// [`SegmentError::InvalidConfig`] if the address cannot work or its token or CA file
    /// cannot be read.
    pub fn open(address: &str) -> Result<Self, SegmentError> {
        let invalid = |detail: String| SegmentError::InvalidConfig {
            detail: format!("service address {:?}: {detail}", redacted(address)),
        };
        let parsed = ServiceAddress::parse(address).map_err(invalid)?;
        let servers = Servers::open(&parsed).map_err(invalid)?;
        Ok(RemoteStore {
            servers: Arc::new(servers),
            table: OneService::new(
                "table",
                "tables",
                "hand out the same IDs",
                parsed.to_string(),
            ),
            shown: parsed.to_string(),
            tickets: std::sync::Mutex::default(),
        })
    }

    /// `rest` cut at the ranges taken for `key`, top first, each piece with its range's
    /// ticket; a piece no kept range ends at goes without one (the service then only
    /// checks the key, and gives nothing back).
    fn pieces(&self, key: &str, rest: Range) -> Vec<(Range, Option<String>)> {
        let tickets = self.tickets.lock().unwrap_or_else(|p| p.into_inner());
        let kept = tickets.get(key).map_or(&[][..], Vec::as_slice);
        let mut pieces = Vec::new();
        let mut top = rest.end;
        loop {
            let below = kept
                .iter()
                .find(|(range, _)| range.end == top && range.start < top);
            match below {
                Some((range, ticket)) => {
                    let start = range.start.max(rest.start);
                    pieces.push((Range { start, end: top }, Some(ticket.clone())));
                    top = start;
                }
                None => {
                    if top > rest.start || pieces.is_empty() {
                        pieces.push((
                            Range {
                                start: rest.start,
                                end: top,
                            },
                            None,
                        ));
                    }
                    break;
                }
            }
            if top == rest.start {
                break;
            }
        }
        pieces
    }

    /// One piece of a give-back, with its range's ticket, which is used up once answered.
    fn give_back_piece(
        &self,
        key: &str,
        piece: Range,
        expected_max_id: u64,
        ticket: Option<&str>,
    ) -> Result<bool, SegmentError> {
        let shown = ticket.map_or_else(String::new, |t| format!("&ticket={}", escaped(t)));
        let path = format!(
            "/v1/store/segment/{}/give-back?start={}&end={}&expected_max_id={expected_max_id}\
             {shown}",
            escaped(key),
            piece.start,
            piece.end,
        );
        // Kept until answered: a give-back that failed may be tried again.
        let answer = self.call(true, &path, key, Resend::OnlyIfUnsent)?;
        if let Some(used) = ticket {
            let mut tickets = self.tickets.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(kept) = tickets.get_mut(key) {
                kept.retain(|(_, ticket)| ticket != used);
            }
        }
        answer["given_back"]
            .as_bool()
            .ok_or_else(|| garbled(&answer))
    }

    fn call(
        &self,
        post: bool,
        path: &str,
        key: &str,
        resend: Resend,
    ) -> Result<Value, SegmentError> {
        // The store's own rule, before a key that cannot be one becomes a path.
        ferroflake_segment::check_key(key)?;
        let answer = self
            .servers
            .call(post, path, resend)
            .map_err(|failure| self.error(key, failure))?;
        // A server relaying another store names no table of its own.
        self.table
            .check(&self.servers, answer["table"].as_str(), || {
                format!("/v1/store/segment/{}", escaped(key))
            })
            .map_err(|detail| SegmentError::InvalidConfig { detail })?;
        Ok(answer)
    }

    /// The `SegmentError` a failure stands for: the service's kinds map back to the
    /// errors a store of one's own would give.
    fn error(&self, key: &str, failure: Failure) -> SegmentError {
        let (kind, message) = match failure {
            Failure::Unavailable(why) | Failure::Failing { reasons: why, .. } => {
                return SegmentError::Unavailable {
                    store: NAME.to_owned(),
                    detail: format!("no server of {} answered: {why}", self.shown),
                }
            }
            Failure::Refused { kind, message, .. } => (kind, message),
        };
        let key = key.to_owned();
        match kind.as_str() {
            "UNKNOWN_KEY" => SegmentError::UnknownKey { key },
            "KEY_EXISTS" => SegmentError::KeyExists { key },
            "INVALID_KEY" => SegmentError::InvalidKey {
                key,
                detail: message,
            },
            "INVALID_CONFIG" | "BAD_PARAMETER" => SegmentError::InvalidConfig { detail: message },
            "EXHAUSTED" => SegmentError::Exhausted {
                key,
                limit: MAX_TABLE_ID,
            },
            "REWOUND" => SegmentError::Rewound {
                store: NAME.to_owned(),
                key,
                detail: message,
            },
            "NO_TOKEN" | "BAD_TOKEN" | "OUT_OF_SCOPE" => SegmentError::InvalidConfig {
                detail: format!(
                    "the service at {} refused this client's token ({kind}): {message}",
                    self.shown
                ),
            },
            "NO_ROUTE" => SegmentError::InvalidConfig {
                detail: format!(
                    "the server at {} has no segment store routes (not a ferroflake service, \
                     or one older than them): {message}",
                    self.shown
                ),
            },
            "MODE_OFF" => SegmentError::InvalidConfig {
                detail: format!(
                    "the service at {} serves no segments: {message}",
                    self.shown
                ),
            },
            _ => SegmentError::Store {
                store: NAME.to_owned(),
                detail: format!("{kind}: {message}"),
            },
        }
    }
}

impl SegmentStore for RemoteStore {
    fn create(&self, key: &str, start: i64, step: u64) -> Result<(), SegmentError> {
        let path = format!(
            "/v1/admin/segment/{}?start={start}&step={step}",
            escaped(key)
        );
        // Applied twice, a create is refused the second time: sent once.
        self.call(true, &path, key, Resend::OnlyIfUnsent)
            .map(|_| ())
    }

    fn allocate(&self, key: &str, step: u64) -> Result<Allocation, SegmentError> {
        let path = format!("/v1/store/segment/{}/allocate?step={step}", escaped(key));
        // A range taken twice is wasted, never issued twice.
        let answer = self.call(true, &path, key, Resend::Safe)?;
        let range = Range {
            start: number(&answer, "start")?,
            end: number(&answer, "end")?,
        };
        let table_step = answer["table_step"]
            .as_u64()
            .ok_or_else(|| garbled(&answer))?;
        if range.end.checked_sub(range.start) != Some(step) {
            return Err(garbled(&answer));
        }
        // A service that gives no ticket takes nothing back.
        if let Some(ticket) = answer["ticket"].as_str() {
            let mut tickets = self.tickets.lock().unwrap_or_else(|p| p.into_inner());
            let kept = tickets.entry(key.to_owned()).or_default();
            if kept.len() == TICKETS_KEPT {
                kept.remove(0);
            }
            kept.push((range, ticket.to_owned()));
        }
        Ok(Allocation { range, table_step })
    }

    fn give_back(
        &self,
        key: &str,
        rest: Range,
        expected_max_id: u64,
    ) -> Result<bool, SegmentError> {
        // The store's own rule, before anything is sent.
        ferroflake_segment::check_give_back(key, rest, expected_max_id)?;
        // The rest may span ranges taken one after the other (the tail of the current one
        // and the one preloaded above it): each piece goes back with its own range's
        // ticket, the top first, the table expected at each piece's end. Once the top went
        // back the answer is true, whatever the pieces below do: the table then stands at
        // or above the rest's start, never above what the caller last took.
        let mut expected = expected_max_id;
        let mut given = false;
        for (piece, ticket) in self.pieces(key, rest) {
            match self.give_back_piece(key, piece, expected, ticket.as_deref()) {
                Ok(true) => {
                    given = true;
                    expected = piece.start;
                }
                Ok(false) => break,
                Err(e) if !given => return Err(e),
                Err(_) => break,
            }
        }
        Ok(given)
    }

    fn peek(&self, key: &str) -> Result<Option<KeyRecord>, SegmentError> {
        let path = format!("/v1/store/segment/{}", escaped(key));
        let answer = self.call(false, &path, key, Resend::Safe)?;
        if answer["max_id"].is_null() {
            return Ok(None);
        }
        Ok(Some(record(&answer)?))
    }

    fn recover(&self, key: &str, above: u64, step: u64) -> Result<KeyRecord, SegmentError> {
        let path = format!(
            "/v1/admin/segment/{}/recover?above={above}&step={step}",
            escaped(key)
        );
        // Each recovery moves the row up: applied twice, it wastes a step.
        let answer = self.call(true, &path, key, Resend::Safe)?;
        record(&answer)
    }

    fn set_step(&self, key: &str, step: u64) -> Result<KeyRecord, SegmentError> {
        let path = format!("/v1/admin/segment/{}/step?step={step}", escaped(key));
        let answer = self.call(true, &path, key, Resend::Safe)?;
        record(&answer)
    }

    fn name(&self) -> &str {
        NAME
    }
}

/// `key` as one path segment.
fn escaped(key: &str) -> String {
    url::form_urlencoded::byte_serialize(key.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

fn number(answer: &Value, field: &str) -> Result<u64, SegmentError> {
    answer[field]
        .as_str()
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| garbled(answer))
}

fn record(answer: &Value) -> Result<KeyRecord, SegmentError> {
    Ok(KeyRecord {
        max_id: number(answer, "max_id")?,
        step: answer["step"].as_u64().ok_or_else(|| garbled(answer))?,
    })
}

fn garbled(answer: &Value) -> SegmentError {
    SegmentError::Store {
        store: NAME.to_owned(),
        detail: format!("the service answered what a store does not: {answer}"),
    }
}

fn redacted(address: &str) -> String {
    ferroflake_store_address::redact(address)
}
