//! What a server runs with: a TOML file, overridden by flags and `FERROFLAKE_*`
//! environment variables ([`ServeArgs`]), over built-in defaults that need no set-up.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ferroflake::Layout;
use serde::Deserialize;

/// The most IDs one native batch request may ask for, unless the config says otherwise.
pub const DEFAULT_MAX_BATCH: u64 = 10_000;

/// The largest `max_batch` a config may set: a batch is built in memory and sent as one
/// JSON answer.
pub const MAX_BATCH_LIMIT: u64 = 1_000_000;

/// A server's settings. Every field has a default (see [`Config::default`]), so an empty
/// file, or none, gives a working server on loopback.
///
/// In TOML the names are the same, and durations are in milliseconds (`*_ms`):
///
/// ```toml
/// listen = "127.0.0.1:8080"
/// layout = "twitter"
/// lease = "etcd://10.0.0.5:2379"        # default: the embedded registry
/// store = "postgres://app@db:5432/ids"  # default: the embedded SQLite file
/// preload = ["orders", "users"]
/// max_batch = 10000
/// tls_cert = "/etc/ferroflake/cert.pem"  # with tls_key: HTTPS, reloaded on SIGHUP
/// tls_key = "/etc/ferroflake/key.pem"
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where to listen. Default `127.0.0.1:8080`.
    pub listen: SocketAddr,
    /// The snowflake layout: a preset name or a layout spelling such as
    /// `41/8/14@2010-11-04T01:42:54.657Z` (`TIME/NODE/SEQUENCE[+SHARD]@EPOCH[,tick=Nms][,order=ORDER]`).
    /// Default `twitter`, Leaf's layout.
    pub layout: String,
    /// The lease registry (`--lease` of `ferroflake next`). `None`: the embedded registry
    /// in its default directory.
    pub lease: Option<String>,
    /// The lease's TTL, ms. `None`: the lease crate's default (10,000), as in every face.
    pub lease_ttl_ms: Option<u64>,
    /// The longest TTL any holder of the registry uses, ms; every holder of one registry
    /// must use the same value. `None`: the larger of the TTL and 10,000. After the
    /// registry loses records, new claims wait this plus the quarantine before they issue.
    pub lease_max_ttl_ms: Option<u64>,
    /// A file where the service keeps its lease's claim, so that a restart while the
    /// registry is down resumes it, and one after asks for the same node id first. `None`:
    /// none.
    pub lease_state_file: Option<PathBuf>,
    /// Issue snowflake IDs only above this one: the highest ID an old generator issued,
    /// as `ferroflake next --resume-after-id` takes it. `None`: none.
    pub resume_after_id: Option<u64>,
    /// The layout the old generator made `resume_after_id` with. `None`: `layout`.
    pub resume_layout: Option<String>,
    /// The segment store (`--store` of `ferroflake segment`). `None`: the embedded SQLite
    /// file.
    pub store: Option<String>,
    /// Segment keys whose first segment is loaded before the server reports ready.
    pub preload: Vec<String>,
    /// Segment keys whose IDs stay at or below 2^53 - 1 (JavaScript's exact integers).
    pub js_keys: Vec<String>,
    /// Snowflake keys counted under their own name in the metrics; any other key is
    /// counted as `other`, so that callers cannot grow the metrics without bound.
    pub snowflake_keys: Vec<String>,
    /// Serve snowflake IDs (and hold a lease). Default true.
    pub snowflake: bool,
    /// Serve segment IDs (and open the store). Default true.
    pub segment: bool,
    /// The most IDs a native batch request may ask for. Default [`DEFAULT_MAX_BATCH`].
    pub max_batch: u64,
    /// The most segment keys open at once. Each open key holds two segments, a fetch
    /// state and metric series for as long as the server runs; one more is answered 503
    /// `TOO_MANY_KEYS`. Default [`DEFAULT_MAX_KEYS`].
    pub max_keys: usize,
    /// How long a segment request waits for a fetch in flight when both buffers are
    /// empty, ms, before answering 503. Default 500.
    pub segment_max_wait_ms: u64,
    /// How long a graceful stop waits for requests in flight, ms, before it forces the
    /// exit. Default 10,000.
    pub shutdown_timeout_ms: u64,
    /// Log lines as `text` (default) or `json`.
    pub log_format: LogFormat,
    /// HTTP worker threads; 0 (default) is one per core.
    pub workers: usize,
    /// A file holding the mask key (or keys, one per line, the first current) of the
    /// masked-ID routes. `None`: the `FERROFLAKE_MASK_KEY` variable, if set; else the
    /// routes answer 404. Never the key itself: a config file is often readable by many.
    pub mask_key_file: Option<PathBuf>,
    /// The text form of masked IDs when a request names none: `base62` (default),
    /// `base32` or `dec`.
    pub mask_format: String,
    /// A file of bearer tokens' SHA-256 hashes, each with a name and scopes (see
    /// [`tokens`](crate::tokens)); read at start and on SIGHUP. `None`: no route asks for
    /// a token, and only a loopback `listen` is allowed. Never the tokens themselves.
    pub tokens_file: Option<PathBuf>,
    /// Listen beyond loopback without a tokens file, accepting that anyone who reaches
    /// the address can take IDs. Default false.
    pub allow_unauthenticated: bool,
    /// The most HTTP connections held at once; one more is answered 503 and closed.
    /// Default [`DEFAULT_MAX_CONNECTIONS`]. Lowered at start if the open-file limit
    /// leaves room for fewer.
    pub max_connections: usize,
    /// How long a connection may wait with no complete request head, ms: a new one, or a
    /// kept-alive one between requests (so this is the idle keep-alive timeout too).
    /// With TLS, a new connection's handshake must end within it too, before the head's
    /// own wait begins. Default 10,000.
    pub header_read_timeout_ms: u64,
    /// How long a request may take once its head has arrived, ms, before it is answered
    /// 503 `TIMEOUT`. Default 30,000.
    pub request_timeout_ms: u64,
    /// The TLS certificate chain, PEM, leaf first (see [`tls`](crate::tls)); read at start
    /// and on SIGHUP. Given with [`tls_key`](Self::tls_key) or not at all. `None`: plain
    /// HTTP.
    pub tls_cert: Option<PathBuf>,
    /// The TLS certificate's private key, PEM (PKCS#8, PKCS#1 or SEC1); read at start and
    /// on SIGHUP. Never the key itself.
    pub tls_key: Option<PathBuf>,
}

/// The open segment key limit unless the config says otherwise.
pub const DEFAULT_MAX_KEYS: usize = 10_000;

/// The connection limit unless the config says otherwise: about 100 MB of buffers and
/// tasks at worst, far above what one server answers from.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

/// What a user of a build without the stores does to use one: said after the refusal of a
/// store or registry this build leaves out, as `{error}; {BUILD_WITH_STORES}`.
pub const BUILD_WITH_STORES: &str = "the ferroflake command carries them when built with \
     `cargo install --path cli --features stores`, which needs protoc (apt-get install \
     protobuf-compiler)";

/// Why a service may not take its store or registry from another service: each request
/// would become one to the other, and a service named in its own address (or two naming
/// each other) would send each one round until every thread and connection is taken.
const RELAYED: &str = "a service takes its store and registry from themselves, not \
     through another ferroflake service (a chain adds a hop to every request, and a loop \
     sends each one round for ever); give the store or registry the other service uses";

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// `key=value` fields after the message, for people.
    Text,
    /// One JSON object per line, for log pipelines.
    Json,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            layout: "twitter".to_owned(),
            lease: None,
            lease_ttl_ms: None,
            lease_max_ttl_ms: None,
            lease_state_file: None,
            resume_after_id: None,
            resume_layout: None,
            store: None,
            preload: Vec::new(),
            js_keys: Vec::new(),
            snowflake_keys: Vec::new(),
            snowflake: true,
            segment: true,
            max_batch: DEFAULT_MAX_BATCH,
            max_keys: DEFAULT_MAX_KEYS,
            segment_max_wait_ms: 500,
            shutdown_timeout_ms: 10_000,
            log_format: LogFormat::Text,
            workers: 0,
            mask_key_file: None,
            mask_format: "base62".to_owned(),
            tokens_file: None,
            allow_unauthenticated: false,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_read_timeout_ms: 10_000,
            request_timeout_ms: 30_000,
            tls_cert: None,
            tls_key: None,
        }
    }
}

impl Config {
    /// Reads a TOML file; missing fields take their defaults.
    ///
    /// # Errors
    /// The file cannot be read, is not TOML, or names an unknown field.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        let text = crate::small_file::read_to_string(path)
            .map_err(|e| format!("cannot read the config file {}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| {
            // Not the error's own text: it quotes the line, which may hold a password.
            let line = e.span().map_or(0, |span| {
                text[..span.start.min(text.len())].matches('\n').count() + 1
            });
            let message = ferroflake_store_address::redact_words(e.message());
            format!("config file {}, line {line}: {message}", path.display())
        })
    }

    /// The settings `args` give: the file it names (if any), then each flag or environment
    /// variable that was set.
    ///
    /// # Errors
    /// As [`from_file`](Self::from_file), and what [`check`](Self::check) refuses.
    pub fn from_args(args: &ServeArgs) -> Result<Self, String> {
        let mut config = match &args.config {
            Some(path) => Self::from_file(path)?,
            None => Config::default(),
        };
        if let Some(listen) = args.listen {
            config.listen = listen;
        }
        if let Some(layout) = &args.layout {
            config.layout.clone_from(layout);
        }
        if let Some(lease) = &args.lease {
            config.lease = Some(lease.clone());
        }
        if args.lease_ttl_ms.is_some() {
            config.lease_ttl_ms = args.lease_ttl_ms;
        }
        if args.lease_max_ttl_ms.is_some() {
            config.lease_max_ttl_ms = args.lease_max_ttl_ms;
        }
        if let Some(state_file) = &args.lease_state_file {
            config.lease_state_file = Some(state_file.clone());
        }
        if args.resume_after_id.is_some() {
            config.resume_after_id = args.resume_after_id;
        }
        if let Some(layout) = &args.resume_layout {
            config.resume_layout = Some(layout.clone());
        }
        if let Some(store) = &args.store {
            config.store = Some(store.clone());
        }
        if !args.preload.is_empty() {
            config.preload.clone_from(&args.preload);
        }
        if !args.js_keys.is_empty() {
            config.js_keys.clone_from(&args.js_keys);
        }
        if let Some(modes) = &args.modes {
            config.snowflake = modes.contains(&Mode::Snowflake);
            config.segment = modes.contains(&Mode::Segment);
        }
        if let Some(max_batch) = args.max_batch {
            config.max_batch = max_batch;
        }
        if let Some(max_keys) = args.max_keys {
            config.max_keys = max_keys;
        }
        if let Some(timeout) = args.shutdown_timeout_ms {
            config.shutdown_timeout_ms = timeout;
        }
        if let Some(format) = args.log_format {
            config.log_format = format;
        }
        if let Some(path) = &args.mask_key_file {
            config.mask_key_file = Some(path.clone());
        }
        if let Some(path) = &args.tokens_file {
            config.tokens_file = Some(path.clone());
        }
        if args.allow_unauthenticated {
            config.allow_unauthenticated = true;
        }
        if let Some(max) = args.max_connections {
            config.max_connections = max;
        }
        if let Some(timeout) = args.header_read_timeout_ms {
            config.header_read_timeout_ms = timeout;
        }
        if let Some(timeout) = args.request_timeout_ms {
            config.request_timeout_ms = timeout;
        }
        if let Some(path) = &args.tls_cert {
            config.tls_cert = Some(path.clone());
        }
        if let Some(path) = &args.tls_key {
            config.tls_key = Some(path.clone());
        }
        config.check()?;
        Ok(config)
    }

    /// Refuses settings that cannot work, saying which.
    ///
    /// # Errors
    /// An unknown layout, a `max_batch` of 0 or above [`MAX_BATCH_LIMIT`], no mode on, a
    /// preloaded key the table cannot hold, an address beyond loopback without tokens
    /// (see [`check_exposure`](Self::check_exposure)), a TLS certificate without its key
    /// or a key without its certificate.
    pub fn check(&self) -> Result<(), String> {
        self.check_exposure()?;
        match (&self.tls_cert, &self.tls_key) {
            (Some(_), None) => {
                return Err("a TLS certificate without its key: give --tls-key FILE \
                            (FERROFLAKE_TLS_KEY, tls_key) with --tls-cert, or neither"
                    .to_owned())
            }
            (None, Some(_)) => {
                return Err("a TLS key without its certificate: give --tls-cert FILE \
                            (FERROFLAKE_TLS_CERT, tls_cert) with --tls-key, or neither"
                    .to_owned())
            }
            _ => {}
        }
        self.layout()?;
        if self.max_batch == 0 || self.max_batch > MAX_BATCH_LIMIT {
            return Err(format!(
                "max_batch {} is outside 1..={MAX_BATCH_LIMIT}",
                self.max_batch
            ));
        }
        if !self.snowflake && !self.segment {
            return Err("no mode is on: enable snowflake, segment or both".to_owned());
        }
        for key in self.preload.iter().chain(&self.js_keys) {
            crate::keys::check(key).map_err(|e| format!("segment key {key:?}: {e}"))?;
        }
        if self.segment_max_wait_ms == 0 {
            return Err("segment_max_wait_ms must be above 0".to_owned());
        }
        if self.max_connections == 0 {
            return Err("max_connections must be above 0".to_owned());
        }
        if self.max_keys == 0 {
            return Err("max_keys must be above 0".to_owned());
        }
        if self.max_keys < self.preload.len() {
            return Err(format!(
                "max_keys {} is below the {} preloaded keys",
                self.max_keys,
                self.preload.len()
            ));
        }
        if self.header_read_timeout_ms == 0 || self.request_timeout_ms == 0 {
            return Err("header_read_timeout_ms and request_timeout_ms must be above 0".to_owned());
        }
        if self.snowflake {
            self.lease_config()?;
        }
        // A registry named is served to clients (the lease store routes) in either mode.
        if self.snowflake || self.lease.is_some() {
            self.lease_address()?;
        }
        if let (true, Some(store)) = (self.segment, &self.store) {
            let parsed =
                ferroflake_segment_stores::StoreAddress::parse(store).map_err(|e| e.to_string())?;
            // Refused at start, as a registry is, not a start that fails on opening it.
            parsed
                .built()
                .map_err(|e| format!("{e}; {BUILD_WITH_STORES}"))?;
            if matches!(
                parsed,
                ferroflake_segment_stores::StoreAddress::Service { .. }
            ) {
                return Err(format!(
                    "store address {:?}: {RELAYED}",
                    ferroflake_segment_stores::redact(store)
                ));
            }
        }
        if ferroflake::Format::from_name(&self.mask_format).is_none() {
            return Err(format!(
                "mask_format {:?} is not one of {}",
                self.mask_format,
                ferroflake::Format::ALL
                    .map(ferroflake::Format::name)
                    .join(", ")
            ));
        }
        Ok(())
    }

    /// Refuses to serve beyond loopback without tokens, unless told
    /// `allow_unauthenticated`: a service anyone on the network can drain must be chosen,
    /// never a default.
    ///
    /// # Errors
    /// A `listen` address other than 127.0.0.0/8 or ::1 with neither a tokens file nor
    /// `allow_unauthenticated`; both at once, which contradict each other.
    pub fn check_exposure(&self) -> Result<(), String> {
        if self.tokens_file.is_some() && self.allow_unauthenticated {
            let why = "both a tokens file and allow_unauthenticated are set, which contradict \
                       each other: drop --allow-unauthenticated \
                       (FERROFLAKE_ALLOW_UNAUTHENTICATED, allow_unauthenticated) or the tokens \
                       file";
            return Err(why.to_owned());
        }
        if self.tokens_file.is_none() && !self.allow_unauthenticated && !self.listen_is_loopback() {
            return Err(format!(
                "refusing to listen on {} without authentication: anyone who reaches it \
                 could take IDs and read the service's state. Give --tokens-file FILE \
                 (FERROFLAKE_TOKENS_FILE, or tokens_file in the config: SHA-256 hashes of \
                 bearer tokens with scopes), or pass --allow-unauthenticated to accept the \
                 risk, or listen on 127.0.0.1",
                self.listen
            ));
        }
        Ok(())
    }

    /// Whether the server speaks TLS (both [`tls_cert`](Self::tls_cert) and
    /// [`tls_key`](Self::tls_key) are set).
    pub fn tls(&self) -> bool {
        self.tls_cert.is_some() && self.tls_key.is_some()
    }

    /// Whether there is a file to read again on SIGHUP ([`AppState::reload`](crate::AppState::reload)):
    /// a tokens file, or a TLS certificate and key.
    pub fn reloads(&self) -> bool {
        self.tokens_file.is_some() || self.tls()
    }

    /// Whether `listen` is reachable from this host only (IPv4-mapped loopback included).
    pub fn listen_is_loopback(&self) -> bool {
        self.listen.ip().to_canonical().is_loopback()
    }

    /// The layout named or spelled by [`layout`](Self::layout), read by core's
    /// [`Layout::parse`].
    ///
    /// # Errors
    /// The text is neither a preset name nor a valid layout spelling.
    pub fn layout(&self) -> Result<Layout, String> {
        Layout::parse(&self.layout).map_err(|e| {
            format!(
                "unknown layout {:?}: not a preset ({}) nor a layout spelling: {e}",
                self.layout,
                Layout::PRESET_NAMES.join(", ")
            )
        })
    }

    /// The lease timings, checked as the lease crate checks them: a TTL too short to
    /// renew within is a setting that cannot work, refused like any other.
    pub(crate) fn lease_config(&self) -> Result<ferroflake_lease::LeaseConfig, String> {
        let mut settings = ferroflake_lease::LeaseSettings::default();
        settings.ttl_ms = self.lease_ttl_ms;
        settings.max_ttl_ms = self.lease_max_ttl_ms;
        settings.state_file.clone_from(&self.lease_state_file);
        let mut lease = settings.config();
        lease.validate().map_err(|e| e.to_string())?;
        lease.options.resume_after_ms = self.resume_after_ms()?;
        if let Some(after) = lease.options.resume_after_ms {
            // A point the clock will not reach within a start would leave the service
            // retrying a lease for good, unready, instead of saying why at once.
            let start_limit = lease.start_wait_limit();
            let now_ms = ferroflake::Clock::now_ms(&ferroflake::SystemClock);
            let ahead = Duration::from_millis(after.saturating_sub(now_ms));
            if ahead > start_limit {
                return Err(format!(
                    "resume_after_id {}: its time is {ahead:?} ahead of this host's clock, longer \
                     than a start may wait ({start_limit:?}); give the highest ID the old \
                     generator issued, once its time has passed",
                    self.resume_after_id.unwrap_or_default()
                ));
            }
        }
        Ok(lease)
    }

    /// The resume point `resume_after_id` asks for, read with `resume_layout` (core's
    /// rule: every new ID above the old one, as a number and in time).
    fn resume_after_ms(&self) -> Result<Option<u64>, String> {
        let Some(old_id) = self.resume_after_id else {
            if self.resume_layout.is_some() {
                return Err("resume_layout is given without resume_after_id".into());
            }
            return Ok(None);
        };
        let layout = self.layout()?;
        let old_layout = match &self.resume_layout {
            None => layout,
            Some(name) => Layout::parse(name)
                .map_err(|e| format!("resume_layout {name:?} is not a layout: {e}"))?,
        };
        layout
            .resume_after_id(old_id, &old_layout)
            .map(Some)
            .map_err(|e| format!("resume_after_id {old_id}: {e}"))
    }

    /// The lease registry's address, read whole as its client would read it: a mistake in
    /// it is a setting that cannot work, not an outage to retry.
    pub(crate) fn lease_address(&self) -> Result<ferroflake_lease_stores::RegistryAddress, String> {
        match &self.lease {
            Some(address) => {
                let parsed = ferroflake_lease_stores::RegistryAddress::parse(address)
                    .map_err(|e| e.to_string())?;
                // Refused at start, as a store address is: not a server waiting for ever
                // on a backend it cannot reach.
                parsed.built().map_err(|e| {
                    format!(
                        "lease address {:?}: {e}; {BUILD_WITH_STORES}",
                        ferroflake_lease_stores::redact(address)
                    )
                })?;
                if matches!(parsed, ferroflake_lease_stores::RegistryAddress::Service(_)) {
                    return Err(format!(
                        "lease address {:?}: {RELAYED}",
                        ferroflake_lease_stores::redact(address)
                    ));
                }
                Ok(parsed)
            }
            None => Ok(ferroflake_lease_stores::RegistryAddress::Default),
        }
    }

    pub(crate) fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms)
    }

    pub(crate) fn shutdown_timeout(&self) -> Duration {
        Duration::from_millis(self.shutdown_timeout_ms)
    }
}

/// The modes `--modes` can switch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Snowflake IDs under a leased node id.
    Snowflake,
    /// Segment IDs from the store's table.
    Segment,
}

/// `ferroflake serve`'s flags. Each can also be set by the environment variable named in
/// its help, and in the config file; a flag beats the variable, which beats the file.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeArgs {
    /// A TOML config file (fields: listen, layout, lease, lease_ttl_ms, lease_max_ttl_ms, lease_state_file, resume_after_id, resume_layout,
    /// store, preload,
    /// js_keys, snowflake_keys, snowflake, segment, max_batch, max_keys, segment_max_wait_ms,
    /// shutdown_timeout_ms, log_format, workers, mask_key_file, mask_format, tokens_file,
    /// allow_unauthenticated, max_connections, header_read_timeout_ms, request_timeout_ms,
    /// tls_cert, tls_key).
    #[arg(long, env = "FERROFLAKE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Where to listen [default: 127.0.0.1:8080]. An address beyond loopback needs
    /// --tokens-file or --allow-unauthenticated.
    #[arg(long, env = "FERROFLAKE_LISTEN", value_name = "ADDR:PORT")]
    pub listen: Option<SocketAddr>,

    /// The snowflake layout: a preset name or a spelling such as
    /// 41/8/14@2010-11-04T01:42:54.657Z (see `ferroflake layout --help`) [default: twitter].
    #[arg(long, env = "FERROFLAKE_LAYOUT")]
    pub layout: Option<String>,

    /// Lease the node id from this registry: an absolute directory (the embedded registry),
    /// etcd://, redis://, zk:// or postgres:// (builds with the `stores` feature)
    /// [default: the embedded registry].
    #[arg(
        long,
        env = "FERROFLAKE_LEASE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub lease: Option<String>,

    /// The lease's TTL in ms [default: 10000, the lease crate's].
    #[arg(long, env = "FERROFLAKE_LEASE_TTL_MS", value_name = "MS")]
    pub lease_ttl_ms: Option<u64>,

    /// The longest lease TTL this holder may use, in ms; the registry records the widest
    /// any holder asked for, and floors after lost records last that long [default: the
    /// larger of the TTL and 10000].
    #[arg(long, env = "FERROFLAKE_LEASE_MAX_TTL_MS", value_name = "MS")]
    pub lease_max_ttl_ms: Option<u64>,

    /// Keep the lease's claim in this file (the service's own, mode 0600), so that a
    /// restart while the registry is down resumes it until its deadline, and one after asks
    /// for the same node id first.
    #[arg(long, env = "FERROFLAKE_LEASE_STATE_FILE", value_name = "FILE")]
    pub lease_state_file: Option<PathBuf>,

    /// Issue snowflake IDs only above this one: the highest ID an old generator issued,
    /// so that a fleet switching to ferroflake never issues below it.
    #[arg(long, env = "FERROFLAKE_RESUME_AFTER_ID", value_name = "ID")]
    pub resume_after_id: Option<u64>,

    /// The layout the old generator made --resume-after-id's ID with [default: --layout].
    #[arg(long, env = "FERROFLAKE_RESUME_LAYOUT", value_name = "LAYOUT")]
    pub resume_layout: Option<String>,

    /// The segment store: an absolute path or sqlite:///path, postgres://, mysql://,
    /// redis:// (builds with the `stores` feature) [default: the embedded SQLite file].
    #[arg(
        long,
        env = "FERROFLAKE_STORE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub store: Option<String>,

    /// Segment keys to load before reporting ready (comma-separated or repeated).
    #[arg(
        long,
        env = "FERROFLAKE_PRELOAD",
        value_delimiter = ',',
        value_name = "KEYS"
    )]
    pub preload: Vec<String>,

    /// Segment keys whose IDs stay at or below 2^53 - 1 (comma-separated or repeated).
    #[arg(
        long,
        env = "FERROFLAKE_JS_KEYS",
        value_delimiter = ',',
        value_name = "KEYS"
    )]
    pub js_keys: Vec<String>,

    /// Which modes to serve (comma-separated) [default: snowflake,segment].
    #[arg(long, env = "FERROFLAKE_MODES", value_delimiter = ',', value_enum)]
    pub modes: Option<Vec<Mode>>,

    /// The most IDs one native batch request may ask for [default: 10000].
    #[arg(long, env = "FERROFLAKE_MAX_BATCH", value_name = "N")]
    pub max_batch: Option<u64>,

    /// The most segment keys open at once; a request for one more is answered 503
    /// TOO_MANY_KEYS [default: 10000].
    #[arg(long, env = "FERROFLAKE_MAX_KEYS", value_name = "N")]
    pub max_keys: Option<usize>,

    /// How long a stop waits for requests in flight, in ms [default: 10000].
    #[arg(long, env = "FERROFLAKE_SHUTDOWN_TIMEOUT_MS", value_name = "MS")]
    pub shutdown_timeout_ms: Option<u64>,

    /// Log lines as text or JSON [default: text].
    #[arg(long, env = "FERROFLAKE_LOG_FORMAT", value_enum)]
    pub log_format: Option<LogFormat>,

    /// The mask key file of /v1/masked and /v1/unmask: `VERSION:SECRET` lines, the first
    /// current [default: the key in FERROFLAKE_MASK_KEY, if set; else those routes answer
    /// 404]. The key itself is never a flag.
    #[arg(long, env = "FERROFLAKE_MASK_KEY_FILE", value_name = "FILE")]
    pub mask_key_file: Option<PathBuf>,

    /// Require bearer tokens: a TOML file of `[[token]]` entries, each with a name, the
    /// token's SHA-256 in hex (`printf %s TOKEN | sha256sum`) and scopes (issue:KEY,
    /// issue:PREFIX*, issue:*, read, admin); read again on SIGHUP. Only /healthz and
    /// /readyz stay open. The tokens themselves are never a flag [default: no token is
    /// asked for, and only loopback addresses are allowed].
    #[arg(long, env = "FERROFLAKE_TOKENS_FILE", value_name = "FILE")]
    pub tokens_file: Option<PathBuf>,

    /// Listen beyond loopback without --tokens-file, accepting that anyone who reaches
    /// the address can take IDs.
    #[arg(long, env = "FERROFLAKE_ALLOW_UNAUTHENTICATED",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub allow_unauthenticated: bool,

    /// The most HTTP connections held at once; one more is answered 503 and closed
    /// (lowered at start if the open-file limit leaves room for fewer) [default: 10000].
    #[arg(long, env = "FERROFLAKE_MAX_CONNECTIONS", value_name = "N")]
    pub max_connections: Option<usize>,

    /// How long a connection may wait with no complete request head, in ms: a new one,
    /// or a kept-alive one between requests (the idle keep-alive timeout); with TLS, the
    /// bound of a new connection's handshake too [default: 10000].
    #[arg(long, env = "FERROFLAKE_HEADER_READ_TIMEOUT_MS", value_name = "MS")]
    pub header_read_timeout_ms: Option<u64>,

    /// How long a request may take once its head has arrived, in ms, before it is
    /// answered 503 TIMEOUT [default: 30000].
    #[arg(long, env = "FERROFLAKE_REQUEST_TIMEOUT_MS", value_name = "MS")]
    pub request_timeout_ms: Option<u64>,

    /// Serve HTTPS with this certificate chain (PEM, leaf first; TLS 1.2 and 1.3, ALPN
    /// http/1.1); needs --tls-key. Read again on SIGHUP: a new pair serves new
    /// connections, and a pair that cannot be used is logged and the old one kept
    /// [default: plain HTTP].
    #[arg(long, env = "FERROFLAKE_TLS_CERT", value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,

    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1); read again on SIGHUP.
    /// The key itself is never a flag.
    #[arg(long, env = "FERROFLAKE_TLS_KEY", value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_file_is_the_defaults_and_unknown_fields_are_refused() {
        let config: Config = toml::from_str("").unwrap();
        assert_eq!(config, Config::default());
        let config: Config =
            toml::from_str("listen = \"127.0.0.1:9\"\npreload = [\"a\"]\nlog_format = \"json\"")
                .unwrap();
        assert_eq!(config.listen.port(), 9);
        assert_eq!(config.preload, ["a"]);
        assert_eq!(config.log_format, LogFormat::Json);
        assert!(toml::from_str::<Config>("lisen = \"x\"").is_err());
    }

    #[test]
    fn flags_override_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.toml");
        std::fs::write(&path, "layout = \"sonyflake\"\nmax_batch = 5\n").unwrap();
        let args = ServeArgs {
            config: Some(path),
            max_batch: Some(7),
            modes: Some(vec![Mode::Segment]),
            ..ServeArgs::default()
        };
        let config = Config::from_args(&args).unwrap();
        assert_eq!(config.layout, "sonyflake");
        assert_eq!(config.max_batch, 7);
        assert!(config.segment && !config.snowflake);
    }

    #[test]
    fn settings_that_cannot_work_are_refused() {
        let bad = |f: fn(&mut Config)| {
            let mut c = Config::default();
            f(&mut c);
            c.check().unwrap_err()
        };
        assert!(bad(|c| c.layout = "nope".into()).contains("unknown layout"));
        assert!(bad(|c| c.max_batch = 0).contains("max_batch"));
        assert!(bad(|c| c.max_keys = 0).contains("max_keys"));
        assert!(bad(|c| {
            c.max_keys = 1;
            c.preload = vec!["a".into(), "b".into()];
        })
        .contains("max_keys 1 is below the 2 preloaded"));
        assert!(bad(|c| {
            c.snowflake = false;
            c.segment = false;
        })
        .contains("no mode"));
        assert!(bad(|c| c.preload = vec![String::new()]).contains("segment key"));
        // Another service as the store or the registry: a hop on every request, and a
        // loop when one names itself.
        for relayed in [
            bad(|c| c.store = Some("ferroflake+http://127.0.0.1:8080/".into())),
            bad(|c| c.lease = Some("ferroflake+http://127.0.0.1:8080/".into())),
        ] {
            assert!(
                relayed.contains("through another ferroflake service"),
                "{relayed}"
            );
        }
    }

    #[test]
    fn lease_timings_the_lease_crate_refuses_are_a_bad_setting() {
        let args = ServeArgs {
            lease_ttl_ms: Some(1),
            ..ServeArgs::default()
        };
        let refusal = Config::from_args(&args).unwrap_err();
        assert!(refusal.contains("ttl 1ms"), "{refusal}");
        // Without snowflake mode there is no lease, and no lease setting to refuse.
        let segment_only = ServeArgs {
            modes: Some(vec![Mode::Segment]),
            ..args
        };
        assert!(Config::from_args(&segment_only).is_ok());
    }

    #[test]
    fn the_lease_timings_left_out_are_the_lease_crates_defaults() {
        let defaults = Config::default().lease_config().unwrap();
        assert_eq!(defaults, ferroflake_lease::LeaseConfig::default());
        // A longer TTL alone raises the max TTL with it, as in every face.
        let longer = ServeArgs {
            lease_ttl_ms: Some(20_000),
            ..ServeArgs::default()
        };
        let lease = Config::from_args(&longer).unwrap().lease_config().unwrap();
        assert_eq!(
            (lease.ttl, lease.max_ttl),
            (Duration::from_secs(20), Duration::from_secs(20))
        );
        // Both given and at odds: refused as the lease crate refuses it.
        let at_odds = ServeArgs {
            lease_max_ttl_ms: Some(10_000),
            ..longer
        };
        let refusal = Config::from_args(&at_odds).unwrap_err();
        assert!(refusal.contains("exceeds max_ttl"), "{refusal}");
    }

    #[test]
    fn a_resume_id_becomes_the_leases_resume_point_by_cores_rule() {
        let sonyflake_id = (1u64 << 40) | 5;
        let args = ServeArgs {
            resume_after_id: Some(sonyflake_id),
            resume_layout: Some("sonyflake".into()),
            ..ServeArgs::default()
        };
        let lease = Config::from_args(&args).unwrap().lease_config().unwrap();
        assert_eq!(
            lease.options.resume_after_ms,
            Some(
                Layout::twitter()
                    .resume_after_id(sonyflake_id, &Layout::sonyflake())
                    .unwrap()
            )
        );
        for (args, why) in [
            (
                ServeArgs {
                    resume_layout: Some("sonyflake".into()),
                    ..ServeArgs::default()
                },
                "without resume_after_id",
            ),
            (
                ServeArgs {
                    layout: Some("js53".into()),
                    resume_after_id: Some(u64::MAX >> 1),
                    ..ServeArgs::default()
                },
                "above this layout",
            ),
            (
                ServeArgs {
                    resume_after_id: Some(1),
                    resume_layout: Some("snowflake".into()),
                    ..ServeArgs::default()
                },
                "resume_layout \"snowflake\" is not a layout",
            ),
            (
                ServeArgs {
                    resume_after_id: Some((1u64 << 63) - 1),
                    resume_layout: Some("sonyflake".into()),
                    ..ServeArgs::default()
                },
                "time field ran out",
            ),
            (
                // A Twitter ID of 2079: decades ahead of any clock running this test.
                ServeArgs {
                    resume_after_id: Some(((1u64 << 41) - 2) << 22),
                    ..ServeArgs::default()
                },
                "ahead of this host's clock",
            ),
        ] {
            let refusal = Config::from_args(&args).unwrap_err();
            assert!(refusal.contains(why), "{refusal}");
        }
    }

    #[test]
    fn a_lease_address_its_client_refuses_is_a_bad_setting() {
        for address in [
            "postgres://u:SeCrEt@127.0.0.1:1/db?foo=bar",
            "etcd://127.0.0.1:1?x=y",
        ] {
            let args = ServeArgs {
                lease: Some(address.to_owned()),
                ..ServeArgs::default()
            };
            let refusal = Config::from_args(&args).unwrap_err();
            assert!(refusal.contains("bad registry address"), "{refusal}");
            assert!(!refusal.contains("SeCrEt"), "{refusal}");
        }
    }

    #[test]
    fn a_config_file_error_and_the_help_show_no_password() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("serve.toml");
        for text in [
            "listen = \"127.0.0.1:1\"\nstore = \"postgres://app:SeCrEt@db/ids\" x\n",
            "store = 5\nlease = [\"redis://:SeCrEt@cache/0\"]\n",
            "lease = [\"redis://:SeCrEt@cache/0\"]\n",
        ] {
            std::fs::write(&file, text).unwrap();
            let refusal = Config::from_file(&file).unwrap_err();
            assert!(refusal.contains("line "), "{refusal}");
            assert!(!refusal.contains("SeCrEt"), "{refusal}");
        }
        use clap::CommandFactory;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            serve: ServeArgs,
        }
        // The help shows the variables' values, but not of these (the environment is not
        // set here: other tests read it at the same time).
        let command = Cli::command();
        for secret in ["store", "lease"] {
            let arg = command
                .get_arguments()
                .find(|a| a.get_id() == secret)
                .unwrap();
            assert!(
                arg.is_hide_env_values_set(),
                "--{secret} shows its variable's value"
            );
        }
    }

    #[test]
    fn a_store_address_that_cannot_be_read_is_a_bad_setting() {
        for address in ["postgres://u:SeCrEt@127.0.0.1:1/db?foo=bar", "relative.db"] {
            let args = ServeArgs {
                store: Some(address.to_owned()),
                modes: Some(vec![Mode::Segment]),
                ..ServeArgs::default()
            };
            let refusal = Config::from_args(&args).unwrap_err();
            assert!(refusal.contains("store address"), "{refusal}");
            assert!(!refusal.contains("SeCrEt"), "{refusal}");
        }
    }

    #[test]
    fn beyond_loopback_a_server_needs_tokens_or_the_waiver() {
        let at = |listen: &str, tokens: bool, waived: bool| Config {
            listen: listen.parse().unwrap(),
            tokens_file: tokens.then(|| PathBuf::from("/etc/ferroflake/tokens.toml")),
            allow_unauthenticated: waived,
            ..Config::default()
        };
        for loopback in [
            "127.0.0.1:8080",
            "127.8.9.1:1",
            "[::1]:8080",
            "[::ffff:127.0.0.1]:80",
        ] {
            assert!(at(loopback, false, false).check().is_ok(), "{loopback}");
            assert!(at(loopback, true, false).check().is_ok(), "{loopback}");
        }
        for exposed in ["0.0.0.0:8080", "[::]:8080", "10.0.0.5:80", "[fe80::1]:80"] {
            let refusal = at(exposed, false, false).check().unwrap_err();
            assert!(refusal.contains("refusing to listen"), "{refusal}");
            assert!(refusal.contains("--tokens-file"), "{refusal}");
            assert!(refusal.contains("--allow-unauthenticated"), "{refusal}");
            assert!(at(exposed, true, false).check().is_ok(), "{exposed}");
            assert!(at(exposed, false, true).check().is_ok(), "{exposed}");
        }
        assert!(at("0.0.0.0:80", true, true)
            .check()
            .unwrap_err()
            .contains("both"));
    }

    #[test]
    fn a_tls_certificate_and_key_go_together() {
        let args = |cert: Option<&str>, key: Option<&str>| ServeArgs {
            tls_cert: cert.map(PathBuf::from),
            tls_key: key.map(PathBuf::from),
            ..ServeArgs::default()
        };
        let config = Config::from_args(&args(Some("/c.pem"), Some("/k.pem"))).unwrap();
        assert!(config.tls());
        assert!(!Config::from_args(&args(None, None)).unwrap().tls());
        let refusal = Config::from_args(&args(Some("/c.pem"), None)).unwrap_err();
        assert!(refusal.contains("--tls-key"), "{refusal}");
        let refusal = Config::from_args(&args(None, Some("/k.pem"))).unwrap_err();
        assert!(refusal.contains("--tls-cert"), "{refusal}");
        let config: Config =
            toml::from_str("tls_cert = \"/c.pem\"\ntls_key = \"/k.pem\"\n").unwrap();
        assert!(config.check().is_ok() && config.tls());
    }

    #[test]
    fn the_tokens_file_comes_from_the_file_a_flag_or_the_variable() {
        let config: Config =
            toml::from_str("listen = \"0.0.0.0:80\"\ntokens_file = \"/etc/ff/tokens.toml\"\n")
                .unwrap();
        assert_eq!(
            config.tokens_file,
            Some(PathBuf::from("/etc/ff/tokens.toml"))
        );
        assert!(config.check().is_ok());
        let config: Config = toml::from_str("allow_unauthenticated = true").unwrap();
        assert!(config.allow_unauthenticated);

        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let parse = |args: &[&str]| {
            <Cli as clap::Parser>::try_parse_from(
                std::iter::once("serve").chain(args.iter().copied()),
            )
            .map(|cli| Config::from_args(&cli.serve))
        };
        let config = parse(&["--tokens-file", "/t.toml", "--listen", "0.0.0.0:1"])
            .unwrap()
            .unwrap();
        assert_eq!(config.tokens_file, Some(PathBuf::from("/t.toml")));
        let config = parse(&["--allow-unauthenticated", "--listen", "[::]:1"])
            .unwrap()
            .unwrap();
        assert!(config.allow_unauthenticated);
        // The token itself is never a flag.
        assert!(parse(&["--token", "x"]).is_err());
    }
}
