//! `run --graph FILE`: a pipeline described in a JSON file, built at run
//! time over the op library and the program's own ([`App::graph_ops`]), run on
//! the frames of the source in the mode (or with the weights) asked, each
//! frame's outputs written as a JSON line.

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use cortex_core::dynamic::{DynPipeline, GraphFile, LoadError, Ops, Value};
use cortex_core::pipeline::Pipeline;
use cortex_core::PipelineError;
use serde_json::{json, Map};

use crate::app::{App, Io};
use crate::cli::{parse_weights, Common, Engine, RunArgs};
use crate::error::RunnerError;
use crate::sources::{self, FrameSource};

impl<P: Pipeline> App<P> {
    /// Adds ops (and their constants, trigger fields and JSON views) that
    /// a `run --graph` file may call besides L2's.
    pub fn graph_ops(mut self, ops: &Ops) -> Self {
        self.graph_ops.extend(ops);
        self
    }
}

/// Runs the graph file of `args` on the frames `common` selects.
pub(crate) fn run(
    common: &Common,
    args: &RunArgs,
    extra: &Ops,
    io: Io<'_>,
) -> Result<(), RunnerError> {
    let Some(path) = args.graph.as_deref() else {
        return Err(RunnerError::Usage("--graph: no file given".into()));
    };
    let unsupported = [
        (
            common.engine == Engine::Pipelined && common.weights.is_some(),
            "--weights with --engine pipelined",
        ),
        (args.trace.is_some(), "--trace"),
        (args.dump.is_some(), "--dump"),
        (args.encode.is_some(), "--encode"),
    ];
    if let Some((_, flag)) = unsupported.iter().find(|(on, _)| *on) {
        return Err(RunnerError::Usage(format!(
            "--graph runs a mode or weights with JSON lines out; {flag} needs a compiled pipeline"
        )));
    }
    let mut pipeline = build(path, extra)?;
    let ir = pipeline.ir().clone();
    if ir.inputs.len() != 1 {
        return Err(RunnerError::Usage(format!(
            "--graph {}: the runner feeds one input, the frame; the graph declares {}",
            path.display(),
            ir.inputs.len()
        )));
    }
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
    pipeline.set_rates(!common.no_rates);
    let mut source: Box<dyn FrameSource + Send> = match common.input.first().map(String::as_str) {
        None => Box::new(sources::synthetic(common.size, common.frames)?),
        input => sources::open(input, common.size, io.stdin)?,
    };
    let ops = crate::library::library(extra);
    let mut failed = Failed::default();
    // One frame's JSON line, or the frame's error when it stops the run.
    let mut write = |index: u64,
                     ms: f64,
                     result: Result<cortex_core::dynamic::DynOutputs, PipelineError>|
     -> Result<(), RunnerError> {
        let line = match result {
            Ok(out) => {
                let mut outputs = Map::new();
                for name in out.names() {
                    let v = out
                        .value(name)
                        .map_or(serde_json::Value::Null, |v| ops.to_json(v));
                    outputs.insert(name.clone(), v);
                }
                json!({ "frame": index, "ms": ms, "outputs": outputs })
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
                    let input: Vec<Value> = vec![Arc::new(frame.image)];
                    Some(((frame.index, Instant::now()), input))
                }
                Err(e) => {
                    source_error = Some(e.into());
                    None
                }
            }
        });
        let mut stopped = None;
        pipeline.run_stream_tagged(mode, frames, &common.stream_options(), |f| {
            let (index, started) = f.tag;
            let ms = started.elapsed().as_secs_f64() * 1e3;
            match write(index, ms, f.result) {
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
        let parallel = common.engine == Engine::Parallel;
        while let Some(frame) = source.next_frame() {
            if common.frames.is_some_and(|n| count >= n) {
                break;
            }
            let frame = frame?;
            count += 1;
            let input: [Value; 1] = [Arc::new(frame.image)];
            let started = Instant::now();
            let result = match (&weights, parallel) {
                (Some(w), false) => pipeline.run_weights(w, &input),
                (Some(w), true) => pipeline.run_weights_parallel(w, &input),
                (None, false) => pipeline.run(mode, &input),
                (None, true) => pipeline.run_parallel(mode, &input),
            };
            write(frame.index, started.elapsed().as_secs_f64() * 1e3, result)?;
        }
    }
    let Failed { failed, first } = failed;
    match (failed, count) {
        (0, 0) => Err(RunnerError::NoFrames(source.describe())),
        (0, _) => Ok(()),
        _ => Err(RunnerError::FramesFailed {
            failed,
            frames: count,
            first,
        }),
    }
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

/// The pipeline of the file at `path`; a mistake in it is one line per
/// problem, `path:line: what`.
fn build(path: &Path, extra: &Ops) -> Result<DynPipeline, RunnerError> {
    let file = match GraphFile::load(path) {
        Ok(file) => Ok(file),
        Err(LoadError::Problems(e)) => Err(e),
        Err(e) => {
            return Err(RunnerError::Usage(format!(
                "--graph {}: {e}",
                path.display()
            )))
        }
    };
    file.and_then(|file| file.build(&crate::library::library(extra)))
        .map_err(|e| {
            let lines: Vec<String> = e
                .problems
                .iter()
                .map(|(line, m)| format!("{}:{line}: {m}", path.display()))
                .collect();
            RunnerError::Usage(lines.join("\n"))
        })
}
