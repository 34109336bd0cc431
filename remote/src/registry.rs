//! [`RemoteRegistry`]: the service's lease registry, called over HTTP.
//!
//! Each call is one `POST` (or `GET`) to the routes under `/v1/store/lease/`; the owner
//! token of a grant travels only in a JSON body, never in a URL. Durations travel as whole
//! milliseconds, rounded up: a registry that holds a claim a fraction of a millisecond
//! longer than asked, or waits that much longer, keeps every guarantee.

use std::sync::Arc;
use std::time::Duration;

use ferroflake_lease::{
    check_reservation, Grant, LeaseError, LeaseRequest, Loss, NodeState, NodeView, Registry,
    RegistryView, Renewal, Reservation,
};
use serde_json::{json, Value};

use crate::address::ServiceAddress;
use crate::one_service::OneService;
use crate::servers::{Body, Failure, Resend, Servers};

/// How messages and [`LeaseError`]s name this registry.
const NAME: &str = "service";

/// A lease registry whose records are the service's own registry's (the one its
/// `--lease` names): every call goes to the first of the address' servers that answers
/// (see [`Servers`](crate::servers)). The routes take the `issue:*` scope (a node id
/// issues snowflake IDs for every key).
///
/// Every call goes on to the next server when one may have applied it without an answer
/// heard ([`Resend::Safe`]). A claim sent again is a claim of its own: the one applied
/// late holds its id, renewed by nobody, until its TTL and quarantine pass (an id
/// wasted for a while, as a range taken twice is, never one held twice), and the holder
/// starts on the id the next server gave it. Renewals, releases, `restored`, listings and
/// clock readings are harmless applied twice, and a renewal keeps the holder's deadline
/// and fence whichever server carried it.
///
/// ```no_run
/// use std::sync::Arc;
/// use ferroflake::{Layout, SystemClock};
/// use ferroflake_lease::{LeaseConfig, LeasedGenerator, Registry};
/// use ferroflake_remote::RemoteRegistry;
///
/// let registry = RemoteRegistry::open("ferroflake+http://127.0.0.1:8080,127.0.0.1:8081/")?;
/// let generator = LeasedGenerator::start(
///     Layout::twitter(),
///     SystemClock,
///     Arc::new(registry) as Arc<dyn Registry>,
///     LeaseConfig::default(),
/// )?;
/// let id = generator.next_id()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RemoteRegistry {
    servers: Arc<Servers>,
    shown: String,
    /// The registry each answer names: one address is one registry.
    registry: Arc<OneService>,
}

impl RemoteRegistry {
    /// A registry over the servers of `address`.
    ///
    /// # Errors
    /// [`LeaseError::BadAddress`] if the address cannot work;
    /// [`LeaseError::InvalidConfig`] if its token or CA file cannot be read.
    pub fn open(address: &str) -> Result<Self, LeaseError> {
        let shown_address = ferroflake_store_address::redact(address);
        let parsed = ServiceAddress::parse(address).map_err(|detail| LeaseError::BadAddress {
            address: shown_address.clone(),
            detail,
        })?;
        let servers = Servers::open(&parsed).map_err(|detail| LeaseError::InvalidConfig {
            detail: format!("service address {shown_address:?}: {detail}"),
        })?;
        Ok(RemoteRegistry {
            servers: Arc::new(servers),
            registry: OneService::new(
                "registry",
                "lease registries",
                "hand out the same node ids",
                parsed.to_string(),
            ),
            shown: parsed.to_string(),
        })
    }

    fn call(&self, body: Body<'_>, route: &str, resend: Resend) -> Result<Value, Failure> {
        self.servers
            .send(body, &format!("/v1/store/lease/{route}"), resend)
    }

    /// `call`, its failure as the [`LeaseError`] a registry of one's own would give, and
    /// its answer checked to come from the registry of the earlier answers.
    fn ask(
        &self,
        body: Body<'_>,
        route: &str,
        resend: Resend,
        lost: Option<u64>,
        node_count: u64,
    ) -> Result<Value, LeaseError> {
        let answer = self
            .call(body, route, resend)
            .map_err(|failure| self.error(failure, lost, node_count))?;
        self.checked(&answer)?;
        Ok(answer)
    }

    /// `Ok` if `answer` names the registry of the earlier answers (see
    /// [`OneService`]).
    fn checked(&self, answer: &Value) -> Result<(), LeaseError> {
        let Some(registry) = answer["registry"].as_str() else {
            return Err(self.garbled(answer));
        };
        self.registry
            .check(&self.servers, Some(registry), || {
                "/v1/store/lease/clock".to_owned()
            })
            .map_err(|detail| LeaseError::InvalidConfig { detail })
    }

    /// The grant a claim's `answer` holds, among `node_count` ids.
    fn grant_in(&self, answer: &Value, node_count: u64) -> Result<Grant, LeaseError> {
        let grant = &answer["grant"];
        let number = |field: &str| grant[field].as_u64().ok_or_else(|| self.garbled(answer));
        let token = grant["token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| self.garbled(answer))?;
        let node_id = number("node_id")?;
        if node_id >= node_count {
            return Err(self.garbled(answer));
        }
        Ok(Grant {
            node_id,
            token: token.to_owned(),
            epoch: number("epoch")?,
            previous_high_water_ms: number("previous_high_water_ms")?,
            floor_wait: Duration::from_millis(number("floor_wait_ms")?),
        })
    }

    /// `Ok` if `answer` says `done` is true; any other answer is garbled.
    fn said(&self, answer: &Value, done: &str) -> Result<(), LeaseError> {
        match answer[done].as_bool() {
            Some(true) => Ok(()),
            _ => Err(self.garbled(answer)),
        }
    }

    /// The `LeaseError` a failure stands for: the service's kinds map back to the errors
    /// a registry of one's own would give. `lost` is the node id of the grant the call
    /// acted on, `node_count` the ids a claim asked among.
    fn error(&self, failure: Failure, lost: Option<u64>, node_count: u64) -> LeaseError {
        let (kind, message, why) = match failure {
            Failure::Unavailable(why) => {
                return LeaseError::Unavailable {
                    registry: NAME.to_owned(),
                    detail: format!("no server of {} answered: {why}", self.shown),
                }
            }
            Failure::Failing {
                kind,
                message,
                reasons,
            } => {
                return if kind == "STORE" {
                    LeaseError::Store {
                        registry: NAME.to_owned(),
                        detail: format!("{message} (through {})", self.shown),
                    }
                } else {
                    LeaseError::Unavailable {
                        registry: NAME.to_owned(),
                        detail: format!("no server of {} could serve: {reasons}", self.shown),
                    }
                };
            }
            Failure::Refused {
                kind, message, why, ..
            } => (kind, message, why),
        };
        match (kind.as_str(), lost) {
            ("LOST", Some(node_id)) => match why.as_deref().and_then(Loss::from_name) {
                Some(why) => LeaseError::Lost { node_id, why },
                None => LeaseError::Store {
                    registry: NAME.to_owned(),
                    detail: format!("a lost lease without a known cause ({why:?}): {message}"),
                },
            },
            ("NO_FREE_NODE", _) => LeaseError::NoFreeNode { node_count },
            ("INVALID_CONFIG" | "BAD_PARAMETER" | "UNKNOWN_PARAMETER", _) => {
                LeaseError::InvalidConfig { detail: message }
            }
            ("NO_TOKEN" | "BAD_TOKEN" | "OUT_OF_SCOPE", _) => LeaseError::InvalidConfig {
                detail: format!(
                    "the service at {} refused this client's token ({kind}): {message}",
                    self.shown
                ),
            },
            ("NO_ROUTE" | "METHOD_NOT_ALLOWED", _) => LeaseError::InvalidConfig {
                detail: format!(
                    "the server at {} has no lease registry routes (not a ferroflake service, \
                     or one older than them): {message}",
                    self.shown
                ),
            },
            ("MODE_OFF", _) => LeaseError::InvalidConfig {
                detail: format!(
                    "the service at {} serves no lease registry: {message}",
                    self.shown
                ),
            },
            _ => LeaseError::Store {
                registry: NAME.to_owned(),
                detail: format!("{kind}: {message}"),
            },
        }
    }

    fn garbled(&self, answer: &Value) -> LeaseError {
        LeaseError::Store {
            registry: NAME.to_owned(),
            detail: format!(
                "a server of {} answered what a registry does not: {}",
                self.shown,
                without_token(answer)
            ),
        }
    }
}

impl Registry for RemoteRegistry {
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError> {
        // The registry's own rule, before anything is sent.
        request.validate()?;
        let body = json!({
            "node_count": request.node_count,
            "ttl_ms": ms_up(request.ttl),
            "quarantine_ms": ms_up(request.quarantine),
            "max_ttl_ms": ms_up(request.max_ttl),
            "holder": request.holder,
            "prefer_node": request.prefer_node,
        });
        let answer = self
            .call(Body::Json(&body), "claim", Resend::Safe)
            .map_err(|failure| self.error(failure, None, request.node_count))?;
        let grant = self.grant_in(&answer, request.node_count)?;
        if let Err(refused) = self.checked(&answer) {
            // Given back at once, rather than held for nobody until its TTL and
            // quarantine pass; what the server answers changes nothing here.
            let body = json!({ "grant": grant_json(&grant), "high_water_ms": 0 });
            let _ = self.call(Body::Json(&body), "release", Resend::OnlyIfUnsent);
            return Err(refused);
        }
        Ok(grant)
    }

    fn renew(&self, grant: &Grant, renewal: &Renewal) -> Result<(), LeaseError> {
        let body = json!({
            "grant": grant_json(grant),
            "ttl_ms": ms_up(renewal.ttl),
            "high_water_ms": renewal.high_water_ms,
            "clock_skew_ms": renewal.clock_skew_ms,
        });
        // Applied twice, a renewal extends the claim from the later one: the holder's
        // deadline was set before it sent, so nothing issues past it.
        let answer = self.ask(
            Body::Json(&body),
            "renew",
            Resend::Safe,
            Some(grant.node_id),
            0,
        )?;
        // Only a renewal the server says it made extends anything.
        self.said(&answer, "renewed")
    }

    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError> {
        let body = json!({ "grant": grant_json(grant), "high_water_ms": high_water_ms });
        // A release applied twice, or after the id was claimed again, is refused by its
        // token: it changes nothing.
        let answer = self.ask(
            Body::Json(&body),
            "release",
            Resend::Safe,
            Some(grant.node_id),
            0,
        )?;
        self.said(&answer, "released")
    }

    fn restored(&self, window: Duration) -> Result<Duration, LeaseError> {
        let body = json!({ "window_ms": ms_up(window) });
        let answer = self.ask(Body::Json(&body), "restored", Resend::Safe, None, 0)?;
        answer["floor_ms"]
            .as_u64()
            .map(Duration::from_millis)
            .ok_or_else(|| self.garbled(&answer))
    }

    fn reserve(&self, node_id: u64, holder: &str) -> Result<Reservation, LeaseError> {
        check_reservation(node_id, holder)?;
        let body = json!({ "node_id": node_id, "holder": holder });
        // A reservation applied twice answers `already reserved` the second time.
        let answer = self.ask(Body::Json(&body), "reserve", Resend::Safe, None, 0)?;
        [
            Reservation::Made,
            Reservation::Already,
            Reservation::Refused,
        ]
        .into_iter()
        .find(|r| answer["reservation"].as_str() == Some(r.as_str()))
        .ok_or_else(|| self.garbled(&answer))
    }

    fn unreserve(&self, node_id: u64, high_water_ms: u64) -> Result<(), LeaseError> {
        let body = json!({ "node_id": node_id, "high_water_ms": high_water_ms });
        let answer = self.ask(Body::Json(&body), "unreserve", Resend::Safe, None, 0)?;
        self.said(&answer, "unreserved")
    }

    fn list(&self) -> Result<RegistryView, LeaseError> {
        let answer = self.ask(Body::Get, "list", Resend::Safe, None, 0)?;
        view(&answer).ok_or_else(|| self.garbled(&answer))
    }

    fn wall_clock_ms(&self) -> Result<Option<u64>, LeaseError> {
        let answer = self.ask(Body::Get, "clock", Resend::Safe, None, 0)?;
        match &answer["wall_clock_ms"] {
            Value::Null => Ok(None),
            ms => ms.as_u64().map(Some).ok_or_else(|| self.garbled(&answer)),
        }
    }

    fn name(&self) -> &str {
        NAME
    }

    /// `service` and the address' servers (no token is ever in an address). It is read
    /// before any call (a state file's claim is matched by it before it is renewed), so it
    /// names the address rather than the registry the servers report; a claim resumed
    /// through an address whose servers moved to another registry is refused by its
    /// token at the first renewal, and claimed afresh.
    fn locator(&self) -> String {
        format!("{NAME} {}", self.shown)
    }
}

/// A grant as the routes read it.
fn grant_json(grant: &Grant) -> Value {
    json!({
        "node_id": grant.node_id,
        "token": grant.token,
        "epoch": grant.epoch,
        "previous_high_water_ms": grant.previous_high_water_ms,
        "floor_wait_ms": ms_up(grant.floor_wait),
    })
}

/// `d` in whole milliseconds, rounded up.
fn ms_up(d: Duration) -> u64 {
    u64::try_from(d.as_micros().div_ceil(1000)).unwrap_or(u64::MAX)
}

/// A registry view from the shape [`RegistryView::to_json`] writes.
fn view(answer: &Value) -> Option<RegistryView> {
    let optional = |v: &Value| -> Option<Option<u64>> {
        match v {
            Value::Null => Some(None),
            v => v.as_u64().map(Some),
        }
    };
    let nodes = answer["nodes"]
        .as_array()?
        .iter()
        .map(|n| {
            let state = match n["state"].as_str()? {
                "held" => NodeState::Held,
                "quarantined" => NodeState::Quarantined,
                "expired" => NodeState::Expired,
                "released" => NodeState::Released,
                "reserved" => NodeState::Reserved,
                _ => return None,
            };
            let holder = match &n["holder"] {
                Value::Null => None,
                h => Some(h.as_str()?.to_owned()),
            };
            let skew = match &n["clock_skew_ms"] {
                Value::Null => None,
                s => Some(s.as_i64()?),
            };
            Some(
                NodeView::new(
                    n["node_id"].as_u64()?,
                    holder,
                    n["epoch"].as_u64()?,
                    state,
                    optional(&n["expires_ms"])?.unwrap_or(0),
                    n["high_water_ms"].as_u64()?,
                )
                .with_times(
                    optional(&n["since_ms"])?,
                    optional(&n["last_renewal_ms"])?,
                    skew,
                ),
            )
        })
        .collect::<Option<Vec<_>>>()?;
    Some(RegistryView::new(
        answer["now_ms"].as_u64()?,
        optional(&answer["floor_until_ms"])?.unwrap_or(0),
        nodes,
    ))
}

/// `answer` for a message, any owner token in it hidden.
fn without_token(answer: &Value) -> Value {
    let mut shown = answer.clone();
    if let Some(token) = shown.get_mut("grant").and_then(|g| g.get_mut("token")) {
        *token = Value::from("***");
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_round_up_to_whole_milliseconds() {
        assert_eq!(ms_up(Duration::from_millis(600)), 600);
        assert_eq!(ms_up(Duration::from_micros(600_001)), 601);
        assert_eq!(ms_up(Duration::ZERO), 0);
        assert_eq!(ms_up(Duration::MAX), u64::MAX);
    }

    #[test]
    fn a_view_reads_back_as_it_was_written() {
        let nodes = vec![
            NodeView::new(0, Some("a".into()), 7, NodeState::Held, 1_000, 5).with_times(
                Some(10),
                Some(20),
                Some(-3),
            ),
            NodeView::new(2, None, 9, NodeState::Released, 0, 6),
        ];
        let written = RegistryView::new(500, 900, nodes);
        assert_eq!(view(&written.to_json("x", "y")), Some(written));
        let no_floor = RegistryView::new(500, 0, Vec::new());
        assert_eq!(view(&no_floor.to_json("x", "y")), Some(no_floor));
    }

    /// A server that answers every request with `body` (status 200, JSON).
    fn answering(body: &'static str) -> std::net::SocketAddr {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream);
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = n.trim().parse().unwrap();
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut request = vec![0; length];
                reader.read_exact(&mut request).unwrap();
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: \
                     {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                reader.get_mut().write_all(answer.as_bytes()).unwrap();
            }
        });
        addr
    }

    #[test]
    fn a_renewal_or_release_the_server_does_not_say_it_made_is_an_error() {
        let grant = Grant {
            node_id: 1,
            token: "t".into(),
            epoch: 1,
            previous_high_water_ms: 0,
            floor_wait: Duration::ZERO,
        };
        let addr = answering(r#"{"registry":"r","renewed":false,"released":false}"#);
        let remote = RemoteRegistry::open(&format!("ferroflake+http://{addr}/")).unwrap();
        let renewal = Renewal::new(Duration::from_secs(5), 0);
        assert!(matches!(
            remote.renew(&grant, &renewal),
            Err(LeaseError::Store { .. })
        ));
        assert!(matches!(
            remote.release(&grant, 0),
            Err(LeaseError::Store { .. })
        ));
        let addr = answering(r#"{"registry":"r","renewed":true,"released":true}"#);
        let remote = RemoteRegistry::open(&format!("ferroflake+http://{addr}/")).unwrap();
        remote.renew(&grant, &renewal).unwrap();
        remote.release(&grant, 0).unwrap();
    }

    #[test]
    fn a_garbled_answer_shows_no_token() {
        let answer = json!({"grant": {"token": "s3cret-owner", "node_id": "x"}});
        assert!(!without_token(&answer).to_string().contains("s3cret-owner"));
    }
}
