//! The pipelined engine's glue: [`App::parallel`] and
//! [`App::parallel_with`] capture the engines of a `#[parallel]` pipeline,
//! each frame is taken apart into the pipeline's owned inputs and the rest
//! (on the producer thread; the rest rides along as the stream's tag) and
//! put back together when its results arrive, and a resolution change ends
//! one stream and starts the next.

use std::ops::ControlFlow;
use std::sync::{Mutex, PoisonError};

use cortex_core::error::PipelineError;
use cortex_core::pipeline::{ParallelPipeline, Pipeline};
use cortex_core::run::Run;
use cortex_core::stream::{memory_budget, StreamError, StreamFrame, StreamOptions, StreamReport};
use cortex_vision::ops::RgbFrame;

use crate::app::{AdapterError, App, Delivered, ParallelFns, StreamRunFn};
use crate::cli::Common;
use crate::error::RunnerError;
use crate::observer::RunObserver;
use crate::session::SessionFn;
use crate::sink::{FrameOut, Shown};
use crate::sources::{Frame, FrameSource, SourceError};

impl<P: Pipeline + 'static> App<P> {
    /// Lets `--engine parallel|pipelined` run this pipeline (declared
    /// `#[parallel]`, with the frame as its one input). The parallel engine
    /// builds a frame's inputs with the program's adapter; the pipelined one
    /// moves the frame's image into the stream and hands it back with the
    /// results (`--dump` still sees it). Several `--input`s then run at
    /// once, each its own stream on one shared worker pool.
    pub fn parallel(self) -> Self
    where
        P: ParallelPipeline<OwnedInputs = (RgbFrame,)>
            + for<'a> Pipeline<Inputs<'a> = (&'a RgbFrame,)>
            + Send,
        P::Outputs: Send,
    {
        self.parallel_streaming(stream_with::<P>)
    }

    /// [`App::parallel`] whose pipelined engine is `engine`.
    fn parallel_streaming(self, engine: StreamEngineFn<P>) -> Self
    where
        P: ParallelPipeline<OwnedInputs = (RgbFrame,)>
            + for<'a> Pipeline<Inputs<'a> = (&'a RgbFrame,)>
            + Send,
        P::Outputs: Send,
    {
        let split = |mut frame: Frame| -> Result<((RgbFrame,), Frame), AdapterError> {
            // An empty image allocates nothing; the real one comes back
            // through the stream.
            let image = std::mem::replace(&mut frame.image, RgbFrame::zeros((0, 0, 3)));
            Ok(((image,), frame))
        };
        let join = |(image,): &mut (RgbFrame,), frame: &mut Frame| {
            std::mem::swap(&mut frame.image, image);
        };
        self.with_engines(
            stream_fn::<P, _, _>(split, join, engine),
            Some(crate::streams::session::<P, Frame>),
        )
    }

    /// [`App::parallel`] for a `#[parallel]` pipeline whose inputs are not
    /// just the frame: `owned` builds one frame's owned inputs
    /// ([`ParallelPipeline::OwnedInputs`]) for the pipelined engine, on its
    /// producer thread (the parallel engine uses the program's
    /// [`FrameAdapter`](crate::FrameAdapter)).
    pub fn parallel_with(
        self,
        owned: impl Fn(&Frame) -> Result<P::OwnedInputs, AdapterError> + Send + Sync + 'static,
    ) -> Self
    where
        P: ParallelPipeline,
    {
        let split = move |frame: Frame| Ok((owned(&frame)?, frame));
        self.with_engines(
            stream_fn::<P, _, _>(split, |_, _| {}, stream_with::<P>),
            None,
        )
    }

    pub(crate) fn with_engines(
        mut self,
        stream: StreamRunFn<P>,
        session: Option<SessionFn<P>>,
    ) -> Self
    where
        P: ParallelPipeline,
    {
        self.parallel = Some(ParallelFns { stream, session });
        self
    }
}

/// The frames of a pipelined stream, each with the rest of its frame as
/// the stream's tag.
pub(crate) type TaggedFrames<'a, P> =
    Box<dyn Iterator<Item = (Frame, <P as ParallelPipeline>::OwnedInputs)> + Send + 'a>;

/// What a stream engine hands each frame to: the frame (its rest as the
/// tag), borrowed, its outputs left in place for a later frame.
pub(crate) type OnFrame<'a, P> = dyn FnMut(
        &mut StreamFrame<<P as ParallelPipeline>::OwnedInputs, <P as Pipeline>::Outputs, Frame>,
    ) -> ControlFlow<()>
    + 'a;

/// The stream engine of a pipelined run: a pipeline's `run_stream_with`.
pub(crate) type StreamEngineFn<P> = for<'a, 'r, 'f> fn(
    &'f mut P,
    &'f mut Run<'r, <P as Pipeline>::Mode, RunObserver>,
    TaggedFrames<'a, P>,
    &'f StreamOptions,
    &'f mut OnFrame<'f, P>,
) -> Result<StreamReport, StreamError>;

/// The stream engine every `#[parallel]` pipeline has: its
/// `run_stream_with`, which runs the run's mode (weights and plans are
/// refused), observed when the run is, computing only the outputs the run
/// reads.
pub(crate) fn stream_with<P: ParallelPipeline>(
    pipeline: &mut P,
    run: &mut Run<'_, P::Mode, RunObserver>,
    frames: TaggedFrames<'_, P>,
    options: &StreamOptions,
    on_result: &mut OnFrame<'_, P>,
) -> Result<StreamReport, StreamError> {
    pipeline.run_stream_with(run, frames, options, on_result)
}

/// A lock that a panic elsewhere does not poison for good.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The pipelined engine of a `#[parallel]` pipeline `P` on `engine`:
/// `split` turns a frame into the pipeline's owned inputs and what is left
/// of the frame (on the producer thread); the rest travels with the inputs
/// as the stream's tag, and `join` puts the inputs back into it when the
/// frame's results arrive, so the runner sees whole frames.
pub(crate) fn stream_fn<P, S, J>(split: S, join: J, engine: StreamEngineFn<P>) -> StreamRunFn<P>
where
    P: ParallelPipeline + 'static,
    S: Fn(Frame) -> Result<(P::OwnedInputs, Frame), AdapterError> + Send + Sync + 'static,
    J: Fn(&mut P::OwnedInputs, &mut Frame) + 'static,
{
    Box::new(move |pipeline, run, frames, options, on_result| {
        // Written on the producer thread, read once it has been joined.
        let failure: Mutex<Option<RunnerError>> = Mutex::new(None);
        let split = &split;
        let failure_ref = &failure;
        let tagged = frames.map_while(move |frame| {
            let index = frame.index;
            match split(frame) {
                Ok((inputs, rest)) => Some((rest, inputs)),
                Err(e) => {
                    *lock(failure_ref) = Some(RunnerError::Adapter {
                        frame: index,
                        why: e.to_string(),
                    });
                    None
                }
            }
        });
        let report = engine(pipeline, run, Box::new(tagged), options, &mut |r| {
            join(&mut r.inputs, &mut r.tag);
            on_result(Delivered {
                frame: &r.tag,
                dropped_before: r.dropped_before,
                result: &mut r.result,
                held: r.held,
            })
        })?;
        let failure = failure.into_inner().unwrap_or_else(PoisonError::into_inner);
        Ok((report, failure))
    })
}

/// Bytes one frame of `width × height` takes in the pipelined engine: the
/// image, RGB at one byte a channel (the rest of a frame is a few words).
fn frame_bytes((width, height): (usize, usize)) -> u64 {
    (width as u64)
        .saturating_mul(height as u64)
        .saturating_mul(3)
}

/// Refuses `common`'s pipelined options when the frames they hold at once,
/// at `size`, cannot fit in the memory budget (`--memory-budget`, default
/// the library's): a usage error naming the numbers and what to change.
pub(crate) fn check_memory(common: &Common, size: (usize, usize)) -> Result<(), RunnerError> {
    check_options(&common.stream_options(), budget(common), size)
}

/// The memory budget of a pipelined run.
pub(crate) fn budget(common: &Common) -> u64 {
    common.memory_budget.unwrap_or_else(memory_budget)
}

fn check_options(
    options: &StreamOptions,
    budget: u64,
    (width, height): (usize, usize),
) -> Result<(), RunnerError> {
    match options.check_memory(frame_bytes((width, height)), budget) {
        Err(StreamError::OverBudget(over)) => Err(RunnerError::Usage(format!(
            "--engine pipelined: {width}x{height} frames do not fit: {over}; \
             lower --queue or --in-flight, or raise --memory-budget"
        ))),
        _ => Ok(()),
    }
}

/// Refuses `options` when, besides the frames they hold, the buffers of
/// the frames in flight do not fit in `budget`: each frame in flight holds
/// its first stage's buffers, at most `buffers` bytes (what one frame of
/// this size fills, measured), and the pipeline holds one set of its own.
fn check_buffers(
    options: &StreamOptions,
    budget: u64,
    (width, height): (usize, usize),
    buffers: u64,
) -> Result<(), RunnerError> {
    let frames = options.frames_held();
    let one = frame_bytes((width, height));
    let sets = (options.in_flight as u64).saturating_add(1);
    let needed = one
        .saturating_mul(frames)
        .saturating_add(buffers.saturating_mul(sets));
    if needed <= budget {
        return Ok(());
    }
    Err(RunnerError::Usage(format!(
        "--engine pipelined: {width}x{height} frames do not fit: {frames} frames of {} and \
         {sets} sets of the pipeline's buffers of {} ({} in flight + the pipeline's own) need {}, \
         over the memory budget of {}; lower --in-flight or --queue, or raise --memory-budget",
        bytes_text(one),
        bytes_text(buffers),
        options.in_flight,
        bytes_text(needed),
        bytes_text(budget),
    )))
}

/// A byte count for people, as the budget's own messages write it.
fn bytes_text(bytes: u64) -> String {
    let mut value = bytes as f64;
    let mut unit = "bytes";
    for u in ["KiB", "MiB", "GiB", "TiB"] {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = u;
    }
    if unit == "bytes" {
        format!("{bytes} bytes")
    } else {
        format!("{bytes} bytes ({value:.1} {unit})")
    }
}

/// The source of a pipelined run, read on the producer thread: it ends a
/// stream at the first frame of another size (kept in `carry` for the next
/// stream), at `limit` frames, at a source error (kept in `error`), or at a
/// frame whose size the options cannot hold in the memory budget (kept in
/// `refused`; checked on the first frame of each size, before it is queued).
struct Feeder<'s> {
    source: &'s mut (dyn FrameSource + Send),
    limit: Option<u64>,
    pulled: u64,
    size: Option<(usize, usize)>,
    first: Option<Frame>,
    carry: Option<Frame>,
    error: Option<SourceError>,
    options: StreamOptions,
    budget: u64,
    refused: Option<RunnerError>,
}

impl Iterator for Feeder<'_> {
    type Item = Frame;

    fn next(&mut self) -> Option<Frame> {
        if let Some(frame) = self.first.take() {
            return Some(frame);
        }
        if self.carry.is_some()
            || self.error.is_some()
            || self.refused.is_some()
            || self.limit.is_some_and(|l| self.pulled >= l)
        {
            return None;
        }
        let frame = match self.source.next_frame()? {
            Ok(frame) => frame,
            Err(e) => {
                self.error = Some(e);
                return None;
            }
        };
        self.pulled += 1;
        let size = frame.size();
        if self.size != Some(size) {
            if let Err(e) = check_options(&self.options, self.budget, size) {
                self.refused = Some(e);
                return None;
            }
        }
        if self.size.is_some_and(|s| s != size) {
            self.carry = Some(frame);
            return None;
        }
        self.size = Some(size);
        Some(frame)
    }
}

/// What a pipelined run did.
pub(crate) struct Pipelined {
    pub(crate) report: StreamReport,
    pub(crate) result: Result<(), RunnerError>,
}

/// What a pipelined run is given besides its pipeline, source and output.
pub(crate) struct PipelinedSettings {
    /// `--frames`.
    pub(crate) limit: Option<u64>,
    /// `--in-flight`, `--queue`, `--overflow`.
    pub(crate) options: StreamOptions,
    /// `--memory-budget`, in bytes.
    pub(crate) budget: u64,
    /// `--keep-going`: a failing frame is reported and skipped.
    pub(crate) keep_going: bool,
}

/// Measures what one frame costs the pipeline beyond its pixels: the bytes
/// of the buffers a frame of its size fills (run once, on a pipeline of
/// its own that is then dropped).
pub(crate) type ProbeFn<'a> = &'a mut dyn FnMut(&mut Frame) -> u64;

/// Frames through the pipelined engine. A stream cannot reset its pipeline
/// mid-flight, so a resolution change ends the stream: the frames in flight
/// finish, the pipeline is reset, and a new stream starts with the frame of
/// the new size (its queue and look-ahead start empty again).
///
/// The first frame of each size is read before its stream starts and
/// `probe` measures the buffers a frame of that size fills: options whose
/// frames in flight cannot hold them within the budget are refused there,
/// before the stream allocates anything for them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_pipelined<P: Pipeline>(
    pipeline: &mut P,
    run: &mut Run<'_, P::Mode, RunObserver>,
    source: &mut (dyn FrameSource + Send),
    settings: &PipelinedSettings,
    stream: &StreamRunFn<P>,
    probe: ProbeFn<'_>,
    out: &mut FrameOut<'_, '_, P>,
) -> Pipelined {
    let PipelinedSettings {
        limit,
        ref options,
        budget,
        keep_going,
    } = *settings;
    let mut feeder = Feeder {
        source,
        limit,
        pulled: 0,
        size: None,
        first: None,
        carry: None,
        error: None,
        options: *options,
        budget,
        refused: None,
    };
    let mut total = StreamReport::default();
    let ir = pipeline.graph();
    // The stream's frames end one at a time, in order: the observer
    // numbers them itself (its trace's frame slices and node labels).
    if let Some(obs) = run.observer() {
        obs.count_frames = true;
    }
    let mut resized_from: Option<(usize, usize)> = None;
    // `--keep-going`: frames the pipeline failed on, and the first.
    let mut skipped = 0u64;
    let mut first_skipped: Option<u64> = None;
    // The first frame of the first stream (a later stream's is the one of
    // another size that ended the stream before it).
    let mut first = feeder.next();
    let result = loop {
        let Some(mut frame) = first.take() else {
            // Nothing to run: the source is empty, failed or was refused
            // on its first frame (told below).
            break Ok(());
        };
        if let Err(e) = check_buffers(options, budget, frame.size(), probe(&mut frame)) {
            break Err(e);
        }
        feeder.first = Some(frame);
        let mut failed: Option<RunnerError> = None;
        let mut on_result = |r: Delivered<'_, P::Outputs>| {
            let Delivered {
                frame,
                dropped_before,
                result,
                held,
            } = r;
            let shown = Shown {
                frame,
                resized_from: resized_from.take(),
                dropped_before,
                node_ms: None,
                held: crate::sink::held_names(ir, held),
                stream: None,
            };
            let done = match result {
                Ok(outputs) => out.frame(&shown, outputs),
                Err(e) => {
                    // Taken: a failed frame has no outputs to run into.
                    let e = RunnerError::Frame {
                        frame: frame.index,
                        source: std::mem::replace(e, PipelineError::Internal("reported")),
                    };
                    if keep_going {
                        skipped += 1;
                        first_skipped.get_or_insert(frame.index);
                        out.failed(frame, &e)
                    } else {
                        Err(e)
                    }
                }
            };
            match done {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    failed = Some(e);
                    ControlFlow::Break(())
                }
            }
        };
        let (report, adapter_failed) =
            match stream(pipeline, run, &mut feeder, options, &mut on_result) {
                Ok(r) => r,
                Err(e) => break Err(e.into()),
            };
        total.received += report.received;
        total.processed += report.processed;
        total.failed += report.failed;
        total.dropped += report.dropped;
        total.discarded += report.discarded;
        if let Some(e) = failed.or(adapter_failed) {
            break Err(e);
        }
        if let Some(e) = feeder.refused.take() {
            break Err(e);
        }
        if let Some(e) = feeder.error.take() {
            break Err(e.into());
        }
        let Some(frame) = feeder.carry.take() else {
            break Ok(());
        };
        // Temporal state computed at another resolution means nothing
        // here: start over as on a first frame.
        pipeline.reset();
        resized_from = feeder.size;
        feeder.size = Some(frame.size());
        first = Some(frame);
    };
    let result = result.and_then(|()| match (feeder.refused.take(), feeder.error.take()) {
        (Some(e), _) => Err(e),
        (None, Some(e)) => Err(e.into()),
        (None, None) => Ok(()),
    });
    let result = match (result, first_skipped) {
        (Ok(()), Some(first)) => Err(RunnerError::FramesFailed {
            failed: skipped,
            frames: total.received,
            first,
        }),
        (r, _) => r,
    };
    Pipelined {
        report: total,
        result,
    }
}
