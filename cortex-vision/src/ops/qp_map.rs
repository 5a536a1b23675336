//! `qp_map`: a per-block quantiser-offset map from the fused score map —
//! the form x264's `quant_offsets` (16×16 macroblocks), x265's
//! `quantOffsets` (16×16 at the default `qg-size`, 8×8 below) and
//! SVT-AV1's ROI map (64×64) take.
//!
//! Each block's offset follows how far its mean score stands above or
//! below the frame's mean block score, scaled so the most salient block gets
//! `-strength × max_offset` (negative: a finer quantiser, more bits):
//!
//! `offset = clamp(-strength × max_offset × (s − mean) / (max − mean), ±max_offset)`
//!
//! Blocks below the mean get positive offsets (fewer bits), clamped at
//! `+max_offset`, so bits move from the background to the regions rather
//! than being added. The map is neutral (all zeros) when the frame is
//! blurry — nothing in it is worth the bits — or when the map is flat (its
//! block scores span less than `min_spread` of their maximum): then no block
//! deserves more than another.

use crate::ops::blur_verdict::BlurVerdict;
use cortex_core::dynamic::OpDesc;
use cortex_core::heap::HeapBytes;

use super::border::check_frame;
use super::types::{OpsError, ScoreMap};

/// Parameters of [`qp_map_with`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QpMapParams {
    /// Block side in pixels (the codec's unit). At least 1. Default 16.
    pub block: usize,
    /// The largest offset, in the codec's QP steps. Finite, > 0. Default 8.
    pub max_offset: f32,
    /// How much of the range is used, in `[0, 1]`; 0 gives a neutral map.
    /// Default 1.
    pub strength: f32,
    /// Below this spread of block scores (`(max − min) / max`) the map is
    /// flat and the offsets neutral. In `[0, 1]`. Default `0.05`.
    pub min_spread: f32,
}

impl QpMapParams {
    /// The defaults: x264's 16×16 macroblocks, ±8 QP.
    pub const DEFAULT: QpMapParams = QpMapParams {
        block: 16,
        max_offset: 8.0,
        strength: 1.0,
        min_spread: 0.05,
    };
    /// x264 (`quant_offsets`, one per 16×16 macroblock).
    pub const X264: QpMapParams = QpMapParams::DEFAULT;
    /// x265 (`quantOffsets`: one per 16×16 block unless `qg-size` is 8).
    pub const X265: QpMapParams = QpMapParams::DEFAULT;
    /// SVT-AV1's ROI map: one offset per 64×64 superblock, in its QP
    /// scale of 0..=63 like x264's, so the same range.
    pub const SVT_AV1: QpMapParams = QpMapParams {
        block: 64,
        ..QpMapParams::DEFAULT
    };

    /// Checks the fields.
    ///
    /// # Errors
    /// [`OpsError::InvalidParam`] for a field out of its range.
    pub fn validate(&self) -> Result<(), OpsError> {
        if self.block == 0 {
            return Err(OpsError::InvalidParam {
                name: "block",
                reason: "must be at least 1".into(),
            });
        }
        if !(self.max_offset.is_finite() && self.max_offset > 0.0) {
            return Err(OpsError::InvalidParam {
                name: "max_offset",
                reason: format!("must be finite and > 0, got {}", self.max_offset),
            });
        }
        for (name, v) in [("strength", self.strength), ("min_spread", self.min_spread)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(OpsError::InvalidParam {
                    name,
                    reason: format!("must be in [0, 1], got {v}"),
                });
            }
        }
        Ok(())
    }
}

impl Default for QpMapParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Whether a frame is too blurry to spend extra bits on; implemented for
/// `bool` and for the L2 pipeline's blur verdict.
pub trait Blurriness {
    /// True when the frame is blurry.
    fn is_blurry(&self) -> bool;
}

impl Blurriness for bool {
    fn is_blurry(&self) -> bool {
        *self
    }
}

/// Why a map is neutral.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Neutral {
    /// Not neutral: the offsets follow the scores.
    #[default]
    No,
    /// The frame is blurry.
    Blurry,
    /// The block scores are (nearly) all the same.
    Flat,
    /// `strength` is 0.
    Off,
}

/// Quantiser offsets, one per block, row-major.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QpMap {
    /// Block side in pixels.
    pub block: usize,
    /// Blocks per row (`ceil(width / block)`).
    pub cols: usize,
    /// Block rows (`ceil(height / block)`).
    pub rows: usize,
    /// `rows × cols` offsets in QP steps; negative = more bits.
    pub offsets: Vec<f32>,
    /// Whether (and why) every offset is 0.
    pub neutral: Neutral,
}

impl QpMap {
    /// The offset of block `(row, col)`.
    pub fn at(&self, row: usize, col: usize) -> f32 {
        self.offsets[row * self.cols + col]
    }
}

impl HeapBytes for QpMap {
    fn heap_bytes(&self) -> usize {
        self.offsets.capacity() * std::mem::size_of::<f32>()
    }
}

/// [`qp_map_with`] with [`QpMapParams::DEFAULT`].
///
/// # Errors
/// As [`qp_map_with`].
pub fn qp_map<B: Blurriness + ?Sized>(score: &ScoreMap, blur: &B) -> Result<QpMap, OpsError> {
    qp_map_with(score, blur, &QpMapParams::DEFAULT)
}

/// The offset map of `score` (see the module documentation).
///
/// # Errors
/// [`OpsError::InvalidParam`] for bad parameters; [`OpsError::Empty`] /
/// [`OpsError::TooLarge`] for a map with no pixel or over the frame limits.
pub fn qp_map_with<B: Blurriness + ?Sized>(
    score: &ScoreMap,
    blur: &B,
    params: &QpMapParams,
) -> Result<QpMap, OpsError> {
    let mut out = QpMap::default();
    qp_map_into(score, blur, params, &mut out)?;
    Ok(out)
}

/// [`qp_map_with`] into a caller-owned map, reusing its offsets (no
/// allocation once sized).
///
/// # Errors
/// As [`qp_map_with`]; `out` is unspecified after an error.
pub fn qp_map_into<B: Blurriness + ?Sized>(
    score: &ScoreMap,
    blur: &B,
    params: &QpMapParams,
    out: &mut QpMap,
) -> Result<(), OpsError> {
    params.validate()?;
    let (h, w) = score.dim();
    check_frame("score map", h, w)?;
    let b = params.block;
    let (rows, cols) = (h.div_ceil(b), w.div_ceil(b));
    out.block = b;
    out.rows = rows;
    out.cols = cols;
    out.offsets.clear();
    out.offsets.resize(rows * cols, 0.0);
    // Block means (non-finite scores count as 0).
    for (r, band) in score.axis_chunks_iter(ndarray::Axis(0), b).enumerate() {
        for (c, cell) in band.axis_chunks_iter(ndarray::Axis(1), b).enumerate() {
            let sum: f64 = cell
                .iter()
                .map(|&v| if v.is_finite() { f64::from(v) } else { 0.0 })
                .sum();
            out.offsets[r * cols + c] = (sum / cell.len() as f64) as f32;
        }
    }
    let (lo, hi, total) = out.offsets.iter().fold(
        (f32::INFINITY, f32::NEG_INFINITY, 0f64),
        |(lo, hi, t), &v| (lo.min(v), hi.max(v), t + f64::from(v)),
    );
    let mean = (total / out.offsets.len() as f64) as f32;
    out.neutral = if blur.is_blurry() {
        Neutral::Blurry
    } else if params.strength == 0.0 {
        Neutral::Off
    } else if hi <= 0.0 || (hi - lo) < params.min_spread * hi || hi - mean <= 0.0 {
        Neutral::Flat
    } else {
        Neutral::No
    };
    if out.neutral != Neutral::No {
        out.offsets.fill(0.0);
        return Ok(());
    }
    let scale = -params.strength * params.max_offset / (hi - mean);
    let m = params.max_offset;
    for v in &mut out.offsets {
        *v = (scale * (*v - mean)).clamp(-m, m);
    }
    Ok(())
}

/// `vision.qp_map`: the op as graph files, the runner and Python name it.
pub fn descriptor() -> OpDesc {
    OpDesc::builder::<QpMapParams>(
        "vision.qp_map",
        "per-block quantiser offsets for an encoder, from a score map",
    )
    .calls(&["qp_map", "qp_map_into"])
    .input::<ScoreMap>("score")
    .input::<BlurVerdict>("blur")
    .param("block", "block side, pixels; >= 1")
    .param("max_offset", "largest offset, QP steps; finite, > 0")
    .param("strength", "how much of the range is used; in [0, 1]")
    .param(
        "min_spread",
        "flat map below this spread of block scores; in [0, 1]",
    )
    .fills(|i, p, out: &mut QpMap| Ok(qp_map_into(i.arg(0)?, i.arg::<BlurVerdict>(1)?, p, out)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob_map() -> ScoreMap {
        // 64×48: background 0.1, a 16×16 blob of 0.9 at block (1, 2).
        let mut m = ScoreMap::from_elem((48, 64), 0.1);
        m.slice_mut(ndarray::s![16..32, 32..48]).fill(0.9);
        m
    }

    #[test]
    fn the_blob_gets_the_largest_negative_offset() {
        let q = qp_map(&blob_map(), &false).unwrap();
        assert_eq!((q.rows, q.cols, q.block), (3, 4, 16));
        assert_eq!(q.neutral, Neutral::No);
        assert!((q.at(1, 2) + 8.0).abs() < 1e-5, "{}", q.at(1, 2));
        // Background blocks: (0.1 − mean) / (0.9 − mean) × −8 with
        // mean = (11·0.1 + 0.9) / 12, i.e. a small positive offset.
        let mean = (11.0 * 0.1 + 0.9) / 12.0;
        let want = -8.0 * (0.1 - mean) / (0.9 - mean);
        for (i, &v) in q.offsets.iter().enumerate() {
            if i != 6 {
                assert!((v - want as f32).abs() < 1e-4, "block {i}: {v}");
                assert!(v > 0.0);
            }
        }
    }

    #[test]
    fn partial_blocks_and_strength() {
        // 40×20 with block 16: 3×2 blocks, the last column and row partial.
        let mut m = ScoreMap::from_elem((20, 40), 0.2);
        m.slice_mut(ndarray::s![16..20, 32..40]).fill(1.0);
        let p = QpMapParams {
            strength: 0.5,
            ..QpMapParams::DEFAULT
        };
        let q = qp_map_with(&m, &false, &p).unwrap();
        assert_eq!((q.rows, q.cols), (2, 3));
        // The partial corner block holds only the blob: the peak, −0.5 × 8.
        assert!((q.at(1, 2) + 4.0).abs() < 1e-5, "{}", q.at(1, 2));
        assert!(q.offsets.iter().all(|v| v.abs() <= 8.0));
    }

    #[test]
    fn offsets_are_clamped_to_the_range() {
        // One hot block among many just below it: the coldest blocks lie far
        // further below the mean than the hot one above it.
        let mut m = ScoreMap::from_elem((64, 64), 0.5);
        m.slice_mut(ndarray::s![0..16, 0..16]).fill(0.6);
        m.slice_mut(ndarray::s![48..64, 48..64]).fill(0.0);
        let q = qp_map(&m, &false).unwrap();
        assert!((q.at(0, 0) + 8.0).abs() < 1e-5, "{}", q.at(0, 0));
        assert_eq!(q.at(3, 3), 8.0);
    }

    #[test]
    fn neutral_when_blurry_flat_or_off() {
        let q = qp_map(&blob_map(), &true).unwrap();
        assert_eq!(q.neutral, Neutral::Blurry);
        assert!(q.offsets.iter().all(|&v| v == 0.0));
        let mut flat = ScoreMap::from_elem((48, 64), 0.5);
        flat[[3, 3]] = 0.51; // under the 5 % spread
        let q = qp_map(&flat, &false).unwrap();
        assert_eq!(q.neutral, Neutral::Flat);
        assert!(q.offsets.iter().all(|&v| v == 0.0));
        let q = qp_map(&ScoreMap::zeros((48, 64)), &false).unwrap();
        assert_eq!(q.neutral, Neutral::Flat);
        let off = QpMapParams {
            strength: 0.0,
            ..QpMapParams::DEFAULT
        };
        assert_eq!(
            qp_map_with(&blob_map(), &false, &off).unwrap().neutral,
            Neutral::Off
        );
        assert_eq!(qp_map(&blob_map(), &true).unwrap().neutral, Neutral::Blurry);
    }

    #[test]
    fn bad_parameters_are_refused() {
        for p in [
            QpMapParams {
                block: 0,
                ..QpMapParams::DEFAULT
            },
            QpMapParams {
                max_offset: f32::NAN,
                ..QpMapParams::DEFAULT
            },
            QpMapParams {
                strength: 1.5,
                ..QpMapParams::DEFAULT
            },
        ] {
            assert!(matches!(
                qp_map_with(&blob_map(), &false, &p),
                Err(OpsError::InvalidParam { .. })
            ));
        }
    }

    #[test]
    fn svt_av1_blocks() {
        let q = qp_map_with(
            &ScoreMap::from_elem((130, 200), 0.3),
            &false,
            &QpMapParams::SVT_AV1,
        )
        .unwrap();
        assert_eq!((q.rows, q.cols, q.block), (3, 4, 64));
    }
}
