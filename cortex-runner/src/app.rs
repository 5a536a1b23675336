//! A pipeline's program ([`App`]): what it shows of each frame's outputs,
//! how it builds a frame's inputs ([`FrameAdapter`]), how it draws
//! pictures, which engines it opts into, and the streams it runs with.

use std::io::{Read, Write};
use std::ops::ControlFlow;

use cortex_core::error::PipelineError;
use cortex_core::ir::GraphIr;
use cortex_core::outputs::OutputSet;
use cortex_core::pipeline::{CompiledPipeline, Pipeline};
use cortex_core::run::Run;
use cortex_core::stream::{StreamError, StreamOptions, StreamReport};
use cortex_vision::ops::qp_map::QpMap;
use cortex_vision::ops::roi_regions::Region;
use cortex_vision::ops::RgbFrame;

use crate::cli::RunArgs;
use crate::dump::{DumpError, DumpSink};
use crate::error::RunnerError;
use crate::observer::RunObserver;
use crate::reads::{Reader, Reads};
use crate::record::Record;
use crate::session::SessionFn;
use crate::sink::{DumpFn, QpMapFn, RecordFn, RegionsFn};
use crate::sources::Frame;

/// What an adapter returns on failure.
pub type AdapterError = Box<dyn std::error::Error + Send + Sync>;

/// Builds a pipeline's inputs from one decoded frame.
///
/// For a pipeline whose only input is the frame (`input frame: RgbFrame;`)
/// use [`FrameOnly`]. For others (a depth map, an audio buffer derived from
/// the frame, a second camera…), implement this: build the extra inputs,
/// then call `run` once with the tuple of references.
///
/// The frame is lent mutably so that an adapter whose pipeline takes its
/// inputs as owned values can move the image in for the run instead of
/// copying it; it must put the frame back as it found it (the runner shows
/// it afterwards: `--dump`, `--encode`).
pub trait FrameAdapter<P: Pipeline + 'static> {
    /// Calls `run` with the inputs of `frame`.
    fn with_inputs(
        &mut self,
        frame: &mut Frame,
        run: &mut dyn FnMut(P::Inputs<'_>),
    ) -> Result<(), AdapterError>;
}

/// The adapter of pipelines whose one input is the RGB frame.
#[derive(Debug, Default, Clone, Copy)]
pub struct FrameOnly;

impl<P> FrameAdapter<P> for FrameOnly
where
    P: for<'a> Pipeline<Inputs<'a> = (&'a RgbFrame,)> + 'static,
{
    fn with_inputs(
        &mut self,
        frame: &mut Frame,
        run: &mut dyn FnMut(P::Inputs<'_>),
    ) -> Result<(), AdapterError> {
        run((&frame.image,));
        Ok(())
    }
}

/// One frame as its [`Run`] says, into the previous frame's outputs when
/// there are some, else into new ones:
/// [`run_slot`](cortex_core::runtime::dispatch::run_slot).
pub(crate) type SlotRunFn<P> = for<'a, 'b, 'r> fn(
    &'b mut P,
    &'b mut Run<'r, <P as Pipeline>::Mode, RunObserver>,
    <P as Pipeline>::Inputs<'a>,
    &'b mut Option<<P as Pipeline>::Outputs>,
) -> Result<(), PipelineError>;

/// A pipelined stream of frames (see [`crate::pipelined`]) as its [`Run`]
/// says (the mode, the outputs read, the run's observer): each frame
/// reaches the callback whole, with its outputs; returns the report, and
/// the adapter's failure if it ended the stream.
pub(crate) type StreamRunFn<P> = Box<
    dyn Fn(
        &mut P,
        &mut Run<'_, <P as Pipeline>::Mode, RunObserver>,
        &mut (dyn Iterator<Item = Frame> + Send),
        &StreamOptions,
        &mut dyn FnMut(Delivered<'_, <P as Pipeline>::Outputs>) -> ControlFlow<()>,
    ) -> Result<(StreamReport, Option<RunnerError>), StreamError>,
>;

/// One frame of a pipelined run as it reaches the runner: the frame (its
/// image back in place), the frames dropped before it, its outputs (left
/// in place: a later frame runs into them) and the held values it read.
pub(crate) struct Delivered<'f, O> {
    pub(crate) frame: &'f Frame,
    pub(crate) dropped_before: u64,
    pub(crate) result: &'f mut Result<O, PipelineError>,
    pub(crate) held: u64,
}

/// The engines of a `#[parallel]` pipeline, captured by [`App::parallel`]
/// where the bound is known, so that `App<P>` itself needs no bound.
pub(crate) struct ParallelFns<P: Pipeline> {
    pub(crate) stream: StreamRunFn<P>,
    /// Several inputs on one pool (pipelines whose one input is the frame).
    pub(crate) session: Option<SessionFn<P>>,
}

/// A pipeline's command-line program.
///
/// Built with [`App::new`] or [`App::with_adapter`]; [`App::parallel`] opts
/// into the parallel engines, and [`App::main`] / [`App::run_with`] run it.
pub struct App<P: Pipeline> {
    pub(crate) name: String,
    /// Makes a pipeline before its first frame: `Default` for a compiled
    /// one, a fresh instance of the graph for one built from a file.
    pub(crate) make: Box<dyn Fn() -> P>,
    /// The pipeline's graph.
    pub(crate) ir: &'static GraphIr,
    pub(crate) about: Option<String>,
    pub(crate) record: RecordFn<P>,
    pub(crate) adapter: Box<dyn FrameAdapter<P>>,
    pub(crate) dump: Option<DumpFn<P>>,
    pub(crate) regions: Option<RegionsFn<P>>,
    pub(crate) qp_map: Option<QpMapFn<P>>,
    pub(crate) default_frames: Option<u64>,
    pub(crate) parallel: Option<ParallelFns<P>>,
    /// Ops a `run --graph` file may call besides L2's.
    pub(crate) graph_ops: cortex_core::dynamic::Ops,
    /// The graph run in place of the compiled pipeline ([`App::graph_file`]).
    pub(crate) graph_file: Option<(String, std::sync::Arc<cortex_core::dynamic::GraphFile>)>,
    /// What the tools print beside a node ([`App::node_notes`]).
    pub(crate) notes: Option<crate::notes::NotesFn>,
    /// The outputs each consumer reads ([`App::reads`]).
    pub(crate) reads: Reads,
    /// What `--help` says of `--model` ([`App::model_help`]).
    pub(crate) model_help: Option<String>,
    /// What messages call the graph run in place of a compiled pipeline
    /// (`--graph FILE`, or the program's own graph's name).
    pub(crate) graph_label: Option<String>,
}

/// The standard streams a run uses; [`App::main`] passes the process's, tests
/// pass buffers.
pub struct Io<'a> {
    /// What `--input -` reads (`Send`: a pipelined run reads its source on a
    /// producer thread).
    pub stdin: Box<dyn Read + Send>,
    /// Results.
    pub stdout: &'a mut dyn Write,
    /// Summaries and notes (not errors: those are returned).
    pub stderr: &'a mut dyn Write,
    /// Whether to draw a progress bar on the process's stderr.
    pub progress: bool,
}

impl<P: CompiledPipeline + 'static> App<P> {
    /// The program `name` for a pipeline whose one input is the frame;
    /// `record` picks the outputs to show.
    pub fn new(name: impl Into<String>, record: impl Fn(&P::Outputs) -> Record + 'static) -> Self
    where
        P: for<'a> Pipeline<Inputs<'a> = (&'a RgbFrame,)>,
    {
        Self::with_adapter(name, record, FrameOnly)
    }

    /// The program `name` with an adapter that builds the inputs.
    pub fn with_adapter(
        name: impl Into<String>,
        record: impl Fn(&P::Outputs) -> Record + 'static,
        adapter: impl FrameAdapter<P> + 'static,
    ) -> Self {
        App::of(name, Box::new(P::default), P::ir(), record, adapter)
    }
}

impl<P: Pipeline + 'static> App<P> {
    /// The program `name` of the pipelines `make` makes, of graph `ir`.
    pub(crate) fn of(
        name: impl Into<String>,
        make: Box<dyn Fn() -> P>,
        ir: &'static GraphIr,
        record: impl Fn(&P::Outputs) -> Record + 'static,
        adapter: impl FrameAdapter<P> + 'static,
    ) -> Self {
        App {
            name: name.into(),
            make,
            ir,
            about: None,
            record: Box::new(record),
            adapter: Box::new(adapter),
            dump: None,
            regions: None,
            qp_map: None,
            default_frames: None,
            parallel: None,
            graph_ops: cortex_core::dynamic::Ops::new(),
            graph_file: None,
            notes: None,
            reads: Reads::default(),
            model_help: None,
            graph_label: None,
        }
    }

    /// Shows `--model NAME=PATH` in `--help` with this description: for a
    /// program that takes the option out of its arguments itself
    /// ([`take_models`](crate::take_models)) before they are parsed.
    pub fn model_help(mut self, help: impl Into<String>) -> Self {
        self.model_help = Some(help.into());
        self
    }

    /// Renames the program: the name its `--help` and its error lines
    /// show (one program installed under two names).
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// A one-line description shown by `--help`.
    pub fn about(mut self, about: impl Into<String>) -> Self {
        self.about = Some(about.into());
        self
    }

    /// How `run --dump DIR` draws one frame's results.
    pub fn dump(
        mut self,
        dump: impl Fn(&DumpSink<'_>, &Frame, &P::Outputs) -> Result<(), DumpError> + 'static,
    ) -> Self {
        self.dump = Some(Box::new(dump));
        self
    }

    /// The regions of interest of a frame's outputs, most important first,
    /// that `run --encode` attaches to the frame (feature `ffmpeg`); without
    /// it, only `--roi off` encodes.
    pub fn encode_regions(
        mut self,
        regions: impl Fn(&P::Outputs) -> Vec<Region> + 'static,
    ) -> Self {
        self.regions = Some(Box::new(regions));
        self
    }

    /// The per-block quantiser-offset map of a frame's outputs that
    /// `run --encode --roi map` attaches to the frame (feature `ffmpeg`).
    pub fn encode_qp_map(
        mut self,
        map: impl for<'o> Fn(&'o P::Outputs) -> &'o QpMap + 'static,
    ) -> Self {
        self.qp_map = Some(Box::new(map));
        self
    }

    /// Frames to run when `--frames` is not given (default: the whole source).
    pub fn default_frames(mut self, frames: u64) -> Self {
        self.default_frames = Some(frames);
        self
    }

    /// Declares that `reader` reads only the outputs named in `outputs`
    /// (each an output of the pipeline; an unknown name is an error when a
    /// run starts). A `run` then computes only what its consumers read —
    /// the record function always, `--dump`'s and `--encode`'s when given —
    /// so outputs nothing shows are not computed. A consumer that declares
    /// nothing reads every output.
    pub fn reads(mut self, reader: Reader, outputs: &[&str]) -> Self {
        self.reads.declare(reader, outputs);
        self
    }

    /// The outputs a `run` with `args` reads.
    pub(crate) fn outputs_read(&self, args: &RunArgs) -> Result<OutputSet, RunnerError> {
        self.reads.outputs_read(self.ir, args, self.dump.is_some())
    }
}

impl<P: Pipeline> App<P> {
    /// What a message names as the pipeline that lacks something: the
    /// graph file run, or the program.
    pub(crate) fn subject(&self) -> String {
        match &self.graph_label {
            Some(label) => format!("graph `{}` ({label})", self.ir.name),
            None => format!("program `{}`", self.name),
        }
    }
}
