//! `ferroflake`: issue, decode and explain snowflake-family IDs from the shell.
//!
//! The argument definitions (and so `--help`) are in `args.rs`; one file per subcommand.

mod args;
mod decode;
mod failure;
mod iso;
mod layout_view;
mod next;
mod registry_url;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};
use failure::Failure;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match &cli.command {
        Command::Next(args) => next::run(args, &mut out),
        Command::Decode(args) => decode::run(args, &mut out),
        Command::Layout(args) => layout_view::run(args, &mut out),
    };
    let result = result.and_then(|()| out.flush().map_err(Failure::from));
    match result {
        Ok(()) | Err(Failure::OutputClosed) => ExitCode::SUCCESS,
        Err(failure) => {
            drop(out);
            eprintln!("ferroflake: {failure}");
            ExitCode::from(failure.exit_code())
        }
    }
}
