//! `graph`, `plan` and `profile` on a graph file (`--graph FILE`), as on
//! the compiled pipeline: the listing, DOT or Mermaid with a mode's plan,
//! the file written back out (`--format json`), what a mode eliminates
//! priced with times measured on the full graph, and per-node times.

use cortex_core::dynamic::{DynPipeline, Ops};
use cortex_core::model::spec::ModeSpec;
use cortex_core::viz::{dce_diff, fusion_section};

use crate::app::Io;
use crate::cli::{Common, GraphFormat, RunArgs};
use crate::error::RunnerError;
use crate::sink::write_out;

/// The mode added to a file's graph to time every node: every weight 1,
/// no rate, so its plan runs the whole graph.
const FULL_MODE: &str = "__every_node";

/// `graph --graph FILE`.
pub(crate) fn graph(
    common: &Common,
    format: GraphFormat,
    extra: &Ops,
    io: Io<'_>,
) -> Result<(), RunnerError> {
    let pipeline = crate::graph_file::build(common, extra)?;
    let plan = match common.mode.as_deref() {
        Some(_) => {
            let (mode, _) = crate::graph_file::selection(common, &pipeline)?;
            Some(&pipeline.program().modes[mode].plan)
        }
        None => None,
    };
    let text = crate::dispatch::draw(
        pipeline.ir(),
        plan,
        format,
        &vec![None; pipeline.ir().nodes.len()],
        &crate::library::library(extra),
    )?;
    write_out(io.stdout, &text)
}

/// `profile --graph FILE`: per-node times over the run.
pub(crate) fn profile(common: &Common, extra: &Ops, io: Io<'_>) -> Result<(), RunnerError> {
    let mut pipeline = crate::graph_file::build(common, extra)?;
    let (mode, weights) = crate::graph_file::selection(common, &pipeline)?;
    let mut silent = std::io::sink();
    let (io, stdout) = io.with_stdout(&mut silent);
    let observer = silent_run(common, &mut pipeline, mode, weights, extra, io)?;
    write_out(stdout, &observer.profiler.report())
}

/// `plan --graph FILE`: what `--mode` eliminates, priced with times
/// measured on a short run of the full graph (`--frames`, default 10).
pub(crate) fn plan(common: &Common, extra: &Ops, io: Io<'_>) -> Result<(), RunnerError> {
    if common.weights.is_some() {
        return Err(RunnerError::Usage(
            "plan --graph prices a declared mode (--mode); --weights needs a compiled pipeline"
                .into(),
        ));
    }
    let target = crate::graph_file::build(common, extra)?;
    let (mode, _) = crate::graph_file::selection(common, &target)?;
    let plan = target.program().modes[mode].plan.clone();
    // The same graph with one more mode that runs every node, to time them.
    let mut file = crate::graph_file::file(common)?;
    let keys: Vec<String> = target
        .ir()
        .weight_keys
        .iter()
        .map(|k| k.to_string())
        .collect();
    file.spec.modes.push(ModeSpec {
        name: FULL_MODE.into(),
        weights: keys.into_iter().map(|k| (k, 1.0)).collect(),
        rates: Vec::new(),
    });
    let mut full = file
        .build(&crate::library::library(extra))
        .map_err(|e| RunnerError::Usage(e.to_string()))?;
    let every = full.mode(FULL_MODE).unwrap_or(0);
    let mut common = common.clone();
    common.frames = Some(common.frames.unwrap_or(10));
    let mut silent = std::io::sink();
    let (io, stdout) = io.with_stdout(&mut silent);
    let observer = silent_run(&common, &mut full, every, None, extra, io)?;
    let ir = target.ir();
    let mut text = dce_diff(ir, &plan, &observer.profiler);
    if ir.nodes.iter().any(|n| n.strip.is_some()) {
        text.push('\n');
        text.push_str(&fusion_section(ir, &plan));
    }
    write_out(stdout, &text)
}

/// Runs the frames `common` selects with no results written.
fn silent_run(
    common: &Common,
    pipeline: &mut DynPipeline,
    mode: usize,
    weights: Option<cortex_core::weights::Weights>,
    extra: &Ops,
    io: Io<'_>,
) -> Result<crate::observer::RunObserver, RunnerError> {
    let args = RunArgs::default();
    crate::graph_file::frames(common, &args, pipeline, mode, weights, extra, io, false)
}
