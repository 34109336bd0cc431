//! `ferroflake segment next KEY`: take IDs from a key, then give the unissued rest back.

use std::io::Write;
use std::time::Duration;

use ferroflake_segment::{
    KeyHandle, Range, SegmentAllocator, SegmentConfig, SegmentError, ShutdownReport, LIMIT_JS,
};

use super::refusal::{explain, Refusal};
use super::store;
use crate::args::{SegmentFormat, SegmentNextArgs};
use crate::failure::{output_error, warn, Failure};
use crate::signals::{signal_name, Signals};
use crate::stop_aware_stdout::gave_up;

/// The most IDs taken at once; a signal is looked at between takes.
const BATCH: u64 = 4096;

/// Why issuing stopped before the count was reached.
enum Stop {
    /// The store, the key or the allocator refused; the message is explained.
    Refused(Refusal),
    /// Standard output could not be written.
    Output(std::io::Error),
    /// SIGINT or SIGTERM arrived.
    Signal(i32),
}

/// The allocator for one run of a command that knows how many IDs it wants.
///
/// - `prefetch_share` 1.0: the next segment is fetched only when the current one is used
///   up. A short run that fetched ahead would only give that segment back at exit (one
///   more write), or lose it if another process allocated in between.
/// - `max_wait` 10 s: a caller waits for the fetch in flight instead of failing after the
///   default 500 ms, which a SQLite file busy with other processes can exceed.
fn config() -> SegmentConfig {
    SegmentConfig {
        prefetch_share: 1.0,
        max_wait: Duration::from_secs(10),
        ..SegmentConfig::default()
    }
}

pub fn run(args: &SegmentNextArgs, out: &mut impl Write) -> Result<(), Failure> {
    let json = args.format == SegmentFormat::Json;
    let mut printer = Printer {
        out,
        json,
        issued: 0,
    };
    let head = if json {
        let key = serde_json::Value::from(args.key.as_str());
        write!(printer.out, "{{\"key\":{key},\"ids\":[")
    } else {
        Ok(())
    };
    let (stop, after) = match head {
        Err(e) => (Some(Stop::Output(e)), String::new()),
        Ok(()) => issue(args, &mut printer),
    };
    let issued = printer.issued;
    let refusal = stop.map(|stop| refusal(stop, issued, &after));
    if json {
        let tail = match &refusal {
            Some(Err(_)) => Ok(()), // the output is broken: nothing more can be written
            Some(Ok(refusal)) => writeln!(printer.out, "],\"error\":{}}}", refusal.json()),
            None => writeln!(printer.out, "]}}"),
        };
        if let Err(e) = tail.and_then(|()| printer.out.flush()) {
            // After a stop signal, a reader that stopped reading leaves the signal's failure
            // as it is: the IDs it did not read are lost, the rest was given back.
            if !gave_up(&e) {
                return Err(lost_output(&e, issued, &after));
            }
        }
    }
    match refusal {
        None => Ok(()),
        Some(Ok(refusal)) => Err(refusal.failure),
        Some(Err(failure)) => Err(failure),
    }
}

/// Opens the store and the key, takes and prints the IDs, and shuts the allocator down.
/// Returns why it stopped early, if it did, and what the shutdown did (for the message).
fn issue(args: &SegmentNextArgs, printer: &mut Printer<'_, impl Write>) -> (Option<Stop>, String) {
    // From here on a signal stops issuing and gives the unissued rest back, instead of
    // killing the process with a segment taken from the table and never used.
    let signals = match Signals::install() {
        Ok(signals) => signals,
        Err(failure) => {
            let refusal = Refusal {
                kind: "SIGNALS".to_owned(),
                failure,
            };
            return (Some(Stop::Refused(refusal)), String::new());
        }
    };
    let (stop, after) = open_and_take(args, printer, &signals);
    (stop.map(|stop| signal_first(stop, &signals)), after)
}

/// [`issue`] once signals are caught.
fn open_and_take(
    args: &SegmentNextArgs,
    printer: &mut Printer<'_, impl Write>,
    signals: &Signals,
) -> (Option<Stop>, String) {
    let opened = match store::open(args.store.store.as_deref()) {
        Ok(opened) => opened,
        Err(refusal) => return (Some(Stop::Refused(refusal)), String::new()),
    };
    let label = opened.label.as_str();
    let allocator = match SegmentAllocator::new(opened.store.clone(), config()) {
        Ok(allocator) => allocator,
        Err(e) => return (Some(refused(&e, Some(label))), String::new()),
    };
    let handle = if args.js {
        allocator.key_with_limit(&args.key, LIMIT_JS)
    } else {
        allocator.key(&args.key)
    };
    let stop = match handle {
        Ok(handle) => take(&handle, args.count, signals, printer, label).err(),
        Err(e) => return (Some(refused(&e, Some(label))), String::new()),
    };
    let report = allocator.shutdown();
    if let (None, Some((_, e))) = (&stop, report.failed.first()) {
        warn(&format!(
            "IDs issued, but giving the unissued rest back failed, so it is skipped (never \
             issued): {e} (store: {label})"
        ));
    }
    (stop, given_back(&report, label))
}

fn refused(e: &SegmentError, store: Option<&str>) -> Stop {
    Stop::Refused(Refusal::of(e, explain(e, store)))
}

/// A store that stayed busy or out of reach while a stop signal came: the run stops for
/// the signal (exit 128 + it), as it would have at its next batch, not for the store.
fn signal_first(stop: Stop, signals: &Signals) -> Stop {
    match (stop, signals.caught()) {
        (Stop::Refused(refusal), Some(signal))
            if matches!(refusal.kind.as_str(), "UNAVAILABLE" | "NOT_READY") =>
        {
            Stop::Signal(signal)
        }
        (stop, _) => stop,
    }
}

/// Takes `count` IDs in batches and prints them.
///
/// Each batch is at most what the key holds in memory (its status's runway), so
/// `next_ids` never waits for a fetch: a batch that failed halfway would drop the IDs it
/// had taken. With nothing in memory, one `next_id` waits for the next segment (or
/// reports why none comes) and takes a single ID, losing nothing on an error.
fn take(
    handle: &KeyHandle,
    count: u64,
    signals: &Signals,
    printer: &mut Printer<'_, impl Write>,
    store: &str,
) -> Result<(), Stop> {
    let mut left = count;
    while left > 0 {
        if let Some(signal) = signals.caught() {
            return Err(Stop::Signal(signal));
        }
        let in_memory = handle.status().runway_ids;
        let ranges = if in_memory == 0 {
            let id = handle.next_id().map_err(|e| refused(&e, Some(store)))?;
            vec![Range {
                start: id,
                end: id + 1,
            }]
        } else {
            handle
                .next_ids(left.min(in_memory).min(BATCH))
                .map_err(|e| refused(&e, Some(store)))?
        };
        for range in ranges {
            for id in range.start..range.end {
                printer.id(id).map_err(Stop::Output)?;
            }
            left -= range.len();
        }
    }
    Ok(())
}

/// What the shutdown did with the unissued rest, as the end of a message ("" when there
/// was none).
fn given_back(report: &ShutdownReport, store: &str) -> String {
    if let Some((_, e)) = report.failed.first() {
        return format!(
            "; giving the unissued rest back failed, so it is skipped (never issued): {e} \
             (store: {store})"
        );
    }
    if !report.refused.is_empty() {
        return "; the unissued rest was not given back (the table moved on after our last \
                allocation), so it is skipped (never issued)"
            .to_owned();
    }
    match report.given_back {
        0 => String::new(),
        n => format!("; the {n} unissued IDs were given back"),
    }
}

/// The failure for a run that stopped: a refusal its JSON can carry, or (`Err`) the
/// failure of an output that cannot carry anything more.
fn refusal(stop: Stop, issued: u64, after: &str) -> Result<Refusal, Failure> {
    let stopped = |message: String| format!("{message}; stopped after {issued} IDs{after}");
    match stop {
        Stop::Refused(mut refusal) => {
            refusal.failure = with_message(refusal.failure, |m| {
                if issued == 0 {
                    format!("{m}{after}")
                } else {
                    stopped(m)
                }
            });
            Ok(refusal)
        }
        Stop::Output(e) => Err(lost_output(&e, issued, after)),
        Stop::Signal(signal) => Ok(Refusal {
            kind: "INTERRUPTED".to_owned(),
            failure: Failure::Interrupted {
                signal,
                message: format!(
                    "interrupted by {}: stopped after {issued} IDs{after}",
                    signal_name(signal)
                ),
            },
        }),
    }
}

fn lost_output(e: &std::io::Error, issued: u64, after: &str) -> Failure {
    Failure::Run(format!(
        "{}; stopped after {issued} IDs, and those not yet read are lost{after}",
        output_error(e)
    ))
}

/// `failure` with its message rewritten by `f`, its exit status kept.
fn with_message(failure: Failure, f: impl FnOnce(String) -> String) -> Failure {
    match failure {
        Failure::Input(m) => Failure::Input(f(m)),
        Failure::Run(m) => Failure::Run(f(m)),
        Failure::Interrupted { signal, message } => Failure::Interrupted {
            signal,
            message: f(message),
        },
    }
}

/// Writes IDs one per line, or as the JSON array's decimal strings, and counts them.
struct Printer<'a, W: Write> {
    out: &'a mut W,
    json: bool,
    issued: u64,
}

impl<W: Write> Printer<'_, W> {
    fn id(&mut self, id: u64) -> std::io::Result<()> {
        if self.json {
            let comma = if self.issued == 0 { "" } else { "," };
            write!(self.out, "{comma}\"{id}\"")?;
        } else {
            writeln!(self.out, "{id}")?;
        }
        self.issued += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shutdown_is_told_in_the_message() {
        let mut report = ShutdownReport {
            given_back: 7,
            ..ShutdownReport::default()
        };
        assert_eq!(
            given_back(&report, "s"),
            "; the 7 unissued IDs were given back"
        );
        report.refused.push("k".into());
        assert!(given_back(&report, "s").contains("skipped"));
        assert_eq!(given_back(&ShutdownReport::default(), "s"), "");
    }
}
