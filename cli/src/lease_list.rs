//! `ferroflake lease list`: a registry's node ids, holders, states, times and marks.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use ferroflake_lease::{LeaseError, NodeView, Registry, RegistryView};
use ferroflake_lease_stores::{redact, RegistryAddress};

use crate::args::{LeaseListArgs, ListFormat};
use crate::failure::{lease_error, output_error, Failure};
use crate::iso::iso_ms;

pub fn run(args: &LeaseListArgs, out: &mut impl Write) -> Result<(), Failure> {
    let (address, registry, view) = read_view(&args.registry.lease, "list")?;
    let written = match args.format {
        ListFormat::Text => write_text(out, &address.describe(), &view),
        ListFormat::Json => {
            let json = view.to_json(&redact(&args.registry.lease), registry.name());
            writeln!(out, "{json}")
        }
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| Failure::Run(output_error(&e)))
}

/// Opens the registry at `lease` and reads its records, for `lease list` and `lease
/// show` (`verb` names the command in messages).
pub fn read_view(
    lease: &str,
    verb: &str,
) -> Result<(RegistryAddress, Arc<dyn Registry>, RegistryView), Failure> {
    let address = RegistryAddress::parse(lease).map_err(|e| Failure::Input(e.to_string()))?;
    let cannot = |e| refused(&address, verb, &e);
    // Opening the embedded registry makes its directory: a mistyped path must not.
    let dir = match &address {
        RegistryAddress::Default => Some(ferroflake_lease::EmbeddedRegistry::default_dir()),
        RegistryAddress::Embedded(dir) => Some(dir.clone()),
        _ => None,
    };
    if let Some(dir) = dir.filter(|d| !d.exists()) {
        return Err(Failure::Run(format!(
            "cannot {verb} {}: {} does not exist, so no registry is there",
            address.describe(),
            dir.display()
        )));
    }
    let registry = address.open().map_err(cannot)?;
    let view = registry.list().map_err(cannot)?;
    Ok((address, registry, view))
}

/// The registry's refusal to `verb` it. As `next` reports it: an address the build
/// cannot use, or a store set up so that it cannot hold a registry, is the caller's to fix
/// (exit 2).
pub fn refused(address: &RegistryAddress, verb: &str, e: &LeaseError) -> Failure {
    let message = format!("cannot {verb} {}: {}", address.describe(), lease_error(e));
    Failure::from_lease(e, message)
}

/// How long from `now_ms` until `until_ms` (both on the registry's clock), as text.
pub fn left(until_ms: u64, now_ms: u64) -> String {
    humantime::format_duration(Duration::from_millis(until_ms.saturating_sub(now_ms))).to_string()
}

/// How long before `now_ms` `at_ms` was (both on the registry's clock), as text: to the
/// second from a second on, else to the ms.
pub fn ago(at_ms: u64, now_ms: u64) -> String {
    let ms = now_ms.saturating_sub(at_ms);
    let shown = if ms >= 1_000 { ms - ms % 1_000 } else { ms };
    format!(
        "{} ago",
        humantime::format_duration(Duration::from_millis(shown))
    )
}

/// A holder's clock skew as text: `+12ms` (ahead of the registry's), `-3ms` (behind).
pub fn skew(skew_ms: i64) -> String {
    format!("{}{skew_ms}ms", if skew_ms >= 0 { "+" } else { "" })
}

/// A value or `-` if none is recorded.
pub fn or_dash<T>(value: Option<T>, show: impl FnOnce(T) -> String) -> String {
    value.map_or_else(|| "-".to_owned(), show)
}

/// A holder's name as the holder gave it, with every character that a claim made now
/// could not use escaped (a record written by hand or by an older version may hold any),
/// so that it cannot move the terminal's cursor, break the table or read as another name.
pub fn printable(name: &str) -> String {
    name.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if ferroflake_lease::shown_in_holder(c) {
                vec![c]
            } else {
                c.escape_default().collect()
            };
            escaped
        })
        .collect()
}

/// The recorded high-water mark as text, `-` if none.
pub fn mark(high_water_ms: u64) -> String {
    match high_water_ms {
        0 => "-".to_owned(),
        mark => iso_ms(mark),
    }
}

const COLUMNS: usize = 8;

fn row(node: &NodeView, now_ms: u64) -> [String; COLUMNS] {
    [
        node.node_id.to_string(),
        or_dash(node.holder.as_deref(), printable),
        node.state.as_str().to_owned(),
        or_dash(node.since_ms, |at| ago(at, now_ms)),
        or_dash(node.last_renewal_ms, |at| ago(at, now_ms)),
        or_dash(node.clock_skew_ms, skew),
        or_dash(node.expires_ms, |e| left(e, now_ms)),
        mark(node.high_water_ms),
    ]
}

fn write_text(out: &mut impl Write, described: &str, view: &RegistryView) -> std::io::Result<()> {
    let floor = match view.floor_until_ms {
        Some(until) => format!(
            "a lost-records floor runs for {}: claims made until then wait it out before \
             they issue",
            left(until, view.now_ms)
        ),
        None => "no floor runs".to_owned(),
    };
    let count = match view.nodes.len() {
        1 => "1 node id".to_owned(),
        n => format!("{n} node ids"),
    };
    writeln!(out, "{described}: {count}; {floor}")?;
    if view.nodes.is_empty() {
        return Ok(());
    }
    let header = [
        "NODE",
        "HOLDER",
        "STATE",
        "SINCE",
        "LAST RENEWAL",
        "SKEW",
        "EXPIRES IN",
        "HIGH-WATER MARK",
    ]
    .map(String::from);
    let rows: Vec<[String; COLUMNS]> = std::iter::once(header)
        .chain(view.nodes.iter().map(|n| row(n, view.now_ms)))
        .collect();
    let mut widths = [0; COLUMNS];
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for r in &rows {
        let mut line = String::new();
        for (i, (cell, w)) in r.iter().zip(widths).enumerate() {
            if i + 1 == r.len() {
                line.push_str(cell);
            } else {
                let pad = w - cell.chars().count();
                line.push_str(cell);
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}
