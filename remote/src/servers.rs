//! The servers of one address, and which to ask: in the address' order, from the last one
//! that answered (the first, at the start); one that failed (no answer, a broken
//! connection, a 5xx) is tried after the others for [`SKIP_FOR`]; a refusal another server
//! would repeat (a 4xx) is the caller's answer.
//!
//! A request whose connection failed before it was sent goes to the next server. One
//! that may have reached a server (its answer lost or late, or a 5xx) goes on only if
//! the caller said it may be applied twice ([`Resend::Safe`]): a second range taken is
//! wasted, never repeated; a give-back applied late is refused by its own condition.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ureq::tls::{Certificate, RootCerts, TlsConfig};

use crate::address::{ServiceAddress, TOKEN_VARIABLE};

/// How long a server that failed is tried only after the others.
pub const SKIP_FOR: Duration = Duration::from_secs(2);

/// How long the first call waits for the other servers' answers to what they serve (see
/// `one_service.rs`); later askings wait as long as a call.
pub const SURVEY_WAIT: Duration = Duration::from_millis(500);

/// The most bytes of an answer read: the service's answers are small, but for the lease
/// registry's listing ([`LISTING`]).
const MAX_ANSWER: u64 = 64 * 1024;

/// The route whose answer grows with the registry: one entry per node id it has a record
/// of, up to 65,536 of them, each under 1 KiB (a holder's name is at most 256 bytes).
const LISTING: &str = "/v1/store/lease/list";

/// The most bytes of the listing's answer.
const MAX_LISTING: u64 = 64 * 1024 * 1024;

/// The most bytes read of the answer to `path`.
fn answer_limit(path: &str) -> u64 {
    if path.split('?').next() == Some(LISTING) {
        MAX_LISTING
    } else {
        MAX_ANSWER
    }
}

/// The most bytes of a token file.
const MAX_TOKEN: u64 = 4096;

/// Whether a request may go to another server after one may have applied it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resend {
    /// Applying it twice is harmless, or wastes what the first took (a range, a node id
    /// until its TTL).
    Safe,
    /// Only if it was never sent.
    OnlyIfUnsent,
}

/// Why a request has no answer to give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// No server gave an answer: each one's reason.
    Unavailable(String),
    /// A server refused the request, as every server would (`kind` as the service names
    /// it).
    Refused {
        status: u16,
        kind: String,
        message: String,
        /// The cause within the kind, where the service gives one (`"why"` beside the
        /// kind: a lost lease's `MISSING`, `TAKEN`, `EXPIRED` or `RELEASED`).
        why: Option<String>,
    },
    /// Servers answered, but only with failures of their own (5xx): the last one's
    /// refusal (`kind` as the service names it), and each server's reason. A caller
    /// whose errors keep the service's kinds tells a store's failure (`STORE`) from an
    /// outage by it.
    Failing {
        kind: String,
        message: String,
        reasons: String,
    },
}

/// What a server said to [`Servers::ask_each`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Asked {
    /// A 2xx JSON answer.
    Answer(serde_json::Value),
    /// 401 or 403: the server refuses this client's token, which the address' other
    /// servers take.
    RefusedToken(u16),
    /// No answer in time, or one that says nothing (another status, not JSON).
    NoAnswer,
}

/// What a request carries.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    /// A `GET`, with no body.
    Get,
    /// A `POST` with an empty body.
    Empty,
    /// A `POST` with this JSON body: what must not be in a URL (an owner token) goes here.
    Json(&'a serde_json::Value),
}

struct Server {
    base: String,
    skip_until: Mutex<Option<Instant>>,
}

/// The servers of an address, with one HTTP client for all.
pub struct Servers {
    servers: Vec<Server>,
    /// The index of the server that answered last.
    preferred: AtomicUsize,
    agent: ureq::Agent,
    authorization: Option<String>,
    /// The address' `timeout_ms`.
    timeout: Duration,
}

impl Servers {
    /// The servers of `address`, its token read (from its `token_file`, else
    /// [`TOKEN_VARIABLE`]; none if neither is set), its certificate authority loaded.
    ///
    /// # Errors
    /// The token file or the CA file cannot be read, or holds nothing usable.
    pub fn open(address: &ServiceAddress) -> Result<Self, String> {
        let token =
            match &address.token_file {
                Some(path) => Some(read_token(path)?),
                None => match std::env::var(TOKEN_VARIABLE) {
                    Ok(text) if text.trim().is_empty() => None,
                    Ok(text) => Some(one_token(&text).ok_or_else(|| {
                        format!("{TOKEN_VARIABLE} must hold one token, on its own")
                    })?),
                    Err(std::env::VarError::NotPresent) => None,
                    Err(std::env::VarError::NotUnicode(_)) => {
                        return Err(format!("{TOKEN_VARIABLE} is not UTF-8: it holds no token"))
                    }
                },
            };
        let mut tls = TlsConfig::builder();
        if let Some(path) = &address.ca_file {
            tls = tls.root_certs(read_authorities(path)?);
        }
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(address.timeout))
            .timeout_connect(Some(address.timeout.min(Duration::from_secs(1))))
            .max_redirects(0)
            .https_only(address.tls)
            .tls_config(tls.build())
            .build()
            .new_agent();
        Ok(Servers {
            servers: address
                .bases
                .iter()
                .map(|base| Server {
                    base: base.clone(),
                    skip_until: Mutex::new(None),
                })
                .collect(),
            preferred: AtomicUsize::new(0),
            agent,
            authorization: token.map(|t| format!("Bearer {t}")),
            timeout: address.timeout,
        })
    }

    /// `POST` (or with `post` false, `GET`) `path` on the first server that answers, and
    /// its JSON answer.
    ///
    /// # Errors
    /// See [`Failure`].
    pub fn call(
        &self,
        post: bool,
        path: &str,
        resend: Resend,
    ) -> Result<serde_json::Value, Failure> {
        self.send(if post { Body::Empty } else { Body::Get }, path, resend)
    }

    /// `path` with `body` on the first server that answers, and its JSON answer.
    ///
    /// # Errors
    /// See [`Failure`].
    pub fn send(
        &self,
        body: Body<'_>,
        path: &str,
        resend: Resend,
    ) -> Result<serde_json::Value, Failure> {
        let mut reasons = Vec::new();
        let mut failing = None;
        let json = match body {
            Body::Json(value) => value.to_string(),
            Body::Get | Body::Empty => String::new(),
        };
        for index in self.order() {
            let server = &self.servers[index];
            let url = format!("{}{path}", server.base);
            let sent = match body {
                Body::Get => self.authorized(self.agent.get(&url)).call(),
                Body::Empty => self.authorized(self.agent.post(&url)).send_empty(),
                Body::Json(_) => self
                    .authorized(self.agent.post(&url))
                    .header("content-type", "application/json")
                    .send(json.as_bytes()),
            };
            let (reason, may_have_applied) = match sent {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let body = response
                        .into_body()
                        .with_config()
                        .limit(answer_limit(path))
                        .read_to_string()
                        .map(|body| self.unshown(body));
                    match (status, body) {
                        (200..=299, Ok(body)) => {
                            match serde_json::from_str::<serde_json::Value>(&body) {
                                Ok(mut answer) => {
                                    // Decoded, an escaped spelling reads as the token.
                                    self.unshown_in(&mut answer);
                                    self.answered(index);
                                    return Ok(answer);
                                }
                                Err(e) => (format!("an answer that is not JSON ({e})"), true),
                            }
                        }
                        (400..=499, Ok(body)) => {
                            self.answered(index);
                            return Err(self.refusal(status, &body));
                        }
                        (_, Ok(body)) => match self.refusal(status, &body) {
                            Failure::Refused { kind, message, .. } => {
                                let reason = format!("{status} {kind}: {message}");
                                failing = Some((kind, message));
                                (reason, true)
                            }
                            _ => (format!("status {status}"), true),
                        },
                        (_, Err(e)) => (format!("status {status}, its body unread: {e}"), true),
                    }
                }
                Err(e) => (e.to_string(), !never_sent(&e)),
            };
            self.skip(index);
            reasons.push(format!("{}: {reason}", server.base));
            if may_have_applied && resend == Resend::OnlyIfUnsent {
                break;
            }
        }
        let reasons = reasons.join("; ");
        Err(match failing {
            Some((kind, message)) => Failure::Failing {
                kind,
                message,
                reasons,
            },
            None => Failure::Unavailable(reasons),
        })
    }

    /// How long a call waits for each server (the address' `timeout_ms`).
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// How many servers the address names.
    pub(crate) fn len(&self) -> usize {
        self.servers.len()
    }

    /// The index of the server that answered last (the first, before any answered).
    pub(crate) fn last_answered(&self) -> usize {
        self.preferred.load(Ordering::Relaxed) % self.servers.len()
    }

    /// `GET path` on each server of `indices`, side by side, each waiting at most
    /// `wait`. Nothing here marks a server to skip: this asks, it does not call.
    pub(crate) fn ask_each(
        &self,
        indices: &[usize],
        path: &str,
        wait: Duration,
    ) -> Vec<(usize, Asked)> {
        std::thread::scope(|scope| {
            let asking: Vec<_> = indices
                .iter()
                .map(|&index| {
                    let url = format!("{}{path}", self.servers[index].base);
                    (index, scope.spawn(move || self.ask(&url, wait)))
                })
                .collect();
            asking
                .into_iter()
                .map(|(index, asked)| (index, asked.join().unwrap_or(Asked::NoAnswer)))
                .collect()
        })
    }

    /// The base URL of server `index`, for messages.
    pub(crate) fn base(&self, index: usize) -> &str {
        &self.servers[index].base
    }

    /// One `GET` of [`ask_each`](Self::ask_each).
    fn ask(&self, url: &str, wait: Duration) -> Asked {
        let request = self
            .agent
            .get(url)
            .config()
            .timeout_global(Some(wait))
            .build();
        let Ok(response) = self.authorized(request).call() else {
            return Asked::NoAnswer;
        };
        let status = response.status().as_u16();
        if status == 401 || status == 403 {
            return Asked::RefusedToken(status);
        }
        if !response.status().is_success() {
            return Asked::NoAnswer;
        }
        let body = response
            .into_body()
            .with_config()
            .limit(MAX_ANSWER)
            .read_to_string();
        match body.map(|body| serde_json::from_str(&self.unshown(body))) {
            Ok(Ok(mut answer)) => {
                self.unshown_in(&mut answer);
                Asked::Answer(answer)
            }
            _ => Asked::NoAnswer,
        }
    }

    /// `body` without this client's token: a server or a proxy in between may quote the
    /// request's headers in what it answers, which the caller would then show.
    fn unshown(&self, body: String) -> String {
        match self
            .authorization
            .as_deref()
            .and_then(|a| a.strip_prefix("Bearer "))
        {
            Some(token) if body.contains(token) => body.replace(token, "***"),
            _ => body,
        }
    }

    /// Every string in `answer` without this client's token.
    fn unshown_in(&self, answer: &mut serde_json::Value) {
        match answer {
            serde_json::Value::String(text) => *text = self.unshown(std::mem::take(text)),
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.unshown_in(v)),
            serde_json::Value::Object(fields) => {
                fields.values_mut().for_each(|v| self.unshown_in(v));
            }
            _ => {}
        }
    }

    /// The service's refusal (`{"error":{"kind","message"}}`), its strings without this
    /// client's token, or the status and text when the body is not one (a proxy in
    /// between, a Leaf route's text). Such a text is not shown for a refusal of the
    /// credentials (401, 403, 407), whose pages may quote the request's headers in any
    /// spelling.
    fn refusal(&self, status: u16, body: &str) -> Failure {
        let parsed: Option<(String, String, Option<String>)> =
            serde_json::from_str::<serde_json::Value>(body)
                .ok()
                .and_then(|mut v| {
                    self.unshown_in(&mut v);
                    let error = v.get("error")?;
                    Some((
                        error.get("kind")?.as_str()?.to_owned(),
                        error.get("message")?.as_str()?.to_owned(),
                        error.get("why").and_then(|w| w.as_str()).map(str::to_owned),
                    ))
                });
        let (kind, message, why) = parsed.unwrap_or_else(|| {
            let text = match status {
                401 | 403 | 407 => "(a page that is not the service's, not shown)".to_owned(),
                _ => shortened(body).to_owned(),
            };
            (format!("HTTP_{status}"), text, None)
        });
        Failure::Refused {
            status,
            kind,
            message,
            why,
        }
    }

    fn authorized<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.authorization {
            Some(authorization) => request.header("authorization", authorization),
            None => request,
        }
    }

    /// Every server once: from the preferred one on, those not being skipped first.
    fn order(&self) -> Vec<usize> {
        let n = self.servers.len();
        let first = self.preferred.load(Ordering::Relaxed) % n;
        let now = Instant::now();
        let (mut up, down): (Vec<usize>, Vec<usize>) =
            (0..n).map(|i| (first + i) % n).partition(|&i| {
                let until = *self.servers[i]
                    .skip_until
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                !matches!(until, Some(until) if until > now)
            });
        up.extend(down);
        up
    }

    fn answered(&self, index: usize) {
        *self.servers[index]
            .skip_until
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = None;
        self.preferred.store(index, Ordering::Relaxed);
    }

    fn skip(&self, index: usize) {
        *self.servers[index]
            .skip_until
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(Instant::now() + SKIP_FOR);
    }
}

/// Whether `e` happened before the request left: no server can have applied it.
fn never_sent(e: &ureq::Error) -> bool {
    use std::io::ErrorKind;
    match e {
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => true,
        ureq::Error::Timeout(t) => matches!(t, ureq::Timeout::Resolve | ureq::Timeout::Connect),
        ureq::Error::Io(io) => matches!(
            io.kind(),
            ErrorKind::ConnectionRefused | ErrorKind::AddrNotAvailable
        ),
        _ => false,
    }
}

fn shortened(text: &str) -> &str {
    let end = text
        .char_indices()
        .nth(200)
        .map_or(text.len(), |(at, _)| at);
    text[..end].trim()
}

fn read_token(path: &Path) -> Result<String, String> {
    let text =
        read_small(path, MAX_TOKEN).map_err(|e| format!("token_file {}: {e}", path.display()))?;
    one_token(&text).ok_or_else(|| {
        format!(
            "token_file {} must hold one token, on its own",
            path.display()
        )
    })
}

/// The token in `text`, trimmed: printable ASCII without spaces, as an HTTP header carries
/// it (anything else could not be sent, or would be sent as another token).
fn one_token(text: &str) -> Option<String> {
    let token = text.trim();
    let printable = |b: u8| b.is_ascii_graphic();
    (!token.is_empty() && token.bytes().all(printable)).then(|| token.to_owned())
}

fn read_authorities(path: &Path) -> Result<RootCerts, String> {
    let text = read_small(path, 1 << 20).map_err(|e| format!("ca_file {}: {e}", path.display()))?;
    let certificates: Vec<Certificate<'static>> = ureq::tls::parse_pem(text.as_bytes())
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
            _ => None,
        })
        .collect();
    if certificates.is_empty() {
        return Err(format!(
            "ca_file {} holds no PEM certificate",
            path.display()
        ));
    }
    Ok(RootCerts::new_with_certs(&certificates))
}

fn read_small(path: &Path, limit: u64) -> Result<String, String> {
    use std::io::Read;
    // A pipe or a device would block the open or the read for ever.
    if !std::fs::metadata(path)
        .map_err(|e| e.to_string())?
        .is_file()
    {
        return Err("not a regular file".to_owned());
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(limit + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > limit {
        return Err(format!("longer than {limit} bytes"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_failed_is_tried_after_the_others_for_a_while() {
        let address = ServiceAddress::parse("ferroflake+http://a:1,b:2,c:3").unwrap();
        let servers = Servers::open(&address).unwrap();
        assert_eq!(servers.order(), [0, 1, 2]);
        servers.skip(0);
        assert_eq!(servers.order(), [1, 2, 0]);
        servers.answered(2);
        assert_eq!(servers.order(), [2, 1, 0]);
        servers.answered(0);
        assert_eq!(servers.order(), [0, 1, 2]);
        servers.skip(1);
        *servers.servers[1].skip_until.lock().unwrap() = Some(Instant::now());
        assert_eq!(servers.order(), [0, 1, 2], "the skip is over");
    }

    /// A file of its own in the system's temporary folder, removed when dropped.
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let path = std::env::temp_dir()
                .join(format!("ferroflake-remote-{}-{name}", std::process::id()));
            let _ = std::fs::remove_file(&path);
            Scratch(path)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    #[test]
    fn what_a_server_answers_is_shown_without_this_clients_token() {
        let file = Scratch::new("token");
        std::fs::write(&file.0, "s3cret-7f7f\n").unwrap();
        let address = ServiceAddress::parse(&format!(
            "ferroflake+http://a:1/?token_file={}",
            file.0.display()
        ))
        .unwrap();
        let servers = Servers::open(&address).unwrap();
        let echoed = "<html>forbidden: Authorization: Bearer s3cret-7f7f</html>".to_owned();
        let shown = servers.unshown(echoed);
        assert!(!shown.contains("s3cret-7f7f"), "{shown}");
        assert!(shown.contains("Bearer ***"), "{shown}");
        // Escaped in JSON, it reads as the token once decoded.
        let escaped = r#"{"error":{"kind":"BAD_TOKEN","message":"Bearer s3cret\u002d7f7f"}}"#;
        let Failure::Refused { message, .. } = servers.refusal(401, escaped) else {
            panic!("a refusal");
        };
        assert!(!message.contains("s3cret-7f7f"), "{message}");
        let mut answer = serde_json::json!({"grant": ["s3cret-7f7f"]});
        servers.unshown_in(&mut answer);
        assert!(!answer.to_string().contains("s3cret-7f7f"), "{answer}");
        // A page that is not the service's, for a refused credential: not shown at all.
        let page = "<html>denied for Bearer s3cret&#x2D;7f7f</html>";
        let Failure::Refused { message, .. } = servers.refusal(403, page) else {
            panic!("a refusal");
        };
        assert!(!message.contains("s3cret"), "{message}");
    }

    #[test]
    fn a_token_is_printable_ascii_without_spaces() {
        assert_eq!(one_token(" t-0k_7f.x=\n").as_deref(), Some("t-0k_7f.x="));
        for bad in [
            "",
            "  ",
            "two words",
            "line\nbreak",
            "cr\rhere",
            "tab\there",
            "é",
        ] {
            assert_eq!(one_token(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_token_file_that_is_a_pipe_is_refused_not_waited_on() {
        let fifo = Scratch::new("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo.0)
            .status()
            .unwrap();
        assert!(made.success());
        let address = ServiceAddress::parse(&format!(
            "ferroflake+http://a:1/?token_file={}",
            fifo.0.display()
        ))
        .unwrap();
        let refused = Servers::open(&address).err().unwrap();
        assert!(refused.contains("not a regular file"), "{refused}");
    }
}
