//! What L2's outputs look like to a person, shared by every graph of L2
//! (the compiled one and the one with the DNN text map): the program's
//! name, the columns of a frame's results and its pictures.

use cortex_vision::l2::BlurVerdict;
use cortex_vision::ops::{EncodedRoi, SceneChange, ScoreMap};
use cortex_vision::views;

use crate::sources::Frame;
use crate::{draw_box, DumpError, DumpSink, Record};

/// The program's name: the command's, and the prefix of its error lines.
pub const NAME: &str = "cortex-l2";

/// The columns of L2's outputs, shared by every graph of L2 (the DNN text
/// map's too): the fields of the blur verdict's, the scene change's and the
/// region's views ([`cortex_vision::views`]), which graph files' JSON lines
/// and the GStreamer element's messages show too.
pub(crate) fn fields(blur: &BlurVerdict, scene: &SceneChange, roi: &EncodedRoi) -> Record {
    let mut record = Record::new();
    let shown = [
        views::blur_verdict(blur),
        views::scene_change(scene),
        views::encoded_roi(roi),
    ];
    for view in shown {
        if let serde_json::Value::Object(m) = view {
            for (name, value) in m {
                record.push(name, value);
            }
        }
    }
    record
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
