//! L2's POWER_SAVE with its rate (the text map computed on every 4th frame
//! and on a scene cut, held in between) against the same mode computing
//! the text map on every frame (`set_rates(false)`): the mean frame time,
//! and what holding costs in results — per frame, the IoU of the ROI box
//! and the correlation of the fused map with the every-frame run's — and
//! whether any held text map was used on a cut frame.
//!
//! Input: `BENCH_INPUT`, anything the runner opens (a `.y4m` file in the
//! default build; a video file with `--features ffmpeg`), else the
//! built-in synthetic clip. Each clip runs at its own size and upscaled
//! (bilinear) to 1920×1080. Timing: interleaved rounds (each variant runs
//! the whole clip once per round, the order alternating), medians of the
//! per-round mean frame time, sequential engine (`run_into`).
//!
//! ```text
//! cargo bench --bench rates
//! BENCH_INPUT=clip.y4m BENCH_FRAMES=300 BENCH_ROUNDS=5 cargo bench --bench rates
//! BENCH_INPUT=/usr/share/doc/opencv-doc/examples/data/Megamind.avi cargo bench --bench rates --features ffmpeg
//! ```

use std::time::{Duration, Instant};

use cortex::l2::{L2Mode, L2Outputs, L2};
use cortex::ops::resize::{resize_linear_exact_u8, ResizeScratch};
use cortex::ops::{EncodedRoi, RgbFrame};
use cortex::runner::sources::{self, FrameSource, SyntheticClip};

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Up to `n` frames of the input (or of the synthetic clip).
fn load(n: usize) -> (String, Vec<RgbFrame>) {
    match std::env::var("BENCH_INPUT") {
        Ok(path) => {
            let mut src: Box<dyn FrameSource + Send> =
                sources::open(Some(&path), (0, 0), Box::new(std::io::empty()))
                    .unwrap_or_else(|e| panic!("{path}: {e}"));
            let frames = std::iter::from_fn(|| src.next_frame())
                .take(n)
                .map(|f| f.expect("frame decodes").image)
                .collect();
            (path, frames)
        }
        Err(_) => {
            let clip = SyntheticClip::new(768, 576);
            let frames = (0..n as u64).map(|f| clip.frame(f)).collect();
            ("synthetic clip".into(), frames)
        }
    }
}

/// `f` resized (bilinear, per channel) to `w`×`h`.
fn upscale(f: &RgbFrame, w: usize, h: usize) -> RgbFrame {
    let (sh, sw, _) = f.dim();
    let mut out = RgbFrame::zeros((h, w, 3));
    let mut scratch = ResizeScratch::default();
    let mut plane = vec![0u8; w * h];
    for c in 0..3 {
        let src: Vec<u8> = f.slice(ndarray::s![.., .., c]).iter().copied().collect();
        resize_linear_exact_u8(&src, (sh, sw), &mut plane, (h, w), &mut scratch)
            .expect("sizes within limits");
        for (o, &v) in out.slice_mut(ndarray::s![.., .., c]).iter_mut().zip(&plane) {
            *o = v;
        }
    }
    out
}

fn iou(a: &EncodedRoi, b: &EncodedRoi) -> f64 {
    let (a, b) = (a.bbox, b.bbox);
    let ix = (a.x + a.width)
        .min(b.x + b.width)
        .saturating_sub(a.x.max(b.x));
    let iy = (a.y + a.height)
        .min(b.y + b.height)
        .saturating_sub(a.y.max(b.y));
    let inter = (ix * iy) as f64;
    let union = (a.width * a.height + b.width * b.height) as f64 - inter;
    if union > 0.0 {
        inter / union
    } else {
        1.0
    }
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// Runs the clip through `p` (POWER_SAVE, `run_into`), returning the time.
fn run_clip(p: &mut L2, frames: &[RgbFrame], out: &mut L2Outputs) -> Duration {
    p.reset();
    let t = Instant::now();
    for f in frames {
        p.run_into(L2Mode::PowerSave, f, out).expect("frame runs");
    }
    t.elapsed()
}

fn main() {
    let n = env("BENCH_FRAMES", 200usize);
    let rounds = env("BENCH_ROUNDS", 5usize);
    let (name, clip) = load(n);
    let (h0, w0, _) = clip[0].dim();
    println!("input: {name}, {} frames", clip.len());
    println!("| size | every frame ms | rated ms | rated / every | text computed | cuts | median IoU | p10 IoU | median corr | p10 corr |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (w, h) in [(w0, h0), (1920, 1080)] {
        let frames: Vec<RgbFrame> = if (w, h) == (w0, h0) {
            clip.clone()
        } else {
            clip.iter().map(|f| upscale(f, w, h)).collect()
        };
        // Results: the rated run against the every-frame run, frame by frame.
        let (mut rated, mut every) = (L2::new(), L2::new());
        every.set_rates(false);
        let (mut ious, mut corrs) = (Vec::new(), Vec::new());
        let (mut computed, mut cuts) = (0usize, 0usize);
        for (i, f) in frames.iter().enumerate() {
            let a = rated.run(L2Mode::PowerSave, f).expect("frame runs");
            let b = every.run(L2Mode::PowerSave, f).expect("frame runs");
            let held = rated.holds()[0].held_last_frame;
            assert!(!every.holds()[0].held_last_frame);
            if b.scene.changed {
                cuts += 1;
                assert!(!held, "frame {i}: a held text map on a cut frame");
            }
            if held {
                ious.push(iou(&a.roi, &b.roi));
                corrs.push(cortex_testkit::pearson(
                    a.fused.iter().copied(),
                    b.fused.iter().copied(),
                ));
            } else {
                computed += 1;
                assert_eq!(a.fused, b.fused, "frame {i}: a computing frame differs");
            }
        }
        // Held frames only (computing frames are identical, IoU 1).
        let all = frames.len() as f64;
        let pad = |v: &mut Vec<f64>| v.extend(std::iter::repeat_n(1.0, computed));
        pad(&mut ious);
        pad(&mut corrs);
        // Time.
        let mut outs = [
            rated
                .run(L2Mode::PowerSave, &frames[0])
                .expect("frame runs"),
            every
                .run(L2Mode::PowerSave, &frames[0])
                .expect("frame runs"),
        ];
        let mut pipes = [rated, every];
        let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
        for r in 0..rounds {
            for k in 0..2 {
                let i = (k + r) % 2;
                let t = run_clip(&mut pipes[i], &frames, &mut outs[i]);
                times[i].push(t / frames.len() as u32);
            }
        }
        let med = |v: &mut Vec<Duration>| {
            v.sort();
            v[v.len() / 2].as_secs_f64() * 1e3
        };
        let (rated_ms, every_ms) = (med(&mut times[0]), med(&mut times[1]));
        println!(
            "| {w}x{h} | {every_ms:.2} | {rated_ms:.2} | {:.0} % | {computed} of {} ({:.0} %) | {cuts} | {:.3} | {:.3} | {:.4} | {:.4} |",
            rated_ms / every_ms * 100.0,
            frames.len(),
            computed as f64 / all * 100.0,
            quantile(&mut ious, 0.5),
            quantile(&mut ious, 0.1),
            quantile(&mut corrs, 0.5),
            quantile(&mut corrs, 0.1),
        );
    }
}
