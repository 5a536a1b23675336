//! `motion_map`: frame difference pooled on a coarse grid, blown back up to
//! the frame size.

use super::border::{check_frame, contiguous, prepare_out};
use super::resize::{area_exact, area_general, resize_nearest_f32, AreaScratch};
use super::scratch::{vec_bytes, with_scratch, Scratch as ScratchT, Slot};
use super::simd::multiversion;
use super::types::{GrayImage, OpsError, ScoreMap};
use crate::registry::declare::{self, registry_op};
use cortex_core::dynamic::OpDesc;

/// Parameters of [`motion_map_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MotionParams {
    /// Grid columns (cells across). At least 1. Default 16.
    pub grid_w: usize,
    /// Grid rows (cells down). At least 1. Default 12.
    pub grid_h: usize,
}

impl MotionParams {
    /// The documented defaults, as a constant: a pipeline node can pass
    /// `&MotionParams::DEFAULT` without building a value per frame.
    pub const DEFAULT: MotionParams = MotionParams {
        grid_w: 16,
        grid_h: 12,
    };
}

impl Default for MotionParams {
    fn default() -> Self {
        Self::DEFAULT
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
/// [`OpsError::Empty`] for an empty `cur`; [`OpsError::TooLarge`] for a
/// `cur` over the frame limits; [`OpsError::InvalidParam`] for a zero grid
/// side.
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
    check_frame("cur", h, w)?;
    if prev.dim() != (h, w) {
        prepare_out(out, h, w).fill(0.0);
        return Ok(());
    }
    let (gh, gw) = params.effective_grid(h, w);
    let a = contiguous(cur.view());
    let b = contiguous(prev.view());
    thread_local! {
        static SCRATCH: Slot<Scratch> = const { Slot::new(None) };
    }
    with_scratch(&SCRATCH, |s| {
        s.cells.clear();
        s.cells.resize(gh * gw, 0.0);
        let row = |y: usize| y * w..(y + 1) * w;
        if w % gw == 0 && h % gh == 0 {
            let add = |y: usize, acc: &mut [u32]| add_absdiff(acc, &a[row(y)], &b[row(y)]);
            area_exact((h, w), (gh, gw), 255.0, add, &mut s.cells, &mut s.area);
        } else {
            let add = |y: usize, wy: f64, acc: &mut [f64]| {
                for ((acc, &p), &q) in acc.iter_mut().zip(&a[row(y)]).zip(&b[row(y)]) {
                    *acc += wy * f64::from(p.abs_diff(q));
                }
            };
            area_general((h, w), (gh, gw), 255.0, add, &mut s.cells, &mut s.area);
        }
        resize_nearest_f32(&s.cells, (gh, gw), (h, w), prepare_out(out, h, w));
    });
    Ok(())
}

/// Reused buffers of [`motion_map_into`].
#[derive(Default)]
struct Scratch {
    /// Pooled cell values in `[0, 1]`, `gh × gw`.
    cells: Vec<f32>,
    /// Working memory of the area downscale.
    area: AreaScratch,
}

impl ScratchT for Scratch {
    fn heap_bytes(&self) -> usize {
        vec_bytes(&self.cells) + self.area.heap_bytes()
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

registry_op! {
    /// `motion_map` in the kernel registry: frame difference pooled on a
    /// grid, at the default grid.
    MotionMap = "motion_map", for<'a> (&'a GrayImage, &'a GrayImage) => ScoreMap;
    shape |(cur, prev)| two_frame_shape(cur, prev);
    layout |(cur, prev)| layout_of(cur.is_standard_layout() && prev.is_standard_layout());
    kernels {
        pure(|(cur, prev), out| motion_map_into(cur, prev, &MotionParams::DEFAULT, out)),
        #[cfg(feature = "opencv")]
        opencv(|(cur, prev), out| set(out, crate::ops::opencv::motion_map(cur, prev, &MotionParams::default()))),
    }
}

/// `vision.motion_map`: the op as graph files, the runner and Python name
/// it.
pub fn descriptor() -> OpDesc {
    OpDesc::builder::<MotionParams>(
        "vision.motion_map",
        "frame difference pooled on a grid, spread to the frame",
    )
    .calls(&["motion_map", "motion_map_into"])
    .kernels(&declare::kernel_labels::<MotionMap>())
    .input::<GrayImage>("gray")
    .input::<GrayImage>("previous")
    .param("grid_w", "grid columns; >= 1")
    .param("grid_h", "grid rows; >= 1")
    .strip(|p: &MotionParams| Some(crate::ops::strip::MotionForm(*p)))
    .fills(|i, p, out: &mut ScoreMap| Ok(motion_map_into(i.arg(0)?, i.arg(1)?, p, out)?))
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
