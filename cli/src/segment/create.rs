//! `ferroflake segment create KEY --start S --step N`: add a key to the table.

use std::io::Write;

use serde_json::json;

use super::refusal::{explain, Refusal};
use super::store;
use crate::args::{SegmentCreateArgs, SegmentFormat};
use crate::failure::Failure;

pub fn run(args: &SegmentCreateArgs, out: &mut impl Write) -> Result<(), Failure> {
    let json = args.format == SegmentFormat::Json;
    match create(args) {
        Ok(_) if json => {
            let created = json!({
                "key": args.key,
                "start": args.start.to_string(),
                "step": args.step,
            });
            writeln!(out, "{created}")?;
            Ok(())
        }
        Ok(store) => {
            writeln!(
                out,
                "created segment key {:?}: first ID {}, step {} (store: {store})",
                args.key, args.start, args.step
            )?;
            Ok(())
        }
        Err(refusal) => {
            if json {
                let failed = json!({ "key": args.key, "error": refusal.json() });
                // The refusal is what the exit status reports, even if this write fails.
                let _ = writeln!(out, "{failed}");
            }
            Err(refusal.failure)
        }
    }
}

/// Creates the key; returns the store's label.
fn create(args: &SegmentCreateArgs) -> Result<String, Refusal> {
    let opened = store::open(args.store.store.as_deref())?;
    opened
        .store
        .create(&args.key, args.start, args.step)
        .map_err(|e| Refusal::of(&e, explain(&e, Some(&opened.label))))?;
    Ok(opened.label)
}
