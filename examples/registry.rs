//! A pipeline whose nodes call their ops through the kernel registry
//! (`registry::ops::…`) — the frame's grey image, its text map and
//! saliency, the salient region encoded — on the synthetic clip; then which
//! kernel each op runs at each shape and why, and the graph's nodes
//! annotated with their kernels.
//!
//! ```text
//! cargo run --release --example registry --features opencv,turbojpeg -- --frames 30 --size 1920x1080
//! CORTEX_KERNELS=pure-rust cargo run --release --example registry
//! CORTEX_FORCE_KERNEL=encode_roi=opencv cargo run --release --example registry --features opencv
//! ```
//!
//! Decisions are cached in the autotune cache (`CORTEX_AUTOTUNE_CACHE`, by
//! default `~/.cache/cortex/autotune.json`): a second run does not measure.

use std::process::ExitCode;
use std::time::Instant;

use cortex::cortex_graph;
use cortex::l2::demo_clip;
use cortex::ops::{EncodedRoi, GrayImage, RgbFrame, ScoreMap};
use cortex::registry;

cortex_graph! {
    /// The text map and the salient region of a frame, each op run by the
    /// registry's choice of kernel, into buffers the pipeline owns.
    pub pipeline RegScore {
        input frame: RgbFrame;

        #[compilable] node gray: GrayImage = registry::ops::to_gray_into(frame, &mut gray)?;
        node text: ScoreMap = registry::ops::text_map_into(gray, &mut text)?;
        #[compilable]
        node saliency: ScoreMap = registry::ops::saliency_dft_into(gray, &mut saliency)?;
        #[external_call]
        node roi: EncodedRoi = registry::ops::encode_roi_into(frame, saliency, &mut roi)?;

        output text: ScoreMap, roi: EncodedRoi;
    }
}

fn parse() -> Result<(usize, usize, usize), String> {
    let (mut frames, mut width, mut height) = (10, 640, 480);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--frames" => {
                frames = value("--frames")?
                    .parse()
                    .map_err(|e| format!("--frames: {e}"))?
            }
            "--size" => {
                let s = value("--size")?;
                let (w, h) = s
                    .split_once('x')
                    .ok_or(format!("--size: expected WxH, got `{s}`"))?;
                width = w.parse().map_err(|e| format!("--size: {e}"))?;
                height = h.parse().map_err(|e| format!("--size: {e}"))?;
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}` (--frames N, --size WxH)"
                ))
            }
        }
    }
    Ok((frames, width, height))
}

fn run() -> Result<(), String> {
    let (frames, width, height) = parse()?;
    #[cfg(feature = "opencv")]
    cortex::ops::opencv::single_threaded().map_err(|e| e.to_string())?;
    let clip = demo_clip(frames, width, height);
    let mut pipeline = RegScore::new();
    // The outputs of one frame are filled again by the next (`run_into`),
    // as the pipeline's own buffers are.
    let mut out = None;
    for (i, frame) in clip.iter().enumerate() {
        let t = Instant::now();
        let out = match &mut out {
            Some(out) => pipeline
                .run_into(RegScoreMode::Full, frame, out)
                .map(|()| out),
            None => pipeline
                .run(RegScoreMode::Full, frame)
                .map(|first| out.insert(first)),
        }
        .map_err(|e| format!("frame {i}: {e}"))?;
        println!(
            "frame {i:3}: {:8.2} ms  roi {}x{} at ({}, {}), {} bytes",
            t.elapsed().as_secs_f64() * 1e3,
            out.roi.bbox.width,
            out.roi.bbox.height,
            out.roi.bbox.x,
            out.roi.bbox.y,
            out.roi.byte_size()
        );
    }
    println!();
    print!("{}", registry::report());
    println!();
    let reg = registry::current();
    for (node, note) in RegScore::ir()
        .nodes
        .iter()
        .zip(reg.annotate(RegScore::ir()))
    {
        println!(
            "{:<9} {:<40} {}",
            node.name,
            node.op,
            note.unwrap_or_default()
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
