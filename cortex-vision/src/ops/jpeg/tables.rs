//! The fixed tables of a baseline JPEG: the example quantization and
//! Huffman tables of the standard (ITU-T T.81 Annex K, which libjpeg and the
//! `jpeg-encoder` crate use by default), the zigzag order, and the quality
//! scaling of the quantization tables as the IJG library defines it.

/// Annex K.1, table K.1: luminance quantization, natural (row-major) order.
pub(super) const LUMA_QUANT: [u8; 64] = [
    16, 11, 10, 16, 24, 40, 51, 61, //
    12, 12, 14, 19, 26, 58, 60, 55, //
    14, 13, 16, 24, 40, 57, 69, 56, //
    14, 17, 22, 29, 51, 87, 80, 62, //
    18, 22, 37, 56, 68, 109, 103, 77, //
    24, 35, 55, 64, 81, 104, 113, 92, //
    49, 64, 78, 87, 103, 121, 120, 101, //
    72, 92, 95, 98, 112, 100, 103, 99,
];

/// Annex K.1, table K.2: chrominance quantization, natural order.
pub(super) const CHROMA_QUANT: [u8; 64] = [
    17, 18, 24, 47, 99, 99, 99, 99, //
    18, 21, 26, 66, 99, 99, 99, 99, //
    24, 26, 56, 99, 99, 99, 99, 99, //
    47, 66, 99, 99, 99, 99, 99, 99, //
    99, 99, 99, 99, 99, 99, 99, 99, //
    99, 99, 99, 99, 99, 99, 99, 99, //
    99, 99, 99, 99, 99, 99, 99, 99, //
    99, 99, 99, 99, 99, 99, 99, 99,
];

/// `ZIGZAG[k]` is the natural index of the `k`-th coefficient in zigzag
/// order (the order of the entropy-coded data and of the DQT segment).
pub(super) const ZIGZAG: [u8; 64] = zigzag();

/// Walks the anti-diagonals alternately up-right and down-left, as the
/// standard's figure A.6 draws the order.
const fn zigzag() -> [u8; 64] {
    let mut out = [0u8; 64];
    let mut k = 0;
    let mut d = 0; // row + column of the diagonal
    while d < 15 {
        // Rows of this diagonal that lie in the block.
        let lo = if d > 7 { d - 7 } else { 0 };
        let hi = if d < 7 { d } else { 7 };
        let mut i = 0;
        while i <= hi - lo {
            // Even diagonals go up (row decreasing), odd ones down.
            let row = if d % 2 == 0 { hi - i } else { lo + i };
            out[k] = (row * 8 + (d - row)) as u8;
            k += 1;
            i += 1;
        }
        d += 1;
    }
    out
}

/// A quantization table for `quality` (1..=100), natural order: the IJG
/// scaling (`5000/q` below 50, `200 − 2q` from 50), each entry clamped to
/// 1..=255 so that it fits the 8-bit tables of a baseline file.
pub(super) fn scaled_quant(base: &[u8; 64], quality: u8) -> [u8; 64] {
    let q = u32::from(quality.clamp(1, 100));
    let scale = if q < 50 { 5000 / q } else { 200 - 2 * q };
    base.map(|v| ((u32::from(v) * scale + 50) / 100).clamp(1, 255) as u8)
}

/// A Huffman table as stored in a DHT segment: how many codes of each
/// length 1..=16, and the symbols in code order.
pub(super) struct HuffSpec {
    pub(super) bits: [u8; 16],
    pub(super) vals: &'static [u8],
}

/// Annex K.3, table K.3: luminance DC differences.
pub(super) const LUMA_DC: HuffSpec = HuffSpec {
    bits: [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
    vals: &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};

/// Annex K.3, table K.4: chrominance DC differences.
pub(super) const CHROMA_DC: HuffSpec = HuffSpec {
    bits: [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    vals: &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};

/// Annex K.3, table K.5: luminance AC (run, size) symbols.
pub(super) const LUMA_AC: HuffSpec = HuffSpec {
    bits: [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d],
    vals: &[
        0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61,
        0x07, 0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52,
        0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25,
        0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45,
        0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64,
        0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83,
        0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99,
        0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6,
        0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3,
        0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8,
        0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
    ],
};

/// Annex K.3, table K.6: chrominance AC (run, size) symbols.
pub(super) const CHROMA_AC: HuffSpec = HuffSpec {
    bits: [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77],
    vals: &[
        0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61,
        0x71, 0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33,
        0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18,
        0x19, 0x1a, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44,
        0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63,
        0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a,
        0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97,
        0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4,
        0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca,
        0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7,
        0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
    ],
};

/// The code of every symbol of a [`HuffSpec`], packed as `code << 8 | length`
/// (length 0: the symbol has no code).
pub(super) type HuffCodes = [u32; 256];

/// Assigns the canonical codes (standard, Annex C): consecutive integers
/// within a length, doubled when the length grows.
pub(super) const fn huff_codes(spec: &HuffSpec) -> HuffCodes {
    let mut out = [0u32; 256];
    let mut code = 0u32;
    let mut k = 0;
    let mut len = 1;
    while len <= 16 {
        let mut i = 0;
        while i < spec.bits[len - 1] {
            out[spec.vals[k] as usize] = (code << 8) | len as u32;
            code += 1;
            k += 1;
            i += 1;
        }
        code <<= 1;
        len += 1;
    }
    out
}

/// The code tables of the four standard Huffman tables.
pub(super) const LUMA_DC_CODES: HuffCodes = huff_codes(&LUMA_DC);
pub(super) const LUMA_AC_CODES: HuffCodes = huff_codes(&LUMA_AC);
pub(super) const CHROMA_DC_CODES: HuffCodes = huff_codes(&CHROMA_DC);
pub(super) const CHROMA_AC_CODES: HuffCodes = huff_codes(&CHROMA_AC);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_is_the_standard_order() {
        // The first and last entries of figure A.6, and a permutation.
        assert_eq!(&ZIGZAG[..10], &[0, 1, 8, 16, 9, 2, 3, 10, 17, 24]);
        assert_eq!(&ZIGZAG[58..], &[61, 54, 47, 55, 62, 63]);
        let mut seen = [false; 64];
        for &z in &ZIGZAG {
            seen[z as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn huffman_specs_are_complete_and_prefix_free() {
        for spec in [&LUMA_DC, &CHROMA_DC, &LUMA_AC, &CHROMA_AC] {
            let n: usize = spec.bits.iter().map(|&b| usize::from(b)).sum();
            assert_eq!(n, spec.vals.len());
            // Kraft sum below 1: no code is all ones (reserved by the standard).
            let kraft: f64 = (1..=16)
                .map(|l| f64::from(spec.bits[l - 1]) / f64::from(1u32 << l))
                .sum();
            assert!(kraft < 1.0);
        }
        // Every (run, size) symbol an encoder can emit has a code.
        for codes in [&LUMA_AC_CODES, &CHROMA_AC_CODES] {
            for run in 0..16u32 {
                for size in 1..=10u32 {
                    assert_ne!(codes[((run << 4) | size) as usize] & 0xFF, 0);
                }
            }
            assert_ne!(codes[0x00] & 0xFF, 0, "EOB");
            assert_ne!(codes[0xF0] & 0xFF, 0, "ZRL");
        }
        for codes in [&LUMA_DC_CODES, &CHROMA_DC_CODES] {
            assert!((0..=11).all(|s| codes[s] & 0xFF != 0));
        }
    }

    #[test]
    fn quality_scaling_follows_ijg() {
        assert_eq!(scaled_quant(&LUMA_QUANT, 50), LUMA_QUANT);
        assert!(scaled_quant(&LUMA_QUANT, 100).iter().all(|&v| v == 1));
        assert_eq!(scaled_quant(&LUMA_QUANT, 1)[0], 255);
        assert_eq!(scaled_quant(&LUMA_QUANT, 85)[0], 5); // (16·30 + 50) / 100
    }
}
