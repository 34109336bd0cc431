//! Optional TLS: a certificate chain and its private key, as PEM files, served with
//! rustls (the `ring` provider), TLS 1.2 and 1.3, ALPN `http/1.1`.
//!
//! - **Rotation without a restart.** The files are read at start and again on SIGHUP,
//!   the signal that reloads the tokens file. A new pair that cannot be read, does not
//!   parse, or whose key does not match the certificate is logged and changes nothing:
//!   the pair in force stays. New connections take the new pair; open ones keep theirs.
//! - **Within the connection bounds.** A handshake is a connection: it holds one of
//!   `max_connections`, must end together with the first request head within
//!   `header_read_timeout_ms` of the accept, and is cut at once by a stop, as a half-sent request is (see
//!   [`connections`](crate::connections)). Failed handshakes are counted
//!   (`ferroflake_http_tls_handshake_failures_total`, by `reason`) and logged at most
//!   once a second.
//! - **No key in any message.** Errors name the file and the mistake, never a byte of
//!   either file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwap;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// The ALPN protocols offered: the server speaks HTTP/1.1 only.
const ALPN: &[&[u8]] = &[b"http/1.1"];

/// The certificate and key in force and the files they come from;
/// [`reload`](Self::reload) swaps in a new reading without touching open connections.
pub struct Tls {
    cert: PathBuf,
    key: PathBuf,
    config: ArcSwap<ServerConfig>,
}

impl Tls {
    /// Reads the certificate chain at `cert` and the private key at `key`.
    ///
    /// # Errors
    /// Either file cannot be read or holds no PEM section of its kind, or the key does
    /// not match the certificate; the message names the file and the mistake, never its
    /// contents.
    pub fn open(cert: &Path, key: &Path) -> Result<Self, String> {
        let config = load(cert, key)?;
        Ok(Tls {
            cert: cert.to_owned(),
            key: key.to_owned(),
            config: ArcSwap::from_pointee(config),
        })
    }

    /// The certificate file's path.
    pub fn cert_path(&self) -> &Path {
        &self.cert
    }

    /// The key file's path (which may be shown; its contents may not).
    pub fn key_path(&self) -> &Path {
        &self.key
    }

    /// Reads both files again. On success new connections use the new pair; on failure
    /// the pair in force stays.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn reload(&self) -> Result<(), String> {
        let config = load(&self.cert, &self.key)?;
        self.config.store(Arc::new(config));
        Ok(())
    }

    /// An acceptor with the pair in force now.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(self.config.load_full())
    }
}

/// The server config for the pair at `cert` and `key`.
fn load(cert: &Path, key: &Path) -> Result<ServerConfig, String> {
    let read = |what, path| {
        crate::small_file::read(path).map_err(|e| pem_error(what, path, &pem::Error::Io(e)))
    };
    let cert_pem = read("certificate", cert)?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error("certificate", cert, &e))?;
    if chain.is_empty() {
        return Err(pem_error("certificate", cert, &pem::Error::NoItemsFound));
    }
    let key_pem = read("key", key)?;
    let key_der = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| pem_error("key", key, &e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| match e {
            rustls::Error::InconsistentKeys(_) => format!(
                "the TLS key {} does not match the certificate {}",
                key.display(),
                cert.display()
            ),
            // rustls's messages name the mistake, not the key's bytes.
            e => format!(
                "the TLS key {} cannot be used with the certificate {}: {e}",
                key.display(),
                cert.display()
            ),
        })?;
    config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

/// A PEM error as a message that names the file and the mistake: the parser's own
/// messages may quote a line of the file, which in a key file is part of the key.
fn pem_error(what: &str, path: &Path, e: &pem::Error) -> String {
    let path = path.display();
    let expected = if what == "key" {
        "a PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY section"
    } else {
        "a CERTIFICATE section"
    };
    match e {
        pem::Error::Io(e) => format!("cannot read the TLS {what} file {path}: {e}"),
        pem::Error::NoItemsFound => {
            format!("the TLS {what} file {path} holds no PEM {what}: expected {expected}")
        }
        pem::Error::MissingSectionEnd { .. } => {
            format!("the TLS {what} file {path}: a PEM section has no END line")
        }
        pem::Error::IllegalSectionStart { .. } => {
            format!("the TLS {what} file {path}: a PEM BEGIN line is malformed")
        }
        pem::Error::Base64Decode(_) => {
            format!("the TLS {what} file {path}: a PEM section is not valid base64")
        }
        _ => format!("the TLS {what} file {path} is not PEM: expected {expected}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Pair {
        cert: String,
        key: String,
    }

    fn pair() -> Pair {
        let made = ferroflake_test_support::http::TestCert::new();
        Pair {
            cert: made.cert_pem,
            key: made.key_pem,
        }
    }

    /// A line of the key's base64, which no message may show.
    fn secret_line(key: &str) -> &str {
        key.lines().nth(1).unwrap()
    }

    #[test]
    fn a_pair_loads_and_a_bad_reload_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        let first = pair();
        std::fs::write(&cert, &first.cert).unwrap();
        std::fs::write(&key, &first.key).unwrap();
        let tls = Tls::open(&cert, &key).unwrap();
        let before = tls.config.load_full();
        assert_eq!(before.alpn_protocols, [b"http/1.1".to_vec()]);

        // A new certificate with the old key: refused, the old config stays.
        let second = pair();
        std::fs::write(&cert, &second.cert).unwrap();
        let error = tls.reload().unwrap_err();
        assert!(error.contains("does not match"), "{error}");
        assert!(Arc::ptr_eq(&before, &tls.config.load_full()));
        // Its key too: taken.
        std::fs::write(&key, &second.key).unwrap();
        tls.reload().unwrap();
        assert!(!Arc::ptr_eq(&before, &tls.config.load_full()));
    }

    #[test]
    fn mistakes_are_named_without_quoting_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let good = pair();
        let secret = secret_line(&good.key).to_owned();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let cert = write("cert.pem", &good.cert);
        let key = write("key.pem", &good.key);
        let missing = dir.path().join("missing.pem");
        let key_as_cert = write("key-as-cert.pem", &good.key);
        let cert_as_key = write("cert-as-key.pem", &good.cert);
        // The key's base64 cut short: no END line.
        let cut = write("cut.pem", &good.key[..good.key.len() / 2]);
        let bad_base64 = write(
            "bad64.pem",
            &format!("-----BEGIN PRIVATE KEY-----\n{secret}!!\n-----END PRIVATE KEY-----\n"),
        );
        let garbage = write("garbage.pem", &format!("{secret}\n"));
        // No line break after BEGIN: the parser's message would quote the whole line.
        let run_on = write(
            "run-on.pem",
            &format!("-----BEGIN PRIVATE KEY-----{secret}\n-----END PRIVATE KEY-----\n"),
        );
        // The parser quotes lines as bytes: the secret's first bytes in that form.
        let secret_bytes = format!("{:?}", &secret.as_bytes()[..6]);
        let secret_bytes = secret_bytes.trim_matches(|c| c == '[' || c == ']');
        let cases = [
            (&missing, &key, "cannot read the TLS certificate file"),
            (&cert, &missing, "cannot read the TLS key file"),
            (&key_as_cert, &key, "holds no PEM certificate"),
            (&cert, &cert_as_key, "holds no PEM key"),
            (&cert, &cut, "no END line"),
            (&cert, &bad_base64, "not valid base64"),
            (&cert, &garbage, "holds no PEM key"),
            (&cert, &run_on, "BEGIN line is malformed"),
        ];
        for (cert, key, expected) in cases {
            let error = Tls::open(cert, key).err().unwrap();
            assert!(error.contains(expected), "{error:?} lacks {expected:?}");
            assert!(!error.contains(&secret), "{error:?} quotes the key");
            assert!(!error.contains(secret_bytes), "{error:?} quotes the key");
            assert!(!error.contains("-----"), "{error:?} quotes a PEM line");
        }
    }
}
