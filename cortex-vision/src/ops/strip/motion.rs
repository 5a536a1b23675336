//! [`MotionCells`] and [`MotionExpand`]: `motion_map` as a reduction (the
//! frame difference pooled on the grid) followed by a resample (the cells
//! blown back up to the frame size).

use super::check::{arity, channels, same_size};
use crate::ops::{MotionParams, OpsError};
use cortex_core::strip::{
    Geometry, Inputs, Kind, Plane, StripError, StripKernel, StripMut, StripReduction, Window,
};

/// The pooled cells of [`crate::ops::motion_map_with`]: inputs `cur` and
/// `prev` (gray, same size); per row, the integer sum of `|cur − prev|` over
/// each cell's columns; folded per cell in row order into the cell's mean
/// scaled by `1/255`, a `grid_w × grid_h` `f32` plane. The sums are exact
/// integers, so this is bit-identical to the whole-frame exact-area path.
///
/// The strip form covers grids that divide the frame (each side of the
/// effective grid divides the frame's). Other grids use fractional area
/// weights in `f64`, summed over columns before rows; that order cannot be
/// kept row by row, so for them this refuses the geometry and the op stays
/// a whole-frame call. So does the first frame (`prev` empty or of another
/// size), where the whole-frame op returns zeros.
#[derive(Debug, Clone, Copy)]
pub struct MotionCells {
    params: MotionParams,
}

impl MotionCells {
    /// The pooling with these parameters.
    ///
    /// # Errors
    /// As [`MotionParams::validate`].
    pub fn new(params: MotionParams) -> Result<Self, OpsError> {
        params.validate()?;
        Ok(MotionCells { params })
    }

    fn grid(&self, inputs: &[Geometry]) -> Result<(Geometry, usize, usize), StripError> {
        let gs = arity("motion_cells", inputs, 2)?;
        same_size("motion_cells", gs)?;
        channels("motion_cells", gs[0], 1)?;
        channels("motion_cells", gs[1], 1)?;
        let g = gs[0];
        let (gh, gw) = self.params.effective_grid(g.height, g.width);
        if g.height % gh != 0 || g.width % gw != 0 {
            return Err(StripError::Geometry {
                kernel: "motion_cells".into(),
                reason: format!(
                    "the {gw}x{gh} grid does not divide {}x{}: the strip form needs whole cells",
                    g.width, g.height
                ),
            });
        }
        Ok((g, gh, gw))
    }
}

impl StripReduction for MotionCells {
    type Partial = u32;
    type Out = f32;

    fn name(&self) -> &str {
        "motion_cells"
    }

    fn partial_width(&self, inputs: &[Geometry]) -> Result<usize, StripError> {
        Ok(self.grid(inputs)?.2)
    }

    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        let (_, gh, gw) = self.grid(inputs)?;
        Ok(Geometry::new(gw, gh))
    }

    fn partial(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, u32>) -> Result<(), StripError> {
        let (a, b) = (inputs.plane::<u8>(0)?, inputs.plane::<u8>(1)?);
        let cw = a.width() / out.width();
        for (y, cells) in out.rows_mut() {
            let (ra, rb) = (a.row(y)?, b.row(y)?);
            for ((c, pa), pb) in cells
                .iter_mut()
                .zip(ra.chunks_exact(cw))
                .zip(rb.chunks_exact(cw))
            {
                // At most 255 per column: a cell row of up to 2^24 columns fits.
                *c = pa
                    .iter()
                    .zip(pb)
                    .map(|(&p, &q)| u32::from(p.abs_diff(q)))
                    .sum();
            }
        }
        Ok(())
    }

    fn fold(
        &self,
        inputs: &[Geometry],
        partials: Plane<'_, u32>,
        out: &mut [f32],
    ) -> Result<(), StripError> {
        let (g, gh, gw) = self.grid(inputs)?;
        let (ch, cw) = (g.height / gh, g.width / gw);
        let scale = 1.0 / ((cw * ch) as f64 * 255.0);
        for (band, cells) in out.chunks_exact_mut(gw).enumerate() {
            // Integer sums: exact in any order, and nothing allocated.
            for (c, cell) in cells.iter_mut().enumerate() {
                let mut s = 0u64;
                for y in band * ch..(band + 1) * ch {
                    s += u64::from(partials.row(y)?[c]);
                }
                *cell = (s as f64 * scale) as f32;
            }
        }
        Ok(())
    }
}

/// The cells of [`MotionCells`] (input 0) blown up to the size of input 1
/// (whose pixels it never reads) by nearest neighbour, with the index
/// arithmetic of `cv::resize(INTER_NEAREST)` that
/// [`crate::ops::motion_map_with`] uses: a resample reading the cell row of
/// each output row, give or take one for the rounding of that arithmetic.
#[derive(Debug, Clone, Copy, Default)]
pub struct MotionExpand;

impl StripKernel for MotionExpand {
    type Out = f32;

    fn name(&self) -> &str {
        "motion_expand"
    }

    fn kind(&self) -> Kind {
        Kind::Resample(Window::symmetric(1))
    }

    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        let gs = arity("motion_expand", inputs, 2)?;
        channels("motion_expand", gs[0], 1)?;
        Ok(Geometry::new(gs[1].width, gs[1].height))
    }

    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, f32>) -> Result<(), StripError> {
        let cells = inputs.plane::<f32>(0)?;
        let (gh, gw) = (cells.height(), cells.width());
        let (h, w) = (out.geometry().height, out.geometry().width);
        let ifx = 1.0 / (w as f64 / gw as f64);
        let ify = 1.0 / (h as f64 / gh as f64);
        let cx: Vec<usize> = (0..w)
            .map(|x| ((x as f64 * ifx).floor() as usize).min(gw - 1))
            .collect();
        for (y, row) in out.rows_mut() {
            let cy = ((y as f64 * ify).floor() as usize).min(gh - 1);
            let src = cells.row(cy)?;
            for (v, &c) in row.iter_mut().zip(&cx) {
                *v = src[c];
            }
        }
        Ok(())
    }
}
