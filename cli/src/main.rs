//! `ferroflake`: issue, decode and explain snowflake-family IDs from the shell.
//!
//! The argument definitions (and so `--help`) are in `args.rs`; one file per subcommand
//! (`segment/` holds the segment subcommands).

mod args;
mod decode;
mod failure;
mod iso;
mod layout_view;
mod next;
mod registry_url;
mod segment;
mod signals;
mod stdout_check;

use std::io::Write;
use std::process::ExitCode;

use args::{Cli, Command};
use failure::{warn, Failure};

fn main() -> ExitCode {
    let cli = Cli::parse_with_defaults();
    let result = if stdout_check::closed_at_start() {
        Err(Failure::Run(
            "standard output is closed (started with >&-): the output would be lost, so \
             nothing was done"
                .to_owned(),
        ))
    } else {
        run(&cli)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            warn(&failure.to_string());
            ExitCode::from(failure.exit_code())
        }
    }
}

fn run(cli: &Cli) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match &cli.command {
        Command::Next(args) => next::run(args, &mut out),
        Command::Decode(args) => decode::run(args, &mut out),
        Command::Layout(args) => layout_view::run(args, &mut out),
        Command::Segment(command) => segment::run(command, &mut out),
    };
    let flushed = out.flush();
    result?;
    flushed.map_err(Failure::from)
}
