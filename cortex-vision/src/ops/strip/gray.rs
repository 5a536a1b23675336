//! [`GrayStrip`]: `to_gray` on a strip of rows.

use super::check::{arity, channels};
use crate::ops::gray::{rgb_to_gray, rgb_to_gray_simd};
use cortex_core::strip::{Geometry, Inputs, Kind, StripError, StripKernel, StripMut};

/// Interleaved RGB bytes (3 channels) → gray bytes, pointwise, with the same
/// integer arithmetic as [`crate::ops::to_gray`].
#[derive(Debug, Clone, Copy, Default)]
pub struct GrayStrip;

impl StripKernel for GrayStrip {
    type Out = u8;

    fn name(&self) -> &str {
        "gray"
    }

    fn kind(&self) -> Kind {
        Kind::Pointwise
    }

    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        let g = arity("gray", inputs, 1)?[0];
        channels("gray", g, 3)?;
        Ok(Geometry::new(g.width, g.height))
    }

    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, u8>) -> Result<(), StripError> {
        let src = inputs.plane::<u8>(0)?.span(out.rows())?;
        let dst = out.as_mut_slice();
        // Every pixel by the same formula whether the vector path or the
        // scalar tail converts it, so where a strip starts does not matter.
        let done = rgb_to_gray_simd(src, dst);
        rgb_to_gray(&src[3 * done..], &mut dst[done..]);
        Ok(())
    }
}
