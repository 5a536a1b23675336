//! The command line's schema (clap): subcommands, the options every
//! subcommand takes, their parsers, and what they select.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use cortex_core::runtime::dispatch::weights_over;
use cortex_core::stream::{Overflow, StreamOptions};
use cortex_core::weights::Weights;

use crate::error::RunnerError;

#[derive(Parser, Debug)]
#[command(
    disable_version_flag = true,
    after_help = "Without a command: the tour — run's table, the graph listing with measured \
                  times, the DCE diff of every mode that removes nodes, and the profile."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    #[command(flatten)]
    pub(crate) common: Common,
}

/// Options every subcommand takes.
#[derive(Args, Debug, Clone)]
pub(crate) struct Common {
    /// Declared mode to run (default: the first declared one).
    #[arg(long, global = true, value_name = "MODE")]
    pub(crate) mode: Option<String>,
    /// Run-time weights `key=value,…` over the mode's table (run_weights).
    #[arg(long, global = true, value_name = "K=V,...")]
    pub(crate) weights: Option<String>,
    /// Stop after N frames.
    #[arg(long, global = true, value_name = "N", value_parser = at_least_one)]
    pub(crate) frames: Option<u64>,
    /// Frames from: a .y4m file, `-` (Y4M on stdin), a directory or glob of
    /// PNG/JPEG files, an image, or (feature opencv) a video file or
    /// `camera:N`. Default: the built-in synthetic clip. Repeat it to run
    /// several inputs at once (`run` only), each a stream with its own
    /// pipeline on one worker pool; results carry their stream.
    #[arg(long, short, global = true, value_name = "INPUT", action = clap::ArgAction::Append)]
    pub(crate) input: Vec<String>,
    /// The pipeline described in FILE (JSON) instead of the compiled one,
    /// for `run` (results as JSON lines), `graph`, `plan` and `profile`:
    /// its nodes call the op library (`ops` lists it) and the program's
    /// own.
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) graph: Option<PathBuf>,
    /// The graph the program runs in place of a `--graph` file
    /// ([`App::graph_file`](crate::App::graph_file)), with the name its
    /// messages go by.
    #[arg(skip)]
    pub(crate) built_in: Option<(String, std::sync::Arc<cortex_core::dynamic::GraphFile>)>,
    /// Size of the synthetic clip, WIDTHxHEIGHT.
    #[arg(long, global = true, value_name = "WxH", default_value = "640x480", value_parser = parse_size)]
    pub(crate) size: (usize, usize),
    /// No progress bar and no summary on stderr.
    #[arg(long, short, global = true)]
    pub(crate) quiet: bool,
    /// How frames run: `sequential` (one node at a time), `parallel` (a
    /// frame's independent nodes at once on the worker pool) or `pipelined`
    /// (also the next frame's state-free nodes beside this frame's rest, the
    /// source read on its own thread). Every engine gives the same outputs
    /// for the frames it processes. `parallel` and `pipelined` need a
    /// pipeline declared `#[parallel]`; pipelined runs time every node for
    /// the profile and --trace, but not per frame (stages of frames
    /// overlap): `node_ms` is null.
    #[arg(long, global = true, value_enum, default_value_t = Engine::Sequential, help_heading = "Engine")]
    pub(crate) engine: Engine,
    /// Run every node as its own whole-frame call instead of the fused
    /// groups of `#[compilable(strip = …)]` nodes, which run strip by strip
    /// over every core by default. The outputs are the same either way.
    #[arg(long, global = true, help_heading = "Engine")]
    pub(crate) no_fusion: bool,
    /// Run the nodes a mode rates (`where text every 4 or …`) on every
    /// frame instead of holding their values in between: the every-frame
    /// plan, for comparing results and time.
    #[arg(long, global = true, help_heading = "Engine")]
    pub(crate) no_rates: bool,
    /// Several inputs: worker threads all streams share, 1 to 256
    /// [default: one per core]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=256), help_heading = "Engine")]
    pub(crate) threads: Option<u64>,
    /// Pipelined: frames being processed at once, 1 to 64 [default: 2]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64), help_heading = "Engine")]
    pub(crate) in_flight: Option<u64>,
    /// Pipelined: frames waiting between the source and the pipeline, 1 to
    /// 1024 [default: 4]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024), help_heading = "Engine")]
    pub(crate) queue: Option<u64>,
    /// Pipelined: what a full queue does — `block` the source (lose
    /// nothing), `drop-oldest` waiting frame, or `keep-latest` only (live
    /// sources) [default: block]
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "POLICY",
        help_heading = "Engine"
    )]
    pub(crate) overflow: Option<OverflowArg>,
    /// Pipelined: the most bytes the frames in flight, waiting and being
    /// read may take together, e.g. `4G` or `512M` (K, M, G, T: powers of
    /// 1024); a run whose frames cannot fit is refused before the first
    /// frame [default: 2G]
    #[arg(long, global = true, value_name = "BYTES", value_parser = parse_bytes, help_heading = "Engine")]
    pub(crate) memory_budget: Option<u64>,
    /// Network inputs (URLs): reopen one that stalls, fails or closes
    /// instead of ending its stream, waiting INTERVAL (doubling up to
    /// MAX-INTERVAL) between attempts; give up after ATTEMPTS in a row or
    /// GIVE-UP away. Frames missed meanwhile are counted. POLICY:
    /// `attempts=N,interval=T,max-interval=T,give-up=T` (T in seconds, or
    /// `500ms`) [default: attempts=0 (no limit), interval=0.5,
    /// max-interval=8, give-up=300]
    #[arg(long, global = true, value_name = "POLICY", num_args = 0..=1, default_missing_value = "", value_parser = parse_reconnect, help_heading = "Network inputs")]
    pub(crate) reconnect: Option<crate::sources::ReconnectPolicy>,
    /// Network inputs: a read waiting longer than T seconds fails (with
    /// --reconnect, the input is reopened); 0 waits forever [default: 10]
    #[arg(long, global = true, value_name = "T", value_parser = parse_duration, help_heading = "Network inputs")]
    pub(crate) read_timeout: Option<std::time::Duration>,
}

impl Common {
    /// `--reconnect` and `--read-timeout` apply to network inputs: given
    /// without one, they are a usage error.
    pub(crate) fn check_network(&self) -> Result<(), RunnerError> {
        let network = self.input.iter().any(|i| crate::sources::is_network(i));
        for (flag, given) in [
            ("--reconnect", self.reconnect.is_some()),
            ("--read-timeout", self.read_timeout.is_some()),
        ] {
            if given && !network {
                return Err(RunnerError::Usage(format!(
                    "{flag} applies to network inputs (rtsp://, http://, udp://, srt://, …), and no --input is one"
                )));
            }
        }
        Ok(())
    }

    /// How network inputs are read.
    pub(crate) fn network(&self) -> crate::sources::NetworkOptions {
        let d = crate::sources::NetworkOptions::default();
        crate::sources::NetworkOptions {
            read_timeout: match self.read_timeout {
                None => d.read_timeout,
                Some(t) if t.is_zero() => None,
                Some(t) => Some(t),
            },
            reconnect: self.reconnect,
        }
    }
}

fn parse_reconnect(s: &str) -> Result<crate::sources::ReconnectPolicy, String> {
    crate::sources::ReconnectPolicy::parse(s)
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    crate::sources::reconnect_duration(s)
}

/// `--engine`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Engine {
    #[default]
    Sequential,
    Parallel,
    Pipelined,
}

impl Engine {
    /// The engine of a frame-by-frame run (`None`: pipelined, a stream).
    pub(crate) fn frame_engine(self) -> Option<cortex_core::run::Engine> {
        match self {
            Engine::Sequential => Some(cortex_core::run::Engine::Sequential),
            Engine::Parallel => Some(cortex_core::run::Engine::Parallel),
            Engine::Pipelined => None,
        }
    }

    pub(crate) fn flag(self) -> &'static str {
        match self {
            Engine::Sequential => "sequential",
            Engine::Parallel => "parallel",
            Engine::Pipelined => "pipelined",
        }
    }
}

/// `--overflow`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OverflowArg {
    Block,
    DropOldest,
    KeepLatest,
}

impl Common {
    /// The stream options of a pipelined run.
    pub(crate) fn stream_options(&self) -> StreamOptions {
        let d = StreamOptions::DEFAULT;
        let size =
            |n: Option<u64>, d: usize| n.map_or(d, |n| usize::try_from(n).unwrap_or(usize::MAX));
        StreamOptions {
            in_flight: size(self.in_flight, d.in_flight),
            queue: size(self.queue, d.queue),
            overflow: match self.overflow {
                None => d.overflow,
                Some(OverflowArg::Block) => Overflow::Block,
                Some(OverflowArg::DropOldest) => Overflow::DropOldest,
                Some(OverflowArg::KeepLatest) => Overflow::KeepLatest,
            },
        }
    }
}

// Parsed once per process: the size of the largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Frames in, per-frame results out (a table, or JSON lines).
    Run(RunArgs),
    /// The graph: a listing, DOT / Mermaid (with --mode's plan shown), or
    /// a graph file (`--format json`).
    Graph {
        /// Output format.
        #[arg(long, value_enum, default_value_t = GraphFormat::Listing)]
        format: GraphFormat,
    },
    /// What --mode or --weights eliminates, priced with per-node times
    /// measured on a short run of the full graph (--frames, default 10).
    Plan,
    /// Per-node mean / p50 / p99 times over a run.
    Profile,
    /// The op library graph files call: every op with its inputs and
    /// output, or one op in full (parameters, types, defaults).
    Ops {
        /// The op to show (`vision.text_map`); all of them when absent.
        name: Option<String>,
    },
}

#[derive(Args, Debug, Default)]
pub(crate) struct RunArgs {
    /// One JSON object per frame and line instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Compute and show only these outputs (comma-separated names, as
    /// `graph` lists them): only their producers run, and each frame's
    /// results carry only them. Several inputs show only them too, but
    /// compute every output.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub(crate) outputs: Option<Vec<String>>,
    /// Write a Chrome trace event file (Perfetto, chrome://tracing): a
    /// slice per node and frame, a track per thread (not with --engine
    /// pipelined).
    #[arg(long, value_name = "FILE")]
    pub(crate) trace: Option<PathBuf>,
    /// Write pictures of each frame's results into DIR.
    #[arg(long, value_name = "DIR")]
    pub(crate) dump: Option<PathBuf>,
    /// Report a frame the pipeline fails on and go on with the next one;
    /// exit 1 at the end if any failed (without it, the first failing
    /// frame ends the run).
    #[arg(long)]
    pub(crate) keep_going: bool,
    /// Re-encode the input into FILE (container from its extension) with
    /// FFmpeg, each frame carrying the pipeline's regions of interest or its
    /// quantiser-offset map (feature ffmpeg).
    #[arg(long, value_name = "FILE", help_heading = "Encoding")]
    pub(crate) encode: Option<PathBuf>,
    /// FFmpeg encoder: libx264, libx265, libvpx-vp9 (read the regions), or
    /// any other with --roi off [default: libx264]
    #[arg(long, value_name = "NAME", help_heading = "Encoding")]
    pub(crate) codec: Option<String>,
    /// `regions` (or `on`): the regions as AVRegionOfInterest side data;
    /// `map`: the per-block quantiser-offset map, as rectangles the codec
    /// reads back into the same block offsets; `off`: the plain encode at
    /// the same settings [default: regions]
    #[arg(
        long,
        value_enum,
        value_name = "REGIONS|MAP|OFF",
        help_heading = "Encoding"
    )]
    pub(crate) roi: Option<RoiSwitch>,
    /// Quantiser offset of the strongest region, as a fraction of the
    /// codec's QP range, in (0, 1] [default: 0.2]
    #[arg(long, value_name = "F", help_heading = "Encoding")]
    pub(crate) roi_strength: Option<f32>,
    /// Quantiser offset of everything outside the regions, as a fraction of
    /// the codec's QP range, in [0, 1]: bits taken from the background of
    /// frames that have regions [default: 0]
    #[arg(long, value_name = "F", help_heading = "Encoding")]
    pub(crate) roi_background: Option<f32>,
    /// Constant-quality level (x264 default 23, x265 28, vp9 32).
    #[arg(long, value_name = "N", help_heading = "Encoding")]
    pub(crate) crf: Option<u32>,
    /// Overwrite the --encode FILE if it exists (otherwise an existing
    /// file is refused before anything runs).
    #[arg(long, help_heading = "Encoding")]
    pub(crate) force: bool,
    /// Also send each frame's JSON line (as --json prints it) to an MQTT
    /// broker, QoS 1, topic PREFIX/<stream>/results (default prefix
    /// `cortex`); user and password from CORTEX_MQTT_USERNAME and
    /// CORTEX_MQTT_PASSWORD; `mqtts://` with TLS (feature mqtt-tls) checks
    /// the broker against the CA file in CORTEX_MQTT_CA. The run never
    /// waits for the broker (feature mqtt).
    #[arg(
        long,
        value_name = "mqtt://HOST:PORT/PREFIX",
        help_heading = "Publishing"
    )]
    pub(crate) publish: Option<String>,
    /// --publish: messages waiting while the broker is slow or away, 1 to
    /// 1000000; when full, the oldest is dropped and counted [default:
    /// 1000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000), help_heading = "Publishing")]
    pub(crate) publish_queue: Option<u64>,
    /// The publisher of --publish, started once the command line is
    /// checked.
    #[arg(skip)]
    pub(crate) publisher: Option<crate::broker::Publisher>,
}

/// `--roi`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RoiSwitch {
    #[value(alias = "on")]
    Regions,
    Map,
    Off,
}

impl RoiSwitch {
    /// The name `--roi` takes.
    pub(crate) fn name(self) -> &'static str {
        match self {
            RoiSwitch::Regions => "regions",
            RoiSwitch::Map => "map",
            RoiSwitch::Off => "off",
        }
    }
}

impl RunArgs {
    /// What an encode attaches.
    pub(crate) fn roi_mode(&self) -> RoiSwitch {
        self.roi.unwrap_or(RoiSwitch::Regions)
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GraphFormat {
    Listing,
    Dot,
    Mermaid,
    /// The pipeline as a graph file over the op library (what `--graph`
    /// reads).
    Json,
}

fn parse_size(s: &str) -> Result<(usize, usize), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT, got `{s}`"))?;
    let parse = |v: &str| {
        v.parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("`{v}` is not a positive whole number"))
    };
    Ok((parse(w)?, parse(h)?))
}

/// A whole number ≥ 1, said so when it is not (clap's own range check
/// would name `u64::MAX` as the upper bound).
fn at_least_one(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("it must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a whole number (at least 1)")),
    }
}

/// `N`, or `N` followed by `K`, `M`, `G` or `T` (powers of 1024): a
/// positive number of bytes.
fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(format!("`{s}`: the unit is K, M, G or T")),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    digits
        .parse::<u64>()
        .ok()
        .filter(|&n| n > 0)
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("`{s}` is not a positive number of bytes (e.g. 4G, 512M)"))
}

/// Parses `key=value,…` over `base`: each key must be one of the pipeline's
/// weight keys, each value a finite number ≥ 0.
pub fn parse_weights(
    spec: &str,
    keys: &[std::borrow::Cow<'static, str>],
    base: &Weights,
) -> Result<Weights, RunnerError> {
    Ok(weights_over(spec, keys, base)?)
}

/// The first non-empty line of a clap message, without its `error: `
/// prefix: a usage error is one line.
pub(crate) fn first_line(s: &str) -> String {
    let line = s.lines().find(|l| !l.trim().is_empty()).unwrap_or(s);
    line.trim_start_matches("error: ").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("4g"), Ok(4 << 30));
        assert_eq!(parse_bytes("1T"), Ok(1 << 40));
        for bad in ["0", "", "G", "-1G", "2X", "1.5G", "99999999999T"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("640x480"), Ok((640, 480)));
        assert!(parse_size("640").is_err());
        assert!(parse_size("0x4").is_err());
        assert!(parse_size("ax4").is_err());
    }

    #[test]
    fn weights_spec() {
        let keys: Vec<std::borrow::Cow<'static, str>> = vec!["a".into(), "b".into()];
        let base = Weights::new().with("a", 1.0).with("b", 2.0);
        let w = parse_weights("b=0.5", &keys, &base).unwrap();
        assert_eq!((w.get("a"), w.get("b")), (Some(1.0), Some(0.5)));
        for bad in ["b=abc", "b=-1", "c=1", "b", "b=inf", "b=NaN", "b=1,b=2"] {
            let e = parse_weights(bad, &keys, &base).unwrap_err().to_string();
            assert!(e.starts_with("--weights:"), "{bad}: {e}");
        }
        assert!(parse_weights("c=1", &keys, &base)
            .unwrap_err()
            .to_string()
            .contains("keys: a, b"));
    }

    #[test]
    fn first_lines() {
        assert_eq!(first_line("error: bad thing\n\nUsage: x"), "bad thing");
    }
}
