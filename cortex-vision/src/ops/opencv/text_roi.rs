//! `text_roi` on OpenCV's MSER: the regions come from `cv::MSER`, the
//! filters and the map are the pure-Rust node's own.

use super::mser::OpenCvMser;
use crate::ops::mser::RegionBox;
use crate::ops::text_roi::{check_input, Scratch, TextRoi, TextRoiParams};
use crate::ops::{GrayImage, OpsError, ScoreMap};

/// [`crate::ops::text_roi::text_roi_with`] on OpenCV's MSER (feature
/// `opencv`): the `external_call` backend of the node. Same filters and
/// map; since the regions are the same, so are the results (the polarities
/// run one after the other). Always at full resolution (`half_resolution`
/// is ignored).
pub fn text_roi_opencv(gray: &GrayImage, params: &TextRoiParams) -> Result<TextRoi, OpsError> {
    check_input(gray, params)?;
    let mut cv = OpenCvMser::new(params.mser)?;
    let regions: Vec<RegionBox> = cv
        .detect(gray, params.polarity)?
        .into_iter()
        .map(|r| RegionBox {
            bbox: r.bbox,
            area: r.pixels.len() as u32,
            polarity: r.polarity,
        })
        .collect();
    let mut scratch = Scratch::default();
    scratch.regions = regions;
    let mut out = TextRoi {
        map: ScoreMap::zeros((0, 0)),
        boxes: Vec::new(),
    };
    scratch.finish(gray.dim(), params, &mut out.map, Some(&mut out.boxes));
    Ok(out)
}
