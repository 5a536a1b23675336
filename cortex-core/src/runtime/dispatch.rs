//! What a frame runs, chosen from user input: a mode or weights named in
//! text ([`Choice::from_names`]), held as an owned [`Choice`] that lends
//! the [`ChoiceRef`] of each frame's [`Run`], and the first frame of a run
//! that has no outputs yet to run into ([`run_slot`]), for any
//! [`Pipeline`], compiled or built at run time.
//! Tools (the command-line runner, bindings, configuration files) share it
//! instead of each re-dispatching modes, weights and plans by hand.

use std::borrow::Cow;
use std::sync::Arc;

use crate::model::plan::Plan;
use crate::model::weights::{parse_overrides, Weights};
use crate::runtime::error::PipelineError;
use crate::runtime::observe::Observer;
use crate::runtime::pipeline::Pipeline;
use crate::runtime::run::{ChoiceRef, Run};

/// Why a choice made in text cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChoiceError {
    /// The name is not one of the pipeline's modes.
    #[error("unknown mode `{given}` (modes: {known})")]
    UnknownMode {
        /// As given.
        given: String,
        /// The declared modes, comma-separated.
        known: String,
    },
    /// The pipeline declares no mode to run by default.
    #[error("the pipeline declares no mode")]
    NoMode,
    /// Weights text that is malformed, names an unknown key or gives a
    /// value that is not a finite number ≥ 0.
    #[error("{0}")]
    Weights(String),
}

/// The mode of `pipeline` named `name`, or its first declared one when
/// `name` is `None`.
///
/// # Errors
/// [`ChoiceError::UnknownMode`] naming the declared modes, or
/// [`ChoiceError::NoMode`].
pub fn mode_named<P: Pipeline + ?Sized>(
    pipeline: &P,
    name: Option<&str>,
) -> Result<P::Mode, ChoiceError> {
    match name {
        Some(n) => pipeline
            .mode_named(n)
            .ok_or_else(|| ChoiceError::UnknownMode {
                given: n.to_string(),
                known: pipeline
                    .graph()
                    .modes
                    .iter()
                    .map(|m| &*m.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        None => pipeline.mode(0).ok_or(ChoiceError::NoMode),
    }
}

/// `key=value,…` over `base`: each key one of `keys`, each value a finite
/// number ≥ 0; keys not given keep `base`'s value.
///
/// # Errors
/// [`ChoiceError::Weights`] with the first bad entry (and the keys, when
/// one is unknown).
pub fn weights_over(
    spec: &str,
    keys: &[Cow<'static, str>],
    base: &Weights,
) -> Result<Weights, ChoiceError> {
    let overrides = parse_overrides(spec, keys).map_err(|e| ChoiceError::Weights(e.to_string()))?;
    Ok(base.with_overrides(&overrides))
}

/// An owned choice of plan: what a [`ChoiceRef`] borrows, kept for a whole
/// run (a [`Run`] is made from it per frame or per stream).
#[derive(Debug, Clone, PartialEq)]
pub enum Choice<M> {
    /// A declared mode.
    Mode(M),
    /// Weights chosen at run time.
    Weights(Weights),
    /// An explicit plan with its weights.
    Plan(Arc<Plan>, Weights),
}

impl<M: Copy> Choice<M> {
    /// The choice a user's text names for `pipeline`: weights `weights`
    /// (`key=value,…`) over mode `mode`'s table when given, else mode
    /// `mode` itself (the first declared mode when `mode` is `None`).
    ///
    /// # Errors
    /// An unknown mode or malformed weights ([`ChoiceError`]).
    pub fn from_names<P: Pipeline<Mode = M> + ?Sized>(
        pipeline: &P,
        mode: Option<&str>,
        weights: Option<&str>,
    ) -> Result<Self, ChoiceError> {
        let m = mode_named(pipeline, mode)?;
        Ok(match weights {
            Some(spec) => {
                let base = pipeline.mode_weights(m).ok_or(ChoiceError::NoMode)?;
                let keys = &pipeline.graph().weight_keys;
                Choice::Weights(weights_over(spec, keys, base)?)
            }
            None => Choice::Mode(m),
        })
    }

    /// The selection of a [`Run`], borrowing the weights and plan.
    pub fn select(&self) -> ChoiceRef<'_, M> {
        match self {
            Choice::Mode(m) => ChoiceRef::Mode(*m),
            Choice::Weights(w) => ChoiceRef::Weights(w),
            Choice::Plan(p, w) => ChoiceRef::Plan(p, w),
        }
    }

    /// A sequential, unobserved run of every output of this choice, to
    /// refine with [`Run::engine`], [`Run::outputs`] and [`Run::observed`].
    pub fn run(&self) -> Run<'_, M> {
        Run::of(self.select())
    }

    /// The declared mode, when the choice is one.
    pub fn mode(&self) -> Option<M> {
        match self {
            Choice::Mode(m) => Some(*m),
            Choice::Weights(_) | Choice::Plan(..) => None,
        }
    }

    /// The weights a frame of `pipeline` runs with: the mode's table or
    /// the ones given (`None` for a mode `pipeline` does not declare).
    pub fn weights<'a, P: Pipeline<Mode = M> + ?Sized>(
        &'a self,
        pipeline: &'a P,
    ) -> Option<&'a Weights> {
        match self {
            Choice::Mode(m) => pipeline.mode_weights(*m),
            Choice::Weights(w) | Choice::Plan(_, w) => Some(w),
        }
    }
}

/// Runs one frame as `run` says into `slot`: into the outputs of an
/// earlier frame when there are some ([`Pipeline::run_with`], computing
/// only the outputs `run` reads), otherwise into new outputs of every
/// output ([`Pipeline::run_with_fresh`]: a first frame, which the caller
/// then keeps in `slot`). [`Engine::Parallel`] on a pipeline not declared
/// `#[parallel]` is refused with [`PipelineError::NotParallel`] before
/// anything runs.
///
/// # Errors
/// The frame's error; `slot` and the state are then left as they were.
pub fn run_slot<P: Pipeline, O: Observer + Send>(
    pipeline: &mut P,
    run: &mut Run<'_, P::Mode, O>,
    inputs: P::Inputs<'_>,
    slot: &mut Option<P::Outputs>,
) -> Result<(), PipelineError> {
    if let Some(outputs) = slot.as_mut() {
        return pipeline.run_with(run, inputs, outputs);
    }
    let outputs = pipeline.run_with_fresh(run, inputs)?;
    *slot = Some(outputs);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::spec::GraphSpec;
    use crate::runtime::dynamic::{Call, DynPipeline, Ops, Value};
    use crate::runtime::error::NodeFailure;

    /// A run-time pipeline of two modes, `A` and `B`, over weight keys `k`
    /// and `j`: `out = x + k·x`, through the trait only.
    fn two_modes() -> DynPipeline {
        let spec = GraphSpec::builder("Two")
            .input("x", "u64")
            .node("y", "scaled", ["x", "weights"])
            .weight_key("k")
            .node("z", "scaled", ["x", "weights"])
            .weight_key("j")
            .node("out", "sum", ["x", "y", "z"])
            .mode("A", [("k", 1.0), ("j", 2.0)])
            .mode("B", [("k", 3.0), ("j", 2.0)])
            .output("out", "u64")
            .build();
        let mut ops = Ops::new();
        ops.op("scaled", |c: &mut Call<'_>| -> Result<(), NodeFailure> {
            let x = *c.arg::<u64>(0)?;
            c.put(x * 2);
            Ok(())
        });
        ops.op("sum", |c: &mut Call<'_>| -> Result<(), NodeFailure> {
            let x = *c.arg::<u64>(0)?;
            let y = c.opt::<u64>(1)?.copied().unwrap_or(0);
            let z = c.opt::<u64>(2)?.copied().unwrap_or(0);
            let (k, j) = (c.weights().get_or_zero("k"), c.weights().get_or_zero("j"));
            c.put(x + (k * y as f64) as u64 + (j * z as f64) as u64);
            Ok(())
        });
        DynPipeline::new(&spec, &ops).expect("a valid graph")
    }

    #[test]
    fn modes_by_name() {
        let p = two_modes();
        assert_eq!(mode_named(&p, None), Ok(0));
        assert_eq!(mode_named(&p, Some("B")), Ok(1));
        let e = mode_named(&p, Some("C")).unwrap_err();
        assert_eq!(e.to_string(), "unknown mode `C` (modes: A, B)");
    }

    #[test]
    fn choices_from_text() {
        let p = two_modes();
        let c = Choice::from_names(&p, Some("B"), None).unwrap();
        assert_eq!((c.mode(), c.select()), (Some(1), ChoiceRef::Mode(1)));
        assert_eq!(c.weights(&p).and_then(|w| w.get("k")), Some(3.0));
        let c = Choice::from_names(&p, None, Some("j=0")).unwrap();
        assert_eq!(c.mode(), None);
        let w = c.weights(&p).unwrap();
        assert_eq!((w.get("k"), w.get("j")), (Some(1.0), Some(0.0)));
        assert!(matches!(c.select(), ChoiceRef::Weights(w) if w.get("j") == Some(0.0)));
        for bad in ["j=-1", "x=1", "j", "j=nan"] {
            assert!(matches!(
                Choice::from_names(&p, None, Some(bad)),
                Err(ChoiceError::Weights(_))
            ));
        }
        assert!(matches!(
            Choice::from_names(&p, Some("Z"), Some("j=0")),
            Err(ChoiceError::UnknownMode { .. })
        ));
    }

    /// The generic slot path serves a run-time pipeline: a first frame into
    /// new outputs, later ones into them, equal to its own fresh runs.
    #[test]
    fn run_slot_serves_a_run_time_pipeline() {
        let (mut slotted, mut fresh) = (two_modes(), two_modes());
        let mut slot = None;
        for (x, mode) in [(5u64, "A"), (7, "B"), (9, "A")] {
            let choice = Choice::from_names(&slotted, Some(mode), None).unwrap();
            let input: [Value; 1] = [std::sync::Arc::new(x)];
            let mut run = choice.run();
            run_slot(&mut slotted, &mut run, &input, &mut slot).unwrap();
            let want = fresh
                .run_with_fresh(&mut Run::of(choice.select()), &input)
                .unwrap();
            let got = slot.as_ref().and_then(|o| o.get::<u64>("out").copied());
            assert_eq!(got, want.get::<u64>("out").copied());
            let k = if mode == "A" { 1 } else { 3 };
            assert_eq!(got, Some(x + k * 2 * x + 2 * 2 * x));
        }
        assert_eq!(slotted.frame_index(), 3);
    }
}
