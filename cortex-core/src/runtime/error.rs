//! Errors of running a pipeline.

use crate::model::plan::PlanError;
use crate::model::weights::WeightsError;

/// The boxed error a fallible node returned.
pub type NodeFailure = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a frame failed. A failed frame leaves the pipeline's state as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// A node's function returned an error.
    #[error("node `{node}` failed: {source}")]
    Node {
        /// The node's name.
        node: &'static str,
        /// What it returned.
        #[source]
        source: NodeFailure,
    },
    /// The run-time weight table does not fit the pipeline.
    #[error("bad weights: {0}")]
    Weights(#[from] WeightsError),
    /// An explicit plan does not fit the pipeline (`run_plan`); nothing ran
    /// and no state was touched.
    #[error("bad plan: {0}")]
    Plan(#[from] PlanError),
    /// The weights eliminate an output that is not optional.
    #[error("these weights eliminate output `{output}`, which is not optional")]
    OutputEliminated {
        /// The output's node name.
        output: &'static str,
    },
    /// A parallel run of a pipeline not declared `#[parallel]`
    /// (`Engine::Parallel` in a `Run`); nothing ran.
    #[error("pipeline `{pipeline}` is not declared `#[parallel]`, so it cannot run on the parallel engine")]
    NotParallel {
        /// The pipeline's name.
        pipeline: &'static str,
    },
    /// A node panicked while a pipelined run (`run_stream`) computed the
    /// frame: the panic is caught and fails that frame alone (the state
    /// stays that of the last good frame). `run` and `run_parallel` let a
    /// panic unwind to the caller instead.
    #[error("a node panicked: {0}")]
    Panicked(String),
    /// A bug in cortex: a plan ran a node without one of its inputs. Plans
    /// come from the validated DCE pass, so this never happens; it is an
    /// error rather than a panic all the same.
    #[error("internal error: {0}")]
    Internal(&'static str),
}

impl PipelineError {
    /// Wraps a node's error.
    pub fn node(node: &'static str, source: impl Into<NodeFailure>) -> Self {
        PipelineError::Node {
            node,
            source: source.into(),
        }
    }
}
