//! The command line, as clap derives it.

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use ferroflake::Layout;

/// Issue, decode and explain snowflake-family 64-bit IDs.
///
/// A node id is never guessed: `ferroflake next` either uses `--node N`, an id you manage
/// yourself, or leases one from a registry. The default registry is a local directory
/// shared by the processes of this host: one fixed directory per user, which
/// `ferroflake next --help` names.
///
/// Exit status: 0 on success; 1 when IDs cannot be issued, written (a closed or broken
/// standard output) or an id cannot be leased; 2 for bad usage or input; 130 or 143 when
/// `next` was stopped by SIGINT or SIGTERM (it stops issuing and releases its lease first).
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
    /// Draw a layout's bits and show its capacity and exhaustion date.
    Layout(LayoutArgs),
}

/// Which preset layout IDs use.
#[derive(Debug, Clone, Args)]
pub struct LayoutChoice {
    /// The layout (preset name).
    #[arg(long, default_value = "twitter", value_parser = clap::builder::PossibleValuesParser::new(Layout::PRESET_NAMES))]
    pub layout: String,
}

impl Cli {
    /// Parses the command line, with `--lease`'s help naming the default directory.
    pub fn parse_with_defaults() -> Self {
        let default_dir = ferroflake_lease::EmbeddedRegistry::default_dir();
        let command = Self::command().mut_subcommand("next", |next| {
            next.mut_arg("lease", |lease| {
                let help = lease
                    .get_long_help()
                    .or(lease.get_help())
                    .map(ToString::to_string);
                lease.long_help(format!(
                    "{}\n\nDefault: the embedded registry in {}",
                    help.unwrap_or_default(),
                    default_dir.display()
                ))
            })
        });
        let matches = command.get_matches();
        Self::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
}

impl LayoutChoice {
    /// The chosen preset (the parser accepts preset names only).
    pub fn get(&self) -> Layout {
        Layout::from_name(&self.layout).expect("clap accepts preset names only")
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
    #[arg(long, conflicts_with = "lease")]
    pub node: Option<u64>,

    /// Lease the node id from this registry: an absolute directory path or file:///path
    /// (the embedded registry), or etcd://, redis://, zk://, postgres:// (only in builds
    /// with the `stores` feature: `cargo install --path cli --features stores`, which needs
    /// protoc). Refused: relative paths (each working directory would name another
    /// registry, and two registries can lease the same node id), the filesystem root, a
    /// path that is not a directory, and unknown schemes (`mailto:x`).
    #[arg(long, value_name = "URL")]
    pub lease: Option<String>,

    /// Put this shard in the lowest bits (layouts with shard bits, e.g. `sharded`).
    #[arg(long, default_value_t = 0)]
    pub shard: u64,

    /// How to print the IDs.
    #[arg(long, value_enum, default_value_t = OutputFormat::Dec)]
    pub format: OutputFormat,
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
    /// One JSON object: layout, node, lease and the IDs as decimal strings.
    Json,
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
}

#[derive(Debug, Args)]
pub struct LayoutArgs {
    #[command(flatten)]
    pub layout: LayoutChoice,

    /// Show every preset.
    #[arg(long, conflicts_with = "layout")]
    pub all: bool,
}
