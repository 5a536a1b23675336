//! The seed's L2 region-of-interest pipeline, declared with `cortex_graph!`
//! over the vision kernels of [`crate::ops`], and a built-in synthetic clip
//! to run it on without any input files.

use ndarray::Array3;

use crate::cortex_graph;
use crate::ops::{self, BlurReport, EncodedRoi, GrayImage, RgbFrame, SceneChange, ScoreMap};

cortex_graph! {
    /// The seed's L2 pipeline: blur and scene-change checks, four score maps
    /// fused with per-mode weights, and the JPEG of the top region.
    ///
    /// `POWER_SAVE` zeroes the saliency and motion weights, so its plan runs
    /// neither `saliency_dft` nor `motion_map`.
    pub pipeline L2 {
        input frame: RgbFrame;
        state _prev_gray: GrayImage = GrayImage::zeros((0, 0));

        mode BALANCED   { wc: 0.4, wt: 0.3, ws: 0.2, wm: 0.1 }
        mode POWER_SAVE { wc: 0.7, wt: 0.3, ws: 0.0, wm: 0.0 }

        #[compilable] node gray = ops::to_gray(frame)?;
        #[compilable] node blur = ops::blur_detector(gray)?;
        #[compilable] node scene = ops::scene_change(gray, _prev_gray)?;
        #[compilable] #[weight_key = "wc"] node center = ops::center_crop(gray)?;
        #[weight_key = "wt"] node text = ops::text_roi::text_map(gray)?;
        #[compilable] #[weight_key = "ws"] node saliency = ops::saliency_dft(gray)?;
        #[compilable] #[weight_key = "wm"] node motion = ops::motion_map(gray, _prev_gray)?;
        #[compilable] node fused = ops::score_fusion(center, text, saliency, motion, weights)?;
        #[external_call] node roi = ops::encode_roi(frame, fused)?;
        gray -> _prev_gray;

        output blur: BlurReport, scene: SceneChange, fused: ScoreMap, roi: EncodedRoi;
    }
}

/// A deterministic synthetic clip of `count` frames, `width × height`: a
/// textured background, a block of dark text-like strokes, and a bright disc
/// moving across — enough structure for every kernel to respond.
pub fn demo_clip(count: usize, width: usize, height: usize) -> Vec<RgbFrame> {
    (0..count).map(|f| demo_frame(f, width, height)).collect()
}

fn demo_frame(f: usize, width: usize, height: usize) -> RgbFrame {
    let (w, h) = (width as f32, height as f32);
    let (cx, cy) = (w * (0.2 + 0.6 * ((f % 30) as f32 / 30.0)), h * 0.6);
    let r = w.min(h) * 0.08;
    Array3::from_shape_fn((height, width, 3), |(y, x, c)| {
        let (xf, yf) = (x as f32, y as f32);
        // Background: smooth gradient plus hashed texture.
        let hash =
            ((x as u32).wrapping_mul(73_856_093) ^ (y as u32).wrapping_mul(19_349_663)) >> 27;
        let mut v = 60.0 + 80.0 * (xf / w) + 40.0 * (yf / h) + hash as f32;
        // Text-like strokes: dark vertical bars in a band near the top.
        let in_band = yf > h * 0.15 && yf < h * 0.25 && xf > w * 0.1 && xf < w * 0.6;
        if in_band && (x / 3) % 4 != 0 && (x / 24) % 5 != 4 {
            v = 20.0;
        }
        // A bright moving disc.
        if (xf - cx).powi(2) + (yf - cy).powi(2) < r * r {
            v = 235.0;
        }
        (v + c as f32 * 6.0).clamp(0.0, 255.0) as u8
    })
}
