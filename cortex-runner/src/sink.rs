//! Where each frame's results go, the same for every engine: a table or
//! JSON lines on stdout, pictures (`--dump`), and the trace file.

use std::io::Write;
use std::path::Path;

use cortex_core::pipeline::{Pipeline, PipelineMode};
use serde_json::{json, Map, Value};

use crate::app::{DumpFn, RecordFn, RegionsFn};
use crate::cli::Selection;
use crate::dump::DumpSink;
use crate::encode::Encoder;
use crate::error::RunnerError;
use crate::record;
use crate::sources::Frame;

/// What a run loop does with each frame's results.
pub(crate) enum Sink {
    /// Nothing (plan, profile).
    Silent,
    /// A table on stdout; whether its header was printed.
    Table(record::Table, bool),
    /// JSON lines on stdout.
    Json,
}

/// The labels every JSON line carries.
pub(crate) struct Labels {
    mode: Value,
    weights: Option<Value>,
}

impl Labels {
    pub(crate) fn of<M: PipelineMode>(selection: &Selection<M>) -> Self {
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
pub(crate) struct Shown<'f> {
    pub(crate) frame: &'f Frame,
    /// The previous frame's size when this one changed it (state reset).
    pub(crate) resized_from: Option<(usize, usize)>,
    /// Frames the overflow policy dropped just before this one.
    pub(crate) dropped_before: u64,
    /// Per-node times (not on the pipelined engine).
    pub(crate) node_ms: Option<Value>,
}

/// Where each frame's results go, the same for every engine.
pub(crate) struct FrameOut<'a, 'w, P: Pipeline> {
    pub(crate) sink: &'a mut Sink,
    pub(crate) labels: &'a Labels,
    pub(crate) record: &'a RecordFn<P>,
    pub(crate) dump: Option<(&'a Path, &'a DumpFn<P>)>,
    pub(crate) dir_made: bool,
    /// `--encode`, and the regions it attaches (`None`: `--roi off`).
    pub(crate) encode: Option<(&'a mut Encoder, Option<&'a RegionsFn<P>>)>,
    pub(crate) stdout: &'w mut dyn Write,
    pub(crate) bar: &'a indicatif::ProgressBar,
}

impl<P: Pipeline> FrameOut<'_, '_, P> {
    pub(crate) fn frame(
        &mut self,
        shown: &Shown<'_>,
        outputs: &P::Outputs,
    ) -> Result<(), RunnerError> {
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
        if let Some((encoder, regions)) = &mut self.encode {
            let regions = regions.map(|f| f(outputs)).unwrap_or_default();
            encoder.frame(frame, &regions)?;
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

/// Writes the Chrome trace to `path`.
pub(crate) fn write_trace(path: &Path, trace: &Value) -> Result<(), RunnerError> {
    let io = |source| RunnerError::Io {
        what: path.display().to_string(),
        source,
    };
    let file = std::fs::File::create(path).map_err(io)?;
    let mut w = std::io::BufWriter::new(file);
    serde_json::to_writer(&mut w, trace).map_err(|e| io(e.into()))?;
    w.flush().map_err(io)
}

/// Writes `text` to stdout in one piece, flushed.
pub(crate) fn write_out(out: &mut dyn Write, text: &str) -> Result<(), RunnerError> {
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|source| RunnerError::Io {
            what: "stdout".into(),
            source,
        })
}
