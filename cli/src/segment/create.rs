//! `ferroflake segment create KEY --start S --step N`: add a key to the table.

use std::io::Write;

use serde_json::json;

use super::refusal::{explain, print_outcome, Refusal};
use super::store;
use crate::args::{SegmentCreateArgs, SegmentFormat};
use crate::failure::Failure;

pub fn run(args: &SegmentCreateArgs, out: &mut impl Write) -> Result<(), Failure> {
    let outcome = create(args).map(|store| {
        let shown = json!({
            "key": args.key,
            "start": args.start.to_string(),
            "step": args.step,
        });
        let said = format!(
            "created segment key {:?}: first ID {}, step {} (store: {store})",
            args.key, args.start, args.step
        );
        (shown, said)
    });
    print_outcome(out, &args.key, args.format == SegmentFormat::Json, outcome)
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
