//! The service's test helpers: a real HTTP client (with TLS), its answers, raw requests,
//! tokens files, self-signed certificates, and servers that hang, refuse or answer late.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An answer: status, headers we look at, body.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub retry_after: Option<String>,
    pub www_authenticate: Option<String>,
    pub allow: Option<String>,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The IDs of a native batch answer.
    pub fn ids(&self) -> Vec<u64> {
        self.json()["ids"]
            .as_array()
            .unwrap_or_else(|| panic!("no ids: {}", self.body))
            .iter()
            .map(|v| v.as_str().expect("IDs are strings").parse().unwrap())
            .collect()
    }

    pub fn kind(&self) -> String {
        self.json()["error"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// A client that takes every status as an answer, and gives up after 30 s.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent()
}

/// The answer of a request that must have been answered.
pub fn answer(result: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Answer {
    let mut response = result.unwrap_or_else(|e| panic!("request failed: {e}"));
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let content_type = header("content-type").unwrap_or_default();
    let retry_after = header("retry-after");
    let www_authenticate = header("www-authenticate");
    let allow = header("allow");
    let body = response.body_mut().read_to_string().unwrap();
    Answer {
        status: response.status().as_u16(),
        content_type,
        retry_after,
        www_authenticate,
        allow,
        body,
    }
}

/// Sends `request_line` (raw bytes, which no client library would send) and returns the
/// status and body.
pub fn raw(addr: SocketAddr, request_line: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // One write, and a write or read cut short is not an error: the server may answer a
    // bad request line and close before it has read the rest.
    let mut request = request_line.to_vec();
    request.extend_from_slice(b"\r\nHost: x\r\nConnection: close\r\n\r\n");
    let _ = stream.write_all(&request);
    let mut text = Vec::new();
    let _ = stream.read_to_end(&mut text);
    let text = String::from_utf8_lossy(&text).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// A tokens file: one `[[token]]` per `(name, token, scopes)`, holding the token's SHA-256.
pub fn tokens_toml(entries: &[(&str, &str, &[&str])]) -> String {
    use sha2::Digest;
    entries
        .iter()
        .map(|(name, token, scopes)| {
            let hash: String = sha2::Sha256::digest(token.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("[[token]]\nname = {name:?}\nsha256 = \"{hash}\"\nscopes = {scopes:?}\n\n")
        })
        .collect()
}

/// Writes `text` to `path` whole: a reader (the server, on SIGHUP) never sees half of it.
pub fn write_whole(path: &Path, text: &str) {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, text).unwrap();
    std::fs::rename(&partial, path).unwrap();
}

/// A self-signed certificate for 127.0.0.1, as the server reads it (PEM) and as a client
/// trusts it (DER).
pub struct TestCert {
    pub cert_pem: String,
    pub key_pem: String,
    pub der: Vec<u8>,
}

impl Default for TestCert {
    fn default() -> Self {
        Self::new()
    }
}

impl TestCert {
    /// A new key and certificate.
    pub fn new() -> Self {
        let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        TestCert {
            cert_pem: made.cert.pem(),
            key_pem: made.signing_key.serialize_pem(),
            der: made.cert.der().to_vec(),
        }
    }

    /// Writes `cert.pem` and `key.pem` in `dir`, each whole; returns their paths.
    pub fn write(&self, dir: &Path) -> (PathBuf, PathBuf) {
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        write_whole(&cert, &self.cert_pem);
        write_whole(&key, &self.key_pem);
        (cert, key)
    }

    /// A line of the key's base64: no log or message may hold it.
    pub fn key_line(&self) -> &str {
        self.key_pem.lines().nth(1).unwrap()
    }
}

/// An HTTPS client that trusts `cert` alone (and a fresh pool: each new agent makes new
/// connections, so a handshake with the pair in force now).
pub fn tls_agent(cert: &TestCert) -> ureq::Agent {
    use ureq::tls::{Certificate, RootCerts, TlsConfig, TlsProvider};
    let roots = vec![Certificate::from_der(&cert.der).to_owned()];
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .tls_config(
            TlsConfig::builder()
                .provider(TlsProvider::Rustls)
                .root_certs(RootCerts::Specific(Arc::new(roots)))
                .unversioned_rustls_crypto_provider(Arc::new(
                    rustls::crypto::ring::default_provider(),
                ))
                .build(),
        )
        .build()
        .new_agent()
}

/// A loopback port that accepts connections and never answers, as a paused server.
pub fn silent() -> (SocketAddr, Arc<Mutex<Vec<TcpStream>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&held);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            keep.lock().unwrap().push(stream);
        }
    });
    (addr, held)
}

/// A loopback port nothing listens on: connections are refused, nothing is sent.
pub fn closed() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// One HTTP/1.1 message read from `stream`: its head, and as many body bytes as its
/// `content-length` says; `None` if the stream ends before it starts.
pub fn read_message(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut message = Vec::new();
    let mut byte = [0u8; 1];
    while !message.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).ok()? == 0 {
            assert!(message.is_empty(), "the message ended in its head");
            return None;
        }
        message.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&message).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map_or(0, |n| n.trim().parse().unwrap());
    let mut body = vec![0; length];
    stream.read_exact(&mut body).ok()?;
    message.extend(body);
    Some(message)
}

/// A server in front of `target`: it passes each request on and the answer back, until
/// the returned switch is set; from then on it takes each request and answers none, as a
/// server that hangs.
pub fn relay(target: SocketAddr) -> (SocketAddr, Arc<AtomicBool>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let quiet = Arc::new(AtomicBool::new(false));
    let switch = Arc::clone(&quiet);
    std::thread::spawn(move || {
        for mut client in listener.incoming().flatten() {
            let quiet = Arc::clone(&quiet);
            std::thread::spawn(move || {
                while let Some(request) = read_message(&mut client) {
                    if quiet.load(Ordering::SeqCst) {
                        // Held open, never answered, until the client gives up.
                        let mut rest = Vec::new();
                        let _ = client.read_to_end(&mut rest);
                        return;
                    }
                    let mut server = TcpStream::connect(target).unwrap();
                    server.write_all(&request).unwrap();
                    let answer = read_message(&mut server).unwrap();
                    client.write_all(&answer).unwrap();
                }
            });
        }
    });
    (addr, switch)
}

/// A server in front of `target` that answers each request `delay` late: a slow server.
pub fn slow_relay(target: SocketAddr, delay: Duration) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut client in listener.incoming().flatten() {
            std::thread::spawn(move || {
                while let Some(request) = read_message(&mut client) {
                    std::thread::sleep(delay);
                    let Ok(mut server) = TcpStream::connect(target) else {
                        return;
                    };
                    server.write_all(&request).unwrap();
                    let Some(answer) = read_message(&mut server) else {
                        return;
                    };
                    if client.write_all(&answer).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}
