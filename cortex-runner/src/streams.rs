//! Several `--input`s at once: each input is a stream with its own
//! pipeline on one shared worker pool ([`StreamPool`]), its frames read on
//! the pool when its turn comes. Results come back to the calling thread
//! through a bounded channel and are shown as in a single run, tagged with
//! their stream; each stream is summed up on its own line.

use std::io::Write;
use std::sync::mpsc;
use std::time::Instant;

use cortex_core::error::PipelineError;
use cortex_core::pipeline::Pipeline;
use cortex_core::streams::{StreamEnd, StreamPool, StreamStats};
use cortex_vision::ops::RgbFrame;

use crate::app::{App, Io};
use crate::cli::{Cli, Command, Common, Engine, RunArgs, Selection};
use crate::error::RunnerError;
use crate::sink::{write_out, FrameOut, Labels, Shown, Sink, TraceFile};
use crate::sources::{self, Frame, FrameSource};
use crate::trace::TraceLog;

/// What a session runs: the opened inputs (label and source), how.
pub(crate) struct Session<'a> {
    pub(crate) inputs: Vec<(String, Box<dyn FrameSource + Send>)>,
    /// Worker threads (0: one per core).
    pub(crate) threads: usize,
    pub(crate) fusion: bool,
    /// Frames per stream at most.
    pub(crate) limit: Option<u64>,
    /// Failed frames are told here as they come.
    pub(crate) stderr: &'a mut dyn Write,
    pub(crate) trace: Option<&'a mut TraceLog>,
}

/// What a session did: each stream's statistics and input, and the pool's
/// size.
pub(crate) struct SessionReport {
    pub(crate) streams: Vec<(String, StreamStats)>,
    pub(crate) threads: usize,
    pub(crate) seconds: f64,
}

/// Runs a session of `P` in `mode` (captured by `App::parallel`, where the
/// bounds are known).
pub(crate) type SessionFn<P> = fn(
    <P as Pipeline>::Mode,
    Session<'_>,
    &mut FrameOut<'_, '_, P>,
) -> Result<SessionReport, RunnerError>;

/// One frame's result on its way to the calling thread.
struct Message<O> {
    stream: u32,
    index: u64,
    dropped_before: u64,
    frame: Frame,
    result: Result<O, PipelineError>,
    /// Which holds the frame read (see `Delivery::held`).
    held: u64,
    started: Instant,
    finished: Instant,
}

/// The frames of `source`, at most `limit`.
fn frames(
    mut source: Box<dyn FrameSource + Send>,
    limit: Option<u64>,
) -> impl Iterator<Item = Result<Frame, String>> + Send {
    let mut taken = 0u64;
    std::iter::from_fn(move || {
        if limit.is_some_and(|l| taken >= l) {
            return None;
        }
        taken += 1;
        Some(source.next_frame()?.map_err(|e| e.to_string()))
    })
}

/// A frame's size as the pool's reset key: a stream whose frames change
/// size starts over (state reset) at the first frame of the new size.
fn size_key(frame: &Frame) -> u64 {
    let (w, h) = frame.size();
    ((w as u64) << 32) | (h as u64 & 0xffff_ffff)
}

/// The session of a pipeline whose one input is the frame.
pub(crate) fn session<P>(
    mode: P::Mode,
    session: Session<'_>,
    out: &mut FrameOut<'_, '_, P>,
) -> Result<SessionReport, RunnerError>
where
    P: for<'a> Pipeline<Inputs<'a> = (&'a RgbFrame,)> + Send + 'static,
    P::Outputs: Send,
{
    let Session {
        inputs,
        threads,
        fusion,
        limit,
        stderr,
        mut trace,
    } = session;
    let started = Instant::now();
    // Declared before the channel: on an early return the receiver goes
    // first, so a worker waiting to send gives up and the pool's drop
    // (which waits for the frames in flight) can finish.
    let pool = StreamPool::<P, Frame>::new(threads, |f| (&f.image,))
        .map_err(|e| RunnerError::Usage(format!("--threads: {e}")))?;
    pool.reset_on(size_key);
    // Per stream, the size of its last frame shown: a change is noted as
    // on the single-stream engines.
    let mut sizes: Vec<Option<(usize, usize)>> = Vec::new();
    let (tx, rx) = mpsc::sync_channel::<Message<P::Outputs>>(pool.threads() * 2);
    let mut labels = Vec::new();
    for (label, source) in inputs {
        let mut pipeline = P::default();
        pipeline.set_fusion(fusion);
        let tx = tx.clone();
        let id = pool.add_source(pipeline, mode, frames(source, limit), move |mut d| {
            let result = d.take_result();
            let frame = std::mem::replace(
                &mut d.frame,
                Frame {
                    index: 0,
                    timestamp: None,
                    image: RgbFrame::zeros((0, 0, 3)),
                },
            );
            // The receiver is gone only when the run already failed.
            let _ = tx.send(Message {
                stream: d.stream.0,
                index: d.index,
                dropped_before: d.dropped_before,
                frame,
                result,
                held: d.held,
                started: d.started,
                finished: d.finished,
            });
        });
        if let Some(trace) = trace.as_deref_mut() {
            trace.thread_name(u64::from(id.0) + 1, &format!("{id}: {label}"));
        }
        labels.push(label);
    }
    drop(tx);
    for m in rx {
        if let Some(trace) = trace.as_deref_mut() {
            let name = format!("frame {}", m.frame.index);
            trace.slice_on(
                u64::from(m.stream) + 1,
                &name,
                "frame",
                m.started,
                m.finished,
                m.index,
            );
        }
        let at = m.stream as usize;
        if sizes.len() <= at {
            sizes.resize(at + 1, None);
        }
        let size = m.frame.size();
        let resized_from = sizes[at].filter(|s| *s != size);
        sizes[at] = Some(size);
        match &m.result {
            Ok(outputs) => {
                let shown = Shown {
                    frame: &m.frame,
                    resized_from,
                    dropped_before: m.dropped_before,
                    node_ms: None,
                    held: crate::sink::held_names(P::ir(), m.held),
                    stream: Some(m.stream),
                };
                out.frame(&shown, outputs)?;
            }
            Err(e) => {
                let label = labels.get(m.stream as usize).map_or("", String::as_str);
                writeln!(
                    stderr,
                    "stream {} ({label}), frame {}: {e}",
                    m.stream, m.frame.index
                )
                .map_err(|source| RunnerError::Io {
                    what: "stderr".into(),
                    source,
                })?;
            }
        }
    }
    let stats = pool.wait_all();
    Ok(SessionReport {
        streams: labels.into_iter().zip(stats).collect(),
        threads: pool.threads(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The summary lines of a session, one per stream then the total, and the
/// error to return when a stream failed (a frame, or its input).
pub(crate) fn summary(report: &SessionReport) -> (Vec<String>, Option<RunnerError>) {
    let ms = |d: Option<std::time::Duration>| {
        d.map_or_else(
            || "-".to_string(),
            |d| format!("{:.1} ms", d.as_secs_f64() * 1e3),
        )
    };
    let mut lines = Vec::new();
    let mut failures = Vec::new();
    let mut total = 0;
    for (label, s) in &report.streams {
        total += s.processed;
        let end = match &s.end {
            Some(StreamEnd::Finished) | None => String::new(),
            Some(StreamEnd::SourceFailed(why)) => {
                failures.push(format!("{} ({label}): {why}", s.stream));
                format!("; input failed: {why}")
            }
            Some(other) => {
                failures.push(format!("{} ({label}): {other:?}", s.stream));
                format!("; ended: {other:?}")
            }
        };
        if s.failed > 0 {
            failures.push(format!(
                "{} ({label}): {} frames failed",
                s.stream, s.failed
            ));
        }
        lines.push(format!(
            "{} ({label}): {} frames ({:.1} frames/s; {} received, {} processed, {} failed, {} dropped; latency p50 {}, p99 {}{end})",
            s.stream,
            s.processed,
            s.frames_per_second,
            s.received,
            s.processed,
            s.failed,
            s.dropped,
            ms(s.latency_p50),
            ms(s.latency_p99),
        ));
    }
    let fps = if report.seconds > 0.0 {
        total as f64 / report.seconds
    } else {
        0.0
    };
    lines.push(format!(
        "{} streams on {} threads: {total} frames in {:.2} s ({fps:.1} frames/s)",
        report.streams.len(),
        report.threads,
        report.seconds
    ));
    let error = (!failures.is_empty()).then(|| RunnerError::Streams(failures.join("; ")));
    (lines, error)
}

impl<P: Pipeline + 'static> App<P> {
    /// Several `--input`s: only what a session can honour, checked before
    /// any input opens.
    pub(crate) fn check_streams(&self, cli: &Cli) -> Result<(), RunnerError> {
        let c = &cli.common;
        let usage = |m: &str| Err(RunnerError::Usage(m.to_string()));
        if c.input.len() < 2 {
            if c.threads.is_some() {
                return usage("--threads needs several --input (one stream each)");
            }
            return Ok(());
        }
        let Some(Command::Run(args)) = &cli.command else {
            return usage("several --input run with the `run` command only");
        };
        if c.engine != Engine::Sequential {
            return Err(RunnerError::Usage(format!(
                "several --input: each stream runs frame by frame on the shared pool; --engine {} runs one input",
                c.engine.flag()
            )));
        }
        if c.weights.is_some() {
            return usage(
                "several --input run a declared mode (--mode); --weights needs one input",
            );
        }
        for (flag, given) in [
            ("--dump", args.dump.is_some()),
            ("--encode", args.encode.is_some()),
        ] {
            if given {
                return usage(&format!(
                    "{flag} takes one input, and {} were given",
                    c.input.len()
                ));
            }
        }
        if c.input.iter().filter(|i| *i == "-").count() > 1 {
            return usage("--input -: stdin can be one input only");
        }
        if self.parallel.as_ref().and_then(|f| f.session).is_none() {
            return Err(RunnerError::Usage(format!(
                "program `{}` runs one input at a time (several inputs need a pipeline whose one input is the frame, opted in with App::parallel())",
                self.name
            )));
        }
        Ok(())
    }

    /// `run` with several inputs: the session, its trace, then a summary
    /// line per stream and the total.
    pub(crate) fn run_streams(
        &mut self,
        common: &Common,
        selection: Selection<P::Mode>,
        mut sink: Sink,
        args: &RunArgs,
        io: Io<'_>,
    ) -> Result<(), RunnerError> {
        let (Selection::Mode(mode), Some(session_fn)) =
            (&selection, self.parallel.as_ref().and_then(|f| f.session))
        else {
            return Err(RunnerError::Usage(
                "several --input need a declared mode and App::parallel()".into(),
            ));
        };
        let mode = *mode;
        let trace_file = args.trace.as_deref().map(TraceFile::open).transpose()?;
        let mut stdin = Some(io.stdin);
        let mut inputs = Vec::new();
        for input in &common.input {
            let stdin: Box<dyn std::io::Read + Send> = match input.as_str() {
                "-" => stdin.take().unwrap_or_else(|| Box::new(std::io::empty())),
                _ => Box::new(std::io::empty()),
            };
            let source = sources::open(Some(input), common.size, stdin)?;
            inputs.push((source.describe(), source));
        }
        let mut trace = args.trace.is_some().then(TraceLog::new);
        let labels = Labels::of(&selection);
        let bar = indicatif::ProgressBar::hidden();
        let mut out = FrameOut {
            sink: &mut sink,
            labels: &labels,
            record: &self.record,
            dump: None,
            dir_made: false,
            encode: None,
            stdout: io.stdout,
            bar: &bar,
        };
        let report = session_fn(
            mode,
            Session {
                inputs,
                threads: common
                    .threads
                    .map_or(0, |n| usize::try_from(n).unwrap_or(1)),
                fusion: !common.no_fusion,
                limit: common.frames.or(self.default_frames),
                stderr: &mut *io.stderr,
                trace: trace.as_mut(),
            },
            &mut out,
        )?;
        let finished: u64 = report
            .streams
            .iter()
            .map(|(_, s)| s.processed + s.failed)
            .sum();
        if let (Some(file), Some(trace)) = (trace_file, &trace) {
            if finished > 0 {
                file.write(&trace.to_json(&self.name))?;
            }
        }
        let (lines, error) = summary(&report);
        if !common.quiet {
            let mut text = lines.join("\n");
            text.push('\n');
            write_out(io.stderr, &text)?;
        }
        match error {
            Some(e) => Err(e),
            None if finished == 0 => Err(RunnerError::NoFrames(common.input.join(", "))),
            None => Ok(()),
        }
    }
}
