//! Dispatch of the subcommands: parse the command line, check everything
//! decidable from it before the input opens, then run `graph`, `run`,
//! `plan`, `profile` or the tour.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use cortex_core::dynamic::{GraphFile, Ops};
use cortex_core::export::{to_dot_with, to_mermaid_with, Overlay};
use cortex_core::outputs::OutputSet;
use cortex_core::passes::fusion::FusionPlan;
use cortex_core::passes::islands::{islands, Island};
use cortex_core::passes::rates::shown_fusion_plan;
use cortex_core::pipeline::Pipeline;
use cortex_core::plan::Plan;
use cortex_core::runtime::dispatch::{mode_named, Choice};
use cortex_core::viz::{buffer_section, dce_diff, fusion_section, listing, Noted};
use cortex_core::GraphIr;

use crate::app::{App, Io};
use crate::cli::{first_line, Cli, Command, Common, Engine, GraphFormat, RunArgs};
use crate::error::RunnerError;
use crate::notes::notes_section;
use crate::observer::summarize;
use crate::record;
use crate::sink::{write_out, Sink};

impl<P: Pipeline + 'static> App<P> {
    /// Runs with the process's arguments and streams; an error is printed
    /// as one line `name: message` on stderr with its
    /// [`exit_code`](RunnerError::exit_code) (2 for a bad command line, 1
    /// otherwise).
    pub fn main(self) -> ExitCode {
        self.main_with(std::env::args_os())
    }

    /// [`App::main`] with these arguments (the first is the program name)
    /// instead of the process's: for a command that took some of its own
    /// out first (`--model`).
    pub fn main_with<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let name = self.name.clone();
        let stdout = std::io::stdout();
        let mut stdout = stdout.lock();
        // Not locked: the progress bar draws on stderr too.
        let mut err_buf = std::io::stderr();
        let progress = err_buf.is_terminal();
        let io = Io {
            stdin: Box::new(std::io::stdin()),
            stdout: &mut stdout,
            stderr: &mut err_buf,
            progress,
        };
        let result = self.run_with(args, io);
        let _ = stdout.flush();
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{name}: {e}");
                ExitCode::from(e.exit_code())
            }
        }
    }

    /// Runs with these arguments (the first is the program name) and
    /// streams.
    pub fn run_with<I, T>(self, args: I, io: Io<'_>) -> Result<(), RunnerError>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut cli = match self.parse(args) {
            Ok(cli) => cli,
            Err(e) => return clap_error(e, io.stdout),
        };
        if let Some((name, _)) = &self.graph_file {
            if cli.common.graph.is_some() {
                return Err(RunnerError::Usage(format!(
                    "--graph: this program runs its own graph ({name}); give one or the other"
                )));
            }
            cli.common.built_in.clone_from(&self.graph_file);
        }
        if let Some(Command::Ops { name }) = &cli.command {
            return crate::library::ops_command(name.as_deref(), &self.graph_ops, io.stdout);
        }
        if cli.common.graph.is_some() || cli.common.built_in.is_some() {
            // The same commands, frame loops and JSON lines on the graph
            // built from the file.
            return self.graph_app(&cli.common)?.command(cli, io);
        }
        self.command(cli, io)
    }

    /// Runs the subcommand of `cli` on this program's pipeline.
    fn command(mut self, mut cli: Cli, io: Io<'_>) -> Result<(), RunnerError> {
        // Everything decidable from the command line is checked before the
        // input is opened.
        let proto = (self.make)();
        let choice = Choice::from_names(
            &proto,
            cli.common.mode.as_deref(),
            cli.common.weights.as_deref(),
        )?;
        self.check_engine(&cli)?;
        self.check_dump(&cli)?;
        self.check_streams(&cli)?;
        cli.common.check_network()?;
        if let Some(Command::Run(args)) = &cli.command {
            if let Some(names) = crate::reads::chosen(self.ir, args)?.and(args.outputs.clone()) {
                // The record shows the fields named after the outputs
                // asked for: what a frame's results carry.
                let full = std::mem::replace(&mut self.record, Box::new(|_| record::Record::new()));
                self.record = Box::new(move |out| {
                    let mut shown = full(out);
                    shown.retain(&names);
                    shown
                });
            }
            crate::encode::check_args(
                args,
                self.regions.is_some(),
                self.qp_map.is_some(),
                &self.subject(),
            )?;
        }
        let common = &cli.common;
        match cli.command.take() {
            Some(Command::Graph { format }) => {
                let plan = match common.mode.as_deref() {
                    Some(name) => mode_named(&proto, Some(name))
                        .ok()
                        .and_then(|m| proto.mode_plan(m)),
                    None => None,
                };
                let ops = crate::library::library(&self.graph_ops);
                let text = draw(self.ir, plan, format, &self.notes_of(self.ir), &ops)?;
                write_out(io.stdout, &text)
            }
            Some(Command::Run(mut args)) => {
                args.publisher = crate::broker::start_publisher(&args)?;
                self.run(common, &choice, &args, io)
            }
            Some(Command::Plan) => self.plan(common, &choice, io),
            Some(Command::Profile) => self.profile(common, &choice, io),
            Some(Command::Ops { .. }) => Ok(()),
            None => self.tour(common, &choice, io),
        }
    }

    /// The command line, parsed against this program's name and about.
    fn parse<I, T>(&self, args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut cmd = <Cli as clap::CommandFactory>::command().name(self.name.clone());
        if let Some(about) = &self.about {
            cmd = cmd.about(about.clone());
        }
        if let Some(help) = &self.model_help {
            // Taken out of the arguments before they get here: declared for
            // `--help` only.
            cmd = cmd.arg(
                clap::Arg::new("model")
                    .long("model")
                    .value_name("NAME=PATH")
                    .help(help.clone())
                    .action(clap::ArgAction::Append)
                    .global(true),
            );
        }
        let matches = cmd.try_get_matches_from(args)?;
        <Cli as clap::FromArgMatches>::from_arg_matches(&matches)
    }

    /// `run`: each frame's results as a table or JSON lines, then the
    /// summary.
    fn run(
        &mut self,
        common: &Common,
        choice: &Choice<P::Mode>,
        args: &RunArgs,
        io: Io<'_>,
    ) -> Result<(), RunnerError> {
        let sink = if args.json {
            Sink::Json
        } else {
            Sink::Table(record::Table::default(), false)
        };
        let Io {
            stdin,
            stdout,
            stderr,
            progress,
        } = io;
        let result = if common.input.len() > 1 {
            let io = Io {
                stdin,
                stdout,
                stderr: &mut *stderr,
                progress,
            };
            self.run_streams(common, choice, sink, args, io)
        } else {
            self.outputs_read(args).and_then(|reads| {
                let (obs, summary) =
                    self.run_frames(common, choice, reads, sink, args, stdin, stdout, progress)?;
                if !common.quiet {
                    summarize(&mut *stderr, &obs, &summary)?;
                }
                Ok(())
            })
        };
        // The broker's summary also when the run failed: what reached it.
        crate::broker::close_publisher(args.publisher.as_ref(), common.quiet, stderr)?;
        result
    }

    /// `plan`: what the mode or the weights eliminate, priced with times
    /// measured on a short run of the full graph.
    fn plan(
        &mut self,
        common: &Common,
        choice: &Choice<P::Mode>,
        io: Io<'_>,
    ) -> Result<(), RunnerError> {
        let ir = self.ir;
        let mut pipeline = (self.make)();
        let w = choice
            .weights(&pipeline)
            .cloned()
            .ok_or_else(|| RunnerError::Usage("plan: no such mode".into()))?;
        let target: Arc<Plan> = match choice.mode().and_then(|m| pipeline.mode_plan(m)) {
            Some(plan) => Arc::new(plan.clone()),
            None => {
                let pattern = w
                    .zero_pattern(&ir.weight_keys)
                    .map_err(|e| RunnerError::Weights(e.to_string()))?;
                pipeline.pattern_plan(pattern)
            }
        };
        let full = pipeline.pattern_plan(0);
        let mut common = common.clone();
        common.frames = Some(common.frames.unwrap_or(10));
        let (obs, summary) = self.run_frames(
            &common,
            &Choice::Plan(full, w),
            OutputSet::ALL,
            Sink::Silent,
            &RunArgs::default(),
            io.stdin,
            io.stdout,
            io.progress,
        )?;
        let mut text = dce_diff(ir, &target, &obs.profiler);
        if ir.nodes.iter().any(|n| n.fills_buffer()) {
            text.push('\n');
            // A run-time pipeline's values are type-erased: no sizes.
            let bytes = Some(summary.buffer_bytes.as_slice()).filter(|b| !b.is_empty());
            text.push_str(&buffer_section(ir, &target, bytes));
        }
        if ir.nodes.iter().any(|n| n.strip.is_some()) {
            text.push('\n');
            text.push_str(&fusion_section(ir, &target));
        }
        write_out(io.stdout, &text)
    }

    /// `profile`: per-node times over a run.
    fn profile(
        &mut self,
        common: &Common,
        choice: &Choice<P::Mode>,
        io: Io<'_>,
    ) -> Result<(), RunnerError> {
        let (obs, _) = self.run_frames(
            common,
            choice,
            OutputSet::ALL,
            Sink::Silent,
            &RunArgs::default(),
            io.stdin,
            io.stdout,
            io.progress,
        )?;
        let notes = notes_section(self.ir, &self.notes_of(self.ir));
        write_out(io.stdout, &(obs.profiler.report() + &notes))
    }

    /// No subcommand, the tour: results, listing with measured times, what
    /// each other mode eliminates, the profile.
    fn tour(
        &mut self,
        common: &Common,
        choice: &Choice<P::Mode>,
        io: Io<'_>,
    ) -> Result<(), RunnerError> {
        let ir = self.ir;
        let sink = Sink::Table(record::Table::default(), false);
        let (obs, summary) = self.run_frames(
            common,
            choice,
            OutputSet::ALL,
            sink,
            &RunArgs::default(),
            io.stdin,
            io.stdout,
            io.progress,
        )?;
        let mut text = String::from("\n");
        let notes = self.notes_of(ir);
        let noted = Noted {
            timings: &obs.profiler,
            notes: &notes,
        };
        text.push_str(&listing(ir, &noted));
        let proto = (self.make)();
        for plan in proto.modes().into_iter().filter_map(|m| proto.mode_plan(m)) {
            if !plan.eliminated.is_empty() {
                text.push('\n');
                text.push_str(&dce_diff(ir, plan, &obs.profiler));
            }
        }
        text.push('\n');
        text.push_str(&obs.profiler.report());
        text.push_str(&notes_section(ir, &notes));
        write_out(io.stdout, &text)?;
        if !common.quiet {
            summarize(io.stderr, &obs, &summary)?;
        }
        Ok(())
    }

    /// The engine options against the subcommand and the pipeline: every
    /// combination that cannot run is a usage error before the input opens.
    fn check_engine(&self, cli: &Cli) -> Result<(), RunnerError> {
        let c = &cli.common;
        let usage = |m: String| Err(RunnerError::Usage(m));
        if c.engine != Engine::Pipelined {
            for (flag, given) in [
                ("--in-flight", c.in_flight.is_some()),
                ("--queue", c.queue.is_some()),
                ("--overflow", c.overflow.is_some()),
                ("--memory-budget", c.memory_budget.is_some()),
            ] {
                if given {
                    return usage(format!("{flag} needs --engine pipelined"));
                }
            }
        }
        if c.engine == Engine::Sequential {
            return Ok(());
        }
        let engine = format!("--engine {}", c.engine.flag());
        match &cli.command {
            // Runs no frame.
            Some(Command::Graph { .. }) => return Ok(()),
            Some(Command::Plan) => {
                return usage(format!(
                    "{engine}: plan measures the full graph on the sequential engine"
                ))
            }
            _ => {}
        }
        if self.parallel.is_none() {
            return usage(format!(
                "{engine}: pipeline `{}` runs on the sequential engine only; declare it `#[parallel]` in cortex_graph! and opt in with App::parallel()",
                self.ir.name
            ));
        }
        if c.weights.is_some() && c.engine == Engine::Pipelined {
            return usage(format!(
                "{engine} runs declared modes (--mode); --weights needs --engine sequential or parallel"
            ));
        }
        Ok(())
    }

    /// `run --dump DIR` needs the program's dump function ([`App::dump`]);
    /// `run --keep-going` skips failed frames, which an encoded video
    /// cannot do without.
    fn check_dump(&self, cli: &Cli) -> Result<(), RunnerError> {
        match &cli.command {
            Some(Command::Run(RunArgs {
                keep_going: true,
                encode: Some(file),
                ..
            })) => Err(RunnerError::Usage(format!(
                "--keep-going with --encode {}: a skipped frame would be missing from the video; encode without --keep-going",
                file.display()
            ))),
            Some(Command::Run(RunArgs {
                dump: Some(dir), ..
            })) if self.dump.is_none() => Err(RunnerError::Usage(match &self.graph_label {
                Some(_) => format!(
                    "--dump {}: {} has no output that is a picture (RgbFrame, GrayImage or ScoreMap)",
                    dir.display(),
                    self.subject()
                ),
                None => format!(
                    "--dump {}: program `{}` cannot dump pictures (it has no dump function)",
                    dir.display(),
                    self.name
                ),
            })),
            _ => Ok(()),
        }
    }
}

/// What a drawing shows over the graph: a mode's plan, islands and groups.
fn overlay<'a>(
    plan: Option<&'a Plan>,
    islands: &'a [Island],
    fusion: Option<&'a FusionPlan>,
    notes: &'a [Option<String>],
) -> Overlay<'a> {
    Overlay {
        plan,
        islands: plan.map(|_| islands),
        fusion,
        notes: Some(notes),
    }
}

/// `graph`'s text for `ir`: the listing, DOT or Mermaid with `plan` (a
/// mode's) shown, or the graph file over `ops`.
pub(crate) fn draw(
    ir: &GraphIr,
    plan: Option<&Plan>,
    format: GraphFormat,
    notes: &[Option<String>],
    ops: &Ops,
) -> Result<String, RunnerError> {
    // With a mode: its islands and their fused groups framed.
    let isl = plan.map(|p| islands(ir, Some(p))).unwrap_or_default();
    let fusion = plan.map(|p| shown_fusion_plan(ir, p));
    Ok(match format {
        GraphFormat::Listing => listing(
            ir,
            &Noted {
                timings: &(),
                notes,
            },
        ),
        GraphFormat::Dot => to_dot_with(ir, &overlay(plan, &isl, fusion.as_ref(), notes)),
        GraphFormat::Mermaid => to_mermaid_with(ir, &overlay(plan, &isl, fusion.as_ref(), notes)),
        GraphFormat::Json => GraphFile::export(ir, ops)?,
    })
}

/// Help and version go to stdout with success; anything else is a
/// one-line usage error.
fn clap_error(e: clap::Error, stdout: &mut dyn Write) -> Result<(), RunnerError> {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            write_out(stdout, &e.render().to_string())
        }
        _ => Err(RunnerError::Usage(first_line(&e.render().to_string()))),
    }
}
