//! How well each text map finds the words of OpenCV's segmented scene-text
//! photographs (`scenetext_segmented_word0*.jpg` with their `_mask.png`):
//! L2's MSER text map and PP-OCRv4's DNN text map, each turned into L2's
//! top-scoring regions (`roi_regions_into`, `RegionParams::DEFAULT`). For
//! each map: the share of the word's mask pixels inside the strongest
//! region and inside all regions, and the share of the frame the regions
//! cover (a map that covered everything would hold every word).
//!
//! `cargo bench -p cortex-models --bench text_quality`; needs the model
//! (`scripts/fetch-models.sh`) and `opencv-doc`'s photographs.

use std::path::{Path, PathBuf};

use cortex_models::text::{self, TextDetector};
use cortex_vision::ops::roi_regions::{roi_regions_into, RegionParams, RoiRegions};
use cortex_vision::ops::text_roi::{self, TextRoiParams};
use cortex_vision::ops::{self, BBox, GrayImage, RgbFrame, ScoreMap};

const DIR: &str = "/usr/share/doc/opencv-doc/examples/text";

fn rgb(path: &Path) -> Option<RgbFrame> {
    let img = image::open(path).ok()?.to_rgb8();
    let (w, h) = img.dimensions();
    RgbFrame::from_shape_vec((h as usize, w as usize, 3), img.into_raw()).ok()
}

fn inside(b: &BBox, y: usize, x: usize) -> bool {
    (b.x..b.x + b.width).contains(&x) && (b.y..b.y + b.height).contains(&y)
}

/// (mask share in the top region, mask share in all regions, frame share
/// of all regions, region count).
fn score(map: &ScoreMap, mask: &RgbFrame) -> (f64, f64, f64, usize) {
    let mut regions = RoiRegions::default();
    roi_regions_into(map, &RegionParams::DEFAULT, &mut regions).unwrap();
    let boxes: Vec<BBox> = regions.regions.iter().map(|r| r.bbox).collect();
    let (h, w) = map.dim();
    let (mut total, mut top, mut any, mut covered) = (0usize, 0usize, 0usize, 0usize);
    for y in 0..h {
        for x in 0..w {
            let in_any = boxes.iter().any(|b| inside(b, y, x));
            covered += usize::from(in_any);
            if mask[[y, x, 0]] > 127 {
                total += 1;
                any += usize::from(in_any);
                top += usize::from(boxes.first().is_some_and(|b| inside(b, y, x)));
            }
        }
    }
    let share = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
    (
        share(top, total),
        share(any, total),
        share(covered, h * w),
        boxes.len(),
    )
}

fn main() {
    let model = text::model_path(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    if !model.is_file() {
        println!(
            "text_quality: skipped: no model at {} (scripts/fetch-models.sh)",
            model.display()
        );
        return;
    }
    println!(
        "| photograph | map | mask in top region | mask in regions | frame in regions | regions |"
    );
    println!("|---|---|---|---|---|---|");
    let mut sums = [[0.0f64; 3]; 2];
    let mut n = 0;
    for i in 1..=9 {
        let name = format!("scenetext_segmented_word{i:02}");
        let (Some(frame), Some(mask)) = (
            rgb(&Path::new(DIR).join(format!("{name}.jpg"))),
            rgb(&Path::new(DIR).join(format!("{name}_mask.png"))),
        ) else {
            continue;
        };
        let (h, w, _) = frame.dim();
        let mut gray = GrayImage::zeros((0, 0));
        ops::to_gray_into(&frame, &mut gray).unwrap();
        let mut mser = ScoreMap::zeros((0, 0));
        text_roi::text_map_into(&gray, &TextRoiParams::DEFAULT, &mut mser).unwrap();
        let detector = TextDetector::load(&model, w, h).unwrap();
        let mut dnn = ScoreMap::zeros((0, 0));
        text::text_map_into(&frame, &detector, &mut dnn).unwrap();
        for (k, (label, map)) in [("MSER", &mser), ("DNN (PP-OCRv4)", &dnn)]
            .into_iter()
            .enumerate()
        {
            let (top, any, area, count) = score(map, &mask);
            sums[k][0] += top;
            sums[k][1] += any;
            sums[k][2] += area;
            println!("| {name} | {label} | {top:.1} % | {any:.1} % | {area:.1} % | {count} |");
        }
        n += 1;
    }
    if n == 0 {
        println!("text_quality: skipped: no photographs in {DIR} (opencv-doc)");
        return;
    }
    for (k, label) in ["MSER", "DNN (PP-OCRv4)"].iter().enumerate() {
        let [top, any, area] = sums[k].map(|s| s / n as f64);
        println!("| mean of {n} | {label} | {top:.1} % | {any:.1} % | {area:.1} % | |");
    }
}
