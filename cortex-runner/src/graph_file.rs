//! `run --graph FILE`: a pipeline described in a JSON file, built at run
//! time over the op library and the program's own ([`App::graph_ops`]), run on
//! the frames of the source in the mode (or with the weights) asked, each
//! frame's outputs written as a JSON line; and the frame loop `profile`
//! and `plan` time a graph file with ([`tools`](crate::graph_tools)).

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use cortex_core::dynamic::{DynPipeline, FileError, GraphFile, LoadError, Ops, Value};
use cortex_core::pipeline::Pipeline;
use cortex_core::weights::Weights;
use cortex_core::PipelineError;
use serde_json::{json, Map};

use crate::app::{App, Io};
use crate::cli::{parse_weights, Common, Engine, RunArgs};
use crate::error::RunnerError;
use crate::observer::RunObserver;
use crate::sink::TraceFile;
use crate::sources::{self, FrameSource};
use cortex_core::run::{Run, Select};

impl<P: Pipeline> App<P> {
    /// Adds ops (and their constants, trigger fields and JSON views) that
    /// a `run --graph` file may call besides L2's.
    pub fn graph_ops(mut self, ops: &Ops) -> Self {
        self.graph_ops.extend(ops);
        self
    }

    /// Runs `file` in place of the compiled pipeline, as `--graph` runs a
    /// file (`run`, `graph`, `plan`, `profile`, on every engine); its
    /// problems are reported under `name` (`--model text=PATH`).
    pub fn graph_file(mut self, name: impl Into<String>, file: GraphFile) -> Self {
        self.graph_file = Some((name.into(), Arc::new(file)));
        self
    }
}

/// Runs the graph file of `common.graph` on the frames `common` selects,
/// each frame's results a JSON line.
pub(crate) fn run(
    common: &Common,
    args: &RunArgs,
    extra: &Ops,
    io: Io<'_>,
) -> Result<(), RunnerError> {
    let unsupported = [
        (
            common.engine == Engine::Pipelined && common.weights.is_some(),
            "--weights with --engine pipelined",
        ),
        (args.dump.is_some(), "--dump"),
        (args.encode.is_some(), "--encode"),
    ];
    if let Some((_, flag)) = unsupported.iter().find(|(on, _)| *on) {
        return Err(RunnerError::Usage(format!(
            "--graph runs a mode or weights with JSON lines out; {flag} needs a compiled pipeline"
        )));
    }
    let trace_file = args.trace.as_deref().map(TraceFile::open).transpose()?;
    let mut pipeline = build(common, extra)?;
    let (mode, weights) = selection(common, &pipeline)?;
    // The frames write no summary; the broker's is written after them.
    let mut none = std::io::sink();
    let (io, stderr) = io.with_stderr(&mut none);
    let observer = frames(common, args, &mut pipeline, mode, weights, extra, io, true);
    // The broker's summary also when the run failed: what reached it.
    crate::broker::close_publisher(args.publisher.as_ref(), common.quiet, stderr)?;
    let observer = observer?;
    if let (Some(file), Some(trace)) = (trace_file, &observer.trace) {
        file.write(&trace.to_json(&pipeline.ir().name))?;
    }
    Ok(())
}

/// The mode `common` names (the first when none) and the weights over its
/// table.
pub(crate) fn selection(
    common: &Common,
    pipeline: &DynPipeline,
) -> Result<(usize, Option<Weights>), RunnerError> {
    let ir = pipeline.ir();
    let mode = match &common.mode {
        Some(m) => pipeline.mode(m).ok_or_else(|| RunnerError::UnknownMode {
            given: m.clone(),
            known: ir
                .modes
                .iter()
                .map(|m| m.name.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })?,
        None => 0,
    };
    let weights = match (&common.weights, pipeline.mode_weights(mode)) {
        (Some(spec), Some(base)) => Some(parse_weights(spec, &ir.weight_keys, base)?),
        _ => None,
    };
    Ok((mode, weights))
}

/// Runs `pipeline` on the frames `common` selects in `mode` (or with
/// `weights`), each frame's results a JSON line when `lines`; the observer
/// holds the node times.
#[allow(clippy::too_many_arguments)]
pub(crate) fn frames(
    common: &Common,
    args: &RunArgs,
    pipeline: &mut DynPipeline,
    mode: usize,
    weights: Option<Weights>,
    extra: &Ops,
    io: Io<'_>,
    lines: bool,
) -> Result<RunObserver, RunnerError> {
    let ir = pipeline.ir().clone();
    if ir.inputs.len() != 1 {
        return Err(RunnerError::Usage(format!(
            "--graph {}: the runner feeds one input, the frame; the graph declares {}",
            graph_path(common)?.display(),
            ir.inputs.len()
        )));
    }
    pipeline.set_rates(!common.no_rates);
    pipeline.set_fusion(!common.no_fusion);
    let mut source: Box<dyn FrameSource + Send> = match common.input.first().map(String::as_str) {
        None => Box::new(sources::synthetic(common.size, common.frames)?),
        input => sources::open(input, common.size, io.stdin)?,
    };
    let ops = crate::library::library(extra);
    let mut failed = Failed::default();
    let mut observer = RunObserver::new(pipeline.static_ir(), args.trace.is_some());
    let labels = match &weights {
        Some(w) => (
            serde_json::Value::Null,
            Some(json!(w
                .iter()
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect::<Map<_, _>>())),
        ),
        None => (json!(ir.modes[mode].name.as_ref()), None),
    };
    // One frame's JSON line — the compiled runs' schema — or the frame's
    // error when it stops the run.
    let mut write = |meta: &Meta,
                     node_ms: Option<serde_json::Value>,
                     held: Option<serde_json::Value>,
                     result: Result<cortex_core::dynamic::DynOutputs, PipelineError>|
     -> Result<(), RunnerError> {
        let index = meta.index;
        let line = match result {
            Ok(out) => {
                let mut outputs = Map::new();
                for name in out.names() {
                    let v = out
                        .value(name)
                        .map_or(serde_json::Value::Null, |v| ops.to_json(v));
                    outputs.insert(name.clone(), v);
                }
                let mut m = Map::new();
                m.insert("frame".into(), json!(index));
                m.insert("timestamp".into(), json!(meta.timestamp));
                m.insert("width".into(), json!(meta.size.0));
                m.insert("height".into(), json!(meta.size.1));
                m.insert("reset".into(), json!(meta.reset));
                m.insert("mode".into(), labels.0.clone());
                if let Some(w) = &labels.1 {
                    m.insert("weights".into(), w.clone());
                }
                m.insert("outputs".into(), serde_json::Value::Object(outputs));
                m.insert("node_ms".into(), node_ms.unwrap_or_default());
                if let Some(held) = held {
                    m.insert("held".into(), held);
                }
                serde_json::Value::Object(m)
            }
            Err(e) if args.keep_going => {
                failed.count(index);
                json!({ "frame": index, "error": e.to_string() })
            }
            Err(source) => {
                return Err(RunnerError::Frame {
                    frame: index,
                    source,
                })
            }
        };
        if !lines {
            return Ok(());
        }
        if let Some(publisher) = &args.publisher {
            crate::broker::publish(publisher, 0, line.to_string());
        }
        writeln!(io.stdout, "{line}").map_err(|source| RunnerError::Io {
            what: "writing results".into(),
            source,
        })
    };
    let mut count = 0u64;
    if common.engine == Engine::Pipelined {
        // The source is read on the driver's thread; its first error, or
        // a frame whose size the options cannot hold in the memory budget
        // (the compiled pipelined run's rule), ends the stream and is
        // reported after the frames before it.
        let mut source_error: Option<RunnerError> = None;
        let limit = common.frames;
        let frames = std::iter::from_fn(|| {
            if limit.is_some_and(|n| count >= n) {
                return None;
            }
            match source.next_frame()? {
                Ok(frame) => {
                    let (h, w, _) = frame.image.dim();
                    if let Err(e) = crate::pipelined::check_memory(common, (w, h)) {
                        source_error = Some(e);
                        return None;
                    }
                    count += 1;
                    let meta = Meta {
                        index: frame.index,
                        timestamp: frame.timestamp,
                        size: (w, h),
                        reset: false,
                    };
                    let input: Vec<Value> = vec![Arc::new(frame.image)];
                    Some((meta, input))
                }
                Err(e) => {
                    source_error = Some(e.into());
                    None
                }
            }
        });
        let mut stopped = None;
        let run = &mut Run::mode(mode);
        pipeline.run_stream_with(run, frames, &common.stream_options(), |f| {
            // Pipelined frames overlap: no node times, as compiled runs.
            let held = crate::sink::held_names(&ir, f.held);
            let result = f.take_result();
            match write(&f.tag, None, held, result) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    stopped = Some(e);
                    ControlFlow::Break(())
                }
            }
        })?;
        if let Some(e) = stopped {
            return Err(e);
        }
        if let Some(e) = source_error {
            return Err(e);
        }
    } else {
        let engine = match common.engine {
            Engine::Parallel => cortex_core::run::Engine::Parallel,
            _ => cortex_core::run::Engine::Sequential,
        };
        let select = match &weights {
            Some(w) => Select::Weights(w),
            None => Select::Mode(mode),
        };
        let has_rates = !cortex_core::rates::hold_slots(&ir).is_empty();
        let mut last_size = None;
        while let Some(frame) = source.next_frame() {
            if common.frames.is_some_and(|n| count >= n) {
                break;
            }
            let frame = frame?;
            count += 1;
            // A new resolution starts over, as compiled runs do: the
            // states hold images of the old size.
            let size = frame.size();
            let reset = last_size.is_some_and(|s| s != size);
            if reset {
                pipeline.reset();
            }
            last_size = Some(size);
            let meta = Meta {
                index: frame.index,
                timestamp: frame.timestamp,
                size,
                reset,
            };
            observer.frame = frame.index;
            let input: [Value; 1] = [Arc::new(frame.image)];
            let mut run = Run::of(select).engine(engine).observed(&mut observer);
            let result = pipeline.run_with_fresh(&mut run, &input);
            let node_ms = Some(observer.node_ms_json());
            let held = if has_rates {
                crate::sink::held_names(&ir, cortex_core::hold::held_mask(pipeline.holds()))
            } else {
                None
            };
            write(&meta, node_ms, held, result)?;
        }
    }
    let Failed { failed, first } = failed;
    match (failed, count) {
        (0, 0) => Err(RunnerError::NoFrames(source.describe())),
        (0, _) => Ok(observer),
        _ => Err(RunnerError::FramesFailed {
            failed,
            frames: count,
            first,
        }),
    }
}

/// What a frame's JSON line says besides its results.
struct Meta {
    index: u64,
    timestamp: Option<f64>,
    size: (usize, usize),
    /// The resolution changed and the pipeline started over.
    reset: bool,
}

/// Frames that failed (with `--keep-going`) and the first of them.
#[derive(Default)]
struct Failed {
    failed: u64,
    first: u64,
}

impl Failed {
    fn count(&mut self, index: u64) {
        if self.failed == 0 {
            self.first = index;
        }
        self.failed += 1;
    }
}

/// The file `--graph` names.
fn graph_path(common: &Common) -> Result<&Path, RunnerError> {
    common
        .graph
        .as_deref()
        .ok_or_else(|| RunnerError::Usage("--graph: no file given".into()))
}

/// The pipeline of the file `--graph` names; a mistake in it is one line
/// per problem, `path:line: what`.
pub(crate) fn build(common: &Common, extra: &Ops) -> Result<DynPipeline, RunnerError> {
    if let Some((name, file)) = &common.built_in {
        return file.build(&crate::library::library(extra)).map_err(|e| {
            let lines: Vec<String> = e
                .problems
                .iter()
                .map(|(_, m)| format!("{name}: {m}"))
                .collect();
            RunnerError::Usage(lines.join("\n"))
        });
    }
    let path = graph_path(common)?;
    let file = load(path)?;
    file.build(&crate::library::library(extra))
        .map_err(|e| problems(path, &e))
}

/// The graph `common` runs: the program's own, or the file `--graph`
/// names.
pub(crate) fn file(common: &Common) -> Result<GraphFile, RunnerError> {
    match &common.built_in {
        Some((_, file)) => Ok(GraphFile::clone(file)),
        None => load(graph_path(common)?),
    }
}

/// The graph file at `path`, read.
pub(crate) fn load(path: &Path) -> Result<GraphFile, RunnerError> {
    match GraphFile::load(path) {
        Ok(file) => Ok(file),
        Err(LoadError::Problems(e)) => Err(problems(path, &e)),
        Err(e) => Err(RunnerError::Usage(format!(
            "--graph {}: {e}",
            path.display()
        ))),
    }
}

/// A graph file's problems, one line each: `path:line: what`.
fn problems(path: &Path, e: &FileError) -> RunnerError {
    let lines: Vec<String> = e
        .problems
        .iter()
        .map(|(line, m)| format!("{}:{line}: {m}", path.display()))
        .collect();
    RunnerError::Usage(lines.join("\n"))
}
