//! Why a run failed ([`RunnerError`]), and the exit code each failure
//! becomes.

use cortex_core::error::PipelineError;
use cortex_core::runtime::dispatch::ChoiceError;
use cortex_core::stream::StreamError;

use crate::dump::DumpError;
use crate::sources::SourceError;

/// Why a run failed. Each renders as one readable line; [`exit_code`]
/// tells a mistake on the command line (2) from a failed run (1).
///
/// [`exit_code`]: RunnerError::exit_code
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunnerError {
    /// Bad command line: clap's message (first line), or a combination of
    /// options the program cannot run.
    #[error("{0}")]
    Usage(String),
    /// `--mode` names no declared mode.
    #[error("--mode: unknown mode `{given}` (modes: {known})")]
    UnknownMode {
        /// As given.
        given: String,
        /// The declared modes.
        known: String,
    },
    /// Malformed `--weights`.
    #[error("--weights: {0}")]
    Weights(String),
    /// The input could not be opened or read.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The pipeline failed on a frame.
    #[error("frame {frame}: {source}")]
    Frame {
        /// The frame's index.
        frame: u64,
        /// What failed.
        #[source]
        source: PipelineError,
    },
    /// The frame adapter could not build the pipeline's inputs.
    #[error("frame {frame}: preparing the inputs: {why}")]
    Adapter {
        /// The frame's index.
        frame: u64,
        /// The adapter's message.
        why: String,
    },
    /// Writing results failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being written.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Writing a picture failed.
    #[error("--dump: {0}")]
    Dump(#[from] DumpError),
    /// `--keep-going`: frames failed (each reported when it did); the
    /// others ran.
    #[error("{failed} of {frames} frames failed (the first: frame {first}); the others ran")]
    FramesFailed {
        /// How many failed.
        failed: u64,
        /// Frames read.
        frames: u64,
        /// The first that failed.
        first: u64,
    },
    /// The source delivered no frame at all.
    #[error("{0}: no frames")]
    NoFrames(String),
    /// `--encode` failed (the output, the encoder).
    #[error("--encode: {0}")]
    Encode(String),
    /// Several inputs ran, and some stream failed: frames, or its input
    /// (the other streams ran to their end).
    #[error("{0}")]
    Streams(String),
    /// The program declared it reads an output the pipeline does not have
    /// ([`App::reads`](crate::App::reads)).
    #[error("the program reads {0}")]
    Reads(#[from] cortex_core::outputs::UnknownOutput),
    /// The pipelined engine could not run the stream.
    #[error("--engine pipelined: {0}")]
    Stream(#[from] StreamError),
    /// `graph --format json`: the pipeline cannot be written as a graph
    /// file.
    #[error("--format json: {0}")]
    Export(#[from] cortex_core::dynamic::ExportError),
}

impl RunnerError {
    /// The process exit code [`App::main`](crate::App::main) returns for this error: 2 when
    /// what the user typed is wrong (a bad flag or value, an unknown mode,
    /// malformed weights, options the program cannot honour), 1 when a
    /// well-formed command failed (the input, the pipeline, writing).
    pub fn exit_code(&self) -> u8 {
        match self {
            RunnerError::Usage(_) | RunnerError::UnknownMode { .. } | RunnerError::Weights(_) => 2,
            _ => 1,
        }
    }
}

impl From<ChoiceError> for RunnerError {
    /// A mode or weights the command line names: the flag's own message.
    fn from(e: ChoiceError) -> Self {
        match e {
            ChoiceError::UnknownMode { given, known } => RunnerError::UnknownMode { given, known },
            ChoiceError::Weights(why) => RunnerError::Weights(why),
            other => RunnerError::Usage(other.to_string()),
        }
    }
}
