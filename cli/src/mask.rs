//! `ferroflake mask` and `ferroflake unmask`: public IDs under a key from a file or the
//! environment, never from the command line.

use std::io::{BufRead, Write};
use std::path::Path;

use ferroflake::{Error, Format, Mask, MaskKeyring};

use crate::args::{MaskArgs, MaskFormat};
use crate::failure::{warn, Failure};

/// The environment variable that holds the key when there is no `--key-file`.
pub const KEY_VARIABLE: &str = "FERROFLAKE_MASK_KEY";

/// Which way the command goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Mask,
    Unmask,
}

pub fn run(args: &MaskArgs, direction: Direction, out: &mut impl Write) -> Result<(), Failure> {
    if let Some(version) = args.new_key {
        if direction == Direction::Unmask {
            return Err(Failure::Input(
                "--new-key makes a key: use it with `ferroflake mask`".into(),
            ));
        }
        return new_key(version, out);
    }
    let ring = keyring(args.key_file.as_deref())?;
    let bits = match (args.bits, args.js) {
        (Some(bits), _) => bits,
        (None, true) => 53,
        (None, false) => 63,
    };
    let current = ring.current_mask(bits)?;
    let mut each = |value: &str| -> Result<(), Failure> {
        let line = match direction {
            Direction::Mask => mask_one(&current, value, args.format)?,
            Direction::Unmask => unmask_one(&ring, &current, value, args.format)?,
        };
        writeln!(out, "{line}").map_err(Failure::from)
    };
    if args.values.is_empty() {
        for line in std::io::stdin().lock().lines() {
            let line =
                line.map_err(|e| Failure::Run(format!("cannot read standard input: {e}")))?;
            let value = line.trim();
            if !value.is_empty() {
                each(value)?;
            }
        }
    } else {
        for value in &args.values {
            each(value.trim())?;
        }
    }
    Ok(())
}

/// The keyring from `--key-file`, else from the environment variable.
fn keyring(key_file: Option<&Path>) -> Result<MaskKeyring, Failure> {
    let (text, source) = match key_file {
        Some(path) => {
            let read = ferroflake::read_key_file(path).map_err(|e| {
                Failure::Input(format!("cannot read the key file {}: {e}", path.display()))
            })?;
            if let Some(warning) = read.warning(path) {
                warn(&warning);
            }
            (read.text, format!("the key file {}", path.display()))
        }
        None => match std::env::var(KEY_VARIABLE) {
            Ok(text) => (text, KEY_VARIABLE.to_owned()),
            Err(std::env::VarError::NotPresent) => {
                return Err(Failure::Input(format!(
                    "no mask key: give --key-file PATH or set {KEY_VARIABLE} (never on the \
                     command line); make one with `ferroflake mask --new-key 1`"
                )))
            }
            Err(e) => return Err(Failure::Input(format!("{KEY_VARIABLE}: {e}"))),
        },
    };
    // The message names where the key is, never what it holds.
    MaskKeyring::parse_from(&text, &source).map_err(|e| Failure::Input(e.to_string()))
}

fn format_of(format: MaskFormat) -> Option<Format> {
    match format {
        MaskFormat::Base62 => Some(Format::Base62),
        MaskFormat::Base32 => Some(Format::Base32),
        MaskFormat::Dec => Some(Format::Decimal),
        MaskFormat::Number => None,
    }
}

fn mask_one(mask: &Mask, value: &str, format: MaskFormat) -> Result<String, Failure> {
    let id: u64 = value
        .parse()
        .map_err(|_| Failure::Input(format!("cannot mask {value:?}: not a decimal ID")))?;
    let refused = |e: Error| {
        let detail = match e {
            Error::IdOutOfRange { bits, .. } => format!(
                "it does not fit the mask's {bits} bits (IDs below 2^{bits}; --bits 64 or, \
                 without --js, 63 take wider ones)"
            ),
            other => other.to_string(),
        };
        Failure::Input(format!("cannot mask {id}: {detail}"))
    };
    Ok(match format_of(format) {
        Some(format) => mask.encode(id, format).map_err(refused)?.to_string(),
        None => mask.mask(id).map_err(refused)?.to_string(),
    })
}

fn unmask_one(
    ring: &MaskKeyring,
    current: &Mask,
    value: &str,
    format: MaskFormat,
) -> Result<String, Failure> {
    let result = match format_of(format) {
        Some(format) => ring.decode(value, format, current.bits()),
        None => value
            .parse::<u64>()
            .map_err(|_| Error::ParseInvalidCharacter { index: 0 })
            .and_then(|masked| current.unmask(masked)),
    };
    result.map(|id| id.to_string()).map_err(|e| {
        let detail = match e {
            Error::UnknownMaskKeyVersion { version } => {
                let held: Vec<String> = ring.versions().map(|v| v.to_string()).collect();
                format!(
                    "it names key version {version}, and the keys given are version {}",
                    held.join(", ")
                )
            }
            Error::ParseWrongLength { expected, found } => format!(
                "{found} characters, but a masked {}-bit ID in this format has {expected}",
                current.bits()
            ),
            Error::ParseInvalidCharacter { .. } if format == MaskFormat::Number => {
                "not a decimal number".to_owned()
            }
            other => other.to_string(),
        };
        Failure::Input(format!("cannot unmask {value:?}: {detail}"))
    })
}

/// Prints `VERSION:SECRET` with 16 bytes from the operating system's random source.
fn new_key(version: u8, out: &mut impl Write) -> Result<(), Failure> {
    let mut secret = [0u8; 16];
    getrandom::fill(&mut secret)
        .map_err(|e| Failure::Run(format!("no randomness from the operating system: {e}")))?;
    let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    writeln!(out, "{version}:{hex}")?;
    Ok(())
}
