//! The command line, as clap derives it.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::parser::ValueSource;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use ferroflake::{Layout, PeerParts};
use ferroflake_lease::protocol::{DEFAULT_MAX_TTL, DEFAULT_QUARANTINE};

use crate::layout_arg::NamedLayout;
use crate::peers::Peer;

/// Issue, decode and explain snowflake-family 64-bit IDs.
///
/// A node id is never guessed: `ferroflake next` either uses `--node N`, an id you manage
/// yourself, or leases one from a registry. The default registry is a local directory
/// shared by the processes of this host: one fixed directory per user, which
/// `ferroflake next --help` names.
///
/// Exit status: 0 on success; 1 when IDs cannot be issued, written (a closed or broken
/// standard output) or an id cannot be leased, or a segment key is missing, exists already,
/// is exhausted or its store fails, or `layout --like` names a library whose IDs no layout
/// describes; 2 for bad usage or input; 130 or 143 when `next` or
/// `segment next` was stopped by SIGINT or SIGTERM (it stops issuing and releases its lease,
/// or gives its unissued IDs back, first).
#[derive(Debug, Parser)]
#[command(name = "ferroflake", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Issue new IDs, one per line.
    Next(NextArgs),
    /// Show the time, node, sequence and shard inside an ID.
    Decode(DecodeArgs),
    /// Build the ID of given parts: the inverse of decode (sonyflake's Compose).
    Compose(ComposeArgs),
    /// Draw a layout's bits and show its capacity and exhaustion date, or print the layout
    /// of another ID library's IDs (--like).
    Layout(LayoutArgs),
    /// Turn IDs into public IDs that hide their time, node or count, one per line.
    ///
    /// A keyed permutation (a 10-round Feistel network on SipHash-2-4): only the key's
    /// holder can turn a masked ID back. Text forms start with the key's version, so keys
    /// can be rotated. The key comes from --key-file or the FERROFLAKE_MASK_KEY environment
    /// variable, never from the command line (other users can read it there). A key is
    /// `VERSION:SECRET` (0-31, then 32 hex digits or base64 of 16 bytes); a key file may
    /// hold several, one per line: the first masks, all unmask. Make one with
    /// `ferroflake mask --new-key 1`.
    ///
    /// It hides what IDs say; it does not authenticate them: any text of the right form
    /// unmasks to some ID, so look IDs up before trusting them.
    Mask(MaskArgs),
    /// Turn public IDs made by `mask` back into IDs, one per line.
    ///
    /// The version at the start of each text picks the key from the key file (or
    /// FERROFLAKE_MASK_KEY), so IDs masked before a key rotation still unmask.
    Unmask(MaskArgs),
    /// Segment IDs: dense per-key counters from a table, taken a range at a time.
    ///
    /// A key is a row of Leaf's table (`leaf_alloc`: biz_tag, max_id, step): each
    /// allocation takes `step` IDs from `max_id` in one atomic update, so every process
    /// sharing the table gets ranges of its own. IDs are dense and increase per key; they
    /// need no node id and no clock. A Leaf server and ferroflake can share one table. Keys
    /// are created explicitly (`segment create`), never on first use.
    #[command(subcommand)]
    Segment(SegmentCommand),
    /// Node-id registries: what an operator does to one.
    #[command(subcommand)]
    Lease(LeaseCommand),
    /// Run the ID service: Leaf-compatible HTTP for snowflake and segment IDs.
    ///
    /// With no options it listens on 127.0.0.1:8080, leases its node id from the embedded
    /// registry and takes segments from the embedded SQLite file. Routes: any method but
    /// HEAD and CONNECT on /api/segment/get/{key} and /api/snowflake/get/{key} (Leaf's,
    /// answering the ID as decimal text); GET /v1/segment/{key}?count=N, /v1/snowflake/{key}?count=N,
    /// /v1/segment/{key}/status, /v1/masked/segment/{key}, /v1/masked/snowflake/{key},
    /// /v1/unmask/{text}, /v1/decode/{id}, /v1/status, /v1/constant (JSON, IDs as
    /// strings); any method on /decodeSnowflakeId (Leaf's); admin: GET /v1/admin/keys,
    /// /v1/admin/leases, POST /v1/admin/segment/{key}?start=N&step=S,
    /// /v1/admin/segment/{key}/recover and /v1/admin/segment/{key}/step; the segment store
    /// itself, for clients that issue from
    /// ranges: POST /v1/store/segment/{key}/allocate and /v1/store/segment/{key}/give-back,
    /// GET /v1/store/segment/{key}; the lease registry itself (--lease's), for clients that
    /// hold node ids: POST /v1/store/lease/claim, /v1/store/lease/renew,
    /// /v1/store/lease/release, /v1/store/lease/restored, /v1/store/lease/reserve and
    /// /v1/store/lease/unreserve (JSON bodies), GET /v1/store/lease/list and
    /// /v1/store/lease/clock; /metrics, /healthz, /readyz.
    /// SIGTERM or SIGINT stops it: idle and half-sent connections close at once, requests in flight finish, unissued segment
    /// IDs go back to the table, the lease is released, exit 0. A second signal exits at
    /// once.
    Serve(Box<ferroflake_serve::ServeArgs>),
}

/// Which layout IDs use.
#[derive(Debug, Clone, Args)]
pub struct LayoutChoice {
    /// The layout: a preset (twitter, discord, sonyflake, js53, js53ms, sharded) or a
    /// spelling TIME/NODE/SEQUENCE[+SHARD]@EPOCH[,tick=Nms][,order=ORDER], the epoch as
    /// YYYY-MM-DDTHH:MM:SS[.fff]Z or unix ms, ORDER node_then_sequence (default) or
    /// sequence_then_node. E.g. 41/8/14@2010-11-04T01:42:54.657Z; `ferroflake layout
    /// --like PEER` prints the one for another library's IDs.
    #[arg(long, value_name = "LAYOUT", default_value = "twitter", value_parser = NamedLayout::parse)]
    pub layout: NamedLayout,
}

impl Cli {
    /// Parses the command line, with `--lease`'s help naming the default directory.
    pub fn parse_with_defaults() -> Self {
        let default_dir = ferroflake_lease::EmbeddedRegistry::default_dir();
        let default_file = ferroflake_segment::SqliteStore::default_path();
        let command = Self::command()
            .mut_subcommand("next", |next| {
                next.mut_arg("lease", |lease| {
                    with_default(lease, "the embedded registry in", &default_dir)
                })
            })
            .mut_subcommand("segment", |segment| {
                ["next", "create", "status", "order-number"]
                    .into_iter()
                    .fold(segment, |segment, name| {
                        segment.mut_subcommand(name, |sub| {
                            sub.mut_arg("store", |store| {
                                with_default(store, "the embedded SQLite file", &default_file)
                            })
                        })
                    })
            });
        let matches = command.clone().get_matches();
        warn_of_secrets(&command, &matches);
        let mut cli = Self::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
        if let (Command::Next(next), Some(("next", next_matches))) =
            (&mut cli.command, matches.subcommand())
        {
            next.node_or_lease(next_matches)
                .unwrap_or_else(|e| command.clone().error(e.0, e.1).exit());
        }
        cli
    }
}

/// Warns, on stderr, of each address given on the command line with a secret in it: the
/// command line is in the process list, which every user of the machine can read. The
/// warning names the address with its secrets hidden, and the variable that keeps them
/// out of the list where the flag has one.
fn warn_of_secrets(command: &clap::Command, matches: &clap::ArgMatches) {
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        let flag = arg.get_long().unwrap_or(id);
        let is_address = arg.get_value_names().is_some_and(|names| names == ["URL"]);
        if !is_address || matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let Ok(Some(values)) = matches.try_get_raw(id) else {
            continue;
        };
        for value in values.filter_map(|v| v.to_str()) {
            let shown = ferroflake_lease_stores::redact(value);
            if shown == value {
                continue;
            }
            let instead = arg.get_env().map_or_else(
                || "; give the password where the address' backend reads one".to_owned(),
                |env| format!("; {} keeps it out of the list", env.to_string_lossy()),
            );
            eprintln!(
                "warning: --{flag} {shown} holds a secret, which every user of this machine can \
                 read in the process list while this runs{instead}"
            );
        }
    }
    if let Some((name, sub_matches)) = matches.subcommand() {
        if let Some(sub) = command.find_subcommand(name) {
            warn_of_secrets(sub, sub_matches);
        }
    }
}

impl NextArgs {
    /// `--node` and `--lease` on one command line are refused; a `--node` beats a registry
    /// from FERROFLAKE_LEASE, as every flag beats its variable.
    fn node_or_lease(
        &mut self,
        matches: &clap::ArgMatches,
    ) -> Result<(), (clap::error::ErrorKind, &'static str)> {
        if self.node.is_none() {
            return Ok(());
        }
        match matches.value_source("lease") {
            Some(ValueSource::CommandLine) => Err((
                clap::error::ErrorKind::ArgumentConflict,
                "the argument '--node <NODE>' cannot be used with '--lease <URL>'",
            )),
            _ => {
                self.lease = None;
                Ok(())
            }
        }
    }
}

/// `arg`'s long help, followed by the default it stands for.
fn with_default(arg: clap::Arg, what: &str, path: &std::path::Path) -> clap::Arg {
    let help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(ToString::to_string);
    arg.long_help(format!(
        "{}\n\nDefault: {what} {}",
        help.unwrap_or_default(),
        path.display()
    ))
}

impl LayoutChoice {
    /// The chosen layout.
    pub fn get(&self) -> Layout {
        self.layout.layout
    }

    /// The preset's name, or the layout's spelling.
    pub fn name(&self) -> &str {
        &self.layout.name
    }
}

#[derive(Debug, Args)]
pub struct NextArgs {
    /// How many IDs to issue.
    #[arg(short = 'n', long = "count", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: u64,

    #[command(flatten)]
    pub layout: LayoutChoice,

    /// Use this node id, which you guarantee no other live generator uses. Without it, an
    /// id is leased from the registry for the duration of the command.
    #[arg(long)]
    pub node: Option<u64>,

    /// Lease the node id from this registry: an absolute directory path or file:///path
    /// (the embedded registry), or etcd://, redis://, zk://, postgres:// (only in builds
    /// with the `stores` feature: `cargo install --path cli --features stores`, which needs
    /// protoc). Refused: relative paths (each working directory would name another
    /// registry, and two registries can lease the same node id), the filesystem root, a
    /// path that is not a directory, and unknown schemes (`mailto:x`). With `--node`, the
    /// variable is not read.
    #[arg(
        long,
        value_name = "URL",
        env = "FERROFLAKE_LEASE",
        hide_env_values = true
    )]
    pub lease: Option<String>,

    /// Put this shard in the lowest bits (layouts with shard bits, e.g. `sharded`).
    #[arg(long, default_value_t = 0)]
    pub shard: u64,

    /// Issue only IDs above this one: the highest ID an old generator issued (for this
    /// node, or for the whole fleet), so that a fleet switching to ferroflake never issues
    /// below it. New IDs are larger numbers and come after its tick in time. Refused if no
    /// ID of --layout is above it, or if the clock has not reached it yet.
    #[arg(long, value_name = "ID")]
    pub resume_after_id: Option<u64>,

    /// The layout the old generator made --resume-after-id's ID with [default: --layout].
    #[arg(long, value_name = "LAYOUT", requires = "resume_after_id", value_parser = NamedLayout::parse)]
    pub resume_layout: Option<NamedLayout>,

    /// How to print the IDs.
    #[arg(long, value_enum, default_value_t = OutputFormat::Dec)]
    pub format: OutputFormat,
}

impl NextArgs {
    /// The generator's options: the resume point --resume-after-id asks for, if any.
    pub fn options(&self) -> Result<ferroflake::Options, ferroflake::Error> {
        let layout = self.layout.get();
        let resume_after_ms = self
            .resume_after_id
            .map(|old_id| {
                let old_layout = self.resume_layout.as_ref().map_or(layout, |l| l.layout);
                layout.resume_after_id(old_id, &old_layout)
            })
            .transpose()?;
        Ok(ferroflake::Options::given(None, None, resume_after_ms))
    }
}

/// How `next` prints IDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Decimal.
    Dec,
    /// Fixed-width base62 (sorts like the numbers).
    Base62,
    /// Fixed-width Crockford base32 (sorts like the numbers).
    Base32,
    /// bwmarrin/snowflake's Base58 (Flickr's alphabet).
    Base58Flickr,
    /// bwmarrin/snowflake's Base32 (base-32 digits in the z-base-32 alphabet).
    Base32Bwmarrin,
    /// Base 36, lower case.
    Base36,
    /// Base 2.
    Base2,
    /// bwmarrin/snowflake's Base64: standard base64 of the decimal text.
    Base64Decimal,
    /// One JSON object: layout, node, lease and the IDs as decimal strings.
    Json,
}

impl OutputFormat {
    /// The core's text format of each ID (`json` writes them as decimal strings).
    pub fn text_format(self) -> ferroflake::Format {
        match self {
            Self::Json => ferroflake::Format::Decimal,
            other => core_format(other),
        }
    }
}

/// How `decode` reads the ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// Decimal.
    Dec,
    /// Fixed-width base62.
    Base62,
    /// Fixed-width Crockford base32.
    Base32,
    /// bwmarrin/snowflake's Base58 (Flickr's alphabet).
    Base58Flickr,
    /// bwmarrin/snowflake's Base32 (base-32 digits in the z-base-32 alphabet).
    Base32Bwmarrin,
    /// Base 36 (either case).
    Base36,
    /// Base 2.
    Base2,
    /// bwmarrin/snowflake's Base64: standard base64 of the decimal text.
    Base64Decimal,
    /// bwmarrin/snowflake's JSON form: the decimal in double quotes.
    Json,
}

impl InputFormat {
    /// The core's text format of this name.
    pub fn text_format(self) -> ferroflake::Format {
        core_format(self)
    }
}

/// The core format whose name is the option's value: the names are the core's, so every
/// face spells a format the same way.
/// One of the lease crate's default durations, in the flags' milliseconds.
fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn core_format(value: impl ValueEnum) -> ferroflake::Format {
    value
        .to_possible_value()
        .and_then(|v| ferroflake::Format::from_name(v.get_name()))
        .unwrap_or(ferroflake::Format::Decimal)
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// The ID (a negative number is read, and refused, as an ID rather than a flag).
    #[arg(allow_hyphen_values = true)]
    pub id: String,

    #[command(flatten)]
    pub layout: LayoutChoice,

    /// How the ID is written.
    #[arg(long, value_enum, default_value_t = InputFormat::Dec)]
    pub format: InputFormat,

    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,

    /// Print the parts as another library shows them, one line of that library's JSON:
    /// bwmarrin (ID.Time/Node/Step), sonyflake and sonyflake-v2 (Decompose), leaf
    /// (/decodeSnowflakeId), cosid (its friendly ID and state). Times in UTC. --layout
    /// says where the parts are (`ferroflake layout --like PEER` gives the peer's).
    #[arg(
        long = "as",
        value_name = "PEER",
        conflicts_with = "json",
        value_parser = PossibleValuesParser::new(PeerParts::NAMES)
            .map(|name| PeerParts::from_name(&name).expect("a listed name"))
    )]
    pub view: Option<PeerParts>,
}

#[derive(Debug, Args)]
pub struct ComposeArgs {
    #[command(flatten)]
    pub layout: LayoutChoice,

    /// When the ID was made: YYYY-MM-DDTHH:MM:SS[.fff]Z or unix ms, rounded down to the
    /// start of its tick (sonyflake's Compose does the same).
    #[arg(long, value_name = "INSTANT")]
    pub time: String,

    /// The node (worker, machine) id.
    #[arg(long, default_value_t = 0)]
    pub node: u64,

    /// The sequence number within the tick.
    #[arg(long, default_value_t = 0)]
    pub sequence: u64,

    /// The shard, for layouts with shard bits.
    #[arg(long, default_value_t = 0)]
    pub shard: u64,

    /// How to write the ID.
    #[arg(long, value_enum, default_value_t = InputFormat::Dec)]
    pub format: InputFormat,
}

#[derive(Debug, Args)]
pub struct LayoutArgs {
    #[command(flatten)]
    pub layout: LayoutChoice,

    /// Show every preset.
    #[arg(long, conflicts_with_all = ["layout", "like"])]
    pub all: bool,

    /// Print the layout spelling that decodes another library's IDs, for --layout. With
    /// the peer's own settings where they differ from its defaults (--node-bits,
    /// --step-bits, --bits-sequence, --bits-machine-id, --time-unit, --epoch). Exit status
    /// 1, saying why, for a peer whose IDs no layout describes.
    #[arg(long, value_enum, value_name = "PEER", conflicts_with = "layout")]
    pub like: Option<Peer>,

    /// bwmarrin/snowflake's NodeBits [default: 10].
    #[arg(long, requires = "like")]
    pub node_bits: Option<u32>,

    /// bwmarrin/snowflake's StepBits [default: 12].
    #[arg(long, requires = "like")]
    pub step_bits: Option<u32>,

    /// sonyflake v2's BitsSequence [default: 8].
    #[arg(long, requires = "like")]
    pub bits_sequence: Option<u32>,

    /// sonyflake v2's BitsMachineID [default: 16].
    #[arg(long, requires = "like")]
    pub bits_machine_id: Option<u32>,

    /// sonyflake v2's TimeUnit, in whole milliseconds: `10ms`, `1s` [default: 10ms].
    #[arg(long, value_name = "DURATION", requires = "like")]
    pub time_unit: Option<String>,

    /// The peer's epoch (bwmarrin's Epoch, sonyflake's StartTime, Hutool's epochDate, ...):
    /// YYYY-MM-DDTHH:MM:SS[.fff]Z or unix ms [default: the peer's].
    #[arg(long, alias = "start-time", value_name = "INSTANT", requires = "like")]
    pub epoch: Option<String>,
}

#[derive(Debug, Args)]
pub struct MaskArgs {
    /// The IDs (decimal) to mask, or the texts to unmask. Without any, one per line from
    /// standard input.
    pub values: Vec<String>,

    /// Read the key (or keys, one per line) from this file. Without it, from the
    /// FERROFLAKE_MASK_KEY environment variable.
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<std::path::PathBuf>,

    /// IDs of JavaScript-safe layouts (js53, js53ms, segment keys with --js): mask within
    /// 53 bits, so masked IDs stay below 2^53 too. The default width is 63 bits, which holds
    /// every ferroflake ID.
    #[arg(long, conflicts_with = "bits")]
    pub js: bool,

    /// Mask within this many bits (8 to 64) instead.
    #[arg(long, value_parser = clap::value_parser!(u32).range(8..=64))]
    pub bits: Option<u32>,

    /// The form of masked IDs: base62 or base32 text, or decimal text (two version digits
    /// first), each of fixed length; or the bare masked number, which names no key version
    /// (the first key masks and unmasks it).
    #[arg(long, value_enum, default_value_t = MaskFormat::Base62)]
    pub format: MaskFormat,

    /// Print a new random key of this version (0-31) instead, e.g. `(umask 077; ferroflake
    /// mask --new-key 1 > mask.key)`.
    #[arg(long, value_name = "VERSION", conflicts_with_all = ["values", "key_file", "js", "bits"], value_parser = clap::value_parser!(u8).range(0..=31))]
    pub new_key: Option<u8>,
}

/// How `mask` writes, and `unmask` reads, masked IDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MaskFormat {
    /// Base62 text: the version, then 11 characters (9 with --js).
    Base62,
    /// Crockford base32 text: the version, then 13 characters (11 with --js).
    Base32,
    /// Decimal text: two version digits, then 19 digits (16 with --js).
    Dec,
    /// The masked number itself, without a version.
    Number,
}

/// `ferroflake segment ...` (the help text is on `Command::Segment`).
#[derive(Debug, Subcommand)]
pub enum SegmentCommand {
    /// Take IDs from a key, one per line.
    ///
    /// The unissued rest of the segment goes back to the table at exit (also when stopped
    /// by SIGINT or SIGTERM), unless the table moved on after this run's last allocation,
    /// e.g. another process allocated: then those IDs are skipped, never issued twice.
    Next(SegmentNextArgs),
    /// Add a key to the table: its first ID and how many IDs one allocation takes.
    Create(SegmentCreateArgs),
    /// Show keys' rows: max_id (where the next allocation starts) and step.
    Status(SegmentStatusArgs),
    /// Bring a key back after a loss: raise it above the highest ID issued for it.
    ///
    /// A key whose row was lost, or went back (a restored backup, a flushed Redis), is
    /// refused with REWOUND, and is never created again below what it reached. Find the
    /// highest ID issued for the key (in the data that holds the IDs), then run this with
    /// --above that ID: the key's next range starts above it, and above the highest max_id
    /// the store itself recorded for the key. A missing key is made with --step. Restart the
    /// processes using the key afterwards.
    Recover(SegmentRecoverArgs),
    /// Change the step stored for a key: the least one allocation takes.
    ///
    /// Only the step changes; where the next range starts stays. Processes using the key
    /// learn the new step at their next fetch and use it for the fetches after that.
    SetStep(SegmentSetStepArgs),
    /// Issue date-prefixed order numbers, one per line: yyyyMMdd and a zero-padded counter.
    ///
    /// Each day has its own key, PREFIX:yyyyMMdd, created on first use; the day is taken in
    /// --zone. A counter that would need more than --width digits is refused (exit 1), never
    /// widened. Numbers a run took but did not print go back to the table unless another
    /// process allocated since (then they are skipped, never issued twice).
    OrderNumber(SegmentOrderNumberArgs),
}

/// Where the segment table is.
#[derive(Debug, Clone, Args)]
pub struct StoreChoice {
    /// The store: an absolute path or sqlite:///path (a SQLite file, created if missing),
    /// or postgres://, mysql://, redis:// (only in builds with the `stores` feature: `cargo
    /// install --path cli --features stores`). Refused: relative paths (each working
    /// directory would name another table, and two tables can hand out the same IDs).
    #[arg(
        long,
        value_name = "URL",
        env = "FERROFLAKE_STORE",
        hide_env_values = true
    )]
    pub store: Option<String>,
}

/// How segment commands print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SegmentFormat {
    /// Plain text: one ID, or one row, per line.
    Text,
    /// One JSON object (IDs and max_id as decimal strings); on failure it still ends valid,
    /// with `"error":{"kind":..,"message":..}`.
    Json,
}

#[derive(Debug, Args)]
pub struct SegmentNextArgs {
    /// The key (1 to 128 bytes).
    pub key: String,

    /// How many IDs to take.
    #[arg(short = 'n', long = "count", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: u64,

    /// Never issue an ID above 2^53 - 1 (the largest integer a JavaScript number holds
    /// exactly); past it the key is exhausted.
    #[arg(long)]
    pub js: bool,

    #[command(flatten)]
    pub store: StoreChoice,

    /// How to print the IDs.
    #[arg(long, value_enum, default_value_t = SegmentFormat::Text)]
    pub format: SegmentFormat,
}

#[derive(Debug, Args)]
pub struct SegmentCreateArgs {
    /// The key (1 to 128 bytes).
    pub key: String,

    /// The first ID (1 or more; 0 and negative starts are read, and refused, as numbers).
    #[arg(long, allow_negative_numbers = true, default_value_t = ferroflake_segment::DEFAULT_START)]
    pub start: i64,

    /// How many IDs one allocation takes (1 to 2^31 - 1). Allocators grow it while IDs go
    /// fast (up to 1,000,000), never below it.
    #[arg(long, default_value_t = ferroflake_segment::DEFAULT_STEP)]
    pub step: u64,

    #[command(flatten)]
    pub store: StoreChoice,

    /// How to print the result.
    #[arg(long, value_enum, default_value_t = SegmentFormat::Text)]
    pub format: SegmentFormat,
}

#[derive(Debug, Args)]
pub struct SegmentRecoverArgs {
    /// The key (1 to 128 bytes).
    pub key: String,

    /// The highest ID ever issued for the key, as found by the operator: the next range
    /// starts above it.
    #[arg(long, value_name = "ID")]
    pub above: u64,

    /// The step, if the key's row is missing and is made again.
    #[arg(long, default_value_t = ferroflake_segment::DEFAULT_STEP)]
    pub step: u64,

    #[command(flatten)]
    pub store: StoreChoice,

    /// How to print the result.
    #[arg(long, value_enum, default_value_t = SegmentFormat::Text)]
    pub format: SegmentFormat,
}

#[derive(Debug, Args)]
pub struct SegmentSetStepArgs {
    /// The key (1 to 128 bytes).
    pub key: String,

    /// How many IDs one allocation takes at least (1 to 2^31 - 1).
    #[arg(long)]
    pub step: u64,

    #[command(flatten)]
    pub store: StoreChoice,

    /// How to print the result.
    #[arg(long, value_enum, default_value_t = SegmentFormat::Text)]
    pub format: SegmentFormat,
}

#[derive(Debug, Args)]
pub struct SegmentOrderNumberArgs {
    /// How many numbers to issue.
    #[arg(short = 'n', long = "count", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: u64,

    /// The day keys' prefix.
    #[arg(long, default_value = "orders")]
    pub prefix: String,

    /// The IANA time zone whose midnight starts a new day (Asia/Shanghai, America/New_York).
    #[arg(long, default_value = "UTC")]
    pub zone: String,

    /// Digits of the counter (1 to 10).
    #[arg(long, default_value_t = 6)]
    pub width: u32,

    /// How many numbers one allocation takes (the step of day keys created by this run).
    #[arg(long, default_value_t = 100)]
    pub step: u64,

    #[command(flatten)]
    pub store: StoreChoice,
}

#[derive(Debug, Args)]
pub struct SegmentStatusArgs {
    /// The keys to show. Rows are read by key: the stores have no call that lists every
    /// key, so at least one is needed.
    pub keys: Vec<String>,

    #[command(flatten)]
    pub store: StoreChoice,

    /// How to print the rows.
    #[arg(long, value_enum, default_value_t = SegmentFormat::Text)]
    pub format: SegmentFormat,
}

/// `ferroflake lease ...`.
#[derive(Debug, Subcommand)]
pub enum LeaseCommand {
    /// Tell a registry that its history moved back: run it right after restoring the
    /// registry's store (or the embedded registry's directory) from a backup or snapshot,
    /// or after promoting a replica that may lag behind the old primary.
    ///
    /// A restored registry forgets the claims made since the backup, so it would hand a
    /// live holder's node id to a new process at once. After this command every claim
    /// waits out a floor (the longest TTL any holder uses, plus the quarantine) before it
    /// issues; by then every holder the registry forgot has stopped, because its renewals
    /// fail against the restored records. Safe to run at any time; it only delays starts.
    Restored(LeaseRestoredArgs),
    /// Show a registry's node ids: who holds each (as the holder named itself), its
    /// state (held, quarantined, expired, released), when it was claimed and last renewed,
    /// the holder's clock skew from the registry's at that renewal, when the claim expires
    /// unless renewed, and the high-water mark the next holder waits past; and the
    /// lost-records floor, if one runs. Reads only: it claims nothing and starts no floor.
    List(LeaseListArgs),
    /// Show one node id's record: its holder (as the holder named itself, "host:pid" by
    /// default), state, when it was claimed and last renewed, when it expires, its
    /// high-water mark, the holder's clock skew at its last renewal, and its epoch. Exit 1
    /// if the registry has no record of the id. Reads only, as `list`.
    Show(LeaseShowArgs),
    /// Reserve node ids for a generator that does not use the registry (an old fleet still
    /// issuing while ferroflake rolls out): no claim takes them until `lease unreserve`.
    /// A reservation never expires, survives restarts, and lists as "reserved". An id a
    /// live claim holds is not taken from it: the command names its holder and exits 1
    /// (the others are reserved; run it again once that holder has stopped).
    ///
    /// `--from-leaf` reads the worker ids of a Leaf snowflake fleet from its ZooKeeper
    /// nodes (`/snowflake/{leaf.name}/forever/IP:PORT-SEQUENCE`) and reserves each, named
    /// after its server.
    ///
    /// A store that loses its records loses its reservations with them: after a restore,
    /// run `lease restored` and this command again before any new holder starts.
    Reserve(LeaseReserveArgs),
    /// Lift reservations made by `lease reserve`, once the generator they were for has
    /// stopped. Each id's high-water mark is raised to now (or `--high-water`, if later),
    /// so its next holder issues nothing until its clock has passed what that generator
    /// could have issued. An id that is not reserved is left as it is.
    Unreserve(LeaseUnreserveArgs),
}

/// The registry a `lease` subcommand works on.
#[derive(Debug, Args)]
pub struct RegistryArg {
    /// The registry: an absolute directory path or file:///path (the embedded registry),
    /// or etcd://, redis://, zk://, postgres://, ferroflake+http:// (builds with the
    /// `stores` feature).
    #[arg(
        long,
        value_name = "URL",
        env = "FERROFLAKE_LEASE",
        hide_env_values = true
    )]
    pub lease: String,
}

#[derive(Debug, Args)]
pub struct LeaseReserveArgs {
    /// The node ids: `7`, `0-31`, or a list of both (`0-3,9`). Optional with
    /// `--from-leaf`.
    #[arg(value_name = "NODES", required_unless_present = "from_leaf")]
    pub nodes: Option<String>,

    #[command(flatten)]
    pub registry: RegistryArg,

    /// Who the ids are reserved for, as `lease list` shows it (1 to 256 bytes).
    #[arg(long, default_value = "another generator")]
    pub holder: String,

    /// A Leaf fleet's ZooKeeper path, zk://host:port/snowflake/LEAF_NAME: reserve every
    /// worker id under it.
    #[arg(long, value_name = "URL")]
    pub from_leaf: Option<String>,
}

#[derive(Debug, Args)]
pub struct LeaseUnreserveArgs {
    /// The node ids: `7`, `0-31`, or a list of both (`0-3,9`).
    #[arg(value_name = "NODES")]
    pub nodes: String,

    #[command(flatten)]
    pub registry: RegistryArg,

    /// The last time the old generator issued under these ids, if its clock ran ahead
    /// of this host's: a UTC instant (`2026-11-29T12:00:00Z`) or Unix ms, at most a
    /// holder's start wait (30 s) ahead of this clock.
    #[arg(long, value_name = "INSTANT")]
    pub high_water: Option<String>,
}

#[derive(Debug, Args)]
pub struct LeaseShowArgs {
    /// The node id.
    pub node: u64,

    #[command(flatten)]
    pub registry: RegistryArg,

    /// How to print the record.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    pub format: ListFormat,
}

#[derive(Debug, Args)]
pub struct LeaseListArgs {
    #[command(flatten)]
    pub registry: RegistryArg,

    /// How to print the node ids.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    pub format: ListFormat,
}

/// How `lease list` and `lease show` print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// `list`: an aligned table, one node id per line, under a line naming the registry;
    /// `show`: one field a line, under that line.
    Text,
    /// One JSON object: the registry (any password hidden), its clock, and, for `list`,
    /// the floor and the node ids; for `show`, the node id's fields.
    Json,
}

#[derive(Debug, Args)]
pub struct LeaseRestoredArgs {
    #[command(flatten)]
    pub registry: RegistryArg,

    /// The longest TTL any holder of the registry uses, in ms (the floor lasts this plus
    /// the quarantine; a registry that recorded a longer one uses that).
    #[arg(long, default_value_t = millis(DEFAULT_MAX_TTL), value_parser = clap::value_parser!(u64).range(1..))]
    pub max_ttl_ms: u64,

    /// The holders' quarantine, in ms.
    #[arg(long, default_value_t = millis(DEFAULT_QUARANTINE))]
    pub quarantine_ms: u64,
}

#[cfg(test)]
mod text_format_tests {
    use super::*;

    #[test]
    fn every_core_format_is_a_decode_format_of_the_same_name() {
        let read: Vec<_> = InputFormat::value_variants()
            .iter()
            .map(|v| v.text_format())
            .collect();
        assert_eq!(read, ferroflake::Format::ALL);
    }

    #[test]
    fn next_prints_every_core_format_but_json_under_its_name() {
        for value in OutputFormat::value_variants() {
            let name = value.to_possible_value().unwrap().get_name().to_owned();
            if *value != OutputFormat::Json {
                assert_eq!(value.text_format().name(), name);
            }
        }
        assert_eq!(
            OutputFormat::value_variants().len(),
            ferroflake::Format::ALL.len()
        );
    }
}
