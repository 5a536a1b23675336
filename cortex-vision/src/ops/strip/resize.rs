//! [`ResizeStrip`] and [`ResizeMapStrip`]: the bilinear resizes of
//! [`crate::ops::resize`] on a strip of output rows, so a downscale (or an
//! upscale back to the frame) runs inside a fused group instead of as a
//! whole-frame pass. Each output row reads the two source rows its vertical
//! tap names — rows the group provides through the kernel's window.

use super::check::{arity, channels};
use super::forms::only;
use crate::ops::border::check_frame;
use crate::ops::resize::{
    blend, exact_row, exact_tap, half_row, is_half, linear_hrow, linear_tap, linear_taps, ExactTap,
    SCRATCH,
};
use crate::ops::scratch::with_scratch;
use crate::ops::{GrayImage, ScoreMap};
use cortex_core::strip::form::store_array2;
use cortex_core::strip::group::Value;
use cortex_core::strip::{
    Element, FusedGroup, Geometry, GroupBuilder, Inputs, Kind, Map, Plane, StripError, StripForm,
    StripKernel, StripMut, Window,
};
use cortex_core::weights::Weights;

/// The output geometry of a resize to `height × width` of a one-channel
/// input, checked against the frame limits.
fn resized(
    kernel: &str,
    inputs: &[Geometry],
    height: usize,
    width: usize,
) -> Result<Geometry, StripError> {
    let g = arity(kernel, inputs, 1)?[0];
    channels(kernel, g, 1)?;
    check_frame("resize output", height, width).map_err(|e| StripError::failed(kernel, e))?;
    Ok(Geometry::new(width, height))
}

/// A resize to the source's own size copies it (as OpenCV does): `true`
/// when it did.
fn copied_when_same_size<T: Element>(
    src: &Plane<'_, T>,
    out: &mut StripMut<'_, T>,
) -> Result<bool, StripError> {
    if (src.height(), src.width()) != (out.geometry().height, out.geometry().width) {
        return Ok(false);
    }
    for (y, row) in out.rows_mut() {
        row.copy_from_slice(src.row(y)?);
    }
    Ok(true)
}

/// 8-bit gray resized to `height × width` as
/// `cv::resize(INTER_LINEAR_EXACT)` — bit-identical to
/// [`crate::ops::resize::resize_gray_into`].
///
/// As a node form: `#[compilable(strip = ops::strip::ResizeStrip::to(64, 64))]`
/// on `node small: GrayImage = ops::resize::resize_gray_into(gray, (64, 64), &mut small)?;`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResizeStrip {
    /// Output rows.
    pub height: usize,
    /// Output columns.
    pub width: usize,
}

impl ResizeStrip {
    /// A resize to `height × width`.
    pub const fn to(height: usize, width: usize) -> ResizeStrip {
        ResizeStrip { height, width }
    }
}

impl StripKernel for ResizeStrip {
    type Out = u8;

    fn name(&self) -> &str {
        "resize"
    }

    fn kind(&self) -> Kind {
        // Output row y blends source rows i and i + 1 around y·h/H.
        Kind::Resample(Window::symmetric(1))
    }

    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        resized("resize", inputs, self.height, self.width)
    }

    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, u8>) -> Result<(), StripError> {
        let src = inputs.plane::<u8>(0)?;
        let (sh, sw) = (src.height(), src.width());
        let (dh, dw) = (out.geometry().height, out.geometry().width);
        if copied_when_same_size(&src, out)? {
            return Ok(());
        }
        with_scratch(&SCRATCH, |s| {
            s.xe.clear();
            s.xe.extend((0..dw).map(|d| exact_tap(d, sw, dw)));
            s.hi.resize(2 * dw, 0);
            let (h0, h1) = s.hi.split_at_mut(dw);
            for (y, row) in out.rows_mut() {
                let tap = exact_tap(y, sh, dh);
                let (a, b) = match tap {
                    ExactTap::Copy(i) => (i, i),
                    ExactTap::Mix(i, _) => (i, i + 1),
                };
                let (ra, rb) = (src.row(a)?, src.row(b)?);
                exact_row(tap, |i| if i == a { ra } else { rb }, &s.xe, h0, h1, row);
            }
            Ok(())
        })
    }
}

/// `f32` maps resized to `height × width` as `cv::resize(INTER_LINEAR)` —
/// bit-identical to [`crate::ops::resize::resize_map_into`].
///
/// As a node form: `#[compilable(strip = ops::strip::ResizeMapStrip::to(h, w))]`
/// on `node big: ScoreMap = ops::resize::resize_map_into(map, (h, w), &mut big)?;`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResizeMapStrip {
    /// Output rows.
    pub height: usize,
    /// Output columns.
    pub width: usize,
}

impl ResizeMapStrip {
    /// A resize to `height × width`.
    pub const fn to(height: usize, width: usize) -> ResizeMapStrip {
        ResizeMapStrip { height, width }
    }
}

impl StripKernel for ResizeMapStrip {
    type Out = f32;

    fn name(&self) -> &str {
        "resize_map"
    }

    fn kind(&self) -> Kind {
        Kind::Resample(Window::symmetric(1))
    }

    fn geometry(&self, inputs: &[Geometry]) -> Result<Geometry, StripError> {
        resized("resize_map", inputs, self.height, self.width)
    }

    fn run(&self, inputs: &Inputs<'_>, out: &mut StripMut<'_, f32>) -> Result<(), StripError> {
        let src = inputs.plane::<f32>(0)?;
        let (sh, sw) = (src.height(), src.width());
        let (dh, dw) = (out.geometry().height, out.geometry().width);
        if copied_when_same_size(&src, out)? {
            return Ok(());
        }
        if is_half(sh, sw, dh, dw) {
            for (y, row) in out.rows_mut() {
                half_row(src.row(2 * y)?, src.row(2 * y + 1)?, row);
            }
            return Ok(());
        }
        with_scratch(&SCRATCH, |s| {
            linear_taps(sw, dw, 0..dw, true, &mut s.xt);
            s.hf.resize(2 * dw, 0.0);
            let (mut a, mut b) = s.hf.split_at_mut(dw);
            // The source rows `a` and `b` hold, each resampled once while
            // consecutive output rows need it.
            let (mut ra, mut rb) = (usize::MAX, usize::MAX);
            for (y, row) in out.rows_mut() {
                let t = linear_tap(y, sh, dh, false);
                if ra != t.i0 {
                    if rb == t.i0 {
                        std::mem::swap(&mut a, &mut b);
                        std::mem::swap(&mut ra, &mut rb);
                    } else {
                        linear_hrow(src.row(t.i0)?, a, &s.xt);
                        ra = t.i0;
                    }
                }
                if rb != t.i1 {
                    linear_hrow(src.row(t.i1)?, b, &s.xt);
                    rb = t.i1;
                }
                blend(row, a, b, 1.0 - t.f, t.f);
            }
            Ok(())
        })
    }
}

/// `resize_gray_into(gray, (h, w), …)`:
/// `#[compilable(strip = ops::strip::ResizeStrip::to(h, w))]`.
impl StripForm for ResizeStrip {
    type Value = GrayImage;
    type Shape = Map;

    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        _weights: &Weights,
    ) -> Result<Value, StripError> {
        group.kernel(*self, &[only("resize", inputs)?])
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

/// `resize_map_into(map, (h, w), …)`:
/// `#[compilable(strip = ops::strip::ResizeMapStrip::to(h, w))]`.
impl StripForm for ResizeMapStrip {
    type Value = ScoreMap;
    type Shape = Map;

    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<Value>],
        _weights: &Weights,
    ) -> Result<Value, StripError> {
        group.kernel(*self, &[only("resize_map", inputs)?])
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
