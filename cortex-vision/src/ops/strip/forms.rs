//! Node forms of the strip kernels: what a pipeline names in
//! `#[compilable(strip = …)]` or `#[compilable(reduce = …)]` so that the
//! node runs inside a fused group. Each computes exactly what its node's
//! whole-frame function computes (the tests run both).

use super::{CenterStrip, GrayStrip, LaplacianVariance, MotionCells, ScoreFusionStrip};
use crate::ops::border::prepare_out;
use crate::ops::resize::resize_nearest_f32;
use crate::ops::score_fusion::SCORE_KEYS;
use crate::ops::MotionParams;
use crate::ops::{BlurParams, BlurReport, CenterParams, GrayImage, ScoreMap};
use cortex_core::strip::form::store_array2;
use cortex_core::strip::group::Value;
use cortex_core::strip::{FusedGroup, GroupBuilder, Map, Reduce, StripError, StripForm};
use cortex_core::weights::Weights;

/// A reduction's `1 × 1` result.
pub(super) fn scalar_output(group: &FusedGroup, k: usize, what: &str) -> Result<f64, StripError> {
    group
        .output::<f64>(k)?
        .as_slice()
        .first()
        .copied()
        .ok_or_else(|| StripError::Group(format!("the {what} is empty")))
}

/// The one value argument of a single-input node.
pub(super) fn only(kernel: &str, inputs: &[Option<Value>]) -> Result<Value, StripError> {
    match inputs {
        [Some(v)] => Ok(*v),
        _ => Err(StripError::Group(format!(
            "`{kernel}` reads one value, got {} arguments",
            inputs.len()
        ))),
    }
}

/// The two value arguments of a two-input node (a frame and the previous one).
pub(super) fn two(kernel: &str, inputs: &[Option<Value>]) -> Result<[Value; 2], StripError> {
    match inputs {
        [Some(a), Some(b)] => Ok([*a, *b]),
        _ => Err(StripError::Group(format!(
            "`{kernel}` reads two values, got {} arguments",
            inputs.len()
        ))),
    }
}

/// `to_gray` / `to_gray_into`: `#[compilable(strip = ops::strip::GrayStrip)]`.
impl StripForm for GrayStrip {
    type Value = GrayImage;
    type Shape = Map;

    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        _weights: &Weights,
    ) -> Result<Value, StripError> {
        group.kernel(*self, &[only("gray", inputs)?])
    }

    fn store(
        &self,
        group: &mut FusedGroup,
        k: usize,
        into: &mut GrayImage,
    ) -> Result<(), StripError> {
        store_array2(group, k, into)
    }
}

/// `center_crop_into(gray, &params, …)`:
/// `#[compilable(strip = ops::strip::CenterForm(CenterParams::DEFAULT))]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CenterForm(pub CenterParams);

impl StripForm for CenterForm {
    type Value = ScoreMap;
    type Shape = Map;

    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        _weights: &Weights,
    ) -> Result<Value, StripError> {
        let input = only("center", inputs)?;
        let kernel = CenterStrip::new(self.0).map_err(|e| StripError::failed("center", e))?;
        group.kernel(kernel, &[input])
    }

    fn store(
        &self,
        group: &mut FusedGroup,
        k: usize,
        into: &mut ScoreMap,
    ) -> Result<(), StripError> {
        store_array2(group, k, into)
    }
}

/// `score_fusion_into(center, text, saliency, motion, weights, …)`:
/// `#[compilable(strip = ops::strip::FusionForm)]`. The maps the plan does
/// not run are left out, as the whole-frame function leaves out `None`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FusionForm;

impl StripForm for FusionForm {
    type Value = ScoreMap;
    type Shape = Map;

    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        weights: &Weights,
    ) -> Result<Value, StripError> {
        if inputs.len() != SCORE_KEYS.len() {
            return Err(StripError::Group(format!(
                "`fusion` reads {} maps, got {}",
                SCORE_KEYS.len(),
                inputs.len()
            )));
        }
        let (maps, w): (Vec<Value>, Vec<f32>) = inputs
            .iter()
            .zip(SCORE_KEYS)
            .filter_map(|(map, key)| map.map(|m| (m, weights.get_or_zero(key) as f32)))
            .unzip();
        let kernel = ScoreFusionStrip::new(&w).map_err(|e| StripError::failed("fusion", e))?;
        group.kernel(kernel, &maps)
    }

    fn store(
        &self,
        group: &mut FusedGroup,
        k: usize,
        into: &mut ScoreMap,
    ) -> Result<(), StripError> {
        store_array2(group, k, into)
    }
}

/// `blur_detector_with(gray, &params)` (the variance of the Laplacian and
/// its verdict): `#[compilable(reduce = ops::strip::BlurForm(BlurParams::DEFAULT))]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlurForm(pub BlurParams);

impl StripForm for BlurForm {
    type Value = BlurReport;
    type Shape = Reduce;

    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        _weights: &Weights,
    ) -> Result<Value, StripError> {
        self.0
            .validate()
            .map_err(|e| StripError::failed("blur", e))?;
        group.reduction(LaplacianVariance, &[only("blur", inputs)?])
    }

    fn store(
        &self,
        group: &mut FusedGroup,
        k: usize,
        into: &mut BlurReport,
    ) -> Result<(), StripError> {
        let variance = scalar_output(group, k, "variance")?;
        *into = BlurReport {
            variance,
            is_blurry: variance < self.0.threshold,
        };
        Ok(())
    }
}

/// `motion_map_into(cur, prev, &params, …)`:
/// `#[compilable(reduce = ops::strip::MotionForm(MotionParams::DEFAULT))]`.
/// The cells are a reduction in the group; their expansion to the frame
/// (nearest neighbour, as the whole-frame function does) happens when the
/// value is stored. On a first frame (no previous one) and where the grid
/// does not divide the frame the member declines alone: the rest of its
/// group runs fused and the node's own call gives the map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MotionForm(pub MotionParams);

impl StripForm for MotionForm {
    type Value = ScoreMap;
    type Shape = Reduce;

    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        _weights: &Weights,
    ) -> Result<Value, StripError> {
        let cells = MotionCells::new(self.0).map_err(|e| StripError::failed("motion", e))?;
        group.reduction(cells, &two("motion", inputs)?)
    }

    fn store(
        &self,
        group: &mut FusedGroup,
        k: usize,
        into: &mut ScoreMap,
    ) -> Result<(), StripError> {
        let frame = group
            .output_argument_geometry(k, 0)
            .ok_or_else(|| StripError::Group("no frame size for the motion map".into()))?;
        let cells = group.output::<f32>(k)?;
        let grid = (cells.height(), cells.width());
        let (h, w) = (frame.height, frame.width);
        resize_nearest_f32(cells.as_slice(), grid, (h, w), prepare_out(into, h, w));
        Ok(())
    }
}
