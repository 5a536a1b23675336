//! What each frame of a pooled stream runs: its mode and the outputs it
//! reads.

use crate::model::outputs::OutputSet;

/// What each frame of a stream on a [`StreamPool`](super::StreamPool)
/// runs: a declared mode, and the outputs the stream reads (every one
/// unless narrowed). A mode alone converts into one, so
/// `pool.add_source(p, Mode::Fast, …)` reads every output.
///
/// Reading only some outputs runs only their producers, as
/// [`Run::outputs`](crate::run::Run::outputs) does for one frame: the
/// outputs read are those of a full run, bit for bit. The stream's first
/// frame, with no earlier outputs to run into, makes every output
/// ([`Pipeline::run_with_fresh`](crate::Pipeline::run_with_fresh)); later
/// frames leave the outputs not read as that frame made them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamRun<M> {
    /// The declared mode every frame runs.
    pub mode: M,
    /// The outputs each frame computes ([`OutputSet::ALL`] by default).
    pub outputs: OutputSet,
}

impl<M> StreamRun<M> {
    /// Every frame in `mode`, every output read.
    pub fn mode(mode: M) -> Self {
        StreamRun {
            mode,
            outputs: OutputSet::ALL,
        }
    }

    /// Only the outputs in `set` are read: each frame runs their
    /// producers alone.
    #[must_use]
    pub fn outputs(self, set: OutputSet) -> Self {
        StreamRun {
            outputs: set,
            ..self
        }
    }
}

impl<M> From<M> for StreamRun<M> {
    fn from(mode: M) -> Self {
        StreamRun::mode(mode)
    }
}
