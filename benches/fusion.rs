//! Fused strip groups against whole-frame passes: a five-node chain mixing
//! pointwise and stencil ops — gray → 3×3 box smoothing → difference with
//! the previous smoothed frame → threshold and scale → weighted sum with a
//! centre prior — at 768×576, 1920×1080 and 3840×2160.
//!
//! Variants, run in interleaved rounds (each round runs every variant once,
//! in rotating order, so load from other processes hits them alike):
//! - `unfused 1t`: each node a whole-frame pass, one after the other, on
//!   one thread (how a graph of whole-frame calls runs a frame);
//! - `unfused 2t`: each node a whole-frame pass, each pass cut into strips
//!   over the pool (parallel, but every intermediate a whole frame);
//! - `fused 1t`: the chain as one fused group on a one-thread pool;
//! - `fused 2t rN`: the fused group on the two-thread pool, strips of N rows;
//! - `… prior in group` / `… prior folded`: the prior computed by a member
//!   of the group from the gray plane's size instead of given as an input:
//!   every run, or once per size (constant folding).
//!
//! Prints medians, ratios to `unfused 1t`, the intermediate values' bytes
//! (whole frames unfused, every worker's scratch fused) and `uptime`.
//!
//! ```text
//! cargo bench --bench fusion
//! BENCH_ROUNDS=21 cargo bench --bench fusion
//! ```

use std::time::{Duration, Instant};

use cortex::ops::strip::{CenterStrip, GrayStrip, ScoreFusionStrip};
use cortex::ops::{center_crop_with, to_gray, CenterParams, RgbFrame};
use cortex::runner::sources::SyntheticClip;
use cortex::strip::{
    AnyPlane, FusedGroup, Geometry, GroupBuilder, Inputs, Kind, StripError, StripKernel, StripMut,
    Strips, Window,
};

/// 3×3 box mean of a gray plane, reflect-101 border, rounded.
struct Smooth3;

fn reflect101(p: isize, n: usize) -> usize {
    if n == 1 {
        return 0;
    }
    let p = p.unsigned_abs();
    if p >= n {
        2 * (n - 1) - p
    } else {
        p
    }
}

impl StripKernel for Smooth3 {
    type Out = u8;
    fn name(&self) -> &str {
        "smooth3"
    }
    fn kind(&self) -> Kind {
        Kind::Stencil(Window::symmetric(1))
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[0])
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, u8>) -> Result<(), StripError> {
        let src = inputs.plane::<u8>(0)?;
        let (h, w) = (src.height(), src.width());
        let mut col = vec![0u16; w];
        for (y, row) in out.rows_mut() {
            let up = src.row(reflect101(y as isize - 1, h))?;
            let mid = src.row(y)?;
            let down = src.row(reflect101(y as isize + 1, h))?;
            for (((c, &a), &b), &d) in col.iter_mut().zip(up).zip(mid).zip(down) {
                *c = u16::from(a) + u16::from(b) + u16::from(d);
            }
            let at = |x: isize| col[reflect101(x, w)];
            row[0] = ((at(-1) + col[0] + at(1) + 4) / 9) as u8;
            if w > 2 {
                let inner = col.iter().zip(&col[1..]).zip(&col[2..]);
                for (d, ((&a, &b), &c)) in row[1..w - 1].iter_mut().zip(inner) {
                    *d = ((a + b + c + 4) / 9) as u8;
                }
            }
            if w > 1 {
                row[w - 1] = ((at(w as isize - 2) + col[w - 1] + at(w as isize) + 4) / 9) as u8;
            }
        }
        Ok(())
    }
}

/// `|a − b|` of two gray planes.
struct AbsDiff;

impl StripKernel for AbsDiff {
    type Out = u8;
    fn name(&self) -> &str {
        "absdiff"
    }
    fn kind(&self) -> Kind {
        Kind::Pointwise
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[0])
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, u8>) -> Result<(), StripError> {
        let a = inputs.plane::<u8>(0)?.span(out.rows())?;
        let b = inputs.plane::<u8>(1)?.span(out.rows())?;
        for ((d, &p), &q) in out.as_mut_slice().iter_mut().zip(a).zip(b) {
            *d = p.abs_diff(q);
        }
        Ok(())
    }
}

/// Differences below 12 → 0, others scaled to `[0, 1]`.
struct Threshold;

impl StripKernel for Threshold {
    type Out = f32;
    fn name(&self) -> &str {
        "threshold"
    }
    fn kind(&self) -> Kind {
        Kind::Pointwise
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[0])
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, f32>) -> Result<(), StripError> {
        let a = inputs.plane::<u8>(0)?.span(out.rows())?;
        for (d, &p) in out.as_mut_slice().iter_mut().zip(a) {
            *d = if p < 12 {
                0.0
            } else {
                f32::from(p) * (1.0 / 255.0)
            };
        }
        Ok(())
    }
}

/// The floor of any implementation of the chain: the same inputs read and
/// output written, with next to no arithmetic.
struct Traffic;

impl StripKernel for Traffic {
    type Out = f32;
    fn name(&self) -> &str {
        "traffic"
    }
    fn kind(&self) -> Kind {
        Kind::Pointwise
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(inputs[1])
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, f32>) -> Result<(), StripError> {
        let rgb = inputs.plane::<u8>(0)?.span(out.rows())?;
        let prev = inputs.plane::<u8>(1)?.span(out.rows())?;
        let prior = inputs.plane::<f32>(2)?.span(out.rows())?;
        let it = out
            .as_mut_slice()
            .iter_mut()
            .zip(rgb.chunks_exact(3))
            .zip(prev)
            .zip(prior);
        for (((d, c), &p), &q) in it {
            *d = q + f32::from(c[0] ^ c[1] ^ c[2] ^ p);
        }
        Ok(())
    }
}

/// The chain; `prev` (the previous smoothed frame) and `prior` are inputs.
fn chain() -> FusedGroup {
    let mut g = GroupBuilder::new();
    let (rgb, prev, prior) = (g.input(), g.input(), g.input());
    let gray = g.kernel(GrayStrip, &[rgb]).unwrap();
    let smooth = g.kernel(Smooth3, &[gray]).unwrap();
    let diff = g.kernel(AbsDiff, &[smooth, prev]).unwrap();
    let thr = g.kernel(Threshold, &[diff]).unwrap();
    let score = g
        .kernel(ScoreFusionStrip::new(&[0.7, 0.3]).unwrap(), &[thr, prior])
        .unwrap();
    g.output(score).unwrap();
    g.build().unwrap()
}

/// The centre prior with constant folding declined: computed every run.
struct EveryRun(CenterStrip);

impl StripKernel for EveryRun {
    type Out = f32;
    fn name(&self) -> &str {
        "center (every run)"
    }
    fn kind(&self) -> Kind {
        self.0.kind()
    }
    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        self.0.geometry(inputs)
    }
    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, f32>) -> Result<(), StripError> {
        self.0.run(inputs, out)
    }
}

/// The chain with the prior a member computed from the gray plane's size
/// (folded: once per size; else every run); `prev` is an input.
fn chain_with_prior(folded: bool) -> FusedGroup {
    let mut g = GroupBuilder::new();
    let (rgb, prev) = (g.input(), g.input());
    let gray = g.kernel(GrayStrip, &[rgb]).unwrap();
    let smooth = g.kernel(Smooth3, &[gray]).unwrap();
    let diff = g.kernel(AbsDiff, &[smooth, prev]).unwrap();
    let thr = g.kernel(Threshold, &[diff]).unwrap();
    let center = CenterStrip::new(CenterParams::DEFAULT).unwrap();
    let prior = if folded {
        g.kernel(center, &[gray]).unwrap()
    } else {
        g.kernel(EveryRun(center), &[gray]).unwrap()
    };
    let score = g
        .kernel(ScoreFusionStrip::new(&[0.7, 0.3]).unwrap(), &[thr, prior])
        .unwrap();
    g.output(score).unwrap();
    g.build().unwrap()
}

/// The chain as five single-node groups (unfused, each pass in strips).
struct Passes([FusedGroup; 5]);

fn one<K: StripKernel + 'static>(k: K, n: usize) -> FusedGroup {
    let mut g = GroupBuilder::new();
    let args: Vec<_> = (0..n).map(|_| g.input()).collect();
    let v = g.kernel(k, &args).unwrap();
    g.output(v).unwrap();
    g.build().unwrap()
}

impl Passes {
    fn new() -> Self {
        Passes([
            one(GrayStrip, 1),
            one(Smooth3, 1),
            one(AbsDiff, 2),
            one(Threshold, 1),
            one(ScoreFusionStrip::new(&[0.7, 0.3]).unwrap(), 2),
        ])
    }

    fn run(&mut self, rgb: AnyPlane<'_>, prev: AnyPlane<'_>, prior: AnyPlane<'_>) {
        let [a, b, c, d, e] = &mut self.0;
        a.run(&[rgb], Strips::Auto).unwrap();
        b.run(&[a.output::<u8>(0).unwrap().into()], Strips::Auto)
            .unwrap();
        c.run(&[b.output::<u8>(0).unwrap().into(), prev], Strips::Auto)
            .unwrap();
        d.run(&[c.output::<u8>(0).unwrap().into()], Strips::Auto)
            .unwrap();
        e.run(&[d.output::<f32>(0).unwrap().into(), prior], Strips::Auto)
            .unwrap();
    }

    fn intermediate_bytes(&self) -> usize {
        // Outputs of the first four passes are whole-frame intermediates.
        self.0[..4]
            .iter()
            .map(|g| {
                g.output::<u8>(0).map_or(0, |p| p.as_slice().len())
                    + g.output::<f32>(0).map_or(0, |p| 4 * p.as_slice().len())
            })
            .sum()
    }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    if let Ok(out) = std::process::Command::new("uptime").output() {
        print!("uptime before: {}", String::from_utf8_lossy(&out.stdout));
    }
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    println!(
        "rayon pool: {} threads; {rounds} interleaved rounds",
        rayon::current_num_threads()
    );
    let heights = [8usize, 16, 32, 64, 128];
    for (w, h) in [(768usize, 576usize), (1920, 1080), (3840, 2160)] {
        let clip = SyntheticClip::new(w, h);
        let frame: RgbFrame = clip.frame(5);
        let prev_frame = clip.frame(3);
        // The previous smoothed frame, as the chain's state would hold it.
        let mut prev_group = {
            let mut g = GroupBuilder::new();
            let x = g.input();
            let gray = g.kernel(GrayStrip, &[x]).unwrap();
            let s = g.kernel(Smooth3, &[gray]).unwrap();
            g.output(s).unwrap();
            g.build().unwrap()
        };
        let rgb_g = Geometry::new(w, h).with_channels(3);
        prev_group
            .run(
                &[AnyPlane::new(prev_frame.as_slice().unwrap(), rgb_g).unwrap()],
                Strips::Auto,
            )
            .unwrap();
        let prev = prev_group.output::<u8>(0).unwrap().as_slice().to_vec();
        let prior = center_crop_with(&to_gray(&frame).unwrap(), &CenterParams::DEFAULT).unwrap();
        let g = Geometry::new(w, h);
        let inputs = [
            AnyPlane::new(frame.as_slice().unwrap(), rgb_g).unwrap(),
            AnyPlane::new(&prev, g).unwrap(),
            AnyPlane::new(prior.as_slice().unwrap(), g).unwrap(),
        ];

        let mut unfused = chain();
        let mut passes = Passes::new();
        let mut fused1 = chain();
        let mut fused2: Vec<FusedGroup> = heights.iter().map(|_| chain()).collect();
        let mut traffic = {
            let mut g = GroupBuilder::new();
            let (a, b, c) = (g.input(), g.input(), g.input());
            let t = g.kernel(Traffic, &[a, b, c]).unwrap();
            g.output(t).unwrap();
            g.build().unwrap()
        };
        let mut names = vec![
            "unfused 1t".to_string(),
            "unfused 2t".into(),
            "fused 1t r32".into(),
        ];
        names.extend(heights.iter().map(|r| format!("fused 2t r{r}")));
        names.push("floor: traffic only 2t r32".into());
        names.push("fused 2t r32, prior in group".into());
        names.push("fused 2t r32, prior folded".into());
        let mut with_prior = [chain_with_prior(false), chain_with_prior(true)];
        let floor = 3 + heights.len();
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
        let count = names.len();
        for round in 0..rounds + 1 {
            for k in 0..count {
                let v = (k + round) % count;
                let t = Instant::now();
                match v {
                    0 => unfused.run_unfused(&inputs).unwrap(),
                    1 => passes.run(inputs[0], inputs[1], inputs[2]),
                    2 => one_thread
                        .install(|| fused1.run(&inputs, Strips::Rows(32)))
                        .unwrap(),
                    v if v < 3 + heights.len() => fused2[v - 3]
                        .run(&inputs, Strips::Rows(heights[v - 3]))
                        .unwrap(),
                    v if v == floor => traffic.run(&inputs, Strips::Rows(32)).unwrap(),
                    v => with_prior[v - floor - 1]
                        .run(&inputs[..2], Strips::Rows(32))
                        .unwrap(),
                }
                let dt = t.elapsed();
                // Round 0 warms the buffers and is not counted.
                if round > 0 {
                    times[v].push(dt);
                }
            }
        }
        // Every variant's output, bit for bit.
        let want: Vec<u32> = unfused
            .output::<f32>(0)
            .unwrap()
            .as_slice()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        let same = |p: &[f32]| p.iter().map(|v| v.to_bits()).eq(want.iter().copied());
        let identical = same(passes.0[4].output::<f32>(0).unwrap().as_slice())
            && same(fused1.output::<f32>(0).unwrap().as_slice())
            && fused2
                .iter()
                .chain(&with_prior)
                .all(|f| same(f.output::<f32>(0).unwrap().as_slice()));
        let base = median(&mut times[0].clone());
        println!("\n{w}x{h}: outputs bit-identical: {identical}");
        println!("| variant | median ms | speed-up vs unfused 1t |");
        println!("|---|---:|---:|");
        for (name, t) in names.iter().zip(times.iter_mut()) {
            let m = median(t);
            println!(
                "| {name} | {:.2} | {:.2}x |",
                m.as_secs_f64() * 1e3,
                base.as_secs_f64() / m.as_secs_f64()
            );
        }
        // Where the time goes: each pass alone on one thread.
        let mut per_pass = [Duration::ZERO; 5];
        let reps = 9;
        for (k, slot) in per_pass.iter_mut().enumerate() {
            let mut t = Vec::with_capacity(reps);
            for _ in 0..reps {
                let [a, b, c, d, e] = &mut passes.0;
                let start = Instant::now();
                one_thread
                    .install(|| match k {
                        0 => a.run(&[inputs[0]], Strips::Count(1)),
                        1 => b.run(&[a.output::<u8>(0).unwrap().into()], Strips::Count(1)),
                        2 => c.run(
                            &[b.output::<u8>(0).unwrap().into(), inputs[1]],
                            Strips::Count(1),
                        ),
                        3 => d.run(&[c.output::<u8>(0).unwrap().into()], Strips::Count(1)),
                        _ => e.run(
                            &[d.output::<f32>(0).unwrap().into(), inputs[2]],
                            Strips::Count(1),
                        ),
                    })
                    .unwrap();
                t.push(start.elapsed());
            }
            *slot = median(&mut t);
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "passes alone, 1 thread, ms: gray {:.2}, smooth3 {:.2}, absdiff {:.2}, threshold {:.2}, fusion {:.2}",
            ms(per_pass[0]), ms(per_pass[1]), ms(per_pass[2]), ms(per_pass[3]), ms(per_pass[4])
        );
        println!(
            "intermediates: unfused {:.1} MiB (whole frames; the 2t passes {:.1} MiB), fused scratch {:.1} KiB at r32 on 2 threads, {:.1} KiB at r128",
            unfused.unfused_intermediate_bytes() as f64 / 1048576.0,
            passes.intermediate_bytes() as f64 / 1048576.0,
            fused2[2].scratch_bytes() as f64 / 1024.0,
            fused2[4].scratch_bytes() as f64 / 1024.0,
        );
    }
    if let Ok(out) = std::process::Command::new("uptime").output() {
        print!("\nuptime: {}", String::from_utf8_lossy(&out.stdout));
    }
}
