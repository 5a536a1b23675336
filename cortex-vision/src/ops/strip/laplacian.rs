//! [`Laplacian`] (a 3×3 stencil) and [`LaplacianVariance`] (its variance
//! as a reduction) on strips of rows.

use super::check::{arity, channels};
use crate::ops::blur::laplacian_row_sums;
use crate::ops::border::reflect101;
use cortex_core::strip::{
    Geometry, Inputs, Kind, Plane, StripError, StripKernel, StripMut, StripReduction, Window,
};

/// The 3×3 Laplacian `[[0,1,0],[1,-4,1],[0,1,0]]` of a gray plane under a
/// reflect-101 border (as [`crate::ops::laplacian_variance`] forms it), as
/// an `i16` plane: a stencil reading one row above and below.
#[derive(Debug, Clone, Copy, Default)]
pub struct Laplacian;

impl StripKernel for Laplacian {
    type Out = i16;

    fn name(&self) -> &str {
        "laplacian"
    }

    fn kind(&self) -> Kind {
        Kind::Stencil(Window::symmetric(1))
    }

    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        let g = arity("laplacian", inputs, 1)?[0];
        channels("laplacian", g, 1)?;
        Ok(g)
    }

    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, i16>) -> Result<(), StripError> {
        let src = inputs.plane::<u8>(0)?;
        let (h, w) = (src.height(), src.width());
        for (y, dst) in out.rows_mut() {
            let up = src.row(reflect101(y as isize - 1, h))?;
            let row = src.row(y)?;
            let down = src.row(reflect101(y as isize + 1, h))?;
            let at = |x: isize| i16::from(row[reflect101(x, w)]);
            for (x, d) in dst.iter_mut().enumerate() {
                // |l| <= 4·255: fits i16.
                *d =
                    i16::from(up[x]) + i16::from(down[x]) + at(x as isize - 1) + at(x as isize + 1)
                        - 4 * i16::from(row[x]);
            }
        }
        Ok(())
    }
}

/// The population variance of the [`Laplacian`] of a gray plane: per row,
/// the exact integer sum and sum of squares; folded in row order into the
/// same exact `i128` formula as [`crate::ops::laplacian_variance`], so the
/// result is bit-identical to it for any strip count. Integer sums are
/// exact in any order, so this reduction is order-exact by construction.
#[derive(Debug, Clone, Copy, Default)]
pub struct LaplacianVariance;

impl StripReduction for LaplacianVariance {
    type Partial = (i64, u64);
    type Out = f64;

    fn name(&self) -> &str {
        "laplacian_variance"
    }

    fn window(&self) -> Window {
        Window::symmetric(1)
    }

    fn partial_width(&self, inputs: &[Geometry]) -> Result<usize, StripError> {
        let g = arity("laplacian_variance", inputs, 1)?[0];
        channels("laplacian_variance", g, 1)?;
        Ok(1)
    }

    fn geometry(&self, _inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Ok(Geometry::new(1, 1))
    }

    fn partial(
        &self,
        inputs: &Inputs<'_>,
        out: &mut StripMut<'_, (i64, u64)>,
    ) -> Result<(), StripError> {
        let src = inputs.plane::<u8>(0)?;
        let h = src.height();
        for (y, p) in out.rows_mut() {
            p[0] = laplacian_row_sums(
                src.row(reflect101(y as isize - 1, h))?,
                src.row(y)?,
                src.row(reflect101(y as isize + 1, h))?,
            );
        }
        Ok(())
    }

    fn fold(
        &self,
        inputs: &[Geometry],
        partials: Plane<'_, (i64, u64)>,
        out: &mut [f64],
    ) -> Result<(), StripError> {
        let (mut sum, mut sum_sq) = (0i64, 0u64);
        for &(s, q) in partials.as_slice() {
            sum += s;
            sum_sq += q;
        }
        let g = arity("laplacian_variance", inputs, 1)?[0];
        let n = (g.width * g.height) as i128;
        let num = n * i128::from(sum_sq) - i128::from(sum) * i128::from(sum);
        out[0] = num as f64 / (n as f64 * n as f64);
        Ok(())
    }
}
