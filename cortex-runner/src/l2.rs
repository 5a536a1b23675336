//! The L2 region-of-interest pipeline ([`cortex_vision::l2`]) as a program:
//! its record function (the columns of the table and the `outputs` of a
//! JSON line), its pictures for `run --dump`, its regions for `run
//! --encode`, which outputs each of those reads, and both parallel
//! engines. The `cortex-l2` command runs it; `examples/l2.rs` of the
//! facade too.

use cortex_vision::l2::{L2Outputs, L2};

use crate::sources::Frame;
use crate::{draw_box, App, DumpError, DumpSink, Reader, Record};

/// The program's name: the command's, and the prefix of its error lines.
pub const NAME: &str = "cortex-l2";

/// The outputs [`record`] reads: a `run` without `--dump` or `--encode`
/// computes only these (not `regions` nor `qp_map`).
pub const RECORD_READS: &[&str] = &["blur", "scene", "roi"];

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
///
/// # Errors
/// A picture that cannot be written.
pub fn dump(sink: &DumpSink<'_>, frame: &Frame, out: &L2Outputs) -> Result<(), DumpError> {
    sink.save_heatmap("fused", &out.fused)?;
    let mut boxed = frame.image.clone();
    let b = &out.roi.bbox;
    draw_box(&mut boxed, (b.x, b.y, b.width, b.height), [255, 40, 40], 3);
    sink.save_rgb("roi", &boxed)?;
    Ok(())
}

/// The program: `app().main()` is the whole command.
pub fn app() -> App<L2> {
    App::<L2>::new(NAME, record)
        .about("The L2 region-of-interest pipeline: blur, scene cuts, ROI score and crop")
        .dump(dump)
        .encode_regions(|out: &L2Outputs| out.regions.regions.clone())
        .encode_qp_map(|out: &L2Outputs| &out.qp_map)
        .reads(Reader::Record, RECORD_READS)
        .reads(Reader::Dump, &["fused", "roi"])
        .reads(Reader::Regions, &["regions"])
        .reads(Reader::QpMap, &["qp_map"])
        .parallel()
}
