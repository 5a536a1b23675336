//! A command-line program for any pipeline: frames in from a source
//! ([`crate::sources`]), per-frame results out as a table, JSON lines, a
//! Chrome trace or pictures, plus the graph, plan and profile tools.
//!
//! A pipeline becomes a program with a record function (which outputs to
//! show) and, for pipelines whose inputs are not just the frame, a
//! [`FrameAdapter`]:
//!
//! ```ignore
//! fn record(out: &MyOutputs) -> Record {
//!     Record::new().field("alarm", out.alarm).field("level", out.level)
//! }
//! fn main() -> std::process::ExitCode {
//!     App::<MyPipeline>::new("my_pipeline", record).main()
//! }
//! ```
//!
//! Subcommands: `run` (the default when none is given shows a tour: the
//! results table, the listing with measured times, the DCE diff of every
//! mode that eliminates nodes, and the profile), `graph`, `plan`, `profile`.
//! See the README for options and the JSON schema.
//!
//! A pipeline declared `#[parallel]` can also run on the parallel engine
//! (a frame's independent nodes at once) and the pipelined one (the next
//! frame's state-free nodes beside this frame's rest, fed from the source
//! on a producer thread) when its program opts in with [`App::parallel`]
//! (or [`App::parallel_with`]): `run --engine parallel|pipelined`.

mod dump;
mod record;
pub mod sources;
mod trace;

use std::collections::VecDeque;
use std::io::{IsTerminal, Read, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{json, Map, Value};

use crate::sources::{Frame, FrameSource, SourceError};
use cortex_core::error::PipelineError;
use cortex_core::export::{to_dot, to_mermaid};
use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::observe::Observer;
use cortex_core::pipeline::{ParallelPipeline, Pipeline, PipelineMode};
use cortex_core::plan::Plan;
use cortex_core::profile::Profiler;
use cortex_core::stream::{Overflow, StreamError, StreamFrame, StreamOptions, StreamReport};
use cortex_core::viz::{buffer_section, dce_diff, listing};
use cortex_core::weights::{parse_overrides, Weights};
use cortex_vision::ops::RgbFrame;

pub use dump::{draw_box, heatmap, DumpError, DumpSink};
pub use record::Record;
pub use trace::TraceLog;

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
    /// The source delivered no frame at all.
    #[error("{0}: no frames")]
    NoFrames(String),
    /// The pipelined engine could not run the stream.
    #[error("--engine pipelined: {0}")]
    Stream(#[from] StreamError),
}

impl RunnerError {
    /// The process exit code [`App::main`] returns for this error: 2 when
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

/// What an adapter returns on failure.
pub type AdapterError = Box<dyn std::error::Error + Send + Sync>;

/// Builds a pipeline's inputs from one decoded frame.
///
/// For a pipeline whose only input is the frame (`input frame: RgbFrame;`)
/// use [`FrameOnly`]. For others (a depth map, an audio buffer derived from
/// the frame, a second camera…), implement this: build the extra inputs,
/// then call `run` once with the tuple of references.
pub trait FrameAdapter<P: Pipeline + 'static> {
    /// Calls `run` with the inputs of `frame`.
    fn with_inputs(
        &mut self,
        frame: &Frame,
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
        frame: &Frame,
        run: &mut dyn FnMut(P::Inputs<'_>),
    ) -> Result<(), AdapterError> {
        run((&frame.image,));
        Ok(())
    }
}

type RecordFn<P> = Box<dyn Fn(&<P as Pipeline>::Outputs) -> Record>;
type DumpFn<P> =
    Box<dyn Fn(&DumpSink<'_>, &Frame, &<P as Pipeline>::Outputs) -> Result<(), DumpError>>;

/// One frame on the parallel engine, into the outputs of the previous frame
/// when there are some (see [`run_parallel_slot`]).
type ParallelRunFn<P> = for<'a, 'b> fn(
    &'b mut P,
    <P as Pipeline>::Mode,
    &'b mut RunObserver,
    <P as Pipeline>::Inputs<'a>,
    &'b mut Option<<P as Pipeline>::Outputs>,
) -> Result<(), PipelineError>;

/// What the pipelined engine hands back per frame: the frame itself (its
/// image back in place) and its outputs.
type FrameResult<P> = StreamFrame<Frame, <P as Pipeline>::Outputs>;

/// A pipelined stream of frames (see [`stream_fn`]): the report, and the
/// adapter's failure if it ended the stream.
type StreamRunFn<P> = Box<
    dyn Fn(
        &mut P,
        <P as Pipeline>::Mode,
        &mut (dyn Iterator<Item = Frame> + Send),
        &StreamOptions,
        &mut dyn FnMut(FrameResult<P>) -> ControlFlow<()>,
    ) -> Result<(StreamReport, Option<RunnerError>), StreamError>,
>;

/// The engines of a `#[parallel]` pipeline, captured by [`App::parallel`]
/// where the bound is known, so that `App<P>` itself needs no bound.
struct ParallelFns<P: Pipeline> {
    run: ParallelRunFn<P>,
    stream: StreamRunFn<P>,
}

/// A pipeline's command-line program.
pub struct App<P: Pipeline> {
    name: String,
    about: Option<String>,
    record: RecordFn<P>,
    adapter: Box<dyn FrameAdapter<P>>,
    dump: Option<DumpFn<P>>,
    default_frames: Option<u64>,
    parallel: Option<ParallelFns<P>>,
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

#[derive(Parser, Debug)]
#[command(
    disable_version_flag = true,
    after_help = "Without a command: the tour — run's table, the graph listing with measured \
                  times, the DCE diff of every mode that removes nodes, and the profile."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    common: Common,
}

/// Options every subcommand takes.
#[derive(Args, Debug, Clone)]
struct Common {
    /// Declared mode to run (default: the first declared one).
    #[arg(long, global = true, value_name = "MODE")]
    mode: Option<String>,
    /// Run-time weights `key=value,…` over the mode's table (run_weights).
    #[arg(long, global = true, value_name = "K=V,...")]
    weights: Option<String>,
    /// Stop after N frames.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    frames: Option<u64>,
    /// Frames from: a .y4m file, `-` (Y4M on stdin), a directory or glob of
    /// PNG/JPEG files, an image, or (feature opencv) a video file or
    /// `camera:N`. Default: the built-in synthetic clip.
    #[arg(long, short, global = true, value_name = "INPUT")]
    input: Option<String>,
    /// Size of the synthetic clip, WIDTHxHEIGHT.
    #[arg(long, global = true, value_name = "WxH", default_value = "640x480", value_parser = parse_size)]
    size: (usize, usize),
    /// No progress bar and no summary on stderr.
    #[arg(long, short, global = true)]
    quiet: bool,
    /// How frames run: `sequential` (one node at a time), `parallel` (a
    /// frame's independent nodes at once on the worker pool) or `pipelined`
    /// (also the next frame's state-free nodes beside this frame's rest, the
    /// source read on its own thread). Every engine gives the same outputs
    /// for the frames it processes. `parallel` and `pipelined` need a
    /// pipeline declared `#[parallel]`; pipelined runs have no per-node
    /// times (stages of frames interleave): `node_ms` is null, and no
    /// --trace or profile.
    #[arg(long, global = true, value_enum, default_value_t = Engine::Sequential, help_heading = "Engine")]
    engine: Engine,
    /// Pipelined: frames being processed at once, 1 to 64 [default: 2]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64), help_heading = "Engine")]
    in_flight: Option<u64>,
    /// Pipelined: frames waiting between the source and the pipeline, 1 to
    /// 1024 [default: 4]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024), help_heading = "Engine")]
    queue: Option<u64>,
    /// Pipelined: what a full queue does — `block` the source (lose
    /// nothing), `drop-oldest` waiting frame, or `keep-latest` only (live
    /// sources) [default: block]
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "POLICY",
        help_heading = "Engine"
    )]
    overflow: Option<OverflowArg>,
}

/// `--engine`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Engine {
    #[default]
    Sequential,
    Parallel,
    Pipelined,
}

impl Engine {
    fn flag(self) -> &'static str {
        match self {
            Engine::Sequential => "sequential",
            Engine::Parallel => "parallel",
            Engine::Pipelined => "pipelined",
        }
    }
}

/// `--overflow`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum OverflowArg {
    Block,
    DropOldest,
    KeepLatest,
}

impl Common {
    /// The stream options of a pipelined run.
    fn stream_options(&self) -> StreamOptions {
        let d = StreamOptions::DEFAULT;
        let size =
            |n: Option<u64>, d: usize| n.map_or(d, |n| usize::try_from(n).unwrap_or(usize::MAX));
        StreamOptions {
            in_flight: size(self.in_flight, d.in_flight),
            queue: size(self.queue, d.queue),
            overflow: match self.overflow {
                None => d.overflow,
                Some(OverflowArg::Block) => Overflow::Block,
                Some(OverflowArg::DropOldest) => Overflow::DropOldest,
                Some(OverflowArg::KeepLatest) => Overflow::KeepLatest,
            },
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Frames in, per-frame results out (a table, or JSON lines).
    Run(RunArgs),
    /// The graph: a listing, or DOT / Mermaid (with --mode's plan shown).
    Graph {
        /// Output format.
        #[arg(long, value_enum, default_value_t = GraphFormat::Listing)]
        format: GraphFormat,
    },
    /// What --mode or --weights eliminates, priced with per-node times
    /// measured on a short run of the full graph (--frames, default 10).
    Plan,
    /// Per-node mean / p50 / p99 times over a run.
    Profile,
}

#[derive(Args, Debug, Default)]
struct RunArgs {
    /// One JSON object per frame and line instead of a table.
    #[arg(long)]
    json: bool,
    /// Write a Chrome trace event file (Perfetto, chrome://tracing): a
    /// slice per node and frame, a track per thread (not with --engine
    /// pipelined).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Write pictures of each frame's results into DIR.
    #[arg(long, value_name = "DIR")]
    dump: Option<PathBuf>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum GraphFormat {
    Listing,
    Dot,
    Mermaid,
}

fn parse_size(s: &str) -> Result<(usize, usize), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT, got `{s}`"))?;
    let parse = |v: &str| {
        v.parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("`{v}` is not a positive whole number"))
    };
    Ok((parse(w)?, parse(h)?))
}

/// Parses `key=value,…` over `base`: each key must be one of the pipeline's
/// weight keys, each value a finite number ≥ 0.
pub fn parse_weights(
    spec: &str,
    keys: &[std::borrow::Cow<'static, str>],
    base: &Weights,
) -> Result<Weights, RunnerError> {
    let overrides = parse_overrides(spec, keys).map_err(|e| RunnerError::Weights(e.to_string()))?;
    Ok(base.with_overrides(&overrides))
}

/// How frames are run: a declared mode, run-time weights, or an explicit
/// plan with weights.
enum Selection<M> {
    Mode(M),
    Weights(Weights),
    Plan(Arc<Plan>, Weights),
}

/// The observer of a run: the profiler, this frame's node times and the
/// optional trace. On the parallel engine its events come from the pool's
/// threads, one at a time under a lock: it is `Send`, and keeps one start
/// time per node so that nodes running side by side are timed apart.
struct RunObserver {
    profiler: Profiler<'static>,
    ir: &'static GraphIr,
    begun: Vec<Option<Instant>>,
    frame_ms: Vec<Option<f64>>,
    frame_start: Option<Instant>,
    frame: u64,
    trace: Option<TraceLog>,
}

impl RunObserver {
    fn new(ir: &'static GraphIr, trace: bool) -> Self {
        RunObserver {
            profiler: Profiler::new(ir),
            ir,
            begun: vec![None; ir.nodes.len()],
            frame_ms: vec![None; ir.nodes.len()],
            frame_start: None,
            frame: 0,
            trace: trace.then(TraceLog::new),
        }
    }

    /// This frame's node times as a JSON object, in topological order.
    fn node_ms_json(&self) -> Value {
        let mut m = Map::new();
        for &id in self.ir.topo.iter() {
            if let Some(ms) = self.frame_ms.get(id as usize).copied().flatten() {
                m.insert(self.ir.node(id).name.to_string(), json!(round_ms(ms)));
            }
        }
        Value::Object(m)
    }
}

/// Microsecond resolution is plenty and keeps JSON lines short.
fn round_ms(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

impl Observer for RunObserver {
    fn frame_begin(&mut self, ir: &'static GraphIr, plan: &Plan) {
        self.frame_ms.iter_mut().for_each(|t| *t = None);
        self.frame_start = Some(Instant::now());
        self.profiler.frame_begin(ir, plan);
    }

    fn node_begin(&mut self, node: NodeId) {
        if let Some(b) = self.begun.get_mut(node as usize) {
            *b = Some(Instant::now());
        }
        self.profiler.node_begin(node);
    }

    fn node_end(&mut self, node: NodeId) {
        let end = Instant::now();
        self.profiler.node_end(node);
        let Some(start) = self.begun.get_mut(node as usize).and_then(Option::take) else {
            return;
        };
        if let Some(t) = self.frame_ms.get_mut(node as usize) {
            *t = Some(end.saturating_duration_since(start).as_secs_f64() * 1e3);
        }
        if let Some(trace) = &mut self.trace {
            let name = &self.ir.node(node).name;
            trace.slice(name, "node", start, end, self.frame);
        }
    }

    fn frame_end(&mut self, ok: bool) {
        let end = Instant::now();
        self.profiler.frame_end(ok);
        if let (Some(trace), Some(start)) = (&mut self.trace, self.frame_start.take()) {
            // On the frames' track, whichever pool thread ends a parallel
            // frame.
            trace.slice_on(
                0,
                &format!("frame {}", self.frame),
                "frame",
                start,
                end,
                self.frame,
            );
        }
    }
}

/// What a run loop does with each frame's results.
enum Sink {
    /// Nothing (plan, profile).
    Silent,
    /// A table on stdout; whether its header was printed.
    Table(record::Table, bool),
    /// JSON lines on stdout.
    Json,
}

/// What a run produced.
struct RunSummary {
    frames: u64,
    seconds: f64,
    /// The pipeline's buffers after the last frame (see `Pipeline::buffer_bytes`).
    buffer_bytes: Vec<(&'static str, u32, usize)>,
    /// The counts of a pipelined run.
    stream: Option<StreamReport>,
}

impl<P: Pipeline + 'static> App<P> {
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
        App {
            name: name.into(),
            about: None,
            record: Box::new(record),
            adapter: Box::new(adapter),
            dump: None,
            default_frames: None,
            parallel: None,
        }
    }

    /// Lets `--engine parallel|pipelined` run this pipeline (declared
    /// `#[parallel]`, with the frame as its one input). The parallel engine
    /// builds a frame's inputs with the program's adapter; the pipelined one
    /// moves the frame's image into the stream and hands it back with the
    /// results (`--dump` still sees it).
    pub fn parallel(self) -> Self
    where
        P: ParallelPipeline<OwnedInputs = (RgbFrame,)>,
    {
        let split = |mut frame: Frame| -> Result<((RgbFrame,), Frame), AdapterError> {
            // An empty image allocates nothing; the real one comes back
            // through the stream.
            let image = std::mem::replace(&mut frame.image, RgbFrame::zeros((0, 0, 3)));
            Ok(((image,), frame))
        };
        let join = |(image,): (RgbFrame,), frame: &mut Frame| frame.image = image;
        self.with_engines(stream_fn::<P, _, _>(split, join))
    }

    /// [`App::parallel`] for a `#[parallel]` pipeline whose inputs are not
    /// just the frame: `owned` builds one frame's owned inputs
    /// ([`ParallelPipeline::OwnedInputs`]) for the pipelined engine, on its
    /// producer thread (the parallel engine uses the program's
    /// [`FrameAdapter`]).
    pub fn parallel_with(
        self,
        owned: impl Fn(&Frame) -> Result<P::OwnedInputs, AdapterError> + Send + Sync + 'static,
    ) -> Self
    where
        P: ParallelPipeline,
    {
        let split = move |frame: Frame| Ok((owned(&frame)?, frame));
        self.with_engines(stream_fn::<P, _, _>(split, |_, _| {}))
    }

    fn with_engines(mut self, stream: StreamRunFn<P>) -> Self
    where
        P: ParallelPipeline,
    {
        self.parallel = Some(ParallelFns {
            run: run_parallel_slot::<P>,
            stream,
        });
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

    /// Frames to run when `--frames` is not given (default: the whole source).
    pub fn default_frames(mut self, frames: u64) -> Self {
        self.default_frames = Some(frames);
        self
    }

    /// Runs with the process's arguments and streams; an error is printed
    /// as one line `name: message` on stderr with its
    /// [`exit_code`](RunnerError::exit_code) (2 for a bad command line, 1
    /// otherwise).
    pub fn main(self) -> ExitCode {
        let name = self.name.clone();
        let stdout = std::io::stdout();
        let mut stdout = stdout.lock();
        // Not locked: the progress bar draws on stderr too.
        let mut err_buf = std::io::stderr();
        let progress = err_buf.is_terminal();
        let io = Io {
            stdin: Box::new(std::io::stdin()),
            stdout: &mut stdout,
            stderr: &mut err_buf,
            progress,
        };
        let result = self.run_with(std::env::args_os(), io);
        let _ = stdout.flush();
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{name}: {e}");
                ExitCode::from(e.exit_code())
            }
        }
    }

    /// Runs with these arguments (the first is the program name) and
    /// streams.
    pub fn run_with<I, T>(mut self, args: I, io: Io<'_>) -> Result<(), RunnerError>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut cmd = <Cli as clap::CommandFactory>::command().name(self.name.clone());
        if let Some(about) = &self.about {
            cmd = cmd.about(about.clone());
        }
        let matches = match cmd.try_get_matches_from(args) {
            Ok(m) => m,
            Err(e) => return self.clap_error(e, io),
        };
        let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches)
            .map_err(|e| RunnerError::Usage(first_line(&e.to_string())))?;
        let ir = P::ir();
        // Everything decidable from the command line is checked before the
        // input is opened.
        let mode = match &cli.common.mode {
            Some(m) => P::Mode::from_name(m).ok_or_else(|| RunnerError::UnknownMode {
                given: m.clone(),
                known: P::Mode::ALL
                    .iter()
                    .map(|m| m.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?,
            None => *P::Mode::ALL
                .first()
                .ok_or_else(|| RunnerError::Usage("the pipeline declares no mode".into()))?,
        };
        let weights = match &cli.common.weights {
            Some(spec) => Some(parse_weights(spec, &ir.weight_keys, mode.weights())?),
            None => None,
        };
        let selection = match &weights {
            Some(w) => Selection::Weights(w.clone()),
            None => Selection::Mode(mode),
        };
        self.check_engine(&cli)?;
        self.check_dump(&cli)?;
        match cli.command {
            Some(Command::Graph { format }) => {
                let plan = cli.common.mode.as_ref().map(|_| mode.plan());
                let text = match format {
                    GraphFormat::Listing => listing(ir, &()),
                    GraphFormat::Dot => to_dot(ir, plan),
                    GraphFormat::Mermaid => to_mermaid(ir, plan),
                };
                write_out(io.stdout, &text)
            }
            Some(Command::Run(args)) => {
                let sink = if args.json {
                    Sink::Json
                } else {
                    Sink::Table(record::Table::default(), false)
                };
                let (obs, summary) = self.run_frames(
                    &cli.common,
                    selection,
                    sink,
                    &args,
                    io.stdin,
                    io.stdout,
                    io.progress,
                )?;
                if !cli.common.quiet {
                    summarize(io.stderr, &obs, &summary)?;
                }
                Ok(())
            }
            Some(Command::Plan) => {
                let mut pipeline = P::default();
                let target: Arc<Plan> = match &weights {
                    Some(w) => {
                        let pattern = w
                            .zero_pattern(&ir.weight_keys)
                            .map_err(|e| RunnerError::Weights(e.to_string()))?;
                        pipeline.pattern_plan(pattern)
                    }
                    None => Arc::new(mode.plan().clone()),
                };
                let full = pipeline.pattern_plan(0);
                let w = weights.clone().unwrap_or_else(|| mode.weights().clone());
                let mut common = cli.common.clone();
                common.frames = Some(cli.common.frames.unwrap_or(10));
                let (obs, summary) = self.run_frames(
                    &common,
                    Selection::Plan(full, w),
                    Sink::Silent,
                    &RunArgs::default(),
                    io.stdin,
                    io.stdout,
                    io.progress,
                )?;
                let mut text = dce_diff(ir, &target, &obs.profiler);
                if ir.nodes.iter().any(|n| n.fills_buffer()) {
                    text.push('\n');
                    text.push_str(&buffer_section(ir, &target, Some(&summary.buffer_bytes)));
                }
                write_out(io.stdout, &text)
            }
            Some(Command::Profile) => {
                let (obs, _) = self.run_frames(
                    &cli.common,
                    selection,
                    Sink::Silent,
                    &RunArgs::default(),
                    io.stdin,
                    io.stdout,
                    io.progress,
                )?;
                write_out(io.stdout, &obs.profiler.report())
            }
            None => {
                // The tour: results, listing with measured times, what each
                // other mode eliminates, the profile.
                let sink = Sink::Table(record::Table::default(), false);
                let (obs, summary) = self.run_frames(
                    &cli.common,
                    selection,
                    sink,
                    &RunArgs::default(),
                    io.stdin,
                    io.stdout,
                    io.progress,
                )?;
                let mut text = String::from("\n");
                text.push_str(&listing(ir, &obs.profiler));
                for m in P::Mode::ALL {
                    if !m.plan().eliminated.is_empty() {
                        text.push('\n');
                        text.push_str(&dce_diff(ir, m.plan(), &obs.profiler));
                    }
                }
                text.push('\n');
                text.push_str(&obs.profiler.report());
                write_out(io.stdout, &text)?;
                if !cli.common.quiet {
                    summarize(io.stderr, &obs, &summary)?;
                }
                Ok(())
            }
        }
    }

    /// Help and version go to stdout with success; anything else is a
    /// one-line usage error.
    fn clap_error(&self, e: clap::Error, io: Io<'_>) -> Result<(), RunnerError> {
        use clap::error::ErrorKind;
        match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                write_out(io.stdout, &e.render().to_string())
            }
            _ => Err(RunnerError::Usage(first_line(&e.render().to_string()))),
        }
    }

    /// The engine options against the subcommand and the pipeline: every
    /// combination that cannot run is a usage error before the input opens.
    fn check_engine(&self, cli: &Cli) -> Result<(), RunnerError> {
        let c = &cli.common;
        let usage = |m: String| Err(RunnerError::Usage(m));
        if c.engine != Engine::Pipelined {
            for (flag, given) in [
                ("--in-flight", c.in_flight.is_some()),
                ("--queue", c.queue.is_some()),
                ("--overflow", c.overflow.is_some()),
            ] {
                if given {
                    return usage(format!("{flag} needs --engine pipelined"));
                }
            }
        }
        if c.engine == Engine::Sequential {
            return Ok(());
        }
        let engine = format!("--engine {}", c.engine.flag());
        match &cli.command {
            // Runs no frame.
            Some(Command::Graph { .. }) => return Ok(()),
            Some(Command::Plan) => {
                return usage(format!(
                    "{engine}: plan measures the full graph on the sequential engine"
                ))
            }
            _ => {}
        }
        if self.parallel.is_none() {
            return usage(format!(
                "{engine}: pipeline `{}` runs on the sequential engine only; declare it `#[parallel]` in cortex_graph! and opt in with App::parallel()",
                P::ir().name
            ));
        }
        if c.weights.is_some() {
            return usage(format!(
                "{engine} runs declared modes (--mode); --weights needs --engine sequential"
            ));
        }
        if c.engine == Engine::Pipelined {
            match &cli.command {
                Some(Command::Run(args)) if args.trace.is_some() => {
                    return usage(
                        "--trace needs per-node times, which --engine pipelined does not have (stages of frames interleave); use --engine parallel".into(),
                    )
                }
                Some(Command::Profile) | None => {
                    return usage(format!(
                        "{engine} has no per-node times for the profile (stages of frames interleave); use --engine parallel"
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `run --dump DIR` needs the program's dump function ([`App::dump`]).
    fn check_dump(&self, cli: &Cli) -> Result<(), RunnerError> {
        match &cli.command {
            Some(Command::Run(RunArgs {
                dump: Some(dir), ..
            })) if self.dump.is_none() => Err(RunnerError::Usage(format!(
                "--dump {}: program `{}` cannot dump pictures (it has no dump function)",
                dir.display(),
                self.name
            ))),
            _ => Ok(()),
        }
    }

    /// The run loop shared by every subcommand.
    #[allow(clippy::too_many_arguments)]
    fn run_frames(
        &mut self,
        common: &Common,
        selection: Selection<P::Mode>,
        mut sink: Sink,
        args: &RunArgs,
        stdin: Box<dyn Read + Send>,
        stdout: &mut dyn Write,
        progress: bool,
    ) -> Result<(RunObserver, RunSummary), RunnerError> {
        let ir = P::ir();
        let limit = common.frames.or(self.default_frames);
        // The synthetic clip plays as many frames as asked, past its
        // scripted events if need be.
        let mut source: Box<dyn FrameSource + Send> = match common.input.as_deref() {
            None => Box::new(sources::synthetic(common.size, limit)?),
            input => sources::open(input, common.size, stdin)?,
        };
        let total = match (source.len_hint(), limit) {
            (Some(n), Some(l)) => Some(n.min(l)),
            (n, l) => n.or(l),
        };
        let bar = progress_bar(progress && !common.quiet, total);
        let mut obs = RunObserver::new(ir, args.trace.is_some());
        let mut pipeline = P::default();
        let started = Instant::now();
        let labels = Labels::of(&selection);
        let mut out = FrameOut {
            sink: &mut sink,
            labels: &labels,
            record: &self.record,
            dump: args.dump.as_deref().zip(self.dump.as_ref()),
            dir_made: false,
            stdout,
            bar: &bar,
        };
        let mut stream_report = None;
        let mut done = 0u64;
        let result = match (common.engine, &selection, &self.parallel) {
            (Engine::Pipelined, Selection::Mode(mode), Some(fns)) => {
                let run = run_pipelined(
                    &mut pipeline,
                    *mode,
                    &mut *source,
                    limit,
                    &common.stream_options(),
                    &fns.stream,
                    &mut out,
                );
                stream_report = Some(run.report);
                done = run.report.processed;
                run.result
            }
            (engine, selection, fns) => {
                // Checked in `check_engine`.
                let parallel = fns
                    .as_ref()
                    .filter(|_| engine == Engine::Parallel)
                    .map(|f| f.run);
                let adapter = &mut *self.adapter;
                let mut last_size: Option<(usize, usize)> = None;
                // The previous frame's outputs, which the next frame fills
                // again (`run_into`): no outputs allocated per frame.
                let mut slot: Option<P::Outputs> = None;
                (|| -> Result<(), RunnerError> {
                    while limit.map_or(true, |l| done < l) {
                        let Some(frame) = source.next_frame() else {
                            break;
                        };
                        let frame = frame?;
                        let size = frame.size();
                        let reset = last_size.is_some_and(|s| s != size);
                        if reset {
                            // Temporal state computed at another resolution
                            // means nothing here: start over as on a first
                            // frame.
                            pipeline.reset();
                        }
                        let resized_from = last_size.filter(|_| reset);
                        last_size = Some(size);
                        obs.frame = frame.index;
                        let mut ran = None;
                        let pl = &mut pipeline;
                        let o = &mut obs;
                        let slot = &mut slot;
                        adapter
                            .with_inputs(&frame, &mut |inputs| {
                                ran = Some(match (selection, parallel) {
                                    (Selection::Mode(m), Some(run)) => run(pl, *m, o, inputs, slot),
                                    (Selection::Mode(m), None) => run_slot(pl, *m, o, inputs, slot),
                                    (Selection::Weights(w), _) => pl
                                        .run_weights_observed(w, o, inputs)
                                        .map(|outputs| *slot = Some(outputs)),
                                    (Selection::Plan(p, w), _) => pl
                                        .run_plan_observed(p, w, o, inputs)
                                        .map(|outputs| *slot = Some(outputs)),
                                })
                            })
                            .map_err(|e| RunnerError::Adapter {
                                frame: frame.index,
                                why: e.to_string(),
                            })?;
                        ran.ok_or_else(|| RunnerError::Adapter {
                            frame: frame.index,
                            why: "the adapter did not run the pipeline".into(),
                        })?
                        .map_err(|source| RunnerError::Frame {
                            frame: frame.index,
                            source,
                        })?;
                        let outputs = slot.as_ref().ok_or(RunnerError::Frame {
                            frame: frame.index,
                            source: PipelineError::Internal("a run returned no outputs"),
                        })?;
                        let shown = Shown {
                            frame: &frame,
                            resized_from,
                            dropped_before: 0,
                            node_ms: Some(obs.node_ms_json()),
                        };
                        out.frame(&shown, outputs)?;
                        done += 1;
                    }
                    Ok(())
                })()
            }
        };
        bar.finish_and_clear();
        if let (Some(path), Some(trace)) = (&args.trace, &obs.trace) {
            if done > 0 {
                write_trace(path, &trace.to_json(&self.name))?;
            }
        }
        result?;
        if stream_report.map_or(done, |r| r.received) == 0 {
            return Err(RunnerError::NoFrames(source.describe()));
        }
        Ok((
            obs,
            RunSummary {
                frames: done,
                seconds: started.elapsed().as_secs_f64(),
                buffer_bytes: pipeline.buffer_bytes(),
                stream: stream_report,
            },
        ))
    }
}

/// One frame on the sequential engine, into the outputs of the previous
/// frame when there are some.
fn run_slot<P: Pipeline>(
    pipeline: &mut P,
    mode: P::Mode,
    obs: &mut RunObserver,
    inputs: P::Inputs<'_>,
    slot: &mut Option<P::Outputs>,
) -> Result<(), PipelineError> {
    match slot {
        Some(outputs) => pipeline.run_into_observed(mode, obs, inputs, outputs),
        None => {
            *slot = Some(pipeline.run_observed(mode, obs, inputs)?);
            Ok(())
        }
    }
}

/// [`run_slot`] on the parallel engine.
fn run_parallel_slot<P: ParallelPipeline>(
    pipeline: &mut P,
    mode: P::Mode,
    obs: &mut RunObserver,
    inputs: P::Inputs<'_>,
    slot: &mut Option<P::Outputs>,
) -> Result<(), PipelineError> {
    match slot {
        Some(outputs) => pipeline.run_parallel_into_observed(mode, obs, inputs, outputs),
        None => {
            *slot = Some(pipeline.run_parallel_observed(mode, obs, inputs)?);
            Ok(())
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The pipelined engine of a `#[parallel]` pipeline `P`: `split` turns a
/// frame into the pipeline's owned inputs and what is left of the frame
/// (on the producer thread), `join` puts the inputs back into that rest
/// when the frame's results arrive, so the runner sees whole frames.
fn stream_fn<P, S, J>(split: S, join: J) -> StreamRunFn<P>
where
    P: ParallelPipeline + 'static,
    S: Fn(Frame) -> Result<(P::OwnedInputs, Frame), AdapterError> + Send + Sync + 'static,
    J: Fn(P::OwnedInputs, &mut Frame) + 'static,
{
    Box::new(move |pipeline, mode, frames, options, on_result| {
        // The rests of the frames pulled so far and not yet delivered, in
        // source order (the producer pushes before the frame enters the
        // queue, so a delivered frame's rest is always there).
        let rests: Mutex<VecDeque<Frame>> = Mutex::new(VecDeque::new());
        let failure: Mutex<Option<RunnerError>> = Mutex::new(None);
        let split = &split;
        let (rests_ref, failure_ref) = (&rests, &failure);
        let inputs = frames.map_while(move |frame| {
            let index = frame.index;
            match split(frame) {
                Ok((inputs, rest)) => {
                    lock(rests_ref).push_back(rest);
                    Some(inputs)
                }
                Err(e) => {
                    *lock(failure_ref) = Some(RunnerError::Adapter {
                        frame: index,
                        why: e.to_string(),
                    });
                    None
                }
            }
        });
        let mut popped = 0u64;
        let report = pipeline.run_stream(mode, inputs, options, |r| {
            let mut rests = lock(&rests);
            // Frames the overflow policy dropped left their rests too.
            while popped < r.index {
                rests.pop_front();
                popped += 1;
            }
            let Some(mut frame) = rests.pop_front() else {
                return ControlFlow::Break(());
            };
            popped += 1;
            drop(rests);
            join(r.inputs, &mut frame);
            on_result(StreamFrame {
                index: r.index,
                dropped_before: r.dropped_before,
                inputs: frame,
                result: r.result,
            })
        })?;
        let failure = failure.into_inner().unwrap_or_else(PoisonError::into_inner);
        Ok((report, failure))
    })
}

/// The source of a pipelined run, read on the producer thread: it ends a
/// stream at the first frame of another size (kept in `carry` for the next
/// stream), at `limit` frames, or at a source error (kept in `error`).
struct Feeder<'s> {
    source: &'s mut (dyn FrameSource + Send),
    limit: Option<u64>,
    pulled: u64,
    size: Option<(usize, usize)>,
    first: Option<Frame>,
    carry: Option<Frame>,
    error: Option<SourceError>,
}

impl Iterator for Feeder<'_> {
    type Item = Frame;

    fn next(&mut self) -> Option<Frame> {
        if let Some(frame) = self.first.take() {
            return Some(frame);
        }
        if self.carry.is_some()
            || self.error.is_some()
            || self.limit.is_some_and(|l| self.pulled >= l)
        {
            return None;
        }
        let frame = match self.source.next_frame()? {
            Ok(frame) => frame,
            Err(e) => {
                self.error = Some(e);
                return None;
            }
        };
        self.pulled += 1;
        let size = frame.size();
        if self.size.is_some_and(|s| s != size) {
            self.carry = Some(frame);
            return None;
        }
        self.size = Some(size);
        Some(frame)
    }
}

/// What a pipelined run did.
struct Pipelined {
    report: StreamReport,
    result: Result<(), RunnerError>,
}

/// Frames through the pipelined engine. A stream cannot reset its pipeline
/// mid-flight, so a resolution change ends the stream: the frames in flight
/// finish, the pipeline is reset, and a new stream starts with the frame of
/// the new size (its queue and look-ahead start empty again).
fn run_pipelined<P: Pipeline>(
    pipeline: &mut P,
    mode: P::Mode,
    source: &mut (dyn FrameSource + Send),
    limit: Option<u64>,
    options: &StreamOptions,
    stream: &StreamRunFn<P>,
    out: &mut FrameOut<'_, '_, P>,
) -> Pipelined {
    let mut feeder = Feeder {
        source,
        limit,
        pulled: 0,
        size: None,
        first: None,
        carry: None,
        error: None,
    };
    let mut total = StreamReport::default();
    let mut resized_from: Option<(usize, usize)> = None;
    let result = loop {
        let mut failed: Option<RunnerError> = None;
        let mut on_result = |r: FrameResult<P>| {
            let StreamFrame {
                inputs: frame,
                dropped_before,
                result,
                ..
            } = r;
            let shown = Shown {
                frame: &frame,
                resized_from: resized_from.take(),
                dropped_before,
                node_ms: None,
            };
            let done = match &result {
                Ok(outputs) => out.frame(&shown, outputs),
                Err(_) => Err(RunnerError::Frame {
                    frame: frame.index,
                    source: result.err().unwrap_or(PipelineError::Internal("no error")),
                }),
            };
            match done {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    failed = Some(e);
                    ControlFlow::Break(())
                }
            }
        };
        let (report, adapter_failed) =
            match stream(pipeline, mode, &mut feeder, options, &mut on_result) {
                Ok(r) => r,
                Err(e) => break Err(e.into()),
            };
        total.received += report.received;
        total.processed += report.processed;
        total.failed += report.failed;
        total.dropped += report.dropped;
        total.discarded += report.discarded;
        if let Some(e) = failed.or(adapter_failed) {
            break Err(e);
        }
        if let Some(e) = feeder.error.take() {
            break Err(e.into());
        }
        let Some(frame) = feeder.carry.take() else {
            break Ok(());
        };
        // Temporal state computed at another resolution means nothing
        // here: start over as on a first frame.
        pipeline.reset();
        resized_from = feeder.size;
        feeder.size = Some(frame.size());
        feeder.first = Some(frame);
    };
    Pipelined {
        report: total,
        result,
    }
}

/// The labels every JSON line carries.
struct Labels {
    mode: Value,
    weights: Option<Value>,
}

impl Labels {
    fn of<M: PipelineMode>(selection: &Selection<M>) -> Self {
        Labels {
            mode: match selection {
                Selection::Mode(m) => Value::from(m.name()),
                _ => Value::Null,
            },
            weights: match selection {
                Selection::Weights(w) | Selection::Plan(_, w) => Some(Value::Object(
                    w.iter().map(|(k, v)| (k.to_string(), json!(v))).collect(),
                )),
                Selection::Mode(_) => None,
            },
        }
    }
}

/// One frame to show: the frame, what happened before it, its node times.
struct Shown<'f> {
    frame: &'f Frame,
    /// The previous frame's size when this one changed it (state reset).
    resized_from: Option<(usize, usize)>,
    /// Frames the overflow policy dropped just before this one.
    dropped_before: u64,
    /// Per-node times (not on the pipelined engine).
    node_ms: Option<Value>,
}

/// Where each frame's results go, the same for every engine.
struct FrameOut<'a, 'w, P: Pipeline> {
    sink: &'a mut Sink,
    labels: &'a Labels,
    record: &'a RecordFn<P>,
    dump: Option<(&'a Path, &'a DumpFn<P>)>,
    dir_made: bool,
    stdout: &'w mut dyn Write,
    bar: &'a indicatif::ProgressBar,
}

impl<P: Pipeline> FrameOut<'_, '_, P> {
    fn frame(&mut self, shown: &Shown<'_>, outputs: &P::Outputs) -> Result<(), RunnerError> {
        let frame = shown.frame;
        let size = frame.size();
        let rec = (self.record)(outputs);
        let mut lines = String::new();
        match &mut *self.sink {
            Sink::Silent => {}
            Sink::Table(table, started) => {
                if shown.dropped_before > 0 {
                    let n = shown.dropped_before;
                    let s = if n == 1 { "" } else { "s" };
                    lines.push_str(&format!("# {n} frame{s} dropped\n"));
                }
                if let Some((w0, h0)) = shown.resized_from {
                    lines.push_str(&format!(
                        "# frame {}: resolution {w0}x{h0} -> {}x{}: pipeline state reset\n",
                        frame.index, size.0, size.1
                    ));
                }
                let mut names = vec!["frame", "time"];
                names.extend(rec.fields().map(|(k, _)| k));
                let mut cells = vec![
                    frame.index.to_string(),
                    frame
                        .timestamp
                        .map_or_else(|| "-".into(), |t| format!("{t:.3}")),
                ];
                cells.extend(rec.fields().map(|(_, v)| record::cell(v)));
                if !*started {
                    lines.push_str(&table.header(&cells, &names));
                    lines.push('\n');
                    *started = true;
                }
                lines.push_str(&table.row(&cells));
                lines.push('\n');
            }
            Sink::Json => {
                let mut m = Map::new();
                m.insert("frame".into(), json!(frame.index));
                m.insert("timestamp".into(), json!(frame.timestamp));
                m.insert("width".into(), json!(size.0));
                m.insert("height".into(), json!(size.1));
                m.insert("reset".into(), json!(shown.resized_from.is_some()));
                m.insert("mode".into(), self.labels.mode.clone());
                if let Some(w) = &self.labels.weights {
                    m.insert("weights".into(), w.clone());
                }
                if shown.dropped_before > 0 {
                    m.insert("dropped_before".into(), json!(shown.dropped_before));
                }
                m.insert("outputs".into(), rec.to_json());
                m.insert(
                    "node_ms".into(),
                    shown.node_ms.clone().unwrap_or(Value::Null),
                );
                lines.push_str(&Value::Object(m).to_string());
                lines.push('\n');
            }
        }
        if let Some((dir, dump)) = self.dump {
            if !self.dir_made {
                std::fs::create_dir_all(dir).map_err(|source| RunnerError::Io {
                    what: dir.display().to_string(),
                    source,
                })?;
                self.dir_made = true;
            }
            dump(&DumpSink::new(dir, frame.index), frame, outputs)?;
        }
        if !lines.is_empty() {
            // One write per frame: a failure later never leaves half a line
            // behind.
            let stdout = &mut *self.stdout;
            self.bar.suspend(|| write_out(stdout, &lines))?;
        }
        self.bar.inc(1);
        Ok(())
    }
}

fn write_trace(path: &Path, trace: &Value) -> Result<(), RunnerError> {
    let io = |source| RunnerError::Io {
        what: path.display().to_string(),
        source,
    };
    let file = std::fs::File::create(path).map_err(io)?;
    let mut w = std::io::BufWriter::new(file);
    serde_json::to_writer(&mut w, trace).map_err(|e| io(e.into()))?;
    w.flush().map_err(io)
}

fn write_out(out: &mut dyn Write, text: &str) -> Result<(), RunnerError> {
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|source| RunnerError::Io {
            what: "stdout".into(),
            source,
        })
}

fn summarize(err: &mut dyn Write, obs: &RunObserver, s: &RunSummary) -> Result<(), RunnerError> {
    let fps = if s.seconds > 0.0 {
        s.frames as f64 / s.seconds
    } else {
        0.0
    };
    let line = match &s.stream {
        None => {
            let mean = obs.profiler.frame_stats().time.map_or(0.0, |t| t.mean_ms);
            format!(
                "{} frames in {:.2} s ({fps:.1} frames/s; pipeline {mean:.2} ms a frame)",
                s.frames, s.seconds
            )
        }
        Some(r) => {
            let discarded = if r.discarded > 0 {
                format!(", {} discarded", r.discarded)
            } else {
                String::new()
            };
            format!(
                "{} frames in {:.2} s ({fps:.1} frames/s; pipelined: {} received, {} processed, {} failed, {} dropped{discarded})",
                s.frames, s.seconds, r.received, r.processed, r.failed, r.dropped
            )
        }
    };
    writeln!(err, "{line}").map_err(|source| RunnerError::Io {
        what: "stderr".into(),
        source,
    })
}

fn first_line(s: &str) -> String {
    let line = s.lines().find(|l| !l.trim().is_empty()).unwrap_or(s);
    line.trim_start_matches("error: ").trim().to_string()
}

fn progress_bar(show: bool, total: Option<u64>) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    if !show {
        return ProgressBar::hidden();
    }
    let (bar, template) = match total {
        Some(n) => (
            ProgressBar::new(n),
            "{spinner} {pos}/{len} frames [{bar:30}] {per_sec} {elapsed}",
        ),
        None => (
            ProgressBar::no_length(),
            "{spinner} {pos} frames {per_sec} {elapsed}",
        ),
    };
    bar.set_draw_target(ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("640x480"), Ok((640, 480)));
        assert!(parse_size("640").is_err());
        assert!(parse_size("0x4").is_err());
        assert!(parse_size("ax4").is_err());
    }

    #[test]
    fn weights_spec() {
        let keys: Vec<std::borrow::Cow<'static, str>> = vec!["a".into(), "b".into()];
        let base = Weights::new().with("a", 1.0).with("b", 2.0);
        let w = parse_weights("b=0.5", &keys, &base).unwrap();
        assert_eq!((w.get("a"), w.get("b")), (Some(1.0), Some(0.5)));
        for bad in ["b=abc", "b=-1", "c=1", "b", "b=inf", "b=NaN", "b=1,b=2"] {
            let e = parse_weights(bad, &keys, &base).unwrap_err().to_string();
            assert!(e.starts_with("--weights:"), "{bad}: {e}");
        }
        assert!(parse_weights("c=1", &keys, &base)
            .unwrap_err()
            .to_string()
            .contains("keys: a, b"));
    }

    #[test]
    fn first_lines() {
        assert_eq!(first_line("error: bad thing\n\nUsage: x"), "bad thing");
    }
}
