//! MSER parameters (OpenCV 4.6's gray-image subset) and the polarity choice.

use crate::ops::OpsError;

/// Parameters of the MSER detector, with OpenCV 4.6's defaults and meaning
/// for 8-bit gray images.
///
/// OpenCV's `min_diversity`, `max_evolution`, `area_threshold`, `min_margin`
/// and `edge_blur_size` only affect its colour-image algorithm and are not
/// represented here.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MserParams {
    /// Gray-level distance over which stability is measured: the variation of
    /// a region `R` at level `g` is `(|R(g+delta)| - |R(g-delta)|) / |R(g)|`.
    pub delta: u8,
    /// Smallest reported region, in pixels (inclusive).
    pub min_area: u32,
    /// Largest reported region, in pixels (inclusive).
    pub max_area: u32,
    /// Largest variation a reported region may have.
    pub max_variation: f64,
}

impl Default for MserParams {
    /// [`MserParams::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl MserParams {
    /// OpenCV 4.6's `MSER::create()` defaults: `delta=5, min_area=60,
    /// max_area=14400, max_variation=0.25`. A `const` so that graph nodes
    /// can borrow it without building a value per frame.
    pub const DEFAULT: MserParams = MserParams {
        delta: 5,
        min_area: 60,
        max_area: 14_400,
        max_variation: 0.25,
    };

    /// Checks the ranges: `delta ≥ 1`, `1 ≤ min_area ≤ max_area`, and a
    /// finite, non-negative `max_variation`.
    pub fn validate(&self) -> Result<(), OpsError> {
        if self.delta == 0 {
            return Err(invalid("delta", "must be at least 1".into()));
        }
        if self.min_area == 0 {
            return Err(invalid("min_area", "must be at least 1".into()));
        }
        if self.max_area < self.min_area {
            return Err(invalid(
                "max_area",
                format!(
                    "max_area ({}) is smaller than min_area ({})",
                    self.max_area, self.min_area
                ),
            ));
        }
        if !self.max_variation.is_finite() || self.max_variation < 0.0 {
            return Err(invalid(
                "max_variation",
                format!("must be finite and >= 0, got {}", self.max_variation),
            ));
        }
        Ok(())
    }
}

fn invalid(name: &'static str, reason: String) -> OpsError {
    OpsError::InvalidParam { name, reason }
}

/// Which extremal regions to look for.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Polarity {
    /// Regions darker than their surroundings (dark text on a bright
    /// background): OpenCV's first pass, thresholding the image itself.
    Dark,
    /// Regions brighter than their surroundings (bright text on a dark
    /// background): OpenCV's second pass, on the inverted image.
    Bright,
    /// Both, dark regions first, as OpenCV's `detectRegions` returns them.
    Both,
}

impl Polarity {
    /// The single passes this polarity stands for, in output order.
    pub(crate) fn passes(self) -> &'static [Polarity] {
        match self {
            Polarity::Dark => &[Polarity::Dark],
            Polarity::Bright => &[Polarity::Bright],
            Polarity::Both => &[Polarity::Dark, Polarity::Bright],
        }
    }

    /// The XOR mask that turns a pixel value into the flooding level of this
    /// pass: dark regions flood the values as they are, bright regions flood
    /// `255 - v`.
    pub(super) fn level_mask(self) -> u8 {
        match self {
            Polarity::Bright => 0xff,
            Polarity::Dark | Polarity::Both => 0,
        }
    }
}
