//! The wiring: every decision the model's registry and holders make goes through here, and
//! here it is `ferroflake_lease::protocol`'s function, the same one the embedded registry
//! (`records.rs`, `embedded.rs`) and `LeasedGenerator` (`leased.rs`) call. A [`Mutant`]
//! swaps one call for a broken variant; nothing else in the model knows the mutants.

use std::time::Duration;

use ferroflake_lease::protocol::{self, ClockReading, Loss, RecordView, Standing};

use crate::bounds::{Bounds, Mutant, TICK_MS};
use crate::state::{LossKind, Record, TOKENS};

/// The record's standing at store time `now` (`NodeRecord::standing`); a missing record is
/// free to claim.
pub fn standing(record: Option<&Record>, now: u64) -> Standing {
    match record {
        None => Standing::Free,
        Some(r) => protocol::standing(r.token.is_some(), r.expires, r.quarantine, now),
    }
}

/// The floor a claim that finds the record missing starts (`Records::start_floor` with
/// `LeaseRequest::floor_window`): store time until which claims wait.
pub fn floor_after_loss(b: &Bounds, now: u64, current_floor: u64) -> u64 {
    match b.mutant {
        Mutant::NoFloor => current_floor,
        _ => {
            let window = protocol::lost_records_window(
                Bounds::units(b.max_ttl),
                Bounds::units(b.quarantine),
            );
            protocol::floor_until(now, window)
        }
    }
}

/// The floor any operation that finds the records restored starts (`with_records` in
/// `embedded.rs`, the records' write count not the witness's): as after lost records.
pub fn floor_after_restore(b: &Bounds, now: u64, current_floor: u64) -> u64 {
    match b.mutant {
        Mutant::NoRestoreCheck => current_floor,
        _ => floor_after_loss(b, now, current_floor),
    }
}

/// `Grant::floor_wait` for a claim granted at `now` (`Records::floor_wait`), in ms.
pub fn floor_wait(floor_until: u64, now: u64) -> u64 {
    protocol::ms(protocol::floor_wait(floor_until, now))
}

/// The epoch of a new claim (`Records::claim`); the store clock in µs is `now` ms × 1000.
pub fn epoch(recorded: u64, now: u64) -> u64 {
    protocol::next_epoch(recorded, now.saturating_mul(1000))
}

/// Whether a renewal under `token` (which last saw `version`) may proceed
/// (`Records::renew`).
///
/// # Errors
/// Why the claim is not held.
pub fn prove_renewal(
    b: &Bounds,
    record: Option<&Record>,
    token: u8,
    version: u32,
    now: u64,
) -> Result<(), LossKind> {
    let outcome = match b.mutant {
        Mutant::VersionOnlyRenewal => match record {
            None => Err(Loss::Missing),
            Some(r) if r.version != version => Err(Loss::Taken),
            Some(r) if now >= r.expires => Err(Loss::Expired),
            Some(_) => Ok(()),
        },
        _ => protocol::prove_held(
            record.map(|r| RecordView {
                token: r.token.map(|t| TOKENS[usize::from(t)]),
                expires_ms: r.expires,
            }),
            TOKENS[usize::from(token)],
            now,
        ),
    };
    outcome.map_err(|loss| match loss {
        Loss::Missing => LossKind::Missing,
        Loss::Taken => LossKind::Taken,
        Loss::Expired => LossKind::Expired,
        _ => LossKind::Released,
    })
}

/// The limit a holder checks its clock against (`LeaseConfig::clock_skew_limit` with no
/// `max_clock_skew` set, which is also the most `LeaseConfig::validate` allows).
pub fn clock_skew_limit(b: &Bounds) -> Duration {
    let widest =
        protocol::widest_clock_skew(Bounds::units(b.quarantine), Bounds::units(b.safety_margin));
    match b.mutant {
        Mutant::WideClockSkew => widest + Bounds::units(1),
        _ => widest,
    }
}

/// Whether `renew_once` finds the holder's clock beyond the limit (`read_clocks`): then it
/// reserves no mark, and the fence stays closed after the renewal. The holder reads its
/// wall clock (`wall`) and the registry's (`registry_wall`) at one instant: a reading with
/// no round trip, so no uncertainty.
pub fn clock_skewed(b: &Bounds, wall: u64, registry_wall: u64) -> bool {
    match b.mutant {
        Mutant::NoClockCheck => false,
        _ => ClockReading::new(wall, registry_wall, wall).beyond(clock_skew_limit(b)),
    }
}

/// The mark a `renew_once` reserves.
pub fn reserve_mark(b: &Bounds, reserved: u64, wall: u64) -> u64 {
    protocol::reserve_mark(reserved, wall, Bounds::units(b.reserve_ahead))
}

/// The local deadline (monotonic) of a renewal sent at `sent` whose answer arrived at
/// `answered` (`renew_once` takes the instant before it sends).
pub fn local_deadline(b: &Bounds, sent: u64, answered: u64) -> u64 {
    let from = match b.mutant {
        Mutant::DeadlineFromAnswer => answered,
        _ => sent,
    };
    protocol::local_deadline_ms(from, Bounds::units(b.ttl), Bounds::units(b.safety_margin))
}

/// Whether a holder sends its pending claim again once it gave up on it, as
/// `RemoteRegistry::acquire` does (`Resend::Safe`): only under [`Mutant::ClaimResent`],
/// whose test checks it, so that the default run keeps its states.
pub fn resend_claim(b: &Bounds) -> bool {
    b.mutant == Mutant::ClaimResent
}

/// The fence after a successful `renew_once` (`Lease::fence_at`), computed when its
/// response arrives at monotonic `now`, wall `wall`.
pub fn fence(b: &Bounds, mark: u64, deadline: u64, now: u64, wall: u64, sent_wall: u64) -> u64 {
    let left = match b.mutant {
        // The deadline kept on the wall clock: send time (wall) + TTL − margin.
        Mutant::WallClockFence => (sent_wall + b.ttl - b.safety_margin).checked_sub(wall),
        _ => deadline.checked_sub(now),
    };
    protocol::fence_ms(mark, left.map(Bounds::units), wall)
}

/// The wall time a new holder must pass (`wait_past_mark`, `Options::resume_after_ms`).
pub fn resume_after(b: &Bounds, previous_mark: u64) -> Option<u64> {
    protocol::resume_after(previous_mark, Bounds::units(b.skew_allowance))
}

/// The mark a shutdown releases with (`stop_and_release`): `last_issued` is the
/// generator's last issued tick (its resume point, or 0, if it issued nothing).
pub fn final_mark(last_issued: u64, inherited: u64) -> u64 {
    protocol::final_mark(last_issued, TICK_MS, inherited)
}
