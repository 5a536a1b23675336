//! [`ScoreFusionStrip`]: the weighted sum of score maps on a strip of rows.

use super::check::{arity, channels, same_size};
use crate::ops::score_fusion::{axpy, FUSE_BLOCK};
use crate::ops::OpsError;
use cortex_core::strip::{Geometry, Inputs, Kind, StripError, StripKernel, StripMut};

/// `out = Σ wᵢ·inputᵢ` over `f32` maps, pointwise, with the arithmetic of
/// [`crate::ops::fuse_into`]: terms in order, separate multiply and add,
/// terms of weight 0 skipped. A map the plan eliminated is simply not an
/// input (its weight is 0 there, so the bits are the same).
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreFusionStrip {
    weights: Vec<f32>,
}

impl ScoreFusionStrip {
    /// One weight per input, in input order.
    ///
    /// # Errors
    /// [`OpsError::InvalidParam`] for a negative or non-finite weight, or none.
    pub fn new(weights: &[f32]) -> Result<Self, OpsError> {
        if weights.is_empty() {
            return Err(OpsError::InvalidParam {
                name: "weights",
                reason: "no map to fuse".into(),
            });
        }
        if let Some(w) = weights.iter().find(|w| !w.is_finite() || **w < 0.0) {
            return Err(OpsError::InvalidParam {
                name: "weight",
                reason: format!("must be finite and >= 0, got {w}"),
            });
        }
        Ok(ScoreFusionStrip {
            weights: weights.to_vec(),
        })
    }
}

impl StripKernel for ScoreFusionStrip {
    type Out = f32;

    fn name(&self) -> &str {
        "fusion"
    }

    fn kind(&self) -> Kind {
        Kind::Pointwise
    }

    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        let gs = arity("fusion", inputs, self.weights.len())?;
        same_size("fusion", gs)?;
        for g in gs {
            channels("fusion", *g, 1)?;
        }
        Ok(gs[0])
    }

    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, f32>) -> Result<(), StripError> {
        let rows = out.rows();
        let dst = out.as_mut_slice();
        // Block by block, as the whole-frame function does: a strip of
        // L2's maps (hundreds of KB) would leave the cache between one
        // term's pass and the next, and every term re-read the sums.
        for (b, chunk) in dst.chunks_mut(FUSE_BLOCK).enumerate() {
            let start = b * FUSE_BLOCK;
            chunk.fill(0.0);
            for (i, &w) in self.weights.iter().enumerate() {
                if w != 0.0 {
                    let src = inputs.plane::<f32>(i)?.span(rows.clone())?;
                    axpy(chunk, &src[start..start + chunk.len()], w);
                }
            }
        }
        Ok(())
    }
}
