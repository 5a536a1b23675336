//! Pictures of a run for `run --dump DIR`: frames, heat maps of score maps
//! and boxes drawn on frames, written as PNG files named
//! `<frame:06>_<name>.png`.

use std::path::{Path, PathBuf};

use cortex_vision::ops::{RgbFrame, ScoreMap};

/// Writing a picture failed.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {why}")]
pub struct DumpError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub why: String,
}

/// Where one frame's pictures go.
#[derive(Debug)]
pub struct DumpSink<'a> {
    dir: &'a Path,
    frame: u64,
}

impl<'a> DumpSink<'a> {
    /// Pictures of frame `frame` in `dir` (which exists).
    pub fn new(dir: &'a Path, frame: u64) -> Self {
        DumpSink { dir, frame }
    }

    /// The path of picture `name` of this frame.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{:06}_{name}.png", self.frame))
    }

    /// Writes an RGB picture.
    pub fn save_rgb(&self, name: &str, image: &RgbFrame) -> Result<PathBuf, DumpError> {
        let path = self.path(name);
        let (h, w, _) = image.dim();
        let fail = |why: String| DumpError {
            path: path.clone(),
            why,
        };
        let data: Vec<u8> = image.iter().copied().collect();
        let img = image::RgbImage::from_raw(w as u32, h as u32, data)
            .ok_or_else(|| fail("image buffer of the wrong size".into()))?;
        img.save(&path).map_err(|e| fail(e.to_string()))?;
        Ok(path)
    }

    /// Writes a score map as a heat map ([`heatmap`]).
    pub fn save_heatmap(&self, name: &str, map: &ScoreMap) -> Result<PathBuf, DumpError> {
        self.save_rgb(name, &heatmap(map))
    }
}

/// A score map as colours: its finite range stretched to black → red →
/// yellow → white (NaN and infinities black).
pub fn heatmap(map: &ScoreMap) -> RgbFrame {
    let (lo, hi) = map
        .iter()
        .filter(|v| v.is_finite())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let span = if hi > lo { hi - lo } else { 1.0 };
    let (h, w) = map.dim();
    RgbFrame::from_shape_fn((h, w, 3), |(y, x, c)| {
        let v = map[(y, x)];
        if !v.is_finite() {
            return 0;
        }
        let t = ((v - lo) / span).clamp(0.0, 1.0) * 3.0;
        // Each channel ramps up over one third of the range.
        let ramp = (t - c as f32).clamp(0.0, 1.0);
        (ramp * 255.0).round() as u8
    })
}

/// Draws a rectangle outline `thickness` pixels wide, clipped to the image.
pub fn draw_box(
    image: &mut RgbFrame,
    (x, y, w, h): (usize, usize, usize, usize),
    color: [u8; 3],
    thickness: usize,
) {
    let (ih, iw, _) = image.dim();
    let (x1, y1) = ((x + w).min(iw), (y + h).min(ih));
    for yy in y.min(ih)..y1 {
        for xx in x.min(iw)..x1 {
            let edge = yy < y + thickness
                || yy + thickness >= y + h
                || xx < x + thickness
                || xx + thickness >= x + w;
            if edge {
                for (c, &v) in color.iter().enumerate() {
                    image[(yy, xx, c)] = v;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heatmap_spans_black_to_white() {
        let map = ScoreMap::from_shape_vec((1, 3), vec![0.0, 0.5, 1.0]).unwrap();
        let img = heatmap(&map);
        assert_eq!([img[(0, 0, 0)], img[(0, 0, 1)], img[(0, 0, 2)]], [0, 0, 0]);
        assert_eq!(
            [img[(0, 2, 0)], img[(0, 2, 1)], img[(0, 2, 2)]],
            [255, 255, 255]
        );
        // The middle is 1.5 of 3 ramps: red full, green half, blue none.
        assert_eq!(
            [img[(0, 1, 0)], img[(0, 1, 1)], img[(0, 1, 2)]],
            [255, 128, 0]
        );
    }

    #[test]
    fn box_outline_is_clipped() {
        let mut img = RgbFrame::zeros((10, 10, 3));
        draw_box(&mut img, (2, 2, 4, 4), [255, 0, 0], 1);
        assert_eq!(img[(2, 2, 0)], 255);
        assert_eq!(img[(5, 5, 0)], 255);
        assert_eq!(img[(3, 3, 0)], 0);
        draw_box(&mut img, (8, 8, 10, 10), [0, 255, 0], 1);
        assert_eq!(img[(9, 8, 1)], 255);
    }
}
