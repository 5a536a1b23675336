//! The built-in synthetic clip, generated frame by frame, that exercises
//! every node of the L2 pipeline where a viewer can see it: a textured
//! background, a block of rendered text, a moving object, a stretch of
//! blurred frames and one hard scene cut. The runner plays it when no input
//! is given; tests and benches take its frames.

use ndarray::Array3;

use crate::ops::RgbFrame;

/// Where things happen in a [`SyntheticClip`], by frame index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntheticLayout {
    /// Frames in the clip.
    pub len: u64,
    /// Frames `blur_start..blur_end` are blurred (a box blur of the
    /// scene, as if the camera lost focus).
    pub blur_start: u64,
    /// End (exclusive) of the blurred stretch.
    pub blur_end: u64,
    /// The first frame of the second scene: a hard cut.
    pub cut: u64,
}

impl SyntheticLayout {
    /// The built-in clip: 48 frames, blurred 10..16, cut at 24.
    pub const DEFAULT: SyntheticLayout = SyntheticLayout {
        len: 48,
        blur_start: 10,
        blur_end: 16,
        cut: 24,
    };

    /// Whether frame `f` is in the blurred stretch.
    pub fn is_blurred(&self, f: u64) -> bool {
        (self.blur_start..self.blur_end).contains(&f)
    }
}

/// The generated clip (30 frames per second). As an iterator it yields its
/// frames in order, up to [`SyntheticLayout::len`]; [`frame`](Self::frame)
/// generates any frame by index.
#[derive(Debug, Clone)]
pub struct SyntheticClip {
    width: usize,
    height: usize,
    layout: SyntheticLayout,
    next: u64,
}

impl SyntheticClip {
    /// The default clip at `width × height` (callers check the size).
    pub fn new(width: usize, height: usize) -> Self {
        SyntheticClip {
            width,
            height,
            layout: SyntheticLayout::DEFAULT,
            next: 0,
        }
    }

    /// The clip with another layout.
    pub fn with_layout(mut self, layout: SyntheticLayout) -> Self {
        self.layout = layout;
        self
    }

    /// Its layout.
    pub fn layout(&self) -> SyntheticLayout {
        self.layout
    }

    /// Where the moving object's centre is in frame `f`, `(x, y)` in pixels.
    pub fn object_center(&self, f: u64) -> (f32, f32) {
        let (w, h) = (self.width as f32, self.height as f32);
        let cut = self.layout.cut.max(1);
        if f < cut {
            let t = f as f32 / cut as f32;
            (w * (0.15 + 0.7 * t), h * 0.62)
        } else {
            let t = ((f - cut) as f32 / cut as f32).min(1.0);
            (w * (0.85 - 0.7 * t), h * 0.38)
        }
    }

    /// The moving object's radius in pixels.
    pub fn object_radius(&self) -> f32 {
        self.width.min(self.height) as f32 * 0.09
    }

    /// `(width, height)` of its frames.
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// The index of the frame the iterator yields next.
    pub fn next_index(&self) -> u64 {
        self.next
    }

    /// Frames the iterator has still to yield.
    pub fn remaining(&self) -> u64 {
        self.layout.len.saturating_sub(self.next)
    }

    /// Frame `f`, generated. Past the layout's end the second scene goes on
    /// (the object at rest), so any index is a frame.
    pub fn frame(&self, f: u64) -> RgbFrame {
        let (w, h) = (self.width, self.height);
        let scene_b = f >= self.layout.cut;
        let mut luma = vec![0f32; w * h];
        // Background: a smooth gradient plus an 8-pixel block texture whose
        // amplitude is moderate, so that blurring it changes the Laplacian
        // a lot but the frame's structure (what SSIM sees) much less.
        for y in 0..h {
            for x in 0..w {
                let (xf, yf) = (x as f32 / w as f32, y as f32 / h as f32);
                let v = if scene_b {
                    let stripe = if ((x + y) / 6) % 2 == 0 { 14.0 } else { -14.0 };
                    170.0 - 70.0 * yf + 20.0 * xf + stripe
                } else {
                    let block = if (x / 8 + y / 8) % 2 == 0 {
                        12.0
                    } else {
                        -12.0
                    };
                    70.0 + 70.0 * xf + 40.0 * yf + block
                };
                luma[y * w + x] = v;
            }
        }
        // Text: dark glyph strokes on a light plate.
        let scale = (h / 120).max(1);
        let (text, tx, ty) = if scene_b {
            ("SCENE B 2", w * 55 / 100, h * 75 / 100)
        } else {
            ("CORTEX 26", w * 8 / 100, h * 10 / 100)
        };
        draw_text(&mut luma, w, h, text, tx, ty, scale);
        // The moving object: a bright disc with a dark rim.
        let (cx, cy) = self.object_center(f);
        let r = self.object_radius();
        let (x0, x1) = (
            (cx - r - 2.0).max(0.0) as usize,
            ((cx + r + 2.0) as usize).min(w),
        );
        let (y0, y1) = (
            (cy - r - 2.0).max(0.0) as usize,
            ((cy + r + 2.0) as usize).min(h),
        );
        for y in y0..y1 {
            for x in x0..x1 {
                let d = ((x as f32 - cx).powi(2) + (y as f32 - cy).powi(2)).sqrt();
                if d < r * 0.8 {
                    luma[y * w + x] = 245.0;
                } else if d < r {
                    luma[y * w + x] = 15.0;
                }
            }
        }
        if self.layout.is_blurred(f) {
            // Two passes of a 3×3 box: a mild defocus (σ ≈ 1.2 px) that
            // takes most of the fine detail but leaves the scene's layout.
            box_blur(&mut luma, w, h, 1);
            box_blur(&mut luma, w, h, 1);
        }
        // Colour: a tint per scene, so the cut also changes hue.
        let tint: [f32; 3] = if scene_b {
            [0.85, 1.0, 1.15]
        } else {
            [1.1, 1.0, 0.85]
        };
        Array3::from_shape_fn((h, w, 3), |(y, x, c)| {
            (luma[y * w + x] * tint[c]).round().clamp(0.0, 255.0) as u8
        })
    }
}

/// A 5×7 bitmap font for the few characters the clip writes; each glyph is
/// seven rows of five bits, most significant bit leftmost.
fn glyph(c: char) -> [u8; 7] {
    match c {
        'A' => [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'B' => [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        'C' => [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        'E' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F],
        'N' => [0x11, 0x19, 0x15, 0x13, 0x11, 0x11, 0x11],
        'O' => [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'R' => [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        'S' => [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        'T' => [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        'X' => [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        _ => [0; 7],
    }
}

/// Writes `text` with its top-left corner at `(x0, y0)`, each font pixel a
/// `scale × scale` square, on a light plate one glyph cell wider all round.
fn draw_text(luma: &mut [f32], w: usize, h: usize, text: &str, x0: usize, y0: usize, scale: usize) {
    let cell = 6 * scale;
    let plate_w = cell * text.chars().count() + 2 * scale;
    let plate_h = 9 * scale;
    for y in y0.saturating_sub(scale)..(y0 + plate_h).min(h) {
        for x in x0.saturating_sub(scale)..(x0 + plate_w).min(w) {
            luma[y * w + x] = 225.0;
        }
    }
    for (i, c) in text.chars().enumerate() {
        let rows = glyph(c);
        for (gy, bits) in rows.iter().enumerate() {
            for gx in 0..5 {
                if bits & (0x10 >> gx) == 0 {
                    continue;
                }
                for dy in 0..scale {
                    for dx in 0..scale {
                        let (x, y) = (x0 + i * cell + gx * scale + dx, y0 + gy * scale + dy);
                        if x < w && y < h {
                            luma[y * w + x] = 25.0;
                        }
                    }
                }
            }
        }
    }
}

/// A `(2r+1)²` box blur, separable, with clamped borders.
fn box_blur(luma: &mut [f32], w: usize, h: usize, r: usize) {
    let n = (2 * r + 1) as f32;
    let mut tmp = vec![0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            let s: f32 = (0..=2 * r)
                .map(|k| luma[y * w + (x + k).saturating_sub(r).min(w - 1)])
                .sum();
            tmp[y * w + x] = s / n;
        }
    }
    for y in 0..h {
        for x in 0..w {
            let s: f32 = (0..=2 * r)
                .map(|k| tmp[(y + k).saturating_sub(r).min(h - 1) * w + x])
                .sum();
            luma[y * w + x] = s / n;
        }
    }
}

impl Iterator for SyntheticClip {
    type Item = RgbFrame;

    fn next(&mut self) -> Option<RgbFrame> {
        if self.next >= self.layout.len {
            return None;
        }
        self.next += 1;
        Some(self.frame(self.next - 1))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining()).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

impl std::fmt::Display for SyntheticClip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "synthetic clip {}x{} ({} frames: blurred {}..{}, cut at {})",
            self.width,
            self.height,
            self.layout.len,
            self.layout.blur_start,
            self.layout.blur_end,
            self.layout.cut
        )
    }
}
