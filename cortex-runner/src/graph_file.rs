//! `--graph FILE`: a pipeline described in a JSON file, built at run time
//! over the op library and the program's own ([`App::graph_ops`]), and run
//! as the program's pipeline is — the same commands, engines, frame loops
//! and JSON lines — each output shown through its op's view.

use std::path::Path;
use std::sync::Arc;

use cortex_core::dynamic::{DynOutputs, DynPipeline, FileError, GraphFile, LoadError, Ops, Value};
use cortex_core::ir::GraphIr;
use cortex_core::pipeline::Pipeline;
use cortex_vision::ops::qp_map::QpMap;
use cortex_vision::ops::roi_regions::RoiRegions;
use cortex_vision::ops::{GrayImage, RgbFrame, ScoreMap};

use crate::app::{AdapterError, App, FrameAdapter};
use crate::cli::Common;
use crate::dump::{DumpError, DumpSink};
use crate::error::RunnerError;
use crate::pipelined::{stream_fn, stream_with};
use crate::reads::Reader;
use crate::record::Record;
use crate::sources::Frame;
use crate::streams::Staged;

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
    /// shown through its op's view, the frame the graph's one input, on
    /// every engine and several inputs at once; `--dump` draws its outputs
    /// that are pictures, `--encode` attaches its first regions (`--roi
    /// regions`) or quantiser-offset map (`--roi map`) output.
    pub(crate) fn graph_app(self, common: &Common) -> Result<App<DynPipeline>, RunnerError> {
        let pipeline = build(common, &self.graph_ops)?;
        let ir = pipeline.graph();
        let what = match &common.built_in {
            Some((name, _)) => name.clone(),
            None => format!("--graph {}", graph_path(common)?.display()),
        };
        if ir.inputs.len() != 1 {
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
        let regions = first_of(ir, "RoiRegions");
        let qp_map = first_of(ir, "QpMap");
        let pictures: Vec<(String, Picture)> = ir
            .outputs
            .iter()
            .filter_map(|o| Some((ir.node(o.node).name.to_string(), Picture::of(&o.ty)?)))
            .collect();
        let make = Box::new(move || pipeline.fresh());
        let mut app = App::of(self.name, make, ir, record, ImageInput);
        app.graph_label = Some(what);
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
        let mut app = app.with_engines(
            stream,
            Some(crate::streams::session::<DynPipeline, GraphFrame>),
        );
        if let Some(name) = regions {
            app = app
                .reads(Reader::Regions, &[&name])
                .encode_regions(move |out: &DynOutputs| {
                    out.get::<RoiRegions>(&name)
                        .map(|r| r.regions.clone())
                        .unwrap_or_default()
                });
        }
        if let Some(name) = qp_map {
            app = app
                .reads(Reader::QpMap, &[&name])
                .encode_qp_map(move |out: &DynOutputs| {
                    // Computed on every frame that reads it: a missing
                    // value (none yet) is the neutral map.
                    static NONE: std::sync::OnceLock<QpMap> = std::sync::OnceLock::new();
                    out.get::<QpMap>(&name)
                        .unwrap_or_else(|| NONE.get_or_init(QpMap::default))
                });
        }
        if !pictures.is_empty() {
            let names: Vec<&str> = pictures.iter().map(|(n, _)| n.as_str()).collect();
            app = app.reads(Reader::Dump, &names);
            app = app.dump(move |sink, _frame, out| dump_pictures(sink, out, &pictures));
        }
        Ok(app)
    }
}

/// The name of `ir`'s first output of type `ty`.
fn first_of(ir: &GraphIr, ty: &str) -> Option<String> {
    ir.outputs
        .iter()
        .find(|o| &*o.ty == ty)
        .map(|o| ir.node(o.node).name.to_string())
}

/// How `--dump` draws an output of a run-time graph, by its type.
#[derive(Debug, Clone, Copy)]
enum Picture {
    /// An image, as it is.
    Rgb,
    /// A grey image, grey.
    Gray,
    /// A score map, as a heat map.
    Heat,
}

impl Picture {
    /// The picture of an output of type `ty`, if it is one.
    fn of(ty: &str) -> Option<Picture> {
        match ty {
            "RgbFrame" => Some(Picture::Rgb),
            "GrayImage" => Some(Picture::Gray),
            "ScoreMap" => Some(Picture::Heat),
            _ => None,
        }
    }
}

/// `--dump`: each output of `pictures` a frame has, as `<frame>_<name>.png`.
fn dump_pictures(
    sink: &DumpSink<'_>,
    out: &DynOutputs,
    pictures: &[(String, Picture)],
) -> Result<(), DumpError> {
    for (name, picture) in pictures {
        match picture {
            Picture::Rgb => {
                if let Some(image) = out.get::<RgbFrame>(name) {
                    sink.save_rgb(name, image)?;
                }
            }
            Picture::Gray => {
                if let Some(gray) = out.get::<GrayImage>(name) {
                    let (h, w) = gray.dim();
                    let rgb = RgbFrame::from_shape_fn((h, w, 3), |(y, x, _)| gray[(y, x)]);
                    sink.save_rgb(name, &rgb)?;
                }
            }
            Picture::Heat => {
                if let Some(map) = out.get::<ScoreMap>(name) {
                    sink.save_heatmap(name, map)?;
                }
            }
        }
    }
    Ok(())
}

/// A frame of one of several inputs as its stream holds it: its image
/// moved into the graph's one input value, put back when its results come.
pub(crate) struct GraphFrame {
    frame: Frame,
    size: (usize, usize),
    inputs: [Value; 1],
}

impl Staged<DynPipeline> for GraphFrame {
    fn stage(mut frame: Frame) -> Self {
        let size = frame.size();
        let image = std::mem::replace(&mut frame.image, RgbFrame::zeros((0, 0, 3)));
        GraphFrame {
            frame,
            size,
            inputs: [Arc::new(image)],
        }
    }
    fn inputs(&self) -> &[Value] {
        &self.inputs
    }
    fn size(&self) -> (usize, usize) {
        self.size
    }
    fn unstage(&mut self) -> Frame {
        let value = std::mem::replace(&mut self.inputs[0], Arc::new(()) as Value);
        let mut frame = std::mem::replace(&mut self.frame, crate::streams::taken());
        if let Ok(image) = take_image(value) {
            frame.image = image;
        }
        frame
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
