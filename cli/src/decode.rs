//! `ferroflake decode`: the parts inside an ID.

use std::io::Write;

use ferroflake::{Error, Format};

use crate::args::DecodeArgs;
use crate::failure::Failure;
use crate::iso::iso_ms;

pub fn run(args: &DecodeArgs, out: &mut impl Write) -> Result<(), Failure> {
    let layout = args.layout.get();
    let format = args.format.text_format();
    let text = args.id.trim();
    let id = format
        .parse(text)
        .map_err(|e| Failure::Input(unreadable(text, format, &e)))?;
    let not_of_layout =
        |e: Error| Failure::Input(format!("{id} is not a {} ID: {e}", args.layout.name()));
    if let Some(peer) = args.view {
        writeln!(out, "{}", peer.show(&layout, id).map_err(not_of_layout)?)?;
        return Ok(());
    }
    let parts = layout.decode(id).map_err(not_of_layout)?;
    let time = iso_ms(parts.timestamp_ms);
    if args.json {
        let value = serde_json::json!({
            "id": id.to_string(),
            "layout": args.layout.name(),
            "time": time,
            "timestamp_ms": parts.timestamp_ms,
            "node": parts.node,
            "sequence": parts.sequence,
            "shard": parts.shard,
        });
        writeln!(out, "{value}")?;
    } else {
        writeln!(out, "id        {id}")?;
        writeln!(out, "layout    {}", args.layout.name())?;
        writeln!(
            out,
            "time      {time}  ({} ms since the Unix epoch)",
            parts.timestamp_ms
        )?;
        writeln!(out, "node      {}", parts.node)?;
        writeln!(out, "sequence  {}", parts.sequence)?;
        writeln!(out, "shard     {}", parts.shard)?;
    }
    Ok(())
}

/// Why `text` is not an ID, counting characters, not bytes, and naming the character (the
/// core's errors count bytes, and `text` may hold any Unicode).
fn unreadable(text: &str, format: Format, e: &Error) -> String {
    let name = format.name();
    let length = text.chars().count();
    let invalid_at = |index: usize| match text.get(index..) {
        Some(rest) => {
            let position = text[..index].chars().count() + 1;
            let found = rest.chars().next().unwrap_or_default();
            format!("invalid character {found:?} at position {position} (not a {name} digit)")
        }
        None => e.to_string(),
    };
    // A length the core measured in bytes can be right in characters: then the culprit
    // is the first non-ASCII character (no format has one among its digits).
    let first_non_ascii = text.find(|c: char| !c.is_ascii());
    let detail = match *e {
        Error::ParseInvalidCharacter { index, .. } => invalid_at(index),
        Error::ParseWrongLength { expected, .. } => match first_non_ascii {
            Some(index) if length == expected => invalid_at(index),
            _ => {
                format!("{length} characters, but a {name} ID is always {expected} characters long")
            }
        },
        Error::ParseTooLong { .. } => match first_non_ascii {
            Some(index) if length <= 19 => invalid_at(index),
            _ => format!("{length} characters is longer than any ID (at most 19 digits)"),
        },
        _ => e.to_string(),
    };
    format!("cannot read {text:?} as a {name} ID: {detail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str, format: Format) -> String {
        unreadable(text, format, &format.parse(text).unwrap_err())
    }

    #[test]
    fn positions_and_lengths_count_characters() {
        assert_eq!(
            message("12x", Format::Decimal),
            "cannot read \"12x\" as a dec ID: invalid character 'x' at position 3 (not a dec digit)"
        );
        // 'é' is 2 bytes: the 'x' after it is character 3, byte 4.
        assert!(message("1éx", Format::Decimal).contains("invalid character 'é' at position 2"));
        assert!(message("é1", Format::Decimal).contains("'é' at position 1"));
        let ten = "ééééééééé1";
        assert!(
            message(ten, Format::Base62).contains("10 characters, but a base62 ID is always 11")
        );
        // As many characters as an ID has, but more bytes: the character is the fault.
        let eleven = "ééééééééé12";
        assert!(message(eleven, Format::Base62).contains("invalid character 'é' at position 1"));
        assert!(message("1é345678901234567", Format::Decimal).contains("'é' at position 2"));
        let long = "é".repeat(20);
        assert!(message(&long, Format::Decimal).contains("20 characters is longer than any ID"));
    }
}
