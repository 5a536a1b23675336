//! [`SsimReduction`]: the Gaussian SSIM of two gray planes as a reduction
//! on strips of rows, and [`SceneForm`], `scene_change` in a fused group.

use super::check::{arity, channels, same_size};
use crate::ops::ssim::{gaussian_ssim_rows, with_scratch_of_thread, NARROW_SSIM, SSIM_COLUMNS};
use crate::ops::{SceneChange, SceneParams, SsimVariant};
use cortex_core::strip::group::Value;
use cortex_core::strip::{
    FusedGroup, Geometry, GroupBuilder, Inputs, Plane, Reduce, StripError, StripForm, StripMut,
    StripReduction, Window,
};
use cortex_core::weights::Weights;

/// The mean SSIM (OpenCV's `QualitySSIM`: 11-tap Gaussian, σ = 1.5,
/// reflect-101) of two gray planes. Each row's partials are the sums of its
/// SSIM map over each 128-column strip, folded column strip by column
/// strip, rows in order — the order [`crate::ops::ssim`] sums them in, so the
/// result is bit-identical to it for any strip count. Frames the
/// whole-frame function transposes (narrower than 32 and taller than wide)
/// are refused, so a group holding them declines the frame.
#[derive(Debug, Clone, Copy, Default)]
pub struct SsimReduction;

impl SsimReduction {
    fn checked(inputs: &[Geometry]) -> Result<Geometry, StripError> {
        let gs = arity("ssim", inputs, 2)?;
        same_size("ssim", gs)?;
        channels("ssim", gs[0], 1)?;
        channels("ssim", gs[1], 1)?;
        let g = gs[0];
        if g.width < NARROW_SSIM && g.height > g.width {
            return Err(StripError::Geometry {
                kernel: "ssim".into(),
                reason: format!(
                    "{}x{} is computed transposed by the whole-frame function",
                    g.width, g.height
                ),
            });
        }
        Ok(g)
    }
}

impl StripReduction for SsimReduction {
    type Partial = f64;
    type Out = f64;

    fn name(&self) -> &str {
        "ssim"
    }

    fn window(&self) -> Window {
        Window::symmetric(5)
    }

    fn partial_width(&self, inputs: &[Geometry]) -> Result<usize, StripError> {
        Ok(Self::checked(inputs)?.width.div_ceil(SSIM_COLUMNS))
    }

    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        Self::checked(inputs)?;
        Ok(Geometry::new(1, 1))
    }

    fn partial(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, f64>) -> Result<(), StripError> {
        let (a, b) = (inputs.plane::<u8>(0)?, inputs.plane::<u8>(1)?);
        let (h, w) = (a.height(), a.width());
        let rows = out.rows();
        let first = rows.start.saturating_sub(5);
        let last = (rows.end + 5).min(h);
        let (sa, sb) = (a.span(first..last)?, b.span(first..last)?);
        let columns = w.div_ceil(SSIM_COLUMNS);
        let start = rows.start;
        let dst = out.as_mut_slice();
        with_scratch_of_thread(|scratch| {
            for c in 0..columns {
                let x0 = c * SSIM_COLUMNS;
                let x1 = (x0 + SSIM_COLUMNS).min(w);
                gaussian_ssim_rows(
                    (sa, sb, first),
                    (h, w),
                    (x0, x1),
                    rows.clone(),
                    scratch,
                    |y, sum| dst[(y - start) * columns + c] = sum,
                );
            }
        });
        Ok(())
    }

    fn fold(
        &self,
        inputs: &[Geometry],
        partials: Plane<'_, f64>,
        out: &mut [f64],
    ) -> Result<(), StripError> {
        let g = Self::checked(inputs)?;
        let columns = partials.width();
        let p = partials.as_slice();
        let mut total = 0.0f64;
        for c in 0..columns {
            let mut strip = 0.0f64;
            for y in 0..g.height {
                strip += p[y * columns + c];
            }
            total += strip;
        }
        out[0] = total / (g.height * g.width) as f64;
        Ok(())
    }
}

/// `scene_change_with(cur, prev, &params)`:
/// `#[compilable(reduce = ops::strip::SceneForm(SceneParams::DEFAULT))]`.
/// A first frame (or a size change) has no previous frame of its size: the
/// group declines it and the node's own call decides it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneForm(pub SceneParams);

impl StripForm for SceneForm {
    type Value = SceneChange;
    type Shape = Reduce;

    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        _weights: &Weights,
    ) -> Result<Value, StripError> {
        self.0
            .validate()
            .map_err(|e| StripError::failed("scene", e))?;
        if self.0.variant != SsimVariant::Gaussian {
            return Err(StripError::failed(
                "scene",
                "only the Gaussian SSIM has a strip form",
            ));
        }
        group.reduction(SsimReduction, &super::forms::two("scene", inputs)?)
    }

    fn store(
        &self,
        group: &mut FusedGroup,
        k: usize,
        into: &mut SceneChange,
    ) -> Result<(), StripError> {
        let s = super::forms::scalar_output(group, k, "SSIM")?;
        *into = SceneChange {
            changed: s < self.0.threshold,
            ssim: Some(s),
        };
        Ok(())
    }
}
