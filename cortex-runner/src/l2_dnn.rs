//! `cortex --model text=PATH`: L2 with the DNN text map — L2's graph with
//! its text node drawn from the boxes of the text detector in `PATH`
//! ([`cortex_models::l2::l2_dnn_graph`], a substitution of L2's graph) —
//! run as a `--graph` file runs: on every engine, `run` writing JSON lines
//! with every output through its op's view (the detector's boxes as
//! `boxes`), `graph`, `plan` and `profile` on it. The detector runs at
//! `--size` (640x480 when not given); frames of another size are resized
//! to it. The model is loaded once, when the graph is built.

use std::ffi::OsString;

use cortex_core::dynamic::GraphFile;
use cortex_vision::l2::L2;

use crate::error::RunnerError;
use crate::model_arg::ModelArg;
use crate::App;

/// The graph for the models given on the command line, and the name its
/// messages go by (`--model text=PATH`).
///
/// # Errors
/// [`RunnerError::Usage`] (exit 2): a model name the pipeline does not
/// declare, or the same name twice. A file that does not load as the text
/// detector is one line when the graph is built, before any frame.
pub fn graph(
    models: &[ModelArg],
    size: (usize, usize),
) -> Result<(String, GraphFile), RunnerError> {
    let mut text = None;
    for m in models {
        match m.name.as_str() {
            "text" if text.is_none() => text = Some(&m.path),
            "text" => {
                return Err(RunnerError::Usage(
                    "--model: `text` given twice".to_string(),
                ))
            }
            other => {
                return Err(RunnerError::Usage(format!(
                    "--model {other}=…: this pipeline takes one model, `text` (its text detector)"
                )))
            }
        }
    }
    let path =
        text.ok_or_else(|| RunnerError::Usage("--model: no `text=PATH` given".to_string()))?;
    let name = format!("--model text={}", path.display());
    let file = cortex_models::l2::l2_dnn_graph(path, size.0, size.1)
        .map_err(|e| RunnerError::Usage(format!("{name}: {e}")))?;
    Ok((name, file))
}

/// The program for the models given on the command line: L2's, running
/// [`graph`] in place of the compiled L2.
///
/// # Errors
/// As [`graph`].
pub fn app(models: &[ModelArg], size: (usize, usize)) -> Result<App<L2>, RunnerError> {
    let (name, file) = graph(models, size)?;
    Ok(crate::l2::app()
        .about("L2 with a DNN text map (--model text=PATH.onnx): blur, scene cuts, text boxes, ROI score and crop, as JSON lines")
        .graph_file(name, file))
}

/// The frame size the command line asks for (`--size WxH`, else the
/// runner's default), to run the detector at.
pub(crate) fn size_arg(args: &[OsString]) -> (usize, usize) {
    let mut it = args.iter().filter_map(|a| a.to_str());
    while let Some(a) = it.next() {
        let v = match a.strip_prefix("--size") {
            Some("") => it.next(),
            Some(v) => v.strip_prefix('='),
            None => None,
        };
        if let Some((w, h)) = v.and_then(|v| v.split_once('x')) {
            if let (Ok(w), Ok(h)) = (w.parse(), h.parse()) {
                return (w, h);
            }
        }
    }
    // The synthetic clip's size when `--size` is not given.
    (640, 480)
}
