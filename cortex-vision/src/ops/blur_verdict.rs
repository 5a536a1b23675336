//! The blur decision of one frame against the clip's running sharpness
//! baseline (the L2 pipeline carries last frame's verdict as state), and
//! its use as the blur input of the quantiser-offset map.

use super::blur::BlurReport;
use super::qp_map::Blurriness;
use super::ssim::SceneChange;
use cortex_core::dynamic::{NoParams, OpDesc};

/// A frame is blurry (relative rule) when its Laplacian variance is below
/// this fraction of the clip's sharpness baseline.
pub const BLUR_RATIO: f64 = 0.35;

/// How fast the sharpness baseline follows sharp frames: each one moves the
/// baseline's logarithm this fraction of the way to its own (an
/// exponential moving average of log-variance, i.e. a geometric mean with a
/// memory of about 10 frames).
pub const BASELINE_ALPHA: f64 = 0.1;

/// The absolute rule: blurry when the Laplacian variance is below
/// this, whatever the clip ([`BlurVerdict::below_threshold`]).
pub const ABSOLUTE_BLUR_THRESHOLD: f64 = 100.0;

/// The blur decision of one frame, and the sharpness baseline carried to
/// the next (the pipeline's `_sharpness` state holds last frame's verdict).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlurVerdict {
    /// Variance of the Laplacian of this frame.
    pub variance: f64,
    /// The baseline this frame was compared with (`None` on a first frame
    /// or the first frame after a scene cut, which start a new baseline).
    pub baseline: Option<f64>,
    /// `variance / baseline` (1 when there is no baseline).
    pub ratio: f64,
    /// The relative rule: `ratio < BLUR_RATIO`.
    pub is_blurry: bool,
    /// The absolute rule: `variance < ABSOLUTE_BLUR_THRESHOLD` (100).
    pub below_threshold: bool,
    /// The baseline the next frame is compared with.
    pub next_baseline: Option<f64>,
}

impl BlurVerdict {
    /// The state before any frame: no baseline.
    pub const INITIAL: BlurVerdict = BlurVerdict {
        variance: 0.0,
        baseline: None,
        ratio: 1.0,
        is_blurry: false,
        below_threshold: false,
        next_baseline: None,
    };
}

/// Decides blur against the clip's running sharpness baseline.
///
/// The baseline is a slow geometric moving average of the Laplacian
/// variance of recent *sharp* frames ([`BASELINE_ALPHA`]); blurry frames do
/// not pull it down, so a long out-of-focus stretch stays flagged. A first
/// frame, and the first frame after a scene cut (a new shot has its own
/// sharpness), seed a new baseline and are never called blurry by this
/// rule — a cut straight into an out-of-focus shot is caught only by the
/// absolute rule ([`BlurVerdict::below_threshold`]).
pub fn blur_verdict(report: &BlurReport, scene: &SceneChange, prev: &BlurVerdict) -> BlurVerdict {
    let variance = report.variance;
    let below_threshold = variance < ABSOLUTE_BLUR_THRESHOLD;
    let baseline = prev.next_baseline.filter(|_| !scene.changed);
    let Some(b) = baseline.filter(|b| *b > 0.0) else {
        return BlurVerdict {
            variance,
            baseline: None,
            ratio: 1.0,
            is_blurry: false,
            below_threshold,
            next_baseline: Some(variance),
        };
    };
    let ratio = variance / b;
    let is_blurry = ratio < BLUR_RATIO;
    let next = if is_blurry || variance <= 0.0 {
        b
    } else {
        (b.ln() + BASELINE_ALPHA * (variance.ln() - b.ln())).exp()
    };
    BlurVerdict {
        variance,
        baseline: Some(b),
        ratio,
        is_blurry,
        below_threshold,
        next_baseline: Some(next),
    }
}

impl Blurriness for BlurVerdict {
    fn is_blurry(&self) -> bool {
        self.is_blurry
    }
}

/// `vision.blur_verdict`: the op as graph files, the runner and Python
/// name it.
pub fn descriptor() -> OpDesc {
    OpDesc::builder::<NoParams>(
        "vision.blur_verdict",
        "blur decided against the clip's own sharpness, carried frame to frame",
    )
    .calls(&["blur_verdict"])
    .input::<BlurReport>("report")
    .input::<SceneChange>("scene")
    .input::<BlurVerdict>("previous")
    .compilable()
    .returns(|i, _| Ok(blur_verdict(i.arg(0)?, i.arg(1)?, i.arg(2)?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::qp_map::{qp_map, Neutral};
    use crate::ops::ScoreMap;

    #[test]
    fn a_blurry_verdict_makes_the_qp_map_neutral() {
        let mut m = ScoreMap::from_elem((48, 64), 0.1);
        m.slice_mut(ndarray::s![16..32, 32..48]).fill(0.9);
        let sharp = qp_map(&m, &BlurVerdict::INITIAL).unwrap();
        assert_eq!(sharp.neutral, Neutral::No);
        let verdict = BlurVerdict {
            is_blurry: true,
            ..BlurVerdict::INITIAL
        };
        assert_eq!(qp_map(&m, &verdict).unwrap().neutral, Neutral::Blurry);
    }
}
