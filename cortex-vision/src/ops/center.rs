//! `center_crop`: a Gaussian window prior centred on the frame.

use super::border::{check_frame, prepare_out};
use super::scratch::{vec_bytes, with_scratch, Scratch, Slot};
use super::types::{GrayImage, OpsError, ScoreMap};
use crate::registry::declare::{self, registry_op};
use cortex_core::dynamic::OpDesc;

/// Parameters of [`center_crop_with`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CenterParams {
    /// Horizontal σ as a fraction of the width. Finite, `> 0`. Default `0.25`.
    pub sigma_x: f64,
    /// Vertical σ as a fraction of the height. Finite, `> 0`. Default `0.25`.
    pub sigma_y: f64,
}

impl CenterParams {
    /// The documented defaults, as a constant: a pipeline node can pass
    /// `&CenterParams::DEFAULT` without building a value per frame.
    pub const DEFAULT: CenterParams = CenterParams {
        sigma_x: 0.25,
        sigma_y: 0.25,
    };
}

impl Default for CenterParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl CenterParams {
    /// Checks the fields.
    ///
    /// # Errors
    /// [`OpsError::InvalidParam`] for a σ that is not finite and positive.
    pub fn validate(&self) -> Result<(), OpsError> {
        for (name, v) in [("sigma_x", self.sigma_x), ("sigma_y", self.sigma_y)] {
            if !v.is_finite() || v <= 0.0 {
                return Err(OpsError::InvalidParam {
                    name,
                    reason: format!("must be finite and > 0, got {v}"),
                });
            }
        }
        Ok(())
    }
}

/// The centre prior sized like `gray`, with default [`CenterParams`].
///
/// # Errors
/// [`OpsError::Empty`] for an image without pixels.
pub fn center_crop(gray: &GrayImage) -> Result<ScoreMap, OpsError> {
    center_crop_with(gray, &CenterParams::default())
}

/// The centre prior sized like `gray`.
///
/// # Errors
/// [`OpsError::Empty`] for an image without pixels, [`OpsError::InvalidParam`]
/// for a bad σ.
pub fn center_crop_with(gray: &GrayImage, params: &CenterParams) -> Result<ScoreMap, OpsError> {
    let mut out = ScoreMap::zeros((0, 0));
    center_prior_into(gray.nrows(), gray.ncols(), params, &mut out)?;
    Ok(out)
}

/// [`center_crop_with`] into a caller-owned map (reallocated only on a size change).
///
/// # Errors
/// As [`center_crop_with`].
pub fn center_crop_into(
    gray: &GrayImage,
    params: &CenterParams,
    out: &mut ScoreMap,
) -> Result<(), OpsError> {
    center_prior_into(gray.nrows(), gray.ncols(), params, out)
}

/// The prior for a `height × width` frame:
/// `exp(−(x−cx)²/(2σx²) − (y−cy)²/(2σy²))` with `cx = (width−1)/2`,
/// `cy = (height−1)/2` (the centre between the middle pixels of an even
/// side), `σx = sigma_x·width`, `σy = sigma_y·height`. The amplitude is 1, so
/// the map peaks at exactly 1.0 on odd sides and just below 1.0 on even ones.
///
/// The Gaussian is separable: two 1-D profiles are computed in `f64` and the
/// map is their product, rounded once to `f32` (within 1 ulp of the 2-D
/// closed form).
///
/// # Errors
/// [`OpsError::Empty`] for a zero side, [`OpsError::TooLarge`] for a size
/// over the frame limits (checked before the map is allocated),
/// [`OpsError::InvalidParam`] for a bad σ.
pub fn center_prior_into(
    height: usize,
    width: usize,
    params: &CenterParams,
    out: &mut ScoreMap,
) -> Result<(), OpsError> {
    params.validate()?;
    check_frame("gray", height, width)?;
    let dst = prepare_out(out, height, width);
    // The horizontal profile lives in a per-thread buffer so that steady-state
    // calls do not allocate.
    thread_local! {
        static PROFILE: Slot<Profile> = const { Slot::new(None) };
    }
    with_scratch(&PROFILE, |Profile(gx)| {
        gx.clear();
        gx.extend((0..width).map(|i| profile_at(i, width, params.sigma_x)));
        for (y, row) in dst.chunks_exact_mut(width).enumerate() {
            let vy = profile_at(y, height, params.sigma_y);
            for (d, &vx) in row.iter_mut().zip(gx.iter()) {
                *d = (vy * vx) as f32;
            }
        }
    });
    Ok(())
}

/// The horizontal profile of [`center_prior_into`].
#[derive(Default)]
struct Profile(Vec<f64>);

impl Scratch for Profile {
    fn heap_bytes(&self) -> usize {
        vec_bytes(&self.0)
    }
}

/// `exp(−(i−c)²/(2σ²))` with `c = (n−1)/2` and `σ = frac·n`.
///
/// The centre of an odd side is exactly 1: with a tiny σ, `σ²` underflows
/// to 0 and `0/0` would give NaN there (elsewhere `−d²/0 = −∞` gives the
/// right limit, 0; with a huge σ, `σ² = ∞` gives 1).
pub(crate) fn profile_at(i: usize, n: usize, frac: f64) -> f64 {
    let c = (n as f64 - 1.0) / 2.0;
    let s = frac * n as f64;
    let d = i as f64 - c;
    if d == 0.0 {
        return 1.0;
    }
    (-0.5 * d * d / (s * s)).exp()
}

registry_op! {
    /// `center_crop` in the kernel registry: the centre prior (pure Rust
    /// only).
    CenterCrop = "center_crop", for<'a> &'a GrayImage => ScoreMap;
    shape |g| gray_shape(g);
    kernels { pure(|g, out| center_crop_into(g, &CenterParams::DEFAULT, out)) }
}

/// `vision.center_crop`: the op as graph files, the runner and Python
/// name it.
pub fn descriptor() -> OpDesc {
    OpDesc::builder::<CenterParams>(
        "vision.center_crop",
        "a Gaussian centre prior the size of the frame",
    )
    .calls(&["center_crop", "center_crop_into"])
    .kernels(&declare::kernel_labels::<CenterCrop>())
    .input::<GrayImage>("gray")
    .param(
        "sigma_x",
        "horizontal sigma as a fraction of the width; finite, > 0",
    )
    .param(
        "sigma_y",
        "vertical sigma as a fraction of the height; finite, > 0",
    )
    .strip(|p: &CenterParams| Some(crate::ops::strip::CenterForm(*p)))
    .fills(|i, p, out: &mut ScoreMap| Ok(center_crop_into(i.arg(0)?, p, out)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_and_peak() {
        let g = GrayImage::zeros((7, 9));
        let m = center_crop(&g).unwrap();
        assert_eq!(m[[3, 4]], 1.0);
        for ((y, x), &v) in m.indexed_iter() {
            let dx = (x as f64 - 4.0) / (0.25 * 9.0);
            let dy = (y as f64 - 3.0) / (0.25 * 7.0);
            let want = (-0.5 * (dx * dx + dy * dy)).exp();
            assert!((f64::from(v) - want).abs() <= 1e-6);
        }
    }

    #[test]
    fn rejects_bad_input() {
        assert!(center_crop(&GrayImage::zeros((0, 3))).is_err());
        let p = CenterParams {
            sigma_x: 0.0,
            sigma_y: 0.25,
        };
        assert!(center_crop_with(&GrayImage::zeros((3, 3)), &p).is_err());
    }
}
