//! What the compiled L2's outputs look like to a person: the program's
//! name, a frame's `outputs` (each output under its name, through its
//! type's view, as graph files show theirs) and its pictures.

use cortex_vision::l2::L2Outputs;
use cortex_vision::ops::{EncodedRoi, ScoreMap};
use cortex_vision::views;

use crate::sources::Frame;
use crate::{draw_box, DumpError, DumpSink, Record};

/// The program's name: the command's, and the prefix of its error lines.
pub const NAME: &str = "cortex-l2";

/// L2's outputs as a frame's `outputs`: each output under its declared
/// name, through its type's view ([`cortex_vision::views`]) — the object a
/// graph file of L2 (`run --graph`) shows for the same frame, since its
/// outputs go through the op library's views, which are these.
pub(crate) fn fields(out: &L2Outputs) -> Record {
    Record::new()
        .field("blur", views::blur_verdict(&out.blur))
        .field("scene", views::scene_change(&out.scene))
        .field("fused", views::score_map(&out.fused))
        .field("roi", views::encoded_roi(&out.roi))
        .field("regions", views::roi_regions(&out.regions))
        .field("qp_map", views::qp_map(&out.qp_map))
}

/// The pictures of L2's outputs.
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
