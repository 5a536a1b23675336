//! The L2 region-of-interest pipeline as a command-line program, built on
//! `cortex::runner`: run it on the built-in synthetic clip, a Y4M stream
//! (`ffmpeg -i clip.mp4 -f yuv4mpegpipe - | l2 run -i -`), image files or
//! (feature `opencv`) any video.
//!
//! ```text
//! cargo run --release --example l2                        # the tour
//! cargo run --release --example l2 -- run --json
//! cargo run --release --example l2 -- plan --mode POWER_SAVE
//! cargo run --release --example l2 -- run --dump out/ --trace trace.json
//! cargo run --release --example l2 -- run --engine pipelined --overflow drop-oldest
//! cargo run --release --features ffmpeg --example l2 -- run -i clip.mp4 --encode roi.mkv
//! ```
//!
//! L2 is declared `#[parallel]`, and the program opts in to the parallel
//! and pipelined engines with [`App::parallel`].

use std::process::ExitCode;

use cortex::l2::{L2Outputs, L2};
use cortex::runner::{draw_box, App, DumpError, DumpSink, Record};
use cortex::sources::Frame;

/// The columns of the results table and the `outputs` of a JSON line.
pub fn record(out: &L2Outputs) -> Record {
    let b = &out.roi.bbox;
    Record::new()
        .field("sharpness", out.blur.variance)
        .field("baseline", out.blur.baseline)
        .field("blurry", out.blur.is_blurry)
        .field("below_100", out.blur.below_threshold)
        .field("ssim", out.scene.ssim)
        // A first frame has nothing to compare with: not a cut.
        .field("cut", out.scene.changed && out.scene.ssim.is_some())
        .field("roi", vec![b.x, b.y, b.width, b.height])
        .field("score", f64::from(out.roi.score))
        .field("jpeg_bytes", out.roi.jpeg.len())
}

/// `run --dump DIR`: the fused score map as a heat map, and the frame with
/// the ROI box drawn on it.
pub fn dump(sink: &DumpSink<'_>, frame: &Frame, out: &L2Outputs) -> Result<(), DumpError> {
    sink.save_heatmap("fused", &out.fused)?;
    let mut boxed = frame.image.clone();
    let b = &out.roi.bbox;
    draw_box(&mut boxed, (b.x, b.y, b.width, b.height), [255, 40, 40], 3);
    sink.save_rgb("roi", &boxed)?;
    Ok(())
}

/// The program.
pub fn app() -> App<L2> {
    App::<L2>::new("l2", record)
        .about("The L2 region-of-interest pipeline: blur, scene cuts, ROI score and crop")
        .dump(dump)
        .encode_regions(|out: &L2Outputs| out.regions.regions.clone())
        .encode_qp_map(|out: &L2Outputs| &out.qp_map)
        .parallel()
}

#[allow(dead_code)]
fn main() -> ExitCode {
    app().main()
}
