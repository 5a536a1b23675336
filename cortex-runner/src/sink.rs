//! Where each frame's results go, the same for every engine: a table or
//! JSON lines on stdout, pictures (`--dump`), and the trace file.

use std::io::Write;
use std::path::{Path, PathBuf};

use cortex_core::pipeline::Pipeline;
use cortex_core::runtime::dispatch::Choice;
use cortex_vision::ops::qp_map::QpMap;
use cortex_vision::ops::roi_regions::Region;
use serde_json::{json, Map, Value};

use crate::broker::{publish, Publisher};
use crate::dump::{DumpError, DumpSink};
use crate::encode::{Encoder, FrameRoi};
use crate::error::RunnerError;
use crate::record::{self, Record};
use crate::sources::Frame;

/// Which outputs a frame's results show (`App::new`).
pub(crate) type RecordFn<P> = Box<dyn Fn(&<P as Pipeline>::Outputs) -> Record>;
/// How `run --dump` draws a frame's results (`App::dump`).
pub(crate) type DumpFn<P> =
    Box<dyn Fn(&DumpSink<'_>, &Frame, &<P as Pipeline>::Outputs) -> Result<(), DumpError>>;

/// The regions of interest `run --encode` attaches to a frame
/// (`App::encode_regions`).
pub(crate) type RegionsFn<P> = Box<dyn Fn(&<P as Pipeline>::Outputs) -> Vec<Region>>;

/// The quantiser-offset map `run --encode --roi map` attaches to a frame
/// (`App::encode_qp_map`).
pub(crate) type QpMapFn<P> = Box<dyn for<'o> Fn(&'o <P as Pipeline>::Outputs) -> &'o QpMap>;

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
    /// The labels of `choice` of `pipeline`'s: the mode's name, or the
    /// weights chosen.
    pub(crate) fn of<P: Pipeline>(pipeline: &P, choice: &Choice<P::Mode>) -> Self {
        let mode = choice.mode();
        Labels {
            mode: mode
                .and_then(|m| pipeline.mode_name(m))
                .map_or(Value::Null, Value::from),
            weights: mode.is_none().then(|| {
                Value::Object(
                    choice
                        .weights(pipeline)
                        .into_iter()
                        .flat_map(|w| w.iter())
                        .map(|(k, v)| (k.to_string(), json!(v)))
                        .collect(),
                )
            }),
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
    /// For a pipeline with rated nodes: the nodes whose values this frame
    /// read from an earlier frame.
    pub(crate) held: Option<Value>,
    /// The frame's stream when several inputs run at once.
    pub(crate) stream: Option<u32>,
}

/// The rated nodes whose held values the pipeline's last frame read, as
/// JSON names; `None` for a pipeline without rates.
pub(crate) fn held_json<P: Pipeline>(pipeline: &P) -> Option<Value> {
    held_names(
        pipeline.graph(),
        cortex_core::hold::held_mask(pipeline.holds()),
    )
}

/// The rated nodes of `ir` whose holds are set in `mask` (bit `i`: hold `i`
/// was read), as JSON names; `None` for a graph without rates.
pub(crate) fn held_names(ir: &cortex_core::ir::GraphIr, mask: u64) -> Option<Value> {
    let slots = cortex_core::rates::hold_slots(ir);
    (!slots.is_empty()).then(|| {
        slots
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1u64 << (*i).min(63)) != 0)
            .map(|(_, &id)| json!(cortex_core::tools::format::node_name(ir, id)))
            .collect()
    })
}

/// Where `--encode` takes a frame's side data from.
pub(crate) enum RoiFrom<'a, P: Pipeline> {
    /// `--roi off`, or a program without it.
    Nothing,
    /// `--roi regions`.
    Regions(&'a RegionsFn<P>),
    /// `--roi map`.
    Map(&'a QpMapFn<P>),
}

/// Where each frame's results go, the same for every engine.
pub(crate) struct FrameOut<'a, 'w, P: Pipeline> {
    pub(crate) sink: &'a mut Sink,
    pub(crate) labels: &'a Labels,
    pub(crate) record: &'a RecordFn<P>,
    pub(crate) dump: Option<(&'a Path, &'a DumpFn<P>)>,
    pub(crate) dir_made: bool,
    /// `--encode`, and what it attaches.
    pub(crate) encode: Option<(&'a mut Encoder, RoiFrom<'a, P>)>,
    pub(crate) stdout: &'w mut dyn Write,
    pub(crate) bar: &'a indicatif::ProgressBar,
    /// `--publish`: each frame's JSON line to the broker as well.
    pub(crate) publish: Option<&'a Publisher>,
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
        let mut json_line: Option<String> = None;
        match &mut *self.sink {
            Sink::Silent => {}
            Sink::Table(table, started) => {
                if frame.missed_before > 0 {
                    let n = frame.missed_before;
                    let s = if n == 1 { "" } else { "s" };
                    lines.push_str(&format!("# {n} frame{s} missed (input away)\n"));
                }
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
                let columns = rec.columns();
                let mut names = vec!["frame", "time"];
                names.extend(columns.iter().map(|(k, _)| *k));
                let mut cells = Vec::new();
                if let Some(stream) = shown.stream {
                    names.insert(0, "stream");
                    cells.push(stream.to_string());
                }
                cells.extend([
                    frame.index.to_string(),
                    frame
                        .timestamp
                        .map_or_else(|| "-".into(), |t| format!("{t:.3}")),
                ]);
                cells.extend(columns.iter().map(|(_, v)| record::cell(v)));
                if !*started {
                    lines.push_str(&table.header(&cells, &names));
                    lines.push('\n');
                    *started = true;
                }
                lines.push_str(&table.row(&cells));
                lines.push('\n');
            }
            Sink::Json => {
                json_line.get_or_insert_with(|| self.json(shown, &rec));
                if let Some(line) = &json_line {
                    lines.push_str(line);
                    lines.push('\n');
                }
            }
        }
        if let Some(publisher) = self.publish {
            // The very line `--json` prints, one message per frame.
            let line = json_line.unwrap_or_else(|| self.json(shown, &rec));
            publish(publisher, shown.stream.unwrap_or(0), line);
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
        if let Some((encoder, from)) = &mut self.encode {
            match from {
                RoiFrom::Nothing => encoder.frame(frame, FrameRoi::Nothing)?,
                RoiFrom::Regions(f) => encoder.frame(frame, FrameRoi::Regions(&f(outputs)))?,
                RoiFrom::Map(f) => encoder.frame(frame, FrameRoi::Map(f(outputs)))?,
            }
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

impl<P: Pipeline> FrameOut<'_, '_, P> {
    /// A frame's JSON line (without its newline): what `--json` prints and
    /// `--publish` sends.
    fn json(&self, shown: &Shown<'_>, rec: &Record) -> String {
        let frame = shown.frame;
        let size = frame.size();
        let mut m = Map::new();
        if let Some(stream) = shown.stream {
            m.insert("stream".into(), json!(stream));
        }
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
        if frame.missed_before > 0 {
            m.insert("missed_before".into(), json!(frame.missed_before));
        }
        m.insert("outputs".into(), rec.to_json());
        m.insert(
            "node_ms".into(),
            shown.node_ms.clone().unwrap_or(Value::Null),
        );
        if let Some(held) = &shown.held {
            m.insert("held".into(), held.clone());
        }
        Value::Object(m).to_string()
    }

    /// A frame skipped by `--keep-going`, in the output itself: a `# frame
    /// N: failed: …` line in the table, a `{"frame": N, "error": …}` line
    /// in JSON, so a reader of either sees which frames are missing and why.
    pub(crate) fn failed(&mut self, frame: &Frame, error: &RunnerError) -> Result<(), RunnerError> {
        let line = match &*self.sink {
            Sink::Silent => String::new(),
            Sink::Table(..) => format!("# frame {}: failed: {error}\n", frame.index),
            Sink::Json => {
                let mut m = Map::new();
                m.insert("frame".into(), json!(frame.index));
                m.insert("timestamp".into(), json!(frame.timestamp));
                m.insert("mode".into(), self.labels.mode.clone());
                m.insert("error".into(), json!(error.to_string()));
                format!("{}\n", Value::Object(m))
            }
        };
        if !line.is_empty() {
            let stdout = &mut *self.stdout;
            self.bar.suspend(|| write_out(stdout, &line))?;
        }
        self.bar.inc(1);
        Ok(())
    }
}

/// The `--trace` file, opened before the first frame so that a path that
/// cannot be written is refused before any work is done (rather than after
/// the last frame, losing the trace). When the run ends without writing a
/// trace, a file this opening created is removed again.
pub(crate) struct TraceFile {
    path: PathBuf,
    file: Option<std::fs::File>,
    created: bool,
}

impl TraceFile {
    /// Opens (or creates) `path` for writing without truncating it yet.
    ///
    /// # Errors
    /// [`RunnerError::Usage`] when `path` cannot be written (no such
    /// folder, no permission) or is not a regular file (a folder, a FIFO, a
    /// device: opening a FIFO for writing would wait for a reader).
    pub(crate) fn open(path: &Path) -> Result<TraceFile, RunnerError> {
        let refuse = |why: String| {
            RunnerError::Usage(format!(
                "--trace {}: cannot write there ({why})",
                path.display()
            ))
        };
        let existed = match std::fs::metadata(path) {
            Ok(m) if m.is_file() => true,
            Ok(m) if m.is_dir() => return Err(refuse("a folder".into())),
            Ok(_) => return Err(refuse("not a regular file".into())),
            Err(_) => false,
        };
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| refuse(e.to_string()))?;
        Ok(TraceFile {
            path: path.to_path_buf(),
            file: Some(file),
            created: !existed,
        })
    }

    /// Replaces the file's content with `trace`.
    pub(crate) fn write(mut self, trace: &Value) -> Result<(), RunnerError> {
        let io = |source| RunnerError::Io {
            what: self.path.display().to_string(),
            source,
        };
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        file.set_len(0).map_err(io)?;
        let mut w = std::io::BufWriter::new(file);
        serde_json::to_writer(&mut w, trace).map_err(|e| io(e.into()))?;
        w.flush().map_err(io)
    }
}

impl Drop for TraceFile {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            drop(file);
            if self.created {
                // Best effort: the run's own error is what gets reported.
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
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
