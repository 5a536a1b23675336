//! `score_fusion`: the weighted sum of the partial score maps.

use super::border::prepare_out;
use super::types::{OpsError, ScoreMap};
use crate::registry::declare::{self, registry_op};
use crate::registry::Shape;
use cortex_core::dynamic::{NoParams, OpDesc};
use cortex_core::weights::Weights;

/// The weight keys [`score_fusion`] reads, in summation order: centre, text,
/// saliency, motion.
pub const SCORE_KEYS: [&str; 4] = ["wc", "wt", "ws", "wm"];

/// `S = wc·Sc + wt·St + ws·Ss + wm·Sm` with the weights of `weights`
/// (keys [`SCORE_KEYS`]; a missing key weighs 0).
///
/// A map that dead-node elimination removed arrives as `None` and contributes
/// nothing. The result is bit-identical to the same call with that map present
/// and its weight 0, because terms of weight 0 are skipped rather than added
/// (see [`fuse_into`]).
///
/// # Errors
/// [`OpsError::InvalidParam`] for a negative or non-finite weight or when every
/// map is `None` (the output size is then unknown); [`OpsError::SizeMismatch`]
/// when the present maps differ in size; [`OpsError::Empty`] for empty maps.
pub fn score_fusion(
    center: Option<&ScoreMap>,
    text: Option<&ScoreMap>,
    saliency: Option<&ScoreMap>,
    motion: Option<&ScoreMap>,
    weights: &Weights,
) -> Result<ScoreMap, OpsError> {
    let mut out = ScoreMap::zeros((0, 0));
    score_fusion_into(center, text, saliency, motion, weights, &mut out)?;
    Ok(out)
}

/// [`score_fusion`] into a caller-owned map.
///
/// # Errors
/// As [`score_fusion`].
pub fn score_fusion_into(
    center: Option<&ScoreMap>,
    text: Option<&ScoreMap>,
    saliency: Option<&ScoreMap>,
    motion: Option<&ScoreMap>,
    weights: &Weights,
    out: &mut ScoreMap,
) -> Result<(), OpsError> {
    let mut w = [0f32; 4];
    for (slot, key) in w.iter_mut().zip(SCORE_KEYS) {
        let v = weights.get_or_zero(key);
        if !v.is_finite() || v < 0.0 {
            return Err(OpsError::InvalidParam {
                name: key,
                reason: format!("weight must be finite and >= 0, got {v}"),
            });
        }
        *slot = v as f32;
    }
    let terms = [
        (center, w[0]),
        (text, w[1]),
        (saliency, w[2]),
        (motion, w[3]),
    ];
    fuse_into(&terms, out)
}

/// Pixels per block of the weighted sum: the block's partial sums (4 KB)
/// stay in L1 while every term is added to them.
pub(crate) const FUSE_BLOCK: usize = 1024;

/// `out = Σ wᵢ·mapᵢ` over the terms, in the order given, in `f32`.
///
/// Determinism and bit-exactness: every pixel is computed as
/// `((0 + w₁·m₁) + w₂·m₂) + …` over the terms whose map is present and whose
/// weight is not zero, in the order of `terms`, with separate multiply and add
/// (no fused multiply-add). Terms with weight `0.0` (or `-0.0`) are skipped,
/// so a `None` map and a present map of weight 0 give the same bits even when
/// that map holds NaN, infinities or `-0.0`. A result that would be `-0.0`
/// comes out as `+0.0` (the sum starts from `+0.0`).
///
/// The output takes the size of the present maps; when all of them have
/// weight 0 it is all zeros.
///
/// # Errors
/// [`OpsError::InvalidParam`] for a negative or non-finite weight or when no
/// map is present; [`OpsError::SizeMismatch`] when present maps differ in
/// size; [`OpsError::Empty`] when they have no pixels;
/// [`OpsError::TooLarge`] when they are over the frame limits.
pub fn fuse_into(terms: &[(Option<&ScoreMap>, f32)], out: &mut ScoreMap) -> Result<(), OpsError> {
    let mut dim = None;
    for &(map, w) in terms {
        if !w.is_finite() || w < 0.0 {
            return Err(OpsError::InvalidParam {
                name: "weight",
                reason: format!("must be finite and >= 0, got {w}"),
            });
        }
        let Some(m) = map else { continue };
        let (h, wd) = m.dim();
        match dim {
            None => dim = Some((h, wd)),
            Some((eh, ew)) if (eh, ew) != (h, wd) => {
                return Err(OpsError::SizeMismatch {
                    what: "score map",
                    got_w: wd,
                    got_h: h,
                    want_w: ew,
                    want_h: eh,
                })
            }
            Some(_) => {}
        }
    }
    let Some((h, w)) = dim else {
        return Err(OpsError::InvalidParam {
            name: "maps",
            reason: "every map is None: nothing to fuse".into(),
        });
    };
    super::border::check_frame("score map", h, w)?;
    let dst = prepare_out(out, h, w);
    let live = || {
        terms
            .iter()
            .filter(|&&(_, wt)| wt != 0.0)
            .filter_map(|&(m, wt)| m.map(|m| (m, wt)))
    };
    if live().all(|(m, _)| m.is_standard_layout()) {
        // Blocks keep the partial sums in L1 while every term is added in
        // order: one write of the output instead of one pass per term.
        for (b, chunk) in dst.chunks_mut(FUSE_BLOCK).enumerate() {
            let start = b * FUSE_BLOCK;
            chunk.fill(0.0);
            for (m, wt) in live() {
                if let Some(src) = m.as_slice() {
                    axpy(chunk, &src[start..start + chunk.len()], wt);
                }
            }
        }
    } else {
        // Some map is in another memory order: whole-map passes through
        // ndarray's layout-aware zip. Each pixel still sums the same terms in
        // the same order, so the bits are the same as on the fast path.
        dst.fill(0.0);
        let mut view = ndarray::ArrayViewMut2::from_shape((h, w), dst).map_err(|e| {
            OpsError::InvalidParam {
                name: "out",
                reason: e.to_string(),
            }
        })?;
        for (m, wt) in live() {
            ndarray::Zip::from(&mut view)
                .and(m)
                .for_each(|a, &v| *a += wt * v);
        }
    }
    Ok(())
}

super::simd::multiversion! {
    /// `acc[i] = acc[i] + w * x[i]`, unfused.
    pub(crate) fn axpy(acc: &mut [f32], x: &[f32], w: f32) {
        for (a, &v) in acc.iter_mut().zip(x) {
            *a += w * v;
        }
    }
}

/// The arguments of [`ScoreFusion`]: the four maps (a weighted edge may be
/// absent) and the weights.
pub type ScoreFusionArgs<'a> = (
    Option<&'a ScoreMap>,
    Option<&'a ScoreMap>,
    Option<&'a ScoreMap>,
    Option<&'a ScoreMap>,
    &'a Weights,
);

/// The shape of a fusion: the first map present (0×0 when none is).
fn fusion_shape(a: &ScoreFusionArgs<'_>) -> Shape {
    [a.0, a.1, a.2, a.3]
        .into_iter()
        .flatten()
        .next()
        .map_or(Shape::new(0, 0), |m| Shape::new(m.ncols(), m.nrows()))
}

registry_op! {
    /// `score_fusion` in the kernel registry: the weighted sum of the
    /// score maps (pure Rust only).
    ScoreFusion = "score_fusion", for<'a> ScoreFusionArgs<'a> => ScoreMap;
    shape |a| fusion_shape(a);
    kernels { pure(|&(c, t, s, m, w), out| score_fusion_into(c, t, s, m, w, out)) }
}

/// `vision.score_fusion`: the op as graph files, the runner and Python
/// name it.
pub fn descriptor() -> OpDesc {
    OpDesc::builder::<NoParams>(
        "vision.score_fusion",
        "the weighted sum of four score maps (weights wc, wt, ws, wm)",
    )
    .calls(&["score_fusion", "score_fusion_into"])
    .kernels(&declare::kernel_labels::<ScoreFusion>())
    .optional::<ScoreMap>("center")
    .optional::<ScoreMap>("text")
    .optional::<ScoreMap>("saliency")
    .optional::<ScoreMap>("motion")
    .weights()
    .strip(|_| Some(crate::ops::strip::FusionForm))
    .fills(|i, _, out: &mut ScoreMap| {
        let m = [i.opt(0)?, i.opt(1)?, i.opt(2)?, i.opt(3)?];
        Ok(score_fusion_into(m[0], m[1], m[2], m[3], i.weights(), out)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_equals_zero_weight_even_with_nan() {
        let a = ScoreMap::from_elem((2, 3), 0.5);
        let nan = ScoreMap::from_elem((2, 3), f32::NAN);
        let mut o1 = ScoreMap::zeros((0, 0));
        let mut o2 = ScoreMap::zeros((0, 0));
        fuse_into(&[(Some(&a), 0.3), (None, 0.7)], &mut o1).unwrap();
        fuse_into(&[(Some(&a), 0.3), (Some(&nan), 0.0)], &mut o2).unwrap();
        assert_eq!(o1, o2);
        assert!(o1.iter().all(|v| v.to_bits() == (0.3f32 * 0.5).to_bits()));
    }

    #[test]
    fn errors() {
        let a = ScoreMap::zeros((2, 3));
        let b = ScoreMap::zeros((3, 2));
        let w = Weights::new().with("wc", 1.0).with("ws", 1.0);
        assert!(matches!(
            score_fusion(Some(&a), None, Some(&b), None, &w),
            Err(OpsError::SizeMismatch { .. })
        ));
        assert!(score_fusion(None, None, None, None, &w).is_err());
        let bad = Weights::new().with("wc", f64::INFINITY);
        assert!(score_fusion(Some(&a), None, None, None, &bad).is_err());
        let neg = Weights::new().with("wm", -0.1);
        assert!(score_fusion(Some(&a), None, None, None, &neg).is_err());
    }
}
