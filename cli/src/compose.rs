//! `ferroflake compose`: the ID of given parts, the inverse of `decode`.

use std::io::Write;

use ferroflake::Parts;

use crate::args::ComposeArgs;
use crate::failure::Failure;
use crate::iso::instant_ms;

pub fn run(args: &ComposeArgs, out: &mut impl Write) -> Result<(), Failure> {
    let layout = args.layout.get();
    let parts = Parts {
        timestamp_ms: instant_ms("--time", &args.time)?,
        node: args.node,
        sequence: args.sequence,
        shard: args.shard,
    };
    let id = layout.compose(&parts).map_err(|e| {
        let message = format!("no {} ID has these parts: {e}", args.layout.name());
        Failure::from_core(&e, message)
    })?;
    let text = args
        .format
        .text_format()
        .encode(id)
        .map_err(|e| Failure::from_core(&e, format!("{id} cannot be written so: {e}")))?;
    writeln!(out, "{text}")?;
    Ok(())
}
