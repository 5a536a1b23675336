//! Shared helpers of the kernels: OpenCV-compatible border indexing, input
//! checks and output-buffer reuse.

use super::types::OpsError;
use cortex_core::limits::FrameLimits;
use ndarray::{Array2, ArrayView2};
use std::borrow::Cow;

/// Index of the pixel that stands in for position `p` of a row or column of
/// `len` pixels under OpenCV's `BORDER_REFLECT_101` (`gfedcb|abcdefgh|gfedcba`).
///
/// This is `cv::borderInterpolate` for that border: it reflects as many times
/// as needed, so a window wider than the image (a 1×1 frame under an 11×11
/// Gaussian) still lands inside it, and `len == 1` maps everything to `0`.
/// `len` must be non-zero (the callers reject empty images first).
#[inline]
pub(crate) fn reflect101(p: isize, len: usize) -> usize {
    if len <= 1 {
        return 0;
    }
    let n = len as isize;
    let mut p = p;
    // Each reflection moves `p` strictly closer to the range, so this ends.
    while p < 0 || p >= n {
        p = if p < 0 { -p } else { 2 * (n - 1) - p };
    }
    p as usize
}

/// Rejects an image with no pixels, naming the argument in the error.
pub(crate) fn check_nonempty(what: &'static str, rows: usize, cols: usize) -> Result<(), OpsError> {
    if rows == 0 || cols == 0 {
        return Err(OpsError::Empty {
            what,
            width: cols,
            height: rows,
        });
    }
    Ok(())
}

/// Refuses a `rows × cols` image over the frame limits in effect on this
/// thread, before anything is allocated for it.
pub(crate) fn check_limits(what: &'static str, rows: usize, cols: usize) -> Result<(), OpsError> {
    FrameLimits::current()
        .check(cols, rows)
        .map_err(|e| OpsError::TooLarge {
            what,
            width: cols,
            height: rows,
            max_pixels: e.limits.max_pixels,
            max_side: e.limits.max_side,
        })
}

/// [`check_nonempty`] and [`check_limits`]: the entry check of every kernel.
pub(crate) fn check_frame(what: &'static str, rows: usize, cols: usize) -> Result<(), OpsError> {
    check_nonempty(what, rows, cols)?;
    check_limits(what, rows, cols)
}

/// The pixels of `img` as one row-major slice, copying only when the array is
/// not in standard layout (e.g. a transposed view made owned).
pub(crate) fn contiguous<T: Clone>(img: ArrayView2<'_, T>) -> Cow<'_, [T]> {
    match img.to_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(img.iter().cloned().collect()),
    }
}

/// Makes `out` a standard-layout `rows × cols` array, reallocating only when its
/// shape or layout differs, and returns its pixels as one mutable slice.
pub(crate) fn prepare_out<T: Clone + Default>(
    out: &mut Array2<T>,
    rows: usize,
    cols: usize,
) -> &mut [T] {
    if out.dim() != (rows, cols) || !out.is_standard_layout() {
        *out = Array2::default((rows, cols));
    }
    match out.as_slice_mut() {
        Some(s) => s,
        // Unreachable: the array was just made standard layout. An empty slice
        // keeps this total without a panic path.
        None => &mut [],
    }
}

#[cfg(test)]
mod tests {
    use super::reflect101;

    #[test]
    fn reflect101_matches_opencv_border_interpolate() {
        // gfedcb|abcdefgh|gfedcba
        let len = 8;
        let got: Vec<usize> = (-3..11).map(|p| reflect101(p, len)).collect();
        assert_eq!(got, vec![3, 2, 1, 0, 1, 2, 3, 4, 5, 6, 7, 6, 5, 4]);
        assert_eq!(reflect101(-5, 1), 0);
        assert_eq!(reflect101(7, 1), 0);
        // Several reflections on a tiny row: 0 1 | 0 1 0 1 ...
        assert_eq!(reflect101(-3, 2), 1);
        assert_eq!(reflect101(5, 2), 1);
        assert_eq!(reflect101(-5, 3), 1);
    }
}
