//! The peer check of a holder that starts: its clock against the registry's other live
//! holders', as they recorded it at their last renewals (see
//! [`protocol::peer_clock_skew`]).

use std::time::Duration;

use ferroflake::Clock;

use crate::protocol::{self, ClockReading};
use crate::{LeaseError, Registry};

/// Reads `clock` against the registry's and the skews its live holders other than
/// `node_id` recorded, and refuses ([`LeaseError::ClockSkew`] with `peers_skew_ms`) a
/// skew further than `limit` from their average. Nothing to compare (a clock that does not
/// follow real time, a registry with no clock, no other live holder with a recorded skew)
/// passes.
///
/// # Errors
/// The refusal; the registry's error from reading its clock or its records.
pub(crate) fn check(
    registry: &dyn Registry,
    clock: &impl Clock,
    node_id: u64,
    limit: Duration,
) -> Result<(), LeaseError> {
    if !clock.tracks_real_time() {
        return Ok(());
    }
    let peers = registry.list()?.peer_clock_skews(node_id);
    if peers.is_empty() {
        return Ok(());
    }
    let before_ms = clock.now_ms();
    let Some(registry_ms) = registry.wall_clock_ms()? else {
        return Ok(());
    };
    let reading = ClockReading::new(before_ms, registry_ms, clock.now_ms());
    match protocol::peer_clock_skew(&reading, &peers, limit) {
        None => Ok(()),
        Some(average) => Err(LeaseError::ClockSkew {
            registry: registry.name().to_owned(),
            ours_ms: registry_ms.saturating_add_signed(reading.skew_ms),
            registry_ms,
            skew_ms: reading.skew_ms,
            uncertainty_ms: reading.uncertainty_ms,
            limit,
            peers_skew_ms: Some(average),
        }),
    }
}
