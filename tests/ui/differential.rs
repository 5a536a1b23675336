//! Shared by the pass cases (`#[path = "../differential.rs"] mod differential;`):
//! every mode's straight-line `run` equals the plan-driven `run_plan` with the
//! same mode's plan and weights, frame for frame, state included.

use std::fmt::Debug;

use cortex::{Pipeline, PipelineMode};

/// Runs `frames` through two fresh pipelines per mode — one by `run(mode)`,
/// one by `run_plan(mode.plan(), mode.weights())` — and asserts equal
/// outputs (or equal failures) on every frame.
pub fn modes_match_plans<'a, P, T: 'a>(frames: &'a [T])
where
    P: Pipeline<Inputs<'a> = (&'a T,)>,
    P::Outputs: PartialEq + Debug,
{
    for &mode in P::Mode::ALL {
        let mut straight = P::default();
        let mut planned = P::default();
        for frame in frames {
            let a = straight.run(mode, (frame,));
            let b = planned.run_plan_observed(mode.plan(), mode.weights(), &mut cortex::NoopObserver, (frame,));
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "mode {}", mode.name()),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("mode {}: run gave {:?}, run_plan gave {:?}", mode.name(), a.is_ok(), b.is_ok()),
            }
        }
    }
}
