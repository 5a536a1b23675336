//! What L2's outputs look like to a person, shared by every graph of L2
//! (the compiled one and the one with the DNN text map): the program's
//! name, the columns of a frame's results and its pictures.

use cortex_vision::l2::BlurVerdict;
use cortex_vision::ops::{EncodedRoi, SceneChange, ScoreMap};

use crate::sources::Frame;
use crate::{draw_box, DumpError, DumpSink, Record};

/// The program's name: the command's, and the prefix of its error lines.
pub const NAME: &str = "cortex-l2";

/// The columns of L2's outputs, shared by every graph of L2 (the DNN text
/// map's too).
pub(crate) fn fields(blur: &BlurVerdict, scene: &SceneChange, roi: &EncodedRoi) -> Record {
    let b = &roi.bbox;
    Record::new()
        .field("sharpness", blur.variance)
        .field("baseline", blur.baseline)
        .field("blurry", blur.is_blurry)
        .field("below_100", blur.below_threshold)
        .field("ssim", scene.ssim)
        // A first frame has nothing to compare with: not a cut.
        .field("cut", scene.changed && scene.ssim.is_some())
        .field("roi", vec![b.x, b.y, b.width, b.height])
        .field("score", f64::from(roi.score))
        .field("jpeg_bytes", roi.jpeg.len())
}

/// The pictures of L2's outputs, shared by every graph of L2.
pub(crate) fn dump_maps(
    sink: &DumpSink<'_>,
    frame: &Frame,
    fused: &ScoreMap,
    roi: &EncodedRoi,
) -> Result<(), DumpError> {
    sink.save_heatmap("fused", fused)?;
    let mut boxed = frame.image.clone();
    let b = &roi.bbox;
    draw_box(&mut boxed, (b.x, b.y, b.width, b.height), [255, 40, 40], 3);
    sink.save_rgb("roi", &boxed)?;
    Ok(())
}
