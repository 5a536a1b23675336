//! `motion_map`: frame difference pooled on a coarse grid, blown back up to
//! the frame size.

use super::border::{check_nonempty, contiguous, prepare_out};
use super::simd::multiversion;
use super::types::{GrayImage, OpsError, ScoreMap};
use std::cell::RefCell;

/// Parameters of [`motion_map_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MotionParams {
    /// Grid columns (cells across). At least 1. Default 16.
    pub grid_w: usize,
    /// Grid rows (cells down). At least 1. Default 12.
    pub grid_h: usize,
}

impl Default for MotionParams {
    fn default() -> Self {
        MotionParams {
            grid_w: 16,
            grid_h: 12,
        }
    }
}

impl MotionParams {
    /// Checks the fields.
    ///
    /// # Errors
    /// [`OpsError::InvalidParam`] for a zero grid side.
    pub fn validate(&self) -> Result<(), OpsError> {
        for (name, v) in [("grid_w", self.grid_w), ("grid_h", self.grid_h)] {
            if v == 0 {
                return Err(OpsError::InvalidParam {
                    name,
                    reason: "must be at least 1".into(),
                });
            }
        }
        Ok(())
    }

    /// The grid actually used for a `height × width` frame: each side is
    /// clamped to the frame's (a cell is never smaller than a pixel).
    pub fn effective_grid(&self, height: usize, width: usize) -> (usize, usize) {
        (self.grid_h.min(height), self.grid_w.min(width))
    }
}

/// Motion map with default [`MotionParams`].
///
/// # Errors
/// As [`motion_map_with`].
pub fn motion_map(cur: &GrayImage, prev: &GrayImage) -> Result<ScoreMap, OpsError> {
    motion_map_with(cur, prev, &MotionParams::default())
}

/// Motion map: `|cur − prev|` averaged over each cell of a `grid_w × grid_h`
/// grid (exact area averaging, as `cv::resize(INTER_AREA)`: a pixel that
/// straddles a cell border counts in both cells by the fraction it covers),
/// then resized back to the frame size by nearest neighbour (as
/// `cv::resize(INTER_NEAREST)`), scaled to `[0, 1]` by `1/255`.
///
/// First-frame behaviour: when `prev` is empty (the pipeline's initial state)
/// or of another size than `cur` (the stream changed resolution), there is no
/// comparable previous frame and the map is all zeros, sized like `cur`. This
/// is deliberately not an error: an error would keep the pipeline's state at
/// the old size and fail every later frame.
///
/// # Errors
/// [`OpsError::Empty`] for an empty `cur`; [`OpsError::InvalidParam`] for a
/// zero grid side.
pub fn motion_map_with(
    cur: &GrayImage,
    prev: &GrayImage,
    params: &MotionParams,
) -> Result<ScoreMap, OpsError> {
    let mut out = ScoreMap::zeros((0, 0));
    motion_map_into(cur, prev, params, &mut out)?;
    Ok(out)
}

/// [`motion_map_with`] into a caller-owned map; steady-state calls do not
/// allocate.
///
/// # Errors
/// As [`motion_map_with`].
pub fn motion_map_into(
    cur: &GrayImage,
    prev: &GrayImage,
    params: &MotionParams,
    out: &mut ScoreMap,
) -> Result<(), OpsError> {
    params.validate()?;
    let (h, w) = cur.dim();
    check_nonempty("cur", h, w)?;
    if prev.dim() != (h, w) {
        prepare_out(out, h, w).fill(0.0);
        return Ok(());
    }
    let (gh, gw) = params.effective_grid(h, w);
    let a = contiguous(cur.view());
    let b = contiguous(prev.view());
    thread_local! {
        static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
    }
    SCRATCH.with(|cell| {
        let mut fresh = Scratch::default();
        let mut guard = cell.try_borrow_mut();
        let s = match guard.as_deref_mut() {
            Ok(s) => s,
            Err(_) => &mut fresh,
        };
        s.cells.clear();
        s.cells.resize(gh * gw, 0.0);
        if w % gw == 0 && h % gh == 0 {
            pool_exact(&a, &b, w, gw, h / gh, s);
        } else {
            pool_area(&a, &b, (h, w), (gh, gw), s);
        }
        upsample_nearest(&s.cells, (gh, gw), (h, w), prepare_out(out, h, w));
    });
    Ok(())
}

/// Reused buffers of [`motion_map_into`].
#[derive(Default)]
struct Scratch {
    /// Pooled cell values in `[0, 1]`, `gh × gw`.
    cells: Vec<f32>,
    /// Per-column integer sums over a band of rows (exact path).
    col_u32: Vec<u32>,
    /// Per-column weighted sums over a band of rows (area path).
    col_f64: Vec<f64>,
    /// Per-cell sums of one cell row (area path).
    cell_f64: Vec<f64>,
    /// `(cell, source index, weight)` tables of the area path.
    xtab: Vec<(usize, usize, f64)>,
    ytab: Vec<(usize, usize, f64)>,
}

/// Cells that tile the frame exactly (`cw = w/gw` by `ch` pixels): integer
/// sums, one division per cell.
fn pool_exact(a: &[u8], b: &[u8], w: usize, gw: usize, ch: usize, s: &mut Scratch) {
    let cw = w / gw;
    let scale = 1.0 / ((cw * ch) as f64 * 255.0);
    s.col_u32.clear();
    s.col_u32.resize(w, 0);
    for (band, cells) in s.cells.chunks_exact_mut(gw).enumerate() {
        s.col_u32.fill(0);
        for y in band * ch..(band + 1) * ch {
            let r = y * w..(y + 1) * w;
            add_absdiff(&mut s.col_u32, &a[r.clone()], &b[r]);
        }
        for (c, cols) in cells.iter_mut().zip(s.col_u32.chunks_exact(cw)) {
            let sum: u64 = cols.iter().map(|&v| u64::from(v)).sum();
            *c = (sum as f64 * scale) as f32;
        }
    }
}

multiversion! {
    /// `acc[x] += |a[x] − b[x]|`.
    fn add_absdiff(acc: &mut [u32], a: &[u8], b: &[u8]) {
        for ((s, &p), &q) in acc.iter_mut().zip(a).zip(b) {
            *s += u32::from(p.abs_diff(q));
        }
    }
}

/// OpenCV's `computeResizeAreaTab`: for each destination cell of a
/// `ssize → dsize` area downscale, the source indices it covers and their
/// weights (coverage / cell width), including OpenCV's rule that ignores
/// slivers under 1e-3 of a pixel. Computed in `f64` (OpenCV stores the weights
/// as `f32`; the difference is below 1e-7).
fn area_tab(ssize: usize, dsize: usize, tab: &mut Vec<(usize, usize, f64)>) {
    tab.clear();
    let scale = 1.0 / (dsize as f64 / ssize as f64);
    for d in 0..dsize {
        let f1 = d as f64 * scale;
        let f2 = f1 + scale;
        let cell = scale.min(ssize as f64 - f1);
        let s2 = (f2.floor() as usize).min(ssize - 1);
        let s1 = (f1.ceil() as usize).min(s2);
        if s1 as f64 - f1 > 1e-3 && s1 > 0 {
            tab.push((d, s1 - 1, (s1 as f64 - f1) / cell));
        }
        for sidx in s1..s2 {
            tab.push((d, sidx, 1.0 / cell));
        }
        if f2 - s2 as f64 > 1e-3 {
            tab.push((d, s2, (f2 - s2 as f64).min(1.0).min(cell) / cell));
        }
    }
}

/// General cell sizes: exact area weights, `f64` accumulation.
fn pool_area(
    a: &[u8],
    b: &[u8],
    (h, w): (usize, usize),
    (gh, gw): (usize, usize),
    s: &mut Scratch,
) {
    area_tab(w, gw, &mut s.xtab);
    area_tab(h, gh, &mut s.ytab);
    s.col_f64.clear();
    s.col_f64.resize(w, 0.0);
    s.cell_f64.clear();
    s.cell_f64.resize(gw, 0.0);
    let mut i = 0;
    while i < s.ytab.len() {
        let dy = s.ytab[i].0;
        // Weighted column sums over the rows of cell row `dy` ...
        s.col_f64.fill(0.0);
        while i < s.ytab.len() && s.ytab[i].0 == dy {
            let (_, sy, wy) = s.ytab[i];
            let r = sy * w..(sy + 1) * w;
            for ((acc, &p), &q) in s.col_f64.iter_mut().zip(&a[r.clone()]).zip(&b[r]) {
                *acc += wy * f64::from(p.abs_diff(q));
            }
            i += 1;
        }
        // ... then weighted sums of those columns per cell.
        s.cell_f64.fill(0.0);
        for &(dx, sx, wx) in &s.xtab {
            s.cell_f64[dx] += wx * s.col_f64[sx];
        }
        for (c, &v) in s.cells[dy * gw..(dy + 1) * gw].iter_mut().zip(&s.cell_f64) {
            *c = (v / 255.0) as f32;
        }
    }
}

/// Nearest-neighbour resize of the `gh × gw` cells to `h × w`, with OpenCV's
/// `INTER_NEAREST` index rule `min(floor(x · (1 / (w / gw))), gw − 1)`
/// evaluated in the same `f64` operations so that the cell borders fall on
/// the same pixels.
fn upsample_nearest(
    cells: &[f32],
    (gh, gw): (usize, usize),
    (h, w): (usize, usize),
    out: &mut [f32],
) {
    let ifx = 1.0 / (w as f64 / gw as f64);
    let ify = 1.0 / (h as f64 / gh as f64);
    let mut last_cy = usize::MAX;
    for y in 0..h {
        let cy = ((y as f64 * ify).floor() as usize).min(gh - 1);
        let (done, rest) = out.split_at_mut(y * w);
        let row = &mut rest[..w];
        if cy == last_cy && y > 0 {
            // Same cell row as the row above: copy it.
            row.copy_from_slice(&done[(y - 1) * w..]);
            continue;
        }
        last_cy = cy;
        let src = &cells[cy * gw..(cy + 1) * gw];
        for (x, v) in row.iter_mut().enumerate() {
            let cx = ((x as f64 * ifx).floor() as usize).min(gw - 1);
            *v = src[cx];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(cur: &GrayImage, prev: &GrayImage, gh: usize, gw: usize) -> Vec<f64> {
        // Exact area average of each cell with real-valued borders.
        let (h, w) = cur.dim();
        let (sy, sx) = (h as f64 / gh as f64, w as f64 / gw as f64);
        let mut cells = vec![0.0; gh * gw];
        for cy in 0..gh {
            for cx in 0..gw {
                let mut acc = 0.0;
                for y in 0..h {
                    let oy =
                        ((y + 1) as f64).min((cy + 1) as f64 * sy) - (y as f64).max(cy as f64 * sy);
                    if oy <= 0.0 {
                        continue;
                    }
                    for x in 0..w {
                        let ox = ((x + 1) as f64).min((cx + 1) as f64 * sx)
                            - (x as f64).max(cx as f64 * sx);
                        if ox > 0.0 {
                            acc += oy * ox * f64::from(cur[[y, x]].abs_diff(prev[[y, x]]));
                        }
                    }
                }
                cells[cy * gw + cx] = acc / (sy * sx) / 255.0;
            }
        }
        cells
    }

    #[test]
    fn pooled_cells_match_exact_area_average() {
        let mut seed = 7u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 24) as u8
        };
        for &(h, w, gh, gw) in &[
            (24, 32, 12, 16),
            (25, 37, 12, 16),
            (7, 5, 3, 2),
            (13, 61, 4, 9),
        ] {
            let cur = GrayImage::from_shape_fn((h, w), |_| rnd());
            let prev = GrayImage::from_shape_fn((h, w), |_| rnd());
            let m = motion_map_with(
                &cur,
                &prev,
                &MotionParams {
                    grid_w: gw,
                    grid_h: gh,
                },
            )
            .unwrap();
            let want = brute(&cur, &prev, gh, gw);
            for y in 0..h {
                for x in 0..w {
                    let cy =
                        ((y as f64 * (1.0 / (h as f64 / gh as f64))).floor() as usize).min(gh - 1);
                    let cx =
                        ((x as f64 * (1.0 / (w as f64 / gw as f64))).floor() as usize).min(gw - 1);
                    let d = (f64::from(m[[y, x]]) - want[cy * gw + cx]).abs();
                    assert!(d <= 1e-6, "{h}x{w} grid {gh}x{gw} at ({y},{x}): off by {d}");
                }
            }
        }
    }

    #[test]
    fn first_frame_and_resolution_change_give_zeros() {
        let cur = GrayImage::from_elem((4, 6), 200);
        let z = motion_map(&cur, &GrayImage::zeros((0, 0))).unwrap();
        assert_eq!(z.dim(), (4, 6));
        assert!(z.iter().all(|&v| v == 0.0));
        let z = motion_map(&cur, &GrayImage::zeros((6, 4))).unwrap();
        assert!(z.iter().all(|&v| v == 0.0));
        assert!(motion_map(&GrayImage::zeros((0, 0)), &cur).is_err());
        // Tiny frame, grid clamped to 1x1 pixel cells: the map is the difference.
        let one = GrayImage::from_elem((1, 1), 255);
        let m = motion_map(&one, &GrayImage::zeros((1, 1))).unwrap();
        assert_eq!(m[[0, 0]], 1.0);
    }
}
