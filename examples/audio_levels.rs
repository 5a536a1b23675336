//! Outside vision: audio level metering over blocks of `f32` samples. Three
//! weighted features (loudness, crest factor, noisiness) fused into one
//! level, a smoothing state, three modes — and weights chosen at run time
//! (`--weights wr=0.5,wz=0`), whose zero pattern picks a precomputed plan.
//!
//! ```text
//! cargo run --release --example audio_levels
//! cargo run --release --example audio_levels -- --mode MUSIC
//! cargo run --release --example audio_levels -- --weights wr=1,wp=0,wz=0.5
//! cargo run --release --example audio_levels -- --mermaid   # the graph
//! ```

use std::f32::consts::TAU;
use std::process::ExitCode;

use cortex::cortex_graph;
use cortex::runner::parse_weights;
use cortex::tools::viz::dce_diff;
use cortex::{prelude::Profiler, Run, Weights};

/// Samples a second.
pub const RATE: usize = 16_000;
/// Samples a block (32 ms).
pub const BLOCK: usize = 512;

cortex_graph! {
    /// Audio level meter: loudness (RMS in dB, mapped to [0, 1]), crest
    /// factor (peak over RMS: clicks and drums) and noisiness (zero-crossing
    /// rate: hiss), fused with per-mode weights and smoothed over blocks.
    pub pipeline AudioLevels {
        input samples: Block;
        state _smooth: f32 = 0.0;

        mode SPEECH { wr: 0.6, wp: 0.2, wz: 0.2 }
        mode MUSIC  { wr: 0.5, wp: 0.5, wz: 0.0 }
        mode CHEAP  { wr: 1.0, wp: 0.0, wz: 0.0 }

        #[compilable] #[weight_key = "wr"] node loudness = loudness(samples);
        #[compilable] #[weight_key = "wp"] node crest = crest(samples);
        #[compilable] #[weight_key = "wz"] node noisiness = zero_crossings(samples);
        #[compilable] node level = fuse(loudness, crest, noisiness, weights);
        #[compilable] node smooth = smooth(level, _smooth);
        smooth -> _smooth;

        output level: f32, smooth: f32;
    }
}

/// One block of mono samples in [-1, 1]. (A newtype rather than `Vec<f32>`:
/// node functions take `&[f32]` through `Deref`.)
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block(pub Vec<f32>);

impl std::ops::Deref for Block {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        &self.0
    }
}

fn rms(s: &[f32]) -> f32 {
    if s.is_empty() {
        return 0.0;
    }
    (s.iter().map(|v| v * v).sum::<f32>() / s.len() as f32).sqrt()
}

/// RMS level in dBFS mapped from [−60, 0] dB to [0, 1].
pub fn loudness(s: &[f32]) -> f32 {
    let db = 20.0 * rms(s).max(1e-6).log10();
    ((db + 60.0) / 60.0).clamp(0.0, 1.0)
}

/// Crest factor (peak / RMS) mapped from [1, 10] to [0, 1].
pub fn crest(s: &[f32]) -> f32 {
    let r = rms(s);
    if r <= 1e-6 {
        return 0.0;
    }
    let peak = s.iter().fold(0f32, |m, v| m.max(v.abs()));
    ((peak / r - 1.0) / 9.0).clamp(0.0, 1.0)
}

/// Fraction of sample pairs that change sign.
pub fn zero_crossings(s: &[f32]) -> f32 {
    if s.len() < 2 {
        return 0.0;
    }
    let n = s
        .windows(2)
        .filter(|w| (w[0] >= 0.0) != (w[1] >= 0.0))
        .count();
    n as f32 / (s.len() - 1) as f32
}

/// Weighted mean of the features that run.
pub fn fuse(l: Option<&f32>, c: Option<&f32>, z: Option<&f32>, w: &Weights) -> f32 {
    let parts = [(l, "wr"), (c, "wp"), (z, "wz")];
    let total: f64 = parts.iter().map(|(_, k)| w.get_or_zero(k)).sum();
    if total <= 0.0 {
        return 0.0;
    }
    let sum: f64 = parts
        .iter()
        .map(|(v, k)| v.map_or(0.0, |v| f64::from(*v) * w.get_or_zero(k)))
        .sum();
    (sum / total) as f32
}

/// One-pole smoothing over blocks.
pub fn smooth(level: &f32, prev: &f32) -> f32 {
    prev + 0.3 * (level - prev)
}

/// A synthetic two-second signal: quiet hiss, then a 440 Hz tone, then
/// clicks on the tone. Block `b` of it.
pub fn block(b: usize) -> Block {
    Block(
        (0..BLOCK)
            .map(|i| {
                let n = b * BLOCK + i;
                let t = n as f32 / RATE as f32;
                // A cheap deterministic noise.
                let hash = (n as u32).wrapping_mul(2_654_435_761) >> 16;
                let noise = (hash as f32 / 65_535.0 - 0.5) * 0.02;
                let tone = if t >= 0.5 {
                    0.5 * (TAU * 440.0 * t).sin()
                } else {
                    0.0
                };
                let click = if t >= 1.25 && n % 1600 < 4 { 0.95 } else { 0.0 };
                noise + tone + click
            })
            .collect(),
    )
}

/// Runs `blocks` blocks in `mode`, or with `weights` (`k=v,…` over the
/// mode's table) when given; returns each block's `(level, smooth)` and a
/// report of what ran.
pub fn run(args: &[String]) -> Result<(Vec<(f32, f32)>, String), String> {
    let mut mode = AudioLevelsMode::Speech;
    let mut weights: Option<Weights> = None;
    let mut blocks = 2 * RATE / BLOCK;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--mode" => {
                let m = value()?;
                mode = AudioLevelsMode::from_name(m)
                    .ok_or(format!("unknown mode `{m}` (modes: SPEECH, MUSIC, CHEAP)"))?;
            }
            "--weights" => {
                let keys = &AudioLevels::ir().weight_keys;
                weights =
                    Some(parse_weights(value()?, keys, mode.weights()).map_err(|e| e.to_string())?);
            }
            "--blocks" => {
                blocks = value()?
                    .parse()
                    .ok()
                    .filter(|&n: &usize| n > 0)
                    .ok_or("--blocks: expected a positive number")?;
            }
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    let mut p = AudioLevels::new();
    let mut prof = Profiler::new(AudioLevels::ir());
    let mut levels = Vec::with_capacity(blocks);
    for b in 0..blocks {
        let samples = block(b);
        let mut out = AudioLevelsOutputs::default();
        let run = match &weights {
            Some(w) => Run::weights(w),
            None => Run::mode(mode),
        };
        p.run_with(&mut run.observed(&mut prof), &samples, &mut out)
            .map_err(|e| format!("block {b}: {e}"))?;
        levels.push((out.level, out.smooth));
    }
    let plan = match &weights {
        Some(w) => {
            let pattern = w
                .zero_pattern(&AudioLevels::ir().weight_keys)
                .map_err(|e| e.to_string())?;
            p.pattern_plan(pattern).as_ref().clone()
        }
        None => mode.plan().clone(),
    };
    let report = format!(
        "{}\n{}",
        dce_diff(AudioLevels::ir(), &plan, &prof),
        prof.report()
    );
    Ok((levels, report))
}

#[allow(dead_code)]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--mermaid") {
        print!(
            "{}",
            cortex::tools::export::to_mermaid(AudioLevels::ir(), None)
        );
        return ExitCode::SUCCESS;
    }
    match run(&args) {
        Ok((levels, report)) => {
            let mut text = String::from("block  level  smooth\n");
            for (b, (l, s)) in levels.iter().enumerate().step_by(4) {
                let bar = "#".repeat((s * 40.0) as usize);
                text.push_str(&format!("{b:>5}  {l:.3}  {s:.3}  {bar}\n"));
            }
            text.push_str(&format!("\n{report}"));
            // A closed pipe (`| head`) is not an error worth a panic.
            let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("audio_levels: {e}");
            ExitCode::FAILURE
        }
    }
}
