//! Several `--input`s at once: each input is a stream with its own
//! pipeline on one shared worker pool ([`StreamPool`]). Each input is
//! opened and read on a thread of its own, which pushes its frames into its
//! stream's bounded queue (a live stream of the pool, waiting for room:
//! nothing is dropped), so an input that blocks — a FIFO with no writer
//! yet, a camera that stalls — blocks its own thread, never a worker of the
//! pool nor the other inputs. An input that cannot be opened or fails
//! mid-run ends its own stream, reported; the others run to their end.
//! Results come back to the calling thread through a bounded channel and
//! are shown as in a single run, tagged with their stream; each stream is
//! summed up on its own line.

use std::panic::AssertUnwindSafe;
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::Instant;

use cortex_core::error::PipelineError;
use cortex_core::pipeline::Pipeline;
use cortex_core::runtime::dispatch::Choice;
use cortex_core::stream::{panic_message, Overflow};
use cortex_core::streams::{LiveInput, LiveOptions, StreamEnd, StreamPool, StreamRun};
use cortex_vision::ops::RgbFrame;

use crate::app::{App, Io};
use crate::cli::{Cli, Command, Common, Engine, RunArgs};
use crate::error::RunnerError;
use crate::session::{Opener, Session, SessionReport};
use crate::sink::{write_out, FrameOut, Labels, Shown, Sink, TraceFile};
use crate::sources::{self, Frame, FrameSource};
use crate::trace::TraceLog;

/// Frames read ahead of their stream, per input: enough that the reader
/// decodes the next frame while the pool runs this one, few enough that a
/// stream holds at most four frames (one running, two waiting, one being
/// pushed).
const READ_AHEAD: usize = 2;

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

/// What an input's reader thread leaves for the summary: its source's
/// notes, written before the stream's input is closed (so they are there
/// once the stream has ended).
type Notes = Arc<Mutex<Vec<String>>>;

/// A frame as a stream of the pool holds it: made from a decoded frame on
/// its input's reader thread (the pipeline's inputs borrow from it), and
/// made back into the frame when its results reach the runner.
pub(crate) trait Staged<P: Pipeline>: Send + Sized + 'static {
    /// `frame`, ready to run.
    fn stage(frame: Frame) -> Self;
    /// The pipeline's inputs, borrowed.
    fn inputs(&self) -> P::Inputs<'_>;
    /// The frame's width and height.
    fn size(&self) -> (usize, usize);
    /// The frame back, taken out (what is left allocates nothing).
    fn unstage(&mut self) -> Frame;
}

/// A frame with no pixels, in place of one taken out.
pub(crate) fn taken() -> Frame {
    Frame {
        index: 0,
        timestamp: None,
        image: RgbFrame::zeros((0, 0, 3)),
        missed_before: 0,
    }
}

/// The frame itself, for a pipeline whose one input is its image.
impl<P> Staged<P> for Frame
where
    P: for<'a> Pipeline<Inputs<'a> = (&'a RgbFrame,)>,
{
    fn stage(frame: Frame) -> Self {
        frame
    }
    fn inputs(&self) -> (&RgbFrame,) {
        (&self.image,)
    }
    fn size(&self) -> (usize, usize) {
        Frame::size(self)
    }
    fn unstage(&mut self) -> Frame {
        std::mem::replace(self, taken())
    }
}

/// An input's reader thread: opens the input, then pushes its frames (at
/// most `limit`) into the stream's queue, waiting for room. A failure to
/// open or to read ends the stream as failed once the frames before it
/// have run; the end of the input, or of the stream (the run stopped),
/// ends the reading.
fn read_input<P, T>(
    open: Opener,
    limit: Option<u64>,
    input: LiveInput<P, T>,
    notes: &Mutex<Vec<String>>,
) where
    P: Pipeline + Send + 'static,
    P::Outputs: Send,
    T: Staged<P>,
{
    // A source that panics ends its stream as failed, as a pull source's
    // panic ends its stream in the pool, not as one that ran to its end.
    let read = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let mut source = match open() {
            Ok(source) => source,
            Err(e) => return Some(e.to_string()),
        };
        let mut taken = 0u64;
        let failure = loop {
            if limit.is_some_and(|l| taken >= l) {
                break None;
            }
            match source.next_frame() {
                None => break None,
                Some(Err(e)) => break Some(e.to_string()),
                Some(Ok(frame)) => {
                    taken += 1;
                    if input.push(T::stage(frame)).is_err() {
                        break None;
                    }
                }
            }
        };
        *notes.lock().unwrap_or_else(PoisonError::into_inner) = source.notes();
        failure
    }));
    let failure = read.unwrap_or_else(|payload| {
        Some(format!(
            "reading the input panicked: {}",
            panic_message(&*payload)
        ))
    });
    match failure {
        Some(why) => input.fail(why),
        None => input.close(),
    }
}

/// A frame's size as the pool's reset key: a stream whose frames change
/// size starts over (state reset) at the first frame of the new size.
fn size_key<P: Pipeline, T: Staged<P>>(frame: &T) -> u64 {
    let (w, h) = frame.size();
    ((w as u64) << 32) | (h as u64 & 0xffff_ffff)
}

/// The session of a pipeline whose inputs a frame staged as `T` lends.
pub(crate) fn session<P, T>(
    make: &dyn Fn() -> P,
    mode: P::Mode,
    session: Session<'_>,
    out: &mut FrameOut<'_, '_, P>,
) -> Result<SessionReport, RunnerError>
where
    P: Pipeline + Send + 'static,
    P::Outputs: Send,
    T: Staged<P>,
{
    let Session {
        inputs,
        ir,
        reads,
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
    let pool = StreamPool::<P, T>::new(threads, T::inputs)
        .map_err(|e| RunnerError::Usage(format!("--threads: {e}")))?;
    pool.reset_on(size_key::<P, T>);
    // Per stream, the size of its last frame shown: a change is noted as
    // on the single-stream engines.
    let mut sizes: Vec<Option<(usize, usize)>> = Vec::new();
    let (tx, rx) = mpsc::sync_channel::<Message<P::Outputs>>(pool.threads() * 2);
    let mut labels = Vec::new();
    let mut notes: Vec<Notes> = Vec::new();
    let live = LiveOptions {
        queue: READ_AHEAD,
        overflow: Overflow::Block,
    };
    // Per stream, the outputs written out go back to its callback, which
    // gives them to the stream's next frame to run into: their memory is
    // reused, and a stream reading some outputs computes only those after
    // its first frames (a frame with no outputs to run into makes all).
    let mut spares = Vec::new();
    for (label, open) in inputs {
        let mut pipeline = make();
        pipeline.set_fusion(fusion);
        let tx = tx.clone();
        let (spare_tx, spare_rx) = mpsc::channel::<P::Outputs>();
        spares.push(spare_tx);
        let input = pool
            .add_live(
                pipeline,
                StreamRun::mode(mode).outputs(reads),
                live,
                move |mut d| {
                    let result = d.take_result();
                    if let Ok(spare) = spare_rx.try_recv() {
                        d.recycle(spare);
                    }
                    let frame = d.frame.unstage();
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
                },
            )
            .map_err(|e| RunnerError::Usage(format!("--input: {e}")))?;
        let id = input.stream();
        if let Some(trace) = trace.as_deref_mut() {
            trace.thread_name(u64::from(id.0) + 1, &format!("{id}: {label}"));
        }
        let left = Notes::default();
        let mine = Arc::clone(&left);
        // Detached: a reader blocked in its input (a FIFO whose writer
        // stalls) must not keep the run from returning once the streams it
        // waits for are over; it ends with its input or the process.
        let spawned = std::thread::Builder::new()
            .name(format!("cortex-input-{}", id.0))
            .spawn(move || read_input::<P, T>(open, limit, input, &mine));
        if let Err(e) = spawned {
            return Err(RunnerError::Io {
                what: format!("{id} ({label}): starting its reader thread"),
                source: e,
            });
        }
        labels.push(label);
        notes.push(left);
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
        match m.result {
            Ok(outputs) => {
                let shown = Shown {
                    frame: &m.frame,
                    resized_from,
                    dropped_before: m.dropped_before,
                    node_ms: None,
                    held: crate::sink::held_names(ir, m.held),
                    stream: Some(m.stream),
                };
                out.frame(&shown, &outputs)?;
                // A stream that has ended no longer takes them.
                let _ = spares[at].send(outputs);
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
    let notes = notes
        .iter()
        .map(|n| std::mem::take(&mut *n.lock().unwrap_or_else(PoisonError::into_inner)));
    Ok(SessionReport {
        streams: labels
            .into_iter()
            .zip(stats)
            .zip(notes)
            .map(|((label, stats), notes)| (label, stats, notes))
            .collect(),
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
    for (label, s, notes) in &report.streams {
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
        lines.extend(notes.iter().cloned());
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
                "program `{}` runs one input at a time (several inputs need a pipeline whose one input is the frame, opted in with App::parallel(), or a graph file of one input)",
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
        choice: &Choice<P::Mode>,
        mut sink: Sink,
        args: &RunArgs,
        io: Io<'_>,
    ) -> Result<(), RunnerError> {
        let (Some(mode), Some(session_fn)) = (
            choice.mode(),
            self.parallel.as_ref().and_then(|f| f.session),
        ) else {
            return Err(RunnerError::Usage(
                "several --input need a declared mode and App::parallel()".into(),
            ));
        };
        let trace_file = args.trace.as_deref().map(TraceFile::open).transpose()?;
        // What the user typed wrong (a missing file, a folder without
        // frames, a kind of input this build cannot read) is refused before
        // any stream starts; what fails on opening (a file that is not
        // what its name says, a camera that does not answer) ends its own
        // stream. Nothing is opened here: opening a FIFO waits for its
        // writer, and each input waits on its own thread.
        for input in &common.input {
            sources::check(input)?;
        }
        let mut stdin = Some(io.stdin);
        let mut inputs = Vec::new();
        for input in &common.input {
            let stdin: Box<dyn std::io::Read + Send> = match input.as_str() {
                "-" => stdin.take().unwrap_or_else(|| Box::new(std::io::empty())),
                _ => Box::new(std::io::empty()),
            };
            let (label, size) = (input.clone(), common.size);
            let input = input.clone();
            let network = common.network();
            let open: Opener =
                Box::new(move || sources::open_with(Some(&input), size, stdin, &network));
            inputs.push((label, open));
        }
        let mut trace = args.trace.is_some().then(TraceLog::new);
        let labels = Labels::of(&(self.make)(), choice);
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
            publish: args.publisher.as_ref(),
        };
        let report = session_fn(
            &*self.make,
            mode,
            Session {
                inputs,
                ir: self.ir,
                reads: self.outputs_read(args)?,
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
            .map(|(_, s, _)| s.processed + s.failed)
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
