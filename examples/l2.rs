//! Runs the seed's L2 ROI pipeline on a built-in synthetic clip (or on your
//! own image files) and shows what cortex knows about it: the graph listing
//! with measured per-node times, the DCE diff of a mode, per-frame results
//! and the profile.
//!
//! ```text
//! cargo run --release --example l2
//! cargo run --release --example l2 -- --mode POWER_SAVE --frames 60
//! cargo run --release --example l2 -- --dot graph.dot a.jpg b.jpg c.jpg
//! ```

use std::process::ExitCode;

use cortex::export::{to_dot, to_mermaid};
use cortex::l2::{demo_clip, L2Mode, L2};
use cortex::ops::RgbFrame;
use cortex::viz::{dce_diff, listing};
use cortex::Profiler;

struct Args {
    mode: L2Mode,
    frames: usize,
    width: usize,
    height: usize,
    dot: Option<String>,
    mermaid: Option<String>,
    images: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        mode: L2Mode::Balanced,
        frames: 30,
        width: 640,
        height: 480,
        dot: None,
        mermaid: None,
        images: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--mode" => {
                let m = value("--mode")?;
                args.mode = L2Mode::from_name(&m).ok_or(format!("unknown mode `{m}` (BALANCED or POWER_SAVE)"))?;
            }
            "--frames" => args.frames = value("--frames")?.parse().map_err(|e| format!("--frames: {e}"))?,
            "--size" => {
                let s = value("--size")?;
                let (w, h) = s.split_once('x').ok_or(format!("--size: expected WIDTHxHEIGHT, got `{s}`"))?;
                args.width = w.parse().map_err(|e| format!("--size width: {e}"))?;
                args.height = h.parse().map_err(|e| format!("--size height: {e}"))?;
            }
            "--dot" => args.dot = Some(value("--dot")?),
            "--mermaid" => args.mermaid = Some(value("--mermaid")?),
            "-h" | "--help" => {
                return Err("usage: l2 [--mode BALANCED|POWER_SAVE] [--frames N] [--size WxH] [--dot FILE] [--mermaid FILE] [IMAGE...]".into())
            }
            flag if flag.starts_with('-') => return Err(format!("unknown option `{flag}` (try --help)")),
            path => args.images.push(path.to_string()),
        }
    }
    Ok(args)
}

fn load_image(path: &str) -> Result<RgbFrame, String> {
    let img = image::open(path)
        .map_err(|e| format!("{path}: {e}"))?
        .to_rgb8();
    let (w, h) = img.dimensions();
    RgbFrame::from_shape_vec((h as usize, w as usize, 3), img.into_raw())
        .map_err(|e| format!("{path}: {e}"))
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let frames: Vec<RgbFrame> = if args.images.is_empty() {
        demo_clip(args.frames, args.width, args.height)
    } else {
        args.images
            .iter()
            .map(|p| load_image(p))
            .collect::<Result<_, _>>()?
    };
    let mut pipeline = L2::new();
    let mut profiler = Profiler::new(L2::ir());
    println!("frame  blur(var)  sharp  ssim    scene  roi (x,y,w,h)          score  jpeg");
    for (i, frame) in frames.iter().enumerate() {
        let out = pipeline
            .run_observed(args.mode, &mut profiler, frame)
            .map_err(|e| format!("frame {i}: {e}"))?;
        let r = &out.roi;
        println!(
            "{i:>5}  {:>9.1}  {:>5}  {:>6}  {:>5}  {:<22} {:>5.3}  {} B",
            out.blur.variance,
            if out.blur.is_blurry { "no" } else { "yes" },
            out.scene
                .ssim
                .map_or("-".to_string(), |s| format!("{s:.4}")),
            if out.scene.changed { "yes" } else { "no" },
            format!(
                "({},{},{},{})",
                r.bbox.x, r.bbox.y, r.bbox.width, r.bbox.height
            ),
            r.score,
            r.jpeg.len()
        );
    }
    println!();
    print!("{}", listing(L2::ir(), &profiler));
    println!();
    // What POWER_SAVE removes, priced with this run's measurements.
    print!(
        "{}",
        dce_diff(L2::ir(), L2Mode::PowerSave.plan(), &profiler)
    );
    println!();
    print!("{}", profiler.report());
    if let Some(path) = &args.dot {
        std::fs::write(path, to_dot(L2::ir(), Some(args.mode.plan())))
            .map_err(|e| format!("{path}: {e}"))?;
        println!("wrote {path}");
    }
    if let Some(path) = &args.mermaid {
        std::fs::write(path, to_mermaid(L2::ir(), Some(args.mode.plan())))
            .map_err(|e| format!("{path}: {e}"))?;
        println!("wrote {path}");
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("l2: {e}");
            ExitCode::FAILURE
        }
    }
}
