//! Huffman coding of quantized blocks into the entropy-coded segment, with
//! the `0xFF 0x00` byte stuffing the format requires.

use super::tables::{HuffCodes, ZIGZAG};

/// Appends bits, most significant first, to a byte vector.
pub(super) struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    /// Pending bits in the low `nbits` bits (higher bits are stale).
    acc: u64,
    nbits: u32,
}

impl<'a> BitWriter<'a> {
    pub(super) fn new(out: &'a mut Vec<u8>) -> Self {
        BitWriter {
            out,
            acc: 0,
            nbits: 0,
        }
    }

    /// Appends the low `len` bits of `bits` (`len ≤ 32`).
    #[inline(always)]
    fn put(&mut self, bits: u32, len: u32) {
        // `nbits < 32` on entry, so at most 63 bits are pending here.
        self.acc = (self.acc << len) | u64::from(bits);
        self.nbits += len;
        if self.nbits >= 32 {
            self.nbits -= 32;
            let word = (self.acc >> self.nbits) as u32;
            self.emit(word.to_be_bytes());
        }
    }

    /// Writes four bytes, stuffing a zero after every `0xFF` (which would
    /// otherwise read as a marker).
    #[inline(always)]
    fn emit(&mut self, bytes: [u8; 4]) {
        if bytes.contains(&0xFF) {
            for b in bytes {
                self.out.push(b);
                if b == 0xFF {
                    self.out.push(0);
                }
            }
        } else {
            self.out.extend_from_slice(&bytes);
        }
    }

    /// Pads the last byte with 1-bits (as the standard asks) and writes out
    /// what is pending.
    pub(super) fn finish(mut self) {
        let pad = (8 - self.nbits % 8) % 8;
        self.acc = (self.acc << pad) | ((1u64 << pad) - 1);
        self.nbits += pad;
        while self.nbits > 0 {
            self.nbits -= 8;
            let b = (self.acc >> self.nbits) as u8;
            self.out.push(b);
            if b == 0xFF {
                self.out.push(0);
            }
        }
    }

    /// Encodes one quantized block (natural order): the DC difference to
    /// `*prev_dc`, then the AC coefficients in zigzag order as (zero run,
    /// size) symbols, ZRL for runs of 16 and EOB after the last non-zero one.
    pub(super) fn block(
        &mut self,
        q: &[i32; 64],
        prev_dc: &mut i32,
        dc_codes: &HuffCodes,
        ac_codes: &HuffCodes,
    ) {
        let mut zz = [0i32; 64];
        let mut nonzero = 0u64;
        for (k, z) in zz.iter_mut().enumerate() {
            *z = q[usize::from(ZIGZAG[k])];
            nonzero |= u64::from(*z != 0) << k;
        }
        let diff = zz[0] - *prev_dc;
        *prev_dc = zz[0];
        self.symbol(dc_codes, 0, diff);
        // The AC coefficients that are not zero, found by bit scanning so a
        // sparse block costs a few steps, not 63.
        let mut ac = nonzero & !1;
        let mut last = 0u32;
        while ac != 0 {
            let k = ac.trailing_zeros();
            let mut run = k - last - 1;
            while run >= 16 {
                self.code(ac_codes, 0xF0);
                run -= 16;
            }
            self.symbol(ac_codes, run, zz[k as usize]);
            last = k;
            ac &= ac - 1;
        }
        if last < 63 {
            self.code(ac_codes, 0x00);
        }
    }

    /// The code of `symbol` alone.
    #[inline(always)]
    fn code(&mut self, codes: &HuffCodes, symbol: usize) {
        let c = codes[symbol];
        self.put(c >> 8, c & 0xFF);
    }

    /// The code of `(run, size of v)` followed by the `size` low bits of `v`
    /// (one's complement for negative values), in one write.
    #[inline(always)]
    fn symbol(&mut self, codes: &HuffCodes, run: u32, v: i32) {
        let size = 32 - v.unsigned_abs().leading_zeros();
        // Negative values are sent as `v − 1` in `size` bits.
        let extra = (if v < 0 { v - 1 } else { v }) as u32 & ((1u32 << size) - 1);
        let c = codes[((run << 4) | size) as usize];
        let len = c & 0xFF;
        // Code ≤ 16 bits plus size ≤ 11 bits: within one 32-bit write.
        self.put(((c >> 8) << size) | extra, len + size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stuffs_ff_bytes_and_pads_with_ones() {
        let mut out = Vec::new();
        let mut w = BitWriter::new(&mut out);
        w.put(0xFF, 8);
        w.put(0x12, 8);
        w.put(0xFFFF, 16); // completes a 32-bit word with three 0xFF
        w.put(0b101, 3);
        w.finish();
        assert_eq!(out, [0xFF, 0, 0x12, 0xFF, 0, 0xFF, 0, 0b1011_1111]);
    }
}
