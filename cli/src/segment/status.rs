//! `ferroflake segment status KEY...`: the keys' rows, read without changing them.

use std::io::Write;

use ferroflake_segment::{KeyRecord, SegmentError};
use serde_json::json;

use super::refusal::{explain, Refusal};
use super::store;
use crate::args::{SegmentFormat, SegmentStatusArgs};
use crate::failure::Failure;

pub fn run(args: &SegmentStatusArgs, out: &mut impl Write) -> Result<(), Failure> {
    let (rows, refusal) = read(args);
    if args.format == SegmentFormat::Json {
        let keys: Vec<_> = rows
            .iter()
            .map(|(key, row)| json!({ "key": key, "max_id": row.max_id.to_string(), "step": row.step }))
            .collect();
        let mut shown = json!({ "keys": keys });
        if let Some(refusal) = &refusal {
            shown["error"] = refusal.json();
        }
        let written = writeln!(out, "{shown}");
        return match refusal {
            Some(refusal) => Err(refusal.failure),
            None => written.map_err(Failure::from),
        };
    }
    if !rows.is_empty() {
        let width = rows
            .iter()
            .map(|(key, _)| key.len())
            .max()
            .unwrap_or(0)
            .max(3);
        let id_width = rows
            .iter()
            .map(|(_, row)| row.max_id.to_string().len())
            .max()
            .unwrap_or(0)
            .max(6);
        writeln!(out, "{:width$}  {:>id_width$}  step", "key", "max_id")?;
        for (key, row) in &rows {
            writeln!(out, "{key:width$}  {:>id_width$}  {}", row.max_id, row.step)?;
        }
    }
    match refusal {
        Some(refusal) => Err(refusal.failure),
        None => Ok(()),
    }
}

/// The rows of the keys that have one, and why the command fails if it does: no key
/// named, a key the store refuses, or keys without a row (the others are still shown).
fn read(args: &SegmentStatusArgs) -> (Vec<(String, KeyRecord)>, Option<Refusal>) {
    if args.keys.is_empty() {
        let refusal = Refusal {
            kind: "USAGE".to_owned(),
            failure: Failure::Input(
                "name the keys to show: `ferroflake segment status KEY...`; rows are read by \
                 key, and the stores have no call that lists every key"
                    .to_owned(),
            ),
        };
        return (Vec::new(), Some(refusal));
    }
    let opened = match store::open(args.store.store.as_deref()) {
        Ok(opened) => opened,
        Err(refusal) => return (Vec::new(), Some(refusal)),
    };
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for key in &args.keys {
        match opened.store.peek(key) {
            Ok(Some(row)) => rows.push((key.clone(), row)),
            Ok(None) => missing.push(key.as_str()),
            Err(e) => {
                let refusal = Refusal::of(&e, explain(&e, Some(&opened.label)));
                return (Vec::new(), Some(refusal));
            }
        }
    }
    let refusal = match missing[..] {
        [] => None,
        [key] => {
            let e = SegmentError::UnknownKey { key: key.into() };
            Some(Refusal::of(&e, explain(&e, Some(&opened.label))))
        }
        _ => {
            let names: Vec<String> = missing.iter().map(|key| format!("{key:?}")).collect();
            Some(Refusal {
                kind: "UNKNOWN_KEY".to_owned(),
                failure: Failure::Run(format!(
                    "no segment keys {} in the table: create them first, e.g. `ferroflake \
                     segment create KEY --start 1 --step 1000` (store: {})",
                    names.join(", "),
                    opened.label
                )),
            })
        }
    };
    (rows, refusal)
}
