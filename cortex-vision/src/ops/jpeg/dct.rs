//! Forward 8×8 DCT and quantization of one block, in `f32`.
//!
//! The DCT is computed as two matrix products, `F = M·B·Mᵀ` with
//! `M[u][x] = ½·c(u)·cos((2x+1)uπ/16)` (`c(0) = 1/√2`, else 1), which is
//! the standard's definition (T.81 A.3.3) exactly, not an approximation.
//! Each product is written as eight 8-wide multiply-adds per output row, a
//! shape the compiler turns into one vector register per row; that costs
//! about as much as a fast (AAN) factorization does in scalar code, with no
//! precision traded away.

use super::super::simd::multiversion;

/// One 8×8 block, row-major.
pub(super) type Block = [[f32; 8]; 8];

/// The DCT matrix `M` and its transpose.
#[derive(Debug, Clone)]
pub(super) struct DctMatrix {
    m: Block,
    mt: Block,
}

impl DctMatrix {
    /// Computes `M` (64 cosines, in `f64` then rounded once).
    pub(super) fn new() -> Self {
        let mut m = [[0f32; 8]; 8];
        for (u, row) in m.iter_mut().enumerate() {
            let c = if u == 0 {
                std::f64::consts::FRAC_1_SQRT_2
            } else {
                1.0
            };
            for (x, v) in row.iter_mut().enumerate() {
                let angle = (2 * x + 1) as f64 * u as f64 * std::f64::consts::PI / 16.0;
                *v = (0.5 * c * angle.cos()) as f32;
            }
        }
        let mut mt = [[0f32; 8]; 8];
        for (u, row) in m.iter().enumerate() {
            for (x, &v) in row.iter().enumerate() {
                mt[x][u] = v;
            }
        }
        DctMatrix { m, mt }
    }
}

/// `1.5 · 2²³`: adding and subtracting it rounds an `f32` of magnitude
/// below 2²² to the nearest integer, ties to even, in two vectorizable
/// instructions (`round_ties_even` is a library call on baseline x86-64).
const ROUND: f32 = 12_582_912.0;

multiversion! {
    /// `out = round(DCT(block) · recip)`, natural order; `recip[i]` is the
    /// reciprocal of quantizer `i`. Level-shifted input (`[-128, 128)`) gives
    /// coefficients within ±1024, so the rounding trick is exact.
    pub(super) fn fdct_quantize(block: &Block, dct: &DctMatrix, recip: &[f32; 64], out: &mut [i32; 64]) {
        // T = M·B: row p of T is Σ_y M[p][y]·B[y].
        let mut t = [[0f32; 8]; 8];
        for (p, trow) in t.iter_mut().enumerate() {
            for (y, brow) in block.iter().enumerate() {
                let k = dct.m[p][y];
                for x in 0..8 {
                    trow[x] += k * brow[x];
                }
            }
        }
        // F = T·Mᵀ: row p of F is Σ_x T[p][x]·Mᵀ[x].
        for (p, trow) in t.iter().enumerate() {
            let mut f = [0f32; 8];
            for (x, mtrow) in dct.mt.iter().enumerate() {
                let k = trow[x];
                for q in 0..8 {
                    f[q] += k * mtrow[q];
                }
            }
            for q in 0..8 {
                let v = f[q] * recip[p * 8 + q];
                out[p * 8 + q] = ((v + ROUND) - ROUND) as i32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The standard's double sum, in `f64`.
    fn direct(block: &Block) -> [f64; 64] {
        let c = |u: usize| {
            if u == 0 {
                std::f64::consts::FRAC_1_SQRT_2
            } else {
                1.0
            }
        };
        let mut out = [0f64; 64];
        for v in 0..8 {
            for u in 0..8 {
                let mut s = 0.0;
                for (y, row) in block.iter().enumerate() {
                    for (x, &px) in row.iter().enumerate() {
                        s += f64::from(px)
                            * ((2 * x + 1) as f64 * u as f64 * std::f64::consts::PI / 16.0).cos()
                            * ((2 * y + 1) as f64 * v as f64 * std::f64::consts::PI / 16.0).cos();
                    }
                }
                // Row v (vertical frequency), column u: the natural order.
                out[v * 8 + u] = 0.25 * c(u) * c(v) * s;
            }
        }
        out
    }

    #[test]
    fn matches_the_standard_definition() {
        let mut seed = 17u32;
        let dct = DctMatrix::new();
        for _ in 0..50 {
            let block: Block = std::array::from_fn(|_| {
                std::array::from_fn(|_| {
                    seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    (seed >> 24) as f32 - 128.0
                })
            });
            let want = direct(&block);
            // A quantizer of 1/16 keeps four fractional bits to compare.
            let mut out = [0i32; 64];
            fdct_quantize(&block, &dct, &[16.0; 64], &mut out);
            for i in 0..64 {
                let got = f64::from(out[i]) / 16.0;
                assert!((got - want[i]).abs() <= 0.07, "{i}: {got} vs {}", want[i]);
            }
        }
        // A flat block has only a DC term: 8 × the level.
        let mut out = [0i32; 64];
        fdct_quantize(&[[-128.0; 8]; 8], &dct, &[1.0; 64], &mut out);
        assert_eq!(out[0], -1024);
        assert!(out[1..].iter().all(|&v| v == 0));
    }
}
