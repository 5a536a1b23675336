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

mod dump;
mod record;
mod trace;

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{json, Map, Value};

use crate::error::PipelineError;
use crate::export::{to_dot, to_mermaid};
use crate::ir::{GraphIr, NodeId};
use crate::observe::Observer;
use crate::ops::RgbFrame;
use crate::pipeline::{Pipeline, PipelineMode};
use crate::plan::Plan;
use crate::profile::Profiler;
use crate::sources::{self, Frame, FrameSource, SourceError};
use crate::viz::{buffer_section, dce_diff, listing};
use crate::weights::{check_weight_value, Weights};

pub use dump::{draw_box, heatmap, DumpError, DumpSink};
pub use record::Record;
pub use trace::TraceLog;

/// Why a run failed. Each renders as one readable line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunnerError {
    /// Bad command line (clap's message, first line).
    #[error("{0}")]
    Usage(String),
    /// `--mode` names no declared mode.
    #[error("unknown mode `{given}` (modes: {known})")]
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

/// A pipeline's command-line program.
pub struct App<P: Pipeline> {
    name: String,
    about: Option<String>,
    record: RecordFn<P>,
    adapter: Box<dyn FrameAdapter<P>>,
    dump: Option<DumpFn<P>>,
    default_frames: Option<u64>,
}

/// The standard streams a run uses; [`App::main`] passes the process's, tests
/// pass buffers.
pub struct Io<'a> {
    /// What `--input -` reads.
    pub stdin: Box<dyn Read>,
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
    /// Write a Chrome trace event file (Perfetto, chrome://tracing).
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
    let mut w = base.clone();
    let known = || keys.join(", ");
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| RunnerError::Weights(format!("`{item}`: expected key=value")))?;
        let (k, v) = (k.trim(), v.trim());
        let Some(key) = keys.iter().find(|key| *key == k) else {
            return Err(RunnerError::Weights(if keys.is_empty() {
                format!("unknown weight key `{k}` (this pipeline has no weight keys)")
            } else {
                format!("unknown weight key `{k}` (keys: {})", known())
            }));
        };
        let value: f64 = v
            .parse()
            .map_err(|_| RunnerError::Weights(format!("`{item}`: `{v}` is not a number")))?;
        check_weight_value(value)
            .map_err(|why| RunnerError::Weights(format!("`{k}` = {v} {why}")))?;
        w.set(key.clone(), value);
    }
    Ok(w)
}

/// How frames are run: a declared mode, run-time weights, or an explicit
/// plan with weights.
enum Selection<M> {
    Mode(M),
    Weights(Weights),
    Plan(Arc<Plan>, Weights),
}

/// The observer of a run: the profiler, this frame's node times and the
/// optional trace.
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
            trace.slice(
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
        }
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
    /// as one line `name: message` on stderr with exit code 1 (2 for a bad
    /// command line).
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
                ExitCode::from(if matches!(e, RunnerError::Usage(_)) {
                    2
                } else {
                    1
                })
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

    /// The run loop shared by every subcommand.
    #[allow(clippy::too_many_arguments)]
    fn run_frames(
        &mut self,
        common: &Common,
        selection: Selection<P::Mode>,
        mut sink: Sink,
        args: &RunArgs,
        stdin: Box<dyn Read>,
        stdout: &mut dyn Write,
        progress: bool,
    ) -> Result<(RunObserver, RunSummary), RunnerError> {
        let ir = P::ir();
        let mut source = sources::open(common.input.as_deref(), common.size, stdin)?;
        let limit = common.frames.or(self.default_frames);
        let total = match (source.len_hint(), limit) {
            (Some(n), Some(l)) => Some(n.min(l)),
            (n, l) => n.or(l),
        };
        let bar = progress_bar(progress && !common.quiet, total);
        let mut obs = RunObserver::new(ir, args.trace.is_some());
        let mut pipeline = P::default();
        let mut last_size: Option<(usize, usize)> = None;
        let started = Instant::now();
        let mut done = 0u64;
        let mode_name = match &selection {
            Selection::Mode(m) => Value::from(m.name()),
            _ => Value::Null,
        };
        let weights_json = match &selection {
            Selection::Weights(w) | Selection::Plan(_, w) => Some(Value::Object(
                w.iter().map(|(k, v)| (k.to_string(), json!(v))).collect(),
            )),
            Selection::Mode(_) => None,
        };
        let result = (|| -> Result<(), RunnerError> {
            while limit.map_or(true, |l| done < l) {
                let Some(frame) = source.next_frame() else {
                    break;
                };
                let frame = frame?;
                let size = frame.size();
                let reset = last_size.is_some_and(|s| s != size);
                if reset {
                    // Temporal state computed at another resolution means
                    // nothing here: start over as on a first frame.
                    pipeline.reset();
                }
                let resized_from = last_size.filter(|_| reset);
                last_size = Some(size);
                obs.frame = frame.index;
                let mut result = None;
                let pl = &mut pipeline;
                let o = &mut obs;
                let sel = &selection;
                self.adapter
                    .with_inputs(&frame, &mut |inputs| {
                        result = Some(match sel {
                            Selection::Mode(m) => pl.run_observed(*m, o, inputs),
                            Selection::Weights(w) => pl.run_weights_observed(w, o, inputs),
                            Selection::Plan(p, w) => pl.run_plan_observed(p, w, o, inputs),
                        })
                    })
                    .map_err(|e| RunnerError::Adapter {
                        frame: frame.index,
                        why: e.to_string(),
                    })?;
                let outputs = result
                    .ok_or_else(|| RunnerError::Adapter {
                        frame: frame.index,
                        why: "the adapter did not run the pipeline".into(),
                    })?
                    .map_err(|source| RunnerError::Frame {
                        frame: frame.index,
                        source,
                    })?;
                let rec = (self.record)(&outputs);
                let mut lines = String::new();
                match &mut sink {
                    Sink::Silent => {}
                    Sink::Table(table, started) => {
                        if let Some((w0, h0)) = resized_from {
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
                        let mut line = json!({
                            "frame": frame.index,
                            "timestamp": frame.timestamp,
                            "width": size.0,
                            "height": size.1,
                            "reset": reset,
                            "mode": mode_name,
                        });
                        if let (Some(w), Value::Object(m)) = (&weights_json, &mut line) {
                            m.insert("weights".into(), w.clone());
                        }
                        if let Value::Object(m) = &mut line {
                            m.insert("outputs".into(), rec.to_json());
                            m.insert("node_ms".into(), obs.node_ms_json());
                        }
                        lines.push_str(&line.to_string());
                        lines.push('\n');
                    }
                }
                if let (Some(dir), Some(dump)) = (&args.dump, &self.dump) {
                    if done == 0 {
                        std::fs::create_dir_all(dir).map_err(|source| RunnerError::Io {
                            what: dir.display().to_string(),
                            source,
                        })?;
                    }
                    dump(&DumpSink::new(dir, frame.index), &frame, &outputs)?;
                }
                if !lines.is_empty() {
                    // One write per frame: a failure later never leaves half
                    // a line behind.
                    bar.suspend(|| write_out(stdout, &lines))?;
                }
                done += 1;
                bar.inc(1);
            }
            Ok(())
        })();
        bar.finish_and_clear();
        if let (Some(path), Some(trace)) = (&args.trace, &obs.trace) {
            if done > 0 {
                write_trace(path, &trace.to_json(&self.name))?;
            }
        }
        result?;
        if done == 0 {
            return Err(RunnerError::NoFrames(source.describe()));
        }
        Ok((
            obs,
            RunSummary {
                frames: done,
                seconds: started.elapsed().as_secs_f64(),
                buffer_bytes: pipeline.buffer_bytes(),
            },
        ))
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
    let mean = obs.profiler.frame_stats().time.map_or(0.0, |t| t.mean_ms);
    writeln!(
        err,
        "{} frames in {:.2} s ({fps:.1} frames/s; pipeline {mean:.2} ms a frame)",
        s.frames, s.seconds
    )
    .map_err(|source| RunnerError::Io {
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
        for bad in ["b=abc", "b=-1", "c=1", "b", "b=inf", "b=NaN"] {
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
