//! `ferroflake next`: issue IDs under a given node id or a leased one.

use std::io::Write;

use ferroflake::{Error, Generator, SystemClock};
use ferroflake_lease::{LeaseConfig, LeaseError, LeaseStatus, LeasedGenerator};

use crate::args::{NextArgs, OutputFormat};
use crate::failure::{lease_error, output_error, warn, Failure};
use crate::signals::{signal_name, Signals};
use crate::stop_aware_stdout::gave_up;
use ferroflake_lease_stores::RegistryAddress;

/// IDs are made in batches of this many (one CAS per batch within a tick). A signal is
/// looked at between batches.
const BATCH: usize = 4096;

/// Where the node id came from, for the JSON output.
struct Source {
    node: u64,
    lease: Option<(String, u64)>,
}

/// Why issuing stopped before the count was reached.
enum Stop {
    /// The generator refused; the message explains why.
    Refused(Error, String),
    /// Standard output could not be written.
    Output(std::io::Error),
    /// SIGINT or SIGTERM arrived.
    Signal(i32),
}

pub fn run(args: &NextArgs, out: &mut impl Write) -> Result<(), Failure> {
    let layout = args.layout.get();
    layout.check_shard(args.shard)?;
    let options = args.options()?;
    if let Some(node) = args.node {
        let generator = Generator::with_clock(layout, node, SystemClock, options)?;
        let source = Source { node, lease: None };
        let never = Signals::none();
        return emit(args, &source, out, &never, Error::to_string, |ids| {
            fill(
                ids,
                args.shard,
                |s| generator.next_id_for_shard(s),
                |b| generator.next_ids(b),
            )
        })
        .map(|_| ())
        .map_err(|(stop, issued)| stop_failure(stop, issued, ""));
    }
    let address = match &args.lease {
        Some(address) => RegistryAddress::parse(address).map_err(|e| refusal(None, e))?,
        None => RegistryAddress::Default,
    };
    // From here on a signal stops issuing and releases the lease instead of killing the
    // process with the claim still held (it would block the id until its TTL ran out).
    let signals = Signals::install()?;
    let registry = address.open().map_err(|e| refusal(Some(&address), e))?;
    let registry_name = registry.name().to_owned();
    let mut config = LeaseConfig::default();
    config.options = options;
    let generator = LeasedGenerator::start_until(
        layout,
        SystemClock,
        registry,
        config,
        &mut |message| warn(message),
        &|| signals.caught().is_some(),
    )
    .map_err(|e| match (e, signals.caught()) {
        (LeaseError::Stopped { node_id }, Some(signal)) => Failure::Interrupted {
            signal,
            message: format!(
                "interrupted by {} while waiting to issue under node id {node_id}: nothing \
                 was issued, and the claim was given back",
                signal_name(signal)
            ),
        },
        (e, _) => refusal(Some(&address), e),
    })?;
    let node = generator.node();
    let source = Source {
        node,
        lease: Some((registry_name, generator.grant().epoch)),
    };
    let explain = |e: &Error| {
        format!(
            "{} (registry: {})",
            generator.explain(e),
            address.describe()
        )
    };
    let issued = emit(args, &source, out, &signals, explain, |ids| {
        fill(
            ids,
            args.shard,
            |s| generator.next_id_for_shard(s),
            |b| generator.next_ids(b),
        )
    });
    // A lost lease is no longer this process's to give back: say so, not "released".
    let lost = generator.status() == LeaseStatus::Lost;
    let released = generator.shutdown();
    match (issued, released) {
        (Ok(_), Ok(())) => Ok(()),
        (Ok(_), Err(e)) => Err(Failure::Run(format!(
            "IDs issued, but releasing node id {node} failed (it lapses after its TTL): {e}"
        ))),
        (Err((stop, issued)), released) => {
            let after = match released {
                Ok(()) if lost => format!(
                    "; node id {node} is no longer this process's, so there was nothing to \
                     release"
                ),
                Ok(()) => format!("; node id {node} was released"),
                Err(e) => {
                    format!("; releasing node id {node} failed too (it lapses after its TTL): {e}")
                }
            };
            Err(stop_failure(stop, issued, &after))
        }
    }
}

/// The failure for a run that stopped early, having issued `issued` IDs.
fn stop_failure(stop: Stop, issued: u64, after: &str) -> Failure {
    match stop {
        Stop::Refused(error, message) => Failure::from_core(
            &error,
            format!("{message}; stopped after {issued} IDs{after}"),
        ),
        Stop::Output(e) => Failure::Run(format!(
            "{}; stopped after {issued} IDs, and those not yet read are lost{after}",
            output_error(&e)
        )),
        Stop::Signal(signal) => Failure::Interrupted {
            signal,
            message: format!(
                "interrupted by {}: stopped after {issued} IDs{after}",
                signal_name(signal)
            ),
        },
    }
}

/// Fills `ids` with a shard in the low bits if one was asked for, else by batch.
fn fill(
    ids: &mut [u64],
    shard: u64,
    one: impl Fn(u64) -> Result<u64, Error>,
    batch: impl Fn(&mut [u64]) -> Result<(), Error>,
) -> Result<(), Error> {
    if shard == 0 {
        return batch(ids);
    }
    for slot in ids {
        *slot = one(shard)?;
    }
    Ok(())
}

/// Issues and prints `args.count` IDs. Returns how many were issued, or why it stopped
/// early and how many were issued by then. JSON output is always ended as valid JSON:
/// after an early stop it carries `"error":{"kind":..,"message":..}` after the IDs.
fn emit(
    args: &NextArgs,
    source: &Source,
    out: &mut impl Write,
    signals: &Signals,
    explain: impl Fn(&Error) -> String,
    mut issue: impl FnMut(&mut [u64]) -> Result<(), Error>,
) -> Result<u64, (Stop, u64)> {
    let json = args.format == OutputFormat::Json;
    let mut issued = 0u64;
    let stop =
        write_ids(args, source, out, signals, &mut issue, &mut issued).map_err(|stop| match stop {
            Stop::Refused(e, _) => {
                let message = explain(&e);
                Stop::Refused(e, message)
            }
            other => other,
        });
    let stop = match stop {
        Err(Stop::Output(e)) => return Err((Stop::Output(e), issued)),
        Err(stop) => Some(stop),
        Ok(()) => None,
    };
    let ended = if json {
        match &stop {
            None => writeln!(out, "]}}"),
            Some(stop) => {
                let (kind, message) = match stop {
                    Stop::Refused(e, message) => (e.kind().name().to_owned(), message.clone()),
                    Stop::Signal(signal) => (
                        "INTERRUPTED".to_owned(),
                        format!("interrupted by {}", signal_name(*signal)),
                    ),
                    Stop::Output(_) => unreachable!("returned above"),
                };
                let error = serde_json::json!({ "kind": kind, "message": message });
                writeln!(out, "],\"error\":{error}}}")
            }
        }
    } else {
        Ok(())
    };
    if let Err(e) = ended.and_then(|()| out.flush()) {
        // After a stop signal, a reader that stopped reading leaves the signal's stop as
        // it is: the IDs it did not read are lost, the lease is released.
        if !gave_up(&e) {
            return Err((Stop::Output(e), issued));
        }
    }
    match stop {
        Some(stop) => Err((stop, issued)),
        None => Ok(issued),
    }
}

/// The IDs themselves (and the JSON head), stopping at the first refusal, output error or
/// signal. `Stop::Refused` carries an empty message here; `emit` explains it.
fn write_ids(
    args: &NextArgs,
    source: &Source,
    out: &mut impl Write,
    signals: &Signals,
    issue: &mut impl FnMut(&mut [u64]) -> Result<(), Error>,
    issued: &mut u64,
) -> Result<(), Stop> {
    let format = args.format.text_format();
    let json = args.format == OutputFormat::Json;
    if json {
        let lease = match &source.lease {
            Some((registry, epoch)) => serde_json::json!({ "registry": registry, "epoch": epoch }),
            None => serde_json::Value::Null,
        };
        write!(
            out,
            "{{\"layout\":{},\"node\":{},\"lease\":{},\"ids\":[",
            serde_json::Value::from(args.layout.name()),
            source.node,
            lease
        )
        .map_err(Stop::Output)?;
    }
    let mut buffer = vec![0u64; BATCH];
    let mut left = args.count;
    while left > 0 {
        if let Some(signal) = signals.caught() {
            return Err(Stop::Signal(signal));
        }
        let take = left.min(BATCH as u64) as usize;
        issue(&mut buffer[..take]).map_err(|e| Stop::Refused(e, String::new()))?;
        for &id in &buffer[..take] {
            if json {
                let comma = if *issued == 0 { "" } else { "," };
                write!(out, "{comma}\"{id}\"").map_err(Stop::Output)?;
            } else {
                let text = format
                    .encode(id)
                    .map_err(|e| Stop::Refused(e, String::new()))?;
                writeln!(out, "{}", &*text).map_err(Stop::Output)?;
            }
            *issued += 1;
        }
        left -= take as u64;
    }
    Ok(())
}

/// A lease that could not be had: say why, and that no id is guessed instead.
fn refusal(address: Option<&RegistryAddress>, error: LeaseError) -> Failure {
    let from = address.map_or_else(|| "the registry".to_owned(), RegistryAddress::describe);
    let message = format!(
        "cannot lease a node id from {from}: {}\n\
         ferroflake never guesses a node id: make the registry usable, name another with \
         --lease URL, or pass --node N for an id you manage yourself",
        lease_error(&error)
    );
    Failure::from_lease(&error, message)
}
