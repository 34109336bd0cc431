//! # ferroflake-lease-model
//!
//! A model of the lease protocol of `ferroflake-lease`, checked exhaustively for small sizes
//! with [stateright](https://docs.rs/stateright), as loom checks the generator's CAS loop.
//!
//! Two or three holders and one registry compete for one node id. Holders claim, renew,
//! issue, release, time out, pause (do nothing while time passes) and crash; their wall
//! clocks step and drift, past the clock-skew limit too, and each renewal reads them
//! against the registry's clock (true time); messages are delayed, reordered and lost, and
//! a renewal or a release given up on at one server is sent to another (as through a
//! `ferroflake+http://` address), its first copy left in flight to be applied late; the
//! registry loses its records and recreates them. True time advances in unit steps (1 unit
//! = 1 ms = 1 tick) up to a bound, with a TTL of a few units.
//!
//! Every decision goes through [`decisions`], which calls `ferroflake_lease::protocol`: the
//! model checks the code, not a paraphrase. A [`Mutant`] breaks one guard there; the tests
//! show that the checker finds each one, except [`Mutant::ClaimResent`], the remote
//! client's own behaviour (a claim sent again), whose cost (an id held for nobody for a
//! while) no property of a one-id model can see: its test shows that it reaches no state
//! the protocol does not.
//!
//! The assumptions and what is checked: `lease/PROTOCOL.md`. Run it with
//! `scripts/test-lease-model.sh`; larger with `FERROFLAKE_MODEL_HOLDERS=3
//! FERROFLAKE_MODEL_TIME=9 scripts/test-lease-model.sh` (see [`Bounds::from_env`]).
//!
//! ```
//! use ferroflake_lease_model::{check, Bounds, Mutant};
//!
//! let mut bounds = Bounds::small();
//! bounds.max_time = 3;
//! bounds.mutant = Mutant::NoFloor;
//! let report = check(bounds);
//! assert!(report.counterexample(ferroflake_lease_model::names::UNIQUE).is_some());
//! ```
#![warn(missing_docs)]

pub mod bounds;
pub mod decisions;
pub mod model;
pub mod state;
pub mod trace;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use stateright::{Checker, Model};

pub use bounds::{Bounds, Mutant};
pub use model::{names, Action, LeaseModel};

/// The outcome of one run.
#[derive(Debug)]
pub struct Report {
    /// The bounds it ran with.
    pub bounds: Bounds,
    /// States generated and distinct states.
    pub states: usize,
    /// Distinct states.
    pub unique_states: usize,
    /// How long it took.
    pub elapsed: Duration,

    /// Property name → the path that discovered it, rendered as a trace. For `always`
    /// properties a discovery is a counterexample; for `sometimes` ones, an example.
    pub discoveries: BTreeMap<&'static str, String>,
}

impl Report {
    /// The rendered counterexample (or example) for `property`, if one was found.
    pub fn counterexample(&self, property: &str) -> Option<&str> {
        self.discoveries.get(property).map(String::as_str)
    }
}

/// Checks the model with `bounds`: every reachable state, or for a mutant until the first
/// counterexample.
pub fn check(bounds: Bounds) -> Report {
    let model = LeaseModel {
        bounds: bounds.clone(),
    };
    let started = Instant::now();
    let builder = model.checker().threads(bounds.threads.max(1));
    // The real protocol: depth-first with symmetry reduction (holders are interchangeable),
    // every reachable state. A mutant: breadth-first (stateright reduces symmetry only
    // depth-first), which gives the shortest counterexample, stopping at the first; or,
    // unless `shortest`, depth-first too, stopping at the first.
    let checker: Box<dyn Checker<LeaseModel>> = if bounds.mutant == Mutant::None {
        Box::new(
            builder
                .symmetry_fn(model::representative)
                .spawn_dfs()
                .join(),
        )
    } else if !bounds.shortest {
        Box::new(
            builder
                .symmetry_fn(model::representative)
                .finish_when(stateright::HasDiscoveries::AnyFailures)
                .spawn_dfs()
                .join(),
        )
    } else {
        Box::new(
            builder
                .finish_when(stateright::HasDiscoveries::AnyFailures)
                .spawn_bfs()
                .join(),
        )
    };
    let discoveries = checker
        .discoveries()
        .into_iter()
        .map(|(name, path)| (name, trace::render(&path, bounds.behind)))
        .collect();
    Report {
        bounds,
        states: checker.state_count(),
        unique_states: checker.unique_state_count(),
        elapsed: started.elapsed(),
        discoveries,
    }
}
