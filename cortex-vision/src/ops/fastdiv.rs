//! Pixel index → `(x, y)` without a hardware division.
//!
//! The MSER box-only detector and the region labelling need the
//! coordinates of every pixel they flood, and a 32-bit `div` costs several
//! times more than the rest of the per-pixel bookkeeping; a multiply by a
//! precomputed reciprocal does the same job.

/// Splits row-major pixel indices of an image of a fixed width.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowSplitter {
    width: u32,
    /// `ceil(2^64 / width)` (or `2^64 / width` when exact); see [`Self::split`].
    magic: u64,
}

impl RowSplitter {
    /// A splitter for `width ≥ 2` columns (the detector rejects narrower
    /// images before flooding; 1 is mapped to 2 only to stay total).
    pub(crate) fn new(width: u32) -> Self {
        let width = width.max(2);
        Self {
            width,
            magic: (u64::MAX / u64::from(width)).wrapping_add(1),
        }
    }

    /// `(idx % width, idx / width)`.
    ///
    /// Why it is exact: with `m = floor((2^64 - 1) / d) + 1` the error of
    /// `idx * m / 2^64` against `idx / d` is below `idx / 2^64 < 1/d` for any
    /// 32-bit `idx` and `d`, which never moves the floor (Lemire, Kaser and
    /// Kurz, "Faster remainder by direct computation", 2019).
    #[inline]
    pub(crate) fn split(&self, idx: u32) -> (u32, u32) {
        let y = ((u128::from(idx) * u128::from(self.magic)) >> 64) as u32;
        (idx - y * self.width, y)
    }
}

#[cfg(test)]
mod tests {
    use super::RowSplitter;

    #[test]
    fn matches_division() {
        for w in [2u32, 3, 7, 64, 640, 641, 1920, 4095, 65535, 70_001, 1 << 20] {
            let s = RowSplitter::new(w);
            let mut idx = 0u32;
            while idx < 1 << 29 {
                assert_eq!(s.split(idx), (idx % w, idx / w), "w={w} idx={idx}");
                idx = idx * 3 + 1;
            }
            for idx in [(1u32 << 29) - 1, u32::MAX, u32::MAX - 1] {
                assert_eq!(s.split(idx), (idx % w, idx / w), "w={w} idx={idx}");
            }
        }
    }
}
