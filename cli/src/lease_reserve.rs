//! `ferroflake lease reserve` and `lease unreserve`: hold node ids off every claim for a
//! generator outside the registry, and give them back.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use ferroflake::{Clock, SystemClock};
use ferroflake_lease::protocol::MOST_NODE_IDS;
use ferroflake_lease::{check_reservation, check_unreserve_mark, NodeState, Registry, Reservation};
use ferroflake_lease_stores::RegistryAddress;

use crate::args::{LeaseReserveArgs, LeaseUnreserveArgs};
use crate::failure::{output_error, Failure};
use crate::iso::{instant_ms, iso_ms};
use crate::lease_list::{read_view, refused};

pub fn reserve(args: &LeaseReserveArgs, out: &mut impl Write) -> Result<(), Failure> {
    // Node id → who it is for: a Leaf worker's server, else `--holder`.
    let mut wanted = BTreeMap::new();
    if let Some(nodes) = &args.nodes {
        for id in node_ids(nodes)? {
            wanted.insert(id, args.holder.clone());
        }
    }
    if let Some(leaf) = &args.from_leaf {
        for (worker_id, server) in leaf_workers(leaf)? {
            wanted.insert(worker_id, format!("leaf {server}"));
        }
    }
    // Refused before the registry is opened, which makes the embedded one's directory.
    for (&id, holder) in &wanted {
        check_reservation(id, holder).map_err(|e| Failure::Input(e.to_string()))?;
    }
    let verb = "reserve node ids in";
    let (address, registry) = open(&args.registry.lease, verb)?;
    let cannot = |e| refused(&address, verb, &e);
    let mut held = Vec::new();
    for (&id, holder) in &wanted {
        let reservation = registry.reserve(id, holder).map_err(cannot)?;
        let line = match reservation {
            Reservation::Made => format!("node {id}: reserved for {holder}"),
            Reservation::Already => format!("node {id}: already reserved"),
            Reservation::Refused => {
                held.push(id);
                let holder = registry
                    .list()
                    .ok()
                    .and_then(|v| v.node(id).and_then(|n| n.holder.clone()))
                    .unwrap_or_else(|| "a claim".into());
                format!("node {id}: held by {holder}, not reserved")
            }
        };
        // Line by line: a run stopped halfway shows exactly what it reserved.
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| Failure::Run(output_error(&e)))?;
    }
    if held.is_empty() {
        return Ok(());
    }
    Err(Failure::Run(format!(
        "{} of {} node ids are held by claims in {} and were not reserved ({}): stop their \
         holders (or let their claims lapse) and run this again",
        held.len(),
        wanted.len(),
        address.describe(),
        listed(&held)
    )))
}

pub fn unreserve(args: &LeaseUnreserveArgs, out: &mut impl Write) -> Result<(), Failure> {
    let ids = node_ids(&args.nodes)?;
    let now = SystemClock.now_ms();
    let given = match &args.high_water {
        Some(text) => instant_ms("--high-water", text)?,
        None => 0,
    };
    check_unreserve_mark(given, now).map_err(|e| Failure::Input(format!("--high-water: {e}")))?;
    let verb = "unreserve node ids in";
    // As `lease list` reads it: a mistyped path makes no registry.
    let (address, registry, view) = read_view(&args.registry.lease, verb)?;
    let cannot = |e| refused(&address, verb, &e);
    for id in ids {
        let Some(node) = view.node(id).filter(|n| n.state == NodeState::Reserved) else {
            writeln!(out, "node {id}: not reserved, left as it is")
                .map_err(|e| Failure::Run(output_error(&e)))?;
            continue;
        };
        // What the old generator may have issued up to now, and never below the mark the
        // id carried into its reservation.
        let mark = now.max(given).max(node.high_water_ms);
        registry.unreserve(id, mark).map_err(cannot)?;
        writeln!(
            out,
            "node {id}: unreserved; its next holder issues after {}",
            iso_ms(mark)
        )
        .map_err(|e| Failure::Run(output_error(&e)))?;
    }
    out.flush().map_err(|e| Failure::Run(output_error(&e)))
}

fn open(lease: &str, verb: &str) -> Result<(RegistryAddress, Arc<dyn Registry>), Failure> {
    let address = RegistryAddress::parse(lease).map_err(|e| Failure::Input(e.to_string()))?;
    let registry = address.open().map_err(|e| refused(&address, verb, &e))?;
    Ok((address, registry))
}

/// Each Leaf worker's id and server.
#[cfg(feature = "stores")]
fn leaf_workers(address: &str) -> Result<Vec<(u64, String)>, Failure> {
    let workers = ferroflake_lease_stores::leaf_workers(address).map_err(|e| {
        let message = format!(
            "cannot read Leaf's workers at {}: {}",
            ferroflake_lease_stores::redact(address),
            crate::failure::lease_error(&e)
        );
        Failure::from_lease(&e, message)
    })?;
    Ok(workers
        .into_iter()
        .map(|w| (w.worker_id, w.server))
        .collect())
}

#[cfg(not(feature = "stores"))]
fn leaf_workers(_address: &str) -> Result<Vec<(u64, String)>, Failure> {
    Err(Failure::Input(format!(
        "--from-leaf reads ZooKeeper; {}",
        ferroflake_serve::BUILD_WITH_STORES
    )))
}

/// `7`, `0-31`, `0-3,9`: each id at most once, in order.
fn node_ids(text: &str) -> Result<Vec<u64>, Failure> {
    let refused = |why: String| Failure::Input(format!("node ids {text:?}: {why}"));
    let id = |part: &str| {
        part.parse::<u64>()
            .ok()
            .filter(|&n| n < MOST_NODE_IDS && part.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| {
                refused(format!(
                    "{part:?} is not a node id (0 to {}; a registry hands out no more)",
                    MOST_NODE_IDS - 1
                ))
            })
    };
    let mut ids = std::collections::BTreeSet::new();
    for part in text.split(',') {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (id(a)?, id(b)?),
            None => (id(part)?, id(part)?),
        };
        if first > last {
            return Err(refused(format!("{part:?} runs backwards")));
        }
        ids.extend(first..=last);
    }
    Ok(ids.into_iter().collect())
}

/// `0-3,9`: ids in order, runs joined.
fn listed(ids: &[u64]) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &id in ids {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == id => *last = id,
            _ => runs.push((id, id)),
        }
    }
    let text: Vec<String> = runs
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    text.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_lists_read_ids_and_runs_and_refuse_the_rest() {
        assert_eq!(node_ids("7").ok(), Some(vec![7]));
        assert_eq!(node_ids("0-3,9,2").ok(), Some(vec![0, 1, 2, 3, 9]));
        assert_eq!(node_ids("65535").ok(), Some(vec![65535]));
        for bad in [
            "", "3-1", "65536", "-1", "1-", "a", "1,,2", "+1", " 1", "0-65536",
        ] {
            assert!(node_ids(bad).is_err(), "{bad:?}");
        }
        assert_eq!(listed(&[0, 1, 2, 3, 9, 11, 12]), "0-3,9,11-12");
    }
}
