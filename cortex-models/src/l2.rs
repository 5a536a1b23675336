//! L2 with the DNN text map: L2's graph with its `text` node drawn from
//! PP-OCR's detector's boxes instead of MSER — a substitution of L2's
//! graph, not a copy. `examples/graphs/l2_dnn.json` extends `l2.json`
//! (the compiled `L2` written out): it replaces `text` with
//! `model.boxes_map`, adds the detector as a node of its own (`boxes`, an
//! output too) and holds it at a rate in `BALANCED_AT_RATE` and
//! `POWER_SAVE`. The map keeps the MSER map's contract, so the fusion, the
//! regions, the QP map and the encoder are L2's own nodes, unchanged.
//! [`l2_dnn_graph`] builds it from the compiled L2 with a detector file of
//! the caller's; the runner's `--model text=PATH` runs it on every engine.

use std::path::Path;

use cortex_core::dynamic::{FileError, GraphFile, Ops};
use cortex_vision::library::vision_ops;

/// `examples/graphs/l2_dnn.json`: what L2 with the DNN text map changes in
/// L2's graph. The crate holds its own copy (`src/l2_dnn.json`, so that the
/// packaged crate builds without the repository's `examples/`); a test
/// holds the two equal byte for byte.
pub const L2_DNN_FILE: &str = include_str!("l2_dnn.json");

/// The ops L2 with the DNN text map calls: the vision library and the
/// model ops.
pub fn l2_dnn_ops() -> Ops {
    let mut ops = vision_ops();
    crate::library::register_model_ops(&mut ops);
    ops
}

/// L2 with the DNN text map, the detector read from `detector` (a relative
/// path from the working directory) and run at `width`x`height` (each
/// rounded up to a multiple of 32): the compiled L2's graph extended by
/// [`L2_DNN_FILE`], its `boxes` node replaced by one naming this file.
/// Build it over [`l2_dnn_ops`]; the model is loaded then.
///
/// # Errors
/// [`FileError`] when the extension does not apply (a bug, tested) — the
/// model file is read when the graph is built.
pub fn l2_dnn_graph(detector: &Path, width: usize, height: usize) -> Result<GraphFile, FileError> {
    let ops = l2_dnn_ops();
    let l2 = GraphFile::from_ir(cortex_vision::l2::L2::ir(), &ops).map_err(|e| FileError {
        problems: vec![(1, e.to_string())],
    })?;
    let dnn = GraphFile::parse_extending(L2_DNN_FILE, &l2)?;
    let model = serde_json::json!({
        "extends": "l2_dnn.json",
        "replace": { "boxes": {
            "op": "model.text_boxes",
            "inputs": ["frame"],
            "params": { "path": detector.to_string_lossy(), "width": width, "height": height },
        } },
    });
    GraphFile::parse_extending(&model.to_string(), &dnn)
}
