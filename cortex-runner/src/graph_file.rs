//! `--graph FILE`: a pipeline described in a JSON file, built at run time
//! over the op library and the program's own ([`App::graph_ops`]), and run
//! as the program's pipeline is — the same commands, engines, frame loops
//! and JSON lines — each output shown through its op's view.

use std::path::Path;
use std::sync::Arc;

use cortex_core::dynamic::{DynOutputs, DynPipeline, FileError, GraphFile, LoadError, Ops, Value};
use cortex_core::pipeline::Pipeline;
use cortex_vision::ops::roi_regions::RoiRegions;
use cortex_vision::ops::RgbFrame;

use crate::app::{AdapterError, App, FrameAdapter};
use crate::cli::Common;
use crate::error::RunnerError;
use crate::pipelined::{stream_fn, stream_with};
use crate::record::Record;
use crate::sources::Frame;

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

    /// This program with the graph `common` names (`--graph FILE`, or the
    /// program's own graph file) in place of its pipeline: each output
    /// shown through its op's view, the frame the graph's one input,
    /// every engine but several inputs at once.
    pub(crate) fn graph_app(self, common: &Common) -> Result<App<DynPipeline>, RunnerError> {
        let pipeline = build(common, &self.graph_ops)?;
        let ir = pipeline.graph();
        if ir.inputs.len() != 1 {
            let what = match &common.built_in {
                Some((name, _)) => name.clone(),
                None => format!("--graph {}", graph_path(common)?.display()),
            };
            return Err(RunnerError::Usage(format!(
                "{what}: the runner feeds one input, the frame; the graph declares {}",
                ir.inputs.len()
            )));
        }
        let ops = crate::library::library(&self.graph_ops);
        let record = move |out: &DynOutputs| -> Record {
            let mut record = Record::new();
            for name in out.names() {
                let v = out
                    .value(name)
                    .map_or(serde_json::Value::Null, |v| ops.to_json(v));
                record.push(name.clone(), v);
            }
            record
        };
        // `--encode --roi regions` attaches the regions of the graph's
        // first output of the library's regions type.
        let regions = ir
            .outputs
            .iter()
            .find(|o| &*o.ty == "RoiRegions")
            .map(|o| ir.node(o.node).name.to_string());
        let make = Box::new(move || pipeline.fresh());
        let mut app = App::of(self.name, make, ir, record, ImageInput);
        app.about = self.about;
        app.graph_ops = self.graph_ops;
        app.default_frames = self.default_frames;
        app.notes = self.notes;
        app.model_help = self.model_help;
        // The pipelined engine moves the frame's image into the stream and
        // hands it back with the results.
        let split = |mut frame: Frame| -> Result<(Vec<Value>, Frame), AdapterError> {
            let image = std::mem::replace(&mut frame.image, RgbFrame::zeros((0, 0, 3)));
            Ok((vec![Arc::new(image) as Value], frame))
        };
        let join = |inputs: &mut Vec<Value>, frame: &mut Frame| {
            if let Some(Ok(image)) = inputs.pop().map(take_image) {
                frame.image = image;
            }
        };
        let stream = stream_fn::<DynPipeline, _, _>(split, join, stream_with::<DynPipeline>);
        let app = app.with_engines(stream, None);
        Ok(match regions {
            Some(name) => app.encode_regions(move |out: &DynOutputs| {
                out.get::<RoiRegions>(&name)
                    .map(|r| r.regions.clone())
                    .unwrap_or_default()
            }),
            None => app,
        })
    }
}

/// A run-time graph's one input, the frame's image, as a value: moved
/// out of the frame for the run and back into it afterwards, so a frame
/// costs no copy (the runner keeps the frame, for `--dump` and `--encode`).
#[derive(Default)]
struct ImageInput;

impl FrameAdapter<DynPipeline> for ImageInput {
    fn with_inputs(
        &mut self,
        frame: &mut Frame,
        run: &mut dyn FnMut(&[Value]),
    ) -> Result<(), AdapterError> {
        // An empty image allocates nothing.
        let image = std::mem::replace(&mut frame.image, RgbFrame::zeros((0, 0, 3)));
        let inputs: [Value; 1] = [Arc::new(image)];
        run(&inputs);
        let [image] = inputs;
        frame.image = take_image(image)?;
        Ok(())
    }
}

/// The image a value made of a frame's image holds: itself when nothing
/// else holds it any more, else a copy (a graph that keeps its input, as
/// an output or as state, still shares it).
fn take_image(value: Value) -> Result<RgbFrame, AdapterError> {
    let image = value
        .downcast::<RgbFrame>()
        .map_err(|_| "the frame's value is no longer an image")?;
    Ok(Arc::try_unwrap(image).unwrap_or_else(|shared| (*shared).clone()))
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
