//! `ferroflake decode`: the parts inside an ID.

use std::io::Write;

use ferroflake::Format;

use crate::args::{DecodeArgs, InputFormat};
use crate::failure::Failure;
use crate::iso::iso_ms;

pub fn run(args: &DecodeArgs, out: &mut impl Write) -> Result<(), Failure> {
    let layout = args.layout.get();
    let format = match args.format {
        InputFormat::Dec => Format::Decimal,
        InputFormat::Base62 => Format::Base62,
        InputFormat::Base32 => Format::Base32,
    };
    let id = format.parse(args.id.trim()).map_err(|e| {
        Failure::Input(format!(
            "cannot read {:?} as a {} ID: {e}",
            args.id,
            format.name()
        ))
    })?;
    let parts = layout
        .decode(id)
        .map_err(|e| Failure::Input(format!("{id} is not a {} ID: {e}", args.layout.layout)))?;
    let time = iso_ms(parts.timestamp_ms);
    if args.json {
        let value = serde_json::json!({
            "id": id.to_string(),
            "layout": args.layout.layout,
            "time": time,
            "timestamp_ms": parts.timestamp_ms,
            "node": parts.node,
            "sequence": parts.sequence,
            "shard": parts.shard,
        });
        writeln!(out, "{value}")?;
    } else {
        writeln!(out, "id        {id}")?;
        writeln!(out, "layout    {}", args.layout.layout)?;
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
