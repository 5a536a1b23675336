//! What a frame runs, chosen from user input: a mode or weights named in
//! text ([`Choice::from_names`]), held as an owned [`Choice`] that lends
//! the [`Select`] of each frame's [`Run`], and the first frame of a run
//! that has no outputs yet to run into ([`run_slot`], [`run_slot_parallel`]).
//! Tools (the command-line runner, bindings, configuration files) share it
//! instead of each re-dispatching modes, weights and plans by hand.

use std::borrow::Cow;
use std::sync::Arc;

use crate::model::plan::Plan;
use crate::model::weights::{parse_overrides, Weights};
use crate::runtime::error::PipelineError;
use crate::runtime::observe::Observer;
use crate::runtime::pipeline::{Pipeline, PipelineMode};
use crate::runtime::run::{Run, Select};

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

/// The mode named `name`, or the first declared one when `name` is `None`.
///
/// # Errors
/// [`ChoiceError::UnknownMode`] naming the declared modes, or
/// [`ChoiceError::NoMode`].
pub fn mode_named<M: PipelineMode>(name: Option<&str>) -> Result<M, ChoiceError> {
    match name {
        Some(n) => M::from_name(n).ok_or_else(|| ChoiceError::UnknownMode {
            given: n.to_string(),
            known: M::ALL
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(", "),
        }),
        None => M::ALL.first().copied().ok_or(ChoiceError::NoMode),
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

/// An owned choice of plan: what a [`Select`] borrows, kept for a whole
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

impl<M: PipelineMode> Choice<M> {
    /// The choice a user's text names: weights `weights` (`key=value,…`)
    /// over mode `mode`'s table when given, else mode `mode` itself (the
    /// first declared mode when `mode` is `None`). `keys` are the
    /// pipeline's weight keys (`GraphIr::weight_keys`).
    ///
    /// # Errors
    /// An unknown mode or malformed weights ([`ChoiceError`]).
    pub fn from_names(
        mode: Option<&str>,
        weights: Option<&str>,
        keys: &[Cow<'static, str>],
    ) -> Result<Self, ChoiceError> {
        let m = mode_named::<M>(mode)?;
        Ok(match weights {
            Some(spec) => Choice::Weights(weights_over(spec, keys, m.weights())?),
            None => Choice::Mode(m),
        })
    }

    /// The selection of a [`Run`], borrowing the weights and plan.
    pub fn select(&self) -> Select<'_, M> {
        match self {
            Choice::Mode(m) => Select::Mode(*m),
            Choice::Weights(w) => Select::Weights(w),
            Choice::Plan(p, w) => Select::Plan(p, w),
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

    /// The weights a frame runs with: the mode's table or the ones given.
    pub fn weights(&self) -> &Weights {
        match self {
            Choice::Mode(m) => m.weights(),
            Choice::Weights(w) | Choice::Plan(_, w) => w,
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

    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    enum Two {
        A,
        B,
    }

    static PLAN: Plan = Plan::empty("A");
    static WEIGHTS: std::sync::OnceLock<Weights> = std::sync::OnceLock::new();

    impl PipelineMode for Two {
        const ALL: &'static [Self] = &[Two::A, Two::B];
        fn name(self) -> &'static str {
            match self {
                Two::A => "A",
                Two::B => "B",
            }
        }
        fn from_name(name: &str) -> Option<Self> {
            Self::ALL.iter().copied().find(|m| m.name() == name)
        }
        fn plan(self) -> &'static Plan {
            &PLAN
        }
        fn weights(self) -> &'static Weights {
            WEIGHTS.get_or_init(|| Weights::new().with("k", 1.0).with("j", 2.0))
        }
    }

    #[test]
    fn modes_by_name() {
        assert_eq!(mode_named::<Two>(None), Ok(Two::A));
        assert_eq!(mode_named::<Two>(Some("B")), Ok(Two::B));
        let e = mode_named::<Two>(Some("C")).unwrap_err();
        assert_eq!(e.to_string(), "unknown mode `C` (modes: A, B)");
    }

    #[test]
    fn choices_from_text() {
        let keys: Vec<Cow<'static, str>> = vec!["k".into(), "j".into()];
        let c = Choice::<Two>::from_names(Some("B"), None, &keys).unwrap();
        assert_eq!((c.mode(), c.select()), (Some(Two::B), Select::Mode(Two::B)));
        let c = Choice::<Two>::from_names(None, Some("j=0"), &keys).unwrap();
        assert_eq!(c.mode(), None);
        assert_eq!(
            (c.weights().get("k"), c.weights().get("j")),
            (Some(1.0), Some(0.0))
        );
        assert!(matches!(c.select(), Select::Weights(w) if w.get("j") == Some(0.0)));
        for bad in ["j=-1", "x=1", "j", "j=nan"] {
            assert!(matches!(
                Choice::<Two>::from_names(None, Some(bad), &keys),
                Err(ChoiceError::Weights(_))
            ));
        }
        assert!(matches!(
            Choice::<Two>::from_names(Some("Z"), Some("j=0"), &keys),
            Err(ChoiceError::UnknownMode { .. })
        ));
    }
}
