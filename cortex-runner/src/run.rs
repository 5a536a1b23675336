//! One run of frames, shared by every subcommand: open the source, pick
//! the engine's loop, show each frame's results, then write the trace and
//! sum up.

use std::io::{Read, Write};
use std::time::Instant;

use cortex_core::outputs::OutputSet;
use cortex_core::pipeline::Pipeline;
use cortex_core::runtime::dispatch::{run_slot, Choice};

use crate::app::App;
use crate::cli::{Common, RoiSwitch, RunArgs};
use crate::error::RunnerError;
use crate::frames::FrameByFrame;
use crate::observer::{progress_bar, RunObserver, RunSummary};
use crate::pipelined::{check_memory, run_pipelined, PipelinedSettings};
use crate::sink::{FrameOut, Labels, RoiFrom, Sink, TraceFile};
use crate::sources::{self, Frame, FrameSource};

impl<P: Pipeline + 'static> App<P> {
    /// Runs the frames `common` selects through the engine it names,
    /// showing each frame's results in `sink` (and `--dump`, `--trace` of
    /// `args`); returns the observer (the profile) and the summary. Every
    /// engine computes only `reads` (the pipelined one only with a stream
    /// engine that can, see [`App::parallel`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_frames(
        &mut self,
        common: &Common,
        choice: &Choice<P::Mode>,
        reads: OutputSet,
        mut sink: Sink,
        args: &RunArgs,
        stdin: Box<dyn Read + Send>,
        stdout: &mut dyn Write,
        progress: bool,
    ) -> Result<(RunObserver, RunSummary), RunnerError> {
        let ir = self.ir;
        let limit = common.frames.or(self.default_frames);
        // The synthetic clip's frame size is known now: options whose
        // frames cannot fit are refused before anything is allocated (a
        // file's frames are checked as they are read, in the feeder).
        if common.engine.frame_engine().is_none() && common.input.is_empty() {
            check_memory(common, common.size)?;
        }
        // Before the source (which may read stdin) and the first frame.
        let trace_file = args.trace.as_deref().map(TraceFile::open).transpose()?;
        // The codec and the output file are checked before the input opens.
        let mut encoder = crate::encode::Encoder::open(args)?;
        // The synthetic clip plays as many frames as asked, past its
        // scripted events if need be.
        let mut source: Box<dyn FrameSource + Send> = match common.input.first().map(String::as_str)
        {
            None => Box::new(sources::synthetic(common.size, limit)?),
            input => sources::open_with(input, common.size, stdin, &common.network())?,
        };
        let total = match (source.len_hint(), limit) {
            (Some(n), Some(l)) => Some(n.min(l)),
            (n, l) => n.or(l),
        };
        let bar = progress_bar(progress && !common.quiet, total);
        let mut obs = RunObserver::new(ir, args.trace.is_some());
        let mut pipeline = (self.make)();
        pipeline.set_fusion(!common.no_fusion);
        pipeline.set_rates(!common.no_rates);
        let started = Instant::now();
        let labels = Labels::of(&pipeline, choice);
        let mut out = FrameOut {
            sink: &mut sink,
            labels: &labels,
            record: &self.record,
            dump: args.dump.as_deref().zip(self.dump.as_ref()),
            dir_made: false,
            encode: encoder.as_mut().map(|e| {
                let from = match (args.roi_mode(), &self.regions, &self.qp_map) {
                    (RoiSwitch::Regions, Some(f), _) => RoiFrom::Regions(f),
                    (RoiSwitch::Map, _, Some(f)) => RoiFrom::Map(f),
                    _ => RoiFrom::Nothing,
                };
                (e, from)
            }),
            stdout,
            bar: &bar,
            publish: args.publisher.as_ref(),
        };
        let mut stream_report = None;
        let mut done = 0u64;
        let result = match (common.engine.frame_engine(), &self.parallel) {
            (None, Some(fns)) => {
                let settings = PipelinedSettings {
                    limit,
                    options: common.stream_options(),
                    budget: crate::pipelined::budget(common),
                    keep_going: args.keep_going,
                };
                let (fusion, rates) = (!common.no_fusion, !common.no_rates);
                // Checked in `check_engine`: a pipelined run is of a mode.
                let mode = choice.mode().ok_or_else(|| {
                    RunnerError::Usage("--engine pipelined runs declared modes (--mode)".into())
                })?;
                let (adapter, make) = (&mut *self.adapter, &self.make);
                let mut probe = |frame: &mut Frame| -> u64 {
                    let mut p = make();
                    p.set_fusion(fusion);
                    p.set_rates(rates);
                    // A frame that fails still filled the buffers before
                    // its failing node; the stream reports the failure.
                    let _ = adapter.with_inputs(frame, &mut |inputs| {
                        let _ = p.run(mode, inputs);
                    });
                    p.buffer_bytes().iter().map(|&(_, _, b)| b as u64).sum()
                };
                let mut run = choice.run().outputs(reads).observed(&mut obs);
                // `run_stream` sizes each frame against this run's budget.
                let run = cortex_core::stream::with_memory_budget(settings.budget, || {
                    run_pipelined(
                        &mut pipeline,
                        &mut run,
                        &mut *source,
                        &settings,
                        &fns.stream,
                        &mut probe,
                        &mut out,
                    )
                });
                stream_report = Some(run.report);
                done = run.report.processed;
                run.result
            }
            (engine, _) => {
                // Checked in `check_engine`: parallel and pipelined runs
                // need `App::parallel`.
                let engine = engine.unwrap_or_default();
                let run_slot: crate::app::SlotRunFn<P> = run_slot::<P, RunObserver>;
                FrameByFrame {
                    pipeline: &mut pipeline,
                    choice,
                    reads,
                    engine,
                    run_slot,
                    adapter: &mut *self.adapter,
                    obs: &mut obs,
                    keep_going: args.keep_going,
                }
                .run(&mut *source, limit, &mut out, &mut done)
            }
        };
        bar.finish_and_clear();
        if let (Some(file), Some(trace)) = (trace_file, &obs.trace) {
            if done > 0 {
                file.write(&trace.to_json(&self.name))?;
            }
        }
        result?;
        let mut notes = source.notes();
        if let Some(encoder) = encoder {
            notes.push(encoder.finish()?.line());
        }
        if stream_report.map_or(done, |r| r.received) == 0 {
            return Err(RunnerError::NoFrames(source.describe()));
        }
        Ok((
            obs,
            RunSummary {
                frames: done,
                seconds: started.elapsed().as_secs_f64(),
                buffer_bytes: pipeline.buffer_bytes(),
                stream: stream_report,
                notes,
            },
        ))
    }
}
