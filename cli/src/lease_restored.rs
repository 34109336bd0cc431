//! `ferroflake lease restored`: start a registry's floor after its history moved back.

use std::io::Write;
use std::time::Duration;

use ferroflake_lease::protocol::lost_records_window;
use ferroflake_lease_stores::RegistryAddress;

use crate::args::LeaseRestoredArgs;
use crate::failure::{lease_error, output_error, Failure};

pub fn run(args: &LeaseRestoredArgs, out: &mut impl Write) -> Result<(), Failure> {
    let address =
        RegistryAddress::parse(&args.registry.lease).map_err(|e| Failure::Input(e.to_string()))?;
    let window = lost_records_window(
        Duration::from_millis(args.max_ttl_ms),
        Duration::from_millis(args.quarantine_ms),
    );
    let cannot = |e: ferroflake_lease::LeaseError| {
        let message = format!(
            "cannot start the floor of {}: {}; until it is started, do not start new holders \
             on it",
            address.describe(),
            lease_error(&e)
        );
        Failure::from_lease(&e, message)
    };
    let registry = address.open().map_err(cannot)?;
    let floor = registry.restored(window).map_err(cannot)?;
    writeln!(
        out,
        "{}: every claim waits {} before it issues, so that holders the restored records \
         forgot have stopped first",
        address.describe(),
        humantime::format_duration(Duration::from_millis(
            u64::try_from(floor.as_millis()).unwrap_or(u64::MAX)
        ))
    )
    .and_then(|()| out.flush())
    .map_err(|e| Failure::Run(output_error(&e)))
}
