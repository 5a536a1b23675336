//! Shared by the pass cases (`#[path = "../differential.rs"] mod differential;`):
//! every mode's straight-line `run` equals the plan-driven `run_plan` with the
//! same mode's plan and weights, frame for frame, state included; and
//! `run_into`, reusing the outputs of the frame before, equals `run`.

use std::fmt::Debug;

use cortex::prelude::PipelineMode;
use cortex::{CompiledPipeline, Pipeline, Run};

/// Runs `frames` through two fresh pipelines per mode — one by `run(mode)`,
/// one by `Run::plan(mode.plan(), mode.weights())` — and asserts equal
/// outputs (or equal failures) on every frame.
pub fn modes_match_plans<'a, P, T: 'a>(frames: &'a [T])
where
    P: CompiledPipeline + Pipeline<Inputs<'a> = (&'a T,)>,
    P::Outputs: PartialEq + Debug,
{
    for &mode in P::Mode::ALL {
        let mut straight = P::default();
        let mut planned = P::default();
        let mut reusing = P::default();
        let mut reused: Option<P::Outputs> = None;
        for frame in frames {
            let a = straight.run(mode, (frame,));
            match reused.as_mut() {
                None => reused = reusing.run(mode, (frame,)).ok(),
                Some(out) => {
                    let r = reusing.run_into(mode, (frame,), out);
                    if let (Ok(()), Ok(a)) = (&r, &a) {
                        assert_eq!(out, a, "mode {}: run_into", mode.name());
                    }
                    assert_eq!(r.is_ok(), a.is_ok(), "mode {}: run_into", mode.name());
                }
            }
            let b = planned.run_with_fresh(&mut Run::plan(mode.plan(), mode.weights()), (frame,));
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "mode {}", mode.name()),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("mode {}: run gave {:?}, run_plan gave {:?}", mode.name(), a.is_ok(), b.is_ok()),
            }
        }
    }
}
