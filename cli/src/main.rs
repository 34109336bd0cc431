//! `ferroflake`: issue, decode and explain snowflake-family IDs from the shell.
//!
//! The argument definitions (and so `--help`) are in `args.rs`; one file per subcommand
//! (`segment/` holds the segment subcommands).

mod args;
mod compose;
mod decode;
mod failure;
mod iso;
mod layout_arg;
mod layout_view;
mod lease_list;
mod lease_reserve;
mod lease_restored;
mod lease_show;
mod mask;
mod next;
mod peers;
mod segment;
mod serve;
mod signals;
mod stdout_check;
mod stop_aware_stdout;

use std::io::Write;
use std::process::ExitCode;

use args::{Cli, Command};
use failure::{warn, Failure};

fn main() -> ExitCode {
    let cli = Cli::parse_with_defaults();
    if let Command::Serve(args) = &cli.command {
        // The service logs to stderr and writes nothing to stdout.
        return ExitCode::from(serve::run(args));
    }
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
    // Not std's stdout: a stop signal must not wait on a reader that stopped reading.
    let mut out = stop_aware_stdout::Stdout::new()
        .map_err(|e| Failure::Run(format!("cannot start the output's thread: {e}")))?;
    let result = match &cli.command {
        Command::Next(args) => next::run(args, &mut out),
        Command::Decode(args) => decode::run(args, &mut out),
        Command::Compose(args) => compose::run(args, &mut out),
        Command::Layout(args) => layout_view::run(args, &mut out),
        Command::Mask(args) => mask::run(args, mask::Direction::Mask, &mut out),
        Command::Unmask(args) => mask::run(args, mask::Direction::Unmask, &mut out),
        Command::Segment(command) => segment::run(command, &mut out),
        Command::Lease(args::LeaseCommand::Restored(args)) => lease_restored::run(args, &mut out),
        Command::Lease(args::LeaseCommand::List(args)) => lease_list::run(args, &mut out),
        Command::Lease(args::LeaseCommand::Show(args)) => lease_show::run(args, &mut out),
        Command::Lease(args::LeaseCommand::Reserve(args)) => lease_reserve::reserve(args, &mut out),
        Command::Lease(args::LeaseCommand::Unreserve(args)) => {
            lease_reserve::unreserve(args, &mut out)
        }
        Command::Serve(_) => unreachable!("main runs the service before this"),
    };
    let flushed = out.flush();
    result?;
    flushed.map_err(|e| match signals::first_stop() {
        // Done before the signal came, but the reader took nothing more after it.
        Some(signal) if stop_aware_stdout::gave_up(&e) => Failure::Interrupted {
            signal,
            message: format!("interrupted by {}: {e}", signals::signal_name(signal)),
        },
        _ => Failure::from(e),
    })
}
