//! Why a command failed, and the exit status that says so.

use std::fmt;

/// A failed command: its message goes to stderr, its kind picks the exit status.
#[derive(Debug)]
pub enum Failure {
    /// Bad input (an ID that does not parse, a node out of range): exit status 2, like
    /// clap's own usage errors.
    Input(String),
    /// IDs could not be issued or an id could not be leased: exit status 1.
    Run(String),
    /// Whoever read our output stopped reading (`ferroflake next -n 1000 | head`): exit 0
    /// quietly, as other Unix tools do.
    OutputClosed,
}

impl Failure {
    /// The process exit status.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Input(_) => 2,
            Failure::Run(_) => 1,
            Failure::OutputClosed => 0,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Input(m) | Failure::Run(m) => f.write_str(m),
            Failure::OutputClosed => f.write_str("output closed"),
        }
    }
}

impl From<ferroflake::Error> for Failure {
    /// Core errors from bad values are input errors; clock and lease errors are not.
    fn from(e: ferroflake::Error) -> Self {
        if e.kind().is_invalid_input() {
            Failure::Input(e.to_string())
        } else {
            Failure::Run(e.to_string())
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return Failure::OutputClosed;
        }
        Failure::Run(format!("cannot write output: {e}"))
    }
}
