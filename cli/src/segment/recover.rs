//! `ferroflake segment recover KEY --above ID`: the operator's way back after a loss.

use std::io::Write;

use ferroflake_segment::KeyRecord;
use serde_json::json;

use super::refusal::{explain, print_outcome, Refusal};
use super::store;
use crate::args::{SegmentFormat, SegmentRecoverArgs};
use crate::failure::Failure;

pub fn run(args: &SegmentRecoverArgs, out: &mut impl Write) -> Result<(), Failure> {
    let outcome = recover(args).map(|(row, store)| {
        let shown = json!({
            "key": args.key,
            "max_id": row.max_id.to_string(),
            "step": row.step,
        });
        let said = format!(
            "recovered segment key {:?}: next range starts at {}, step {} (store: {store}); \
             restart the processes using it",
            args.key, row.max_id, row.step
        );
        (shown, said)
    });
    print_outcome(out, &args.key, args.format == SegmentFormat::Json, outcome)
}

/// Raises the key; returns its row and the store's label.
fn recover(args: &SegmentRecoverArgs) -> Result<(KeyRecord, String), Refusal> {
    let opened = store::open(args.store.store.as_deref())?;
    let row = opened
        .store
        .recover(&args.key, args.above, args.step)
        .map_err(|e| Refusal::of(&e, explain(&e, Some(&opened.label))))?;
    Ok((row, opened.label))
}
