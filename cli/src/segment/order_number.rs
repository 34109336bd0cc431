//! `ferroflake segment order-number`: date-prefixed order numbers (`20261122000042`), one
//! key a day in a time zone, then the unissued rest given back.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use ferroflake_segment::{OrderNumberConfig, OrderNumbers, SegmentAllocator, SegmentConfig};

use super::refusal::{explain, Refusal};
use super::store;
use crate::args::SegmentOrderNumberArgs;
use crate::failure::{warn, Failure};
use crate::signals::{signal_name, Signals};

pub fn run(args: &SegmentOrderNumberArgs, out: &mut impl Write) -> Result<(), Failure> {
    // From here on a signal stops issuing and gives the day's unissued rest back.
    let signals = Signals::install()?;
    let opened = store::open(args.store.store.as_deref()).map_err(|r| r.failure)?;
    let refused = |e: &ferroflake_segment::SegmentError| {
        Refusal::of(e, explain(e, Some(&opened.label))).failure
    };
    // Segments stay at the day key's step: a run that doubled them would use up a narrow
    // counter on numbers it then gives back, or loses if another process allocated.
    let config = SegmentConfig {
        prefetch_share: 1.0,
        max_wait: Duration::from_secs(10),
        max_step: args.step,
        ..SegmentConfig::default()
    };
    let allocator = Arc::new(
        SegmentAllocator::new(Arc::clone(&opened.store), config).map_err(|e| refused(&e))?,
    );
    let orders = OrderNumbers::new(
        Arc::clone(&allocator),
        OrderNumberConfig {
            prefix: args.prefix.clone(),
            zone: args.zone.clone(),
            width: args.width,
            step: args.step,
        },
    )
    .map_err(|e| refused(&e))?;
    let mut result = Ok(());
    let mut interrupted = None;
    let mut issued = 0u64;
    for _ in 0..args.count {
        if let Some(signal) = signals.caught() {
            interrupted = Some(signal);
            break;
        }
        match orders.next() {
            Ok(number) => {
                if let Err(e) = writeln!(out, "{number}") {
                    result = Err(Failure::from(e));
                    break;
                }
                issued += 1;
            }
            Err(e) => {
                result = Err(refused(&e));
                break;
            }
        }
    }
    let report = allocator.shutdown();
    for (key, e) in &report.failed {
        warn(&format!("could not give the rest of {key:?} back: {e}"));
    }
    match interrupted {
        None => result,
        Some(signal) => Err(Failure::Interrupted {
            signal,
            message: format!(
                "interrupted by {}: stopped after {issued} order numbers; {} unissued \
                 numbers were given back",
                signal_name(signal),
                report.given_back
            ),
        }),
    }
}
