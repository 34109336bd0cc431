//! The lease protocol model: the real protocol passes every property; each mutant yields a
//! counterexample, printed as a trace (but a claim sent again, which the model cannot tell
//! from a timeout and a new claim). Bounds come from the environment (see
//! `Bounds::from_env`); `scripts/test-lease-model.sh` runs this in release mode.

use std::collections::HashSet;

use ferroflake_lease_model::state::Pending;
use ferroflake_lease_model::{check, names, Action, Bounds, LeaseModel, Mutant, Report};
use stateright::Model;

fn summary(report: &Report) -> String {
    let b = &report.bounds;
    format!(
        "{:?}: {} holders, time 0..={}, clocks -{}..=+{} (step in renewal {}), ttl {}, \
         quarantine {}, margin {}, wipes {}, claims {}, in flight {}, retries {}: {} states \
         ({} distinct) in {:.1?}",
        b.mutant,
        b.holders,
        b.max_time,
        b.behind,
        b.ahead,
        b.step_in_renewal,
        b.ttl,
        b.quarantine,
        b.safety_margin,
        b.max_wipes,
        b.max_claims,
        b.max_in_flight,
        b.max_retries,
        report.states,
        report.unique_states,
        report.elapsed
    )
}

/// The `always` properties: the guarantees.
const GUARANTEES: [&str; 4] = [
    names::UNIQUE,
    names::DEADLINE,
    names::WITHIN_CLAIM,
    names::RECYCLED,
];

/// Panics with the trace of the first counterexample to a guarantee, if any.
fn holds(report: &Report) {
    for name in GUARANTEES {
        if let Some(trace) = report.counterexample(name) {
            panic!("counterexample to \"{name}\":\n{trace}");
        }
    }
}

#[test]
fn the_protocol_holds_every_property() {
    let report = check(Bounds::from_env());
    println!("{}", summary(&report));
    holds(&report);
    // Not vacuous: takeovers and the lost-records path are reached and issue.
    for name in [names::TAKEOVER, names::AFTER_WIPE] {
        assert!(
            report.counterexample(name).is_some(),
            "the model never reached \"{name}\": the bounds are too small to say much"
        );
    }
}

/// Runs `bounds` (with a mutant) and returns the trace that breaks `property`.
fn counterexample(mut bounds: Bounds, property: &str) -> String {
    // One thread: breadth-first then finds the shortest counterexample.
    bounds.threads = 1;
    let mutant = bounds.mutant;
    let report = check(bounds);
    println!("{}", summary(&report));
    let Some(trace) = report.counterexample(property) else {
        panic!(
            "the mutant {mutant:?} went unnoticed: no counterexample to \"{property}\" (found: {:?})",
            report.discoveries.keys().collect::<Vec<_>>()
        );
    };
    println!("counterexample to \"{property}\":\n{trace}");
    trace.to_owned()
}

fn mutant(mutant: Mutant) -> Bounds {
    Bounds::from_env().with_mutant(mutant)
}

/// A mutant searched depth-first: its shortest counterexample lies past the lost-records
/// floor, which breadth-first reaches only after some 12 M states (and gigabytes).
fn any_path(mutant: Mutant) -> Bounds {
    let mut bounds = Bounds::from_env().with_mutant(mutant);
    bounds.shortest = false;
    bounds
}

#[test]
fn mutant_no_floor_after_lost_records_is_caught() {
    counterexample(mutant(Mutant::NoFloor), names::UNIQUE);
}

#[test]
fn mutant_version_only_renewal_is_caught() {
    // Its counterexample needs no clock skew; without skew the search is far smaller.
    counterexample(
        mutant(Mutant::VersionOnlyRenewal).exact_clocks(),
        names::UNIQUE,
    );
}

#[test]
fn mutant_wall_clock_fence_is_caught() {
    // A deadline kept on the wall clock is stretched by a clock that falls back while the
    // renewal is in flight. The real fence is not (the deadline property holds whatever the
    // steps); without lost records no step breaks uniqueness either.
    let mut bounds = mutant(Mutant::WallClockFence);
    bounds.step_in_renewal = 1;
    bounds.max_wipes = 0;
    counterexample(bounds, names::DEADLINE);
}

#[test]
fn mutant_no_clock_check_is_caught() {
    // A holder whose clock is too far ahead reserves and issues ticks that a holder behind,
    // after the records were lost, issues again once the floor has passed.
    counterexample(any_path(Mutant::NoClockCheck), names::UNIQUE);
}

#[test]
fn mutant_wide_clock_skew_is_caught() {
    // One unit more than half of quarantine + safety margin is too much: the limit in
    // force by default, and the most `LeaseConfig::validate` allows, is tight.
    counterexample(any_path(Mutant::WideClockSkew), names::UNIQUE);
}

/// Bounds with the records restored once (and never wiped): a third claim is what a
/// restored backup hands a live holder's id to.
fn with_a_restore(mutant: Mutant) -> Bounds {
    let mut bounds = Bounds::from_env().with_mutant(mutant);
    bounds.max_wipes = 0;
    bounds.max_restores = 1;
    bounds.max_claims = bounds.max_claims.max(3);
    bounds.exact_clocks()
}

#[test]
fn restored_records_hold_every_property() {
    let report = check(with_a_restore(Mutant::None));
    println!("{}", summary(&report));
    holds(&report);
    // Not vacuous: with no wipes, a floored claim that issues is one after the restore.
    assert!(
        report.counterexample(names::AFTER_WIPE).is_some(),
        "the model never reached a claim that issues after the restore"
    );
}

#[test]
fn mutant_no_restore_check_is_caught() {
    let mut bounds = with_a_restore(Mutant::NoRestoreCheck);
    bounds.threads = 1;
    let report = check(bounds);
    println!("{}", summary(&report));
    let trace = report
        .counterexample(names::UNIQUE)
        .expect("restored records taken as they are must give a duplicate tick");
    println!("counterexample to \"{}\":\n{trace}", names::UNIQUE);
}

/// Bounds with one request sent again (a renewal or a release, to a second server of a
/// `ferroflake+http://` address), every clock on the registry's: a copy sent again carries
/// the first one's mark and reads no clock, and the clocks' full range as well would more
/// than double the default run.
fn with_a_retry(mutant: Mutant) -> Bounds {
    let mut bounds = Bounds::from_env().with_mutant(mutant);
    bounds.max_retries = bounds.max_retries.max(1);
    bounds.exact_clocks()
}

#[test]
fn requests_sent_again_hold_every_property() {
    let report = check(with_a_retry(Mutant::None));
    println!("{}", summary(&report));
    holds(&report);
    // Not vacuous: a copy given up on is applied while its holder issues under the claim,
    // and a claim applied late holds the id for nobody.
    for name in [names::LATE_RENEWAL, names::ORPHAN, names::TAKEOVER] {
        assert!(
            report.counterexample(name).is_some(),
            "the model never reached \"{name}\" with a retry"
        );
    }
    let example = report
        .counterexample(names::LATE_RENEWAL)
        .unwrap_or_default();
    println!("example of \"{}\":\n{example}", names::LATE_RENEWAL);
}

#[test]
fn mutant_deadline_from_answer_is_caught() {
    // A renewal applied, then answered more than a safety margin later: the registry lets
    // the claim lapse TTL after it applied it, before a deadline counted from the answer.
    counterexample(mutant(Mutant::DeadlineFromAnswer), names::WITHIN_CLAIM);
}

#[test]
fn mutant_claim_resent_reaches_no_state_the_protocol_does_not() {
    // The model's properties cannot see the harm of a claim sent again: with one node id, a
    // claim resent leads to the very state a claim that timed out followed at once by a new
    // claim leads to, which the protocol allows (a caller may start again), so no property
    // can tell the mutant from the protocol. Its harm is an orphan id held for its TTL and
    // quarantine (`names::ORPHAN` shows one, from a claim applied late), and with several
    // ids a second id taken: a cost in ids, which the model does not measure.
    // Shown on every reachable state of small bounds, by the model's own steps.
    let mut bounds = Bounds::from_env()
        .with_mutant(Mutant::ClaimResent)
        .exact_clocks();
    bounds.max_time = bounds.max_time.min(4);
    let model = LeaseModel { bounds };
    let (mut seen, mut todo, mut resent) = (HashSet::new(), model.init_states(), 0usize);
    while let Some(state) = todo.pop() {
        if !seen.insert(state.clone()) {
            continue;
        }
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        for action in actions {
            let Some(next) = model.next_state(&state, action.clone()) else {
                continue;
            };
            if let Action::Retry(h) = action {
                if state.holders[usize::from(h)].pending == Some(Pending::Claim) {
                    resent += 1;
                    let timed_out = model
                        .next_state(&state, Action::Timeout(h))
                        .expect("a timeout");
                    let mut then = Vec::new();
                    model.actions(&timed_out, &mut then);
                    assert!(then.contains(&Action::Claim(h)), "{state:?}");
                    assert_eq!(
                        model.next_state(&timed_out, Action::Claim(h)).as_ref(),
                        Some(&next),
                        "a claim sent again from {state:?}"
                    );
                }
            }
            todo.push(next);
        }
    }
    println!(
        "ClaimResent: {} states, {resent} claims sent again",
        seen.len()
    );
    assert!(resent > 0, "no claim was sent again");
}
