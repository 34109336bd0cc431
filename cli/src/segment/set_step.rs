//! `ferroflake segment set-step KEY --step N`: change the step stored for a key.

use std::io::Write;

use ferroflake_segment::KeyRecord;
use serde_json::json;

use super::refusal::{explain, print_outcome, Refusal};
use super::store;
use crate::args::{SegmentFormat, SegmentSetStepArgs};
use crate::failure::Failure;

pub fn run(args: &SegmentSetStepArgs, out: &mut impl Write) -> Result<(), Failure> {
    let outcome = set_step(args).map(|(row, store)| {
        let shown = json!({
            "key": args.key,
            "max_id": row.max_id.to_string(),
            "step": row.step,
        });
        let said = format!(
            "segment key {:?} now has step {} (next range starts at {}; store: {store}); \
             running allocators learn it at their next fetch and use it after that",
            args.key, row.step, row.max_id
        );
        (shown, said)
    });
    print_outcome(out, &args.key, args.format == SegmentFormat::Json, outcome)
}

/// Sets the step; returns the row and the store's label.
fn set_step(args: &SegmentSetStepArgs) -> Result<(KeyRecord, String), Refusal> {
    let opened = store::open(args.store.store.as_deref())?;
    let row = opened
        .store
        .set_step(&args.key, args.step)
        .map_err(|e| Refusal::of(&e, explain(&e, Some(&opened.label))))?;
    Ok((row, opened.label))
}
