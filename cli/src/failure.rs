//! Why a command failed, and the exit status that says so.

use std::fmt;

/// A failed command: its message goes to stderr, its kind picks the exit status.
#[derive(Debug)]
pub enum Failure {
    /// Bad input (an ID that does not parse, a node out of range): exit status 2, like
    /// clap's own usage errors.
    Input(String),
    /// IDs could not be issued or written, or an id could not be leased: exit status 1.
    /// A closed or broken standard output is one of these: IDs that were issued but not
    /// read are lost, so the command must not look as if it succeeded.
    Run(String),
    /// Stopped by a signal (SIGINT or SIGTERM): exit status 128 + its number (130, 143),
    /// as shells report a process killed by it.
    Interrupted {
        /// The signal's number.
        signal: i32,
        /// What was done before exiting (the lease released, how many IDs were issued).
        message: String,
    },
}

impl Failure {
    /// The process exit status.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Input(_) => 2,
            Failure::Run(_) => 1,
            Failure::Interrupted { signal, .. } => u8::try_from(128 + signal).unwrap_or(u8::MAX),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Input(m) | Failure::Run(m) => f.write_str(m),
            Failure::Interrupted { message, .. } => f.write_str(message),
        }
    }
}

impl From<ferroflake::Error> for Failure {
    /// Core errors from bad values are input errors; clock and lease errors are not.
    fn from(e: ferroflake::Error) -> Self {
        Failure::from_core(&e, e.to_string())
    }
}

impl Failure {
    /// A core error with a message of our own (e.g. a lease refusal explained).
    pub fn from_core(e: &ferroflake::Error, message: String) -> Self {
        if e.kind().is_invalid_input() {
            Failure::Input(message)
        } else {
            Failure::Run(message)
        }
    }
}

impl Failure {
    /// A lease error with a message of our own (made with [`lease_error`]): the caller's
    /// to fix (exit 2) when the address or setting cannot work.
    pub fn from_lease(e: &ferroflake_lease::LeaseError, message: String) -> Self {
        if e.is_invalid_input() {
            Failure::Input(message)
        } else {
            Failure::Run(message)
        }
    }
}

/// `e` in words, with how to get a build that carries the registry it names when this one
/// leaves it out.
pub fn lease_error(e: &ferroflake_lease::LeaseError) -> String {
    match e {
        ferroflake_lease::LeaseError::NotBuilt { .. } => {
            format!("{e}; {}", ferroflake_serve::BUILD_WITH_STORES)
        }
        _ => e.to_string(),
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Run(output_error(&e))
    }
}

/// Why standard output could not be written, in words.
pub fn output_error(e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        "cannot write to standard output: its reader closed it (broken pipe)".to_owned()
    } else {
        format!("cannot write to standard output: {e}")
    }
}

/// Writes `ferroflake: {message}` to stderr, ignoring failure: a closed or broken stderr
/// must not turn a refusal into a panic (as `eprintln!` would).
pub fn warn(message: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "ferroflake: {message}");
}
