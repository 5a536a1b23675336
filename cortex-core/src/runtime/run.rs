//! What one frame runs, as one value: [`Run`] — which plan (a mode, weights
//! chosen at run time, or an explicit plan), on which engine, reported to
//! which observer, computing which outputs. Every pipeline's `run_with`
//! takes it, and so does the runner.

use crate::model::outputs::OutputSet;
use crate::model::plan::Plan;
use crate::model::weights::Weights;
use crate::runtime::observe::NoopObserver;

/// Which plan a frame runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ChoiceRef<'a, M> {
    /// A declared mode: its `const` plan, fused groups and rates.
    Mode(M),
    /// Weights chosen at run time: the plan of their zero pattern, cached
    /// (a declared mode's pattern runs that mode's code with these weights).
    Weights(&'a Weights),
    /// An explicit plan with these weights, validated before anything runs.
    Plan(&'a Plan, &'a Weights),
}

/// Which engine runs the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Engine {
    /// One node after the other on the calling thread.
    #[default]
    Sequential,
    /// Independent nodes at once on the engine's worker pool (a
    /// `#[parallel]` pipeline; another refuses with
    /// [`PipelineError::NotParallel`](crate::error::PipelineError::NotParallel)).
    Parallel,
}

/// One frame's run: [`ChoiceRef`], [`Engine`], the outputs the caller reads
/// and an optional observer. Build it once and pass it to every frame's
/// `run_with`; it holds no buffer, so it costs nothing to keep.
///
/// `Run::mode(m).parallel().outputs(reads).observed(&mut profiler)`: the
/// guide's `api.md` (compiled as the facade's doctests) shows it on a
/// pipeline.
#[derive(Debug)]
pub struct Run<'a, M, O = NoopObserver> {
    /// Which plan runs.
    pub select: ChoiceRef<'a, M>,
    /// On which engine.
    pub engine: Engine,
    /// The outputs the caller reads; only their producers run (see
    /// [`Run::outputs`]).
    pub outputs: OutputSet,
    observer: Option<&'a mut O>,
}

impl<'a, M> Run<'a, M> {
    /// A frame of declared mode `mode`, sequential, every output.
    pub fn mode(mode: M) -> Self {
        Run::of(ChoiceRef::Mode(mode))
    }

    /// A frame with weights chosen at run time.
    pub fn weights(weights: &'a Weights) -> Self {
        Run::of(ChoiceRef::Weights(weights))
    }

    /// A frame of an explicit plan with `weights`.
    pub fn plan(plan: &'a Plan, weights: &'a Weights) -> Self {
        Run::of(ChoiceRef::Plan(plan, weights))
    }

    /// A frame of `select`, sequential, every output, unobserved.
    pub fn of(select: ChoiceRef<'a, M>) -> Self {
        Run {
            select,
            engine: Engine::Sequential,
            outputs: OutputSet::ALL,
            observer: None,
        }
    }
}

impl<'a, M, O> Run<'a, M, O> {
    /// On the parallel engine.
    #[must_use]
    pub fn parallel(self) -> Self {
        self.engine(Engine::Parallel)
    }

    /// On `engine`.
    #[must_use]
    pub fn engine(mut self, engine: Engine) -> Self {
        self.engine = engine;
        self
    }

    /// Computing only `outputs`: the plan is the selected one cut down to
    /// what those outputs need (the same DCE pass, computed once per set and
    /// cached by the pipeline, so a frame neither recomputes nor allocates
    /// it). An output left out is not computed, and `run_with` leaves it as
    /// it was in the caller's outputs (the value of the last frame that
    /// computed it, or whatever the caller put there). A state keeps its
    /// writer running while a running node reads it; one that no running
    /// node reads restarts from its initial value, as in any plan that does
    /// not keep it, so an output requested again after a frame without it
    /// may start from a fresh state. A rated mode, and an explicit plan, run
    /// as selected: the set then only says which outputs are written.
    #[must_use]
    pub fn outputs(mut self, outputs: OutputSet) -> Self {
        self.outputs = outputs;
        self
    }

    /// Reporting each node to `observer`.
    pub fn observed<'b, P>(self, observer: &'b mut P) -> Run<'b, M, P>
    where
        'a: 'b,
    {
        Run {
            select: self.select,
            engine: self.engine,
            outputs: self.outputs,
            observer: Some(observer),
        }
    }

    /// The observer, if any.
    pub fn observer(&mut self) -> Option<&mut O> {
        self.observer.as_deref_mut()
    }
}
