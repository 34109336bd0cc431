//! `ferroflake lease show NODE`: one node id's record, as the registry keeps it.

use std::io::Write;

use ferroflake_lease::{NodeView, RegistryView};
use ferroflake_lease_stores::redact;

use crate::args::{LeaseShowArgs, ListFormat};
use crate::failure::{output_error, Failure};
use crate::lease_list::{ago, left, mark, or_dash, printable, read_view, skew};

pub fn run(args: &LeaseShowArgs, out: &mut impl Write) -> Result<(), Failure> {
    let (address, registry, view) = read_view(&args.registry.lease, "show")?;
    let Some(node) = view.node(args.node) else {
        return Err(Failure::Run(format!(
            "{} has no record of node id {}: it was never claimed there, or its record \
             was lost (`ferroflake lease list` shows the ids it has)",
            address.describe(),
            args.node
        )));
    };
    let written = match args.format {
        ListFormat::Text => write_text(out, &address.describe(), &view, node),
        ListFormat::Json => {
            let mut json = view.node_json(node);
            if let Some(fields) = json.as_object_mut() {
                fields.insert("registry".into(), redact(&args.registry.lease).into());
                fields.insert("backend".into(), registry.name().into());
                fields.insert("now_ms".into(), view.now_ms.into());
            }
            writeln!(out, "{json}")
        }
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| Failure::Run(output_error(&e)))
}

fn write_text(
    out: &mut impl Write,
    described: &str,
    view: &RegistryView,
    node: &NodeView,
) -> std::io::Result<()> {
    let now = view.now_ms;
    let skew_text = |s: i64| {
        format!(
            "{} (the holder's clock {} the registry's at that renewal)",
            skew(s),
            match s {
                0 => "level with",
                1.. => "ahead of",
                _ => "behind",
            }
        )
    };
    let lines = [
        ("holder", or_dash(node.holder.as_deref(), printable)),
        ("state", node.state.as_str().to_owned()),
        ("since", or_dash(node.since_ms, |at| ago(at, now))),
        (
            "last renewal",
            or_dash(node.last_renewal_ms, |at| ago(at, now)),
        ),
        ("expires in", or_dash(node.expires_ms, |e| left(e, now))),
        ("high-water mark", mark(node.high_water_ms)),
        ("clock skew", or_dash(node.clock_skew_ms, skew_text)),
        ("epoch", node.epoch.to_string()),
    ];
    writeln!(out, "{described}: node id {}", node.node_id)?;
    for (name, value) in lines {
        writeln!(out, "{name:<17}{value}")?;
    }
    Ok(())
}
