//! A baseline JPEG encoder that writes into a caller's `Vec<u8>` and keeps
//! its working rows in reusable scratch, so that steady-state encoding
//! allocates nothing.
//!
//! Why not a crate: `jpeg-encoder` 0.6 (used before) allocates about nine
//! times per image (its Huffman tables, component list, scan header and
//! row buffers are built per call by an encoder consumed by `encode`), and
//! neither it nor `image`'s encoder can reuse that memory.
//!
//! The output is what libjpeg and `jpeg-encoder` produce by default: JFIF,
//! YCbCr (BT.601 full range), 4:2:0 chroma subsampling below quality 90 and
//! 4:4:4 from 90, the example quantization tables of the standard scaled by
//! quality as the IJG library does, and its example Huffman tables; one
//! interleaved sequential scan. The pixels go through the colour
//! conversion, chroma averaging and DCT in `f32` without intermediate 8-bit
//! rounding, so the files differ slightly from `jpeg-encoder`'s (see
//! `ops::encoder`'s module docs for the measured difference).

mod color;
mod dct;
mod entropy;
mod tables;

use self::color::{average_2x2, rgb_row_to_ycbcr};
use self::dct::{fdct_quantize, Block, DctMatrix};
use self::entropy::BitWriter;
use self::tables::{
    scaled_quant, HuffSpec, CHROMA_AC, CHROMA_AC_CODES, CHROMA_DC, CHROMA_DC_CODES, CHROMA_QUANT,
    LUMA_AC, LUMA_AC_CODES, LUMA_DC, LUMA_DC_CODES, LUMA_QUANT, ZIGZAG,
};
use super::scratch::vec_bytes;
use super::types::OpsError;

/// Borrowed RGB pixels: `height` rows of `width` interleaved RGB pixels,
/// row `r` starting at byte `r · stride` of `px` (a crop of a larger frame
/// is encoded in place, without copying it out).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RgbView<'a> {
    px: &'a [u8],
    stride: usize,
    width: usize,
    height: usize,
}

impl<'a> RgbView<'a> {
    /// Checks that the rows fit in `px` and that the sides are 1..=65535
    /// (the format's limit).
    pub(crate) fn new(
        px: &'a [u8],
        stride: usize,
        width: usize,
        height: usize,
    ) -> Result<Self, OpsError> {
        for side in [width, height] {
            if !(1..=usize::from(u16::MAX)).contains(&side) {
                return Err(OpsError::Encode(format!(
                    "a side of {side} pixels is outside JPEG's 1..=65535"
                )));
            }
        }
        let needed = (height - 1)
            .checked_mul(stride)
            .and_then(|n| n.checked_add(3 * width));
        if stride < 3 * width || needed.is_none_or(|n| n > px.len()) {
            return Err(OpsError::Encode(format!(
                "{} bytes with a stride of {stride} do not hold {width}x{height} RGB pixels",
                px.len()
            )));
        }
        Ok(RgbView {
            px,
            stride,
            width,
            height,
        })
    }

    fn row(&self, y: usize) -> &'a [u8] {
        &self.px[y * self.stride..][..3 * self.width]
    }
}

/// Working memory of [`encode_rgb`]: one row of MCUs (16 or 8 pixel rows of
/// the padded width) per plane, and the DCT matrix.
#[derive(Debug, Default, Clone)]
pub(crate) struct JpegScratch {
    y: Vec<f32>,
    cb: Vec<f32>,
    cr: Vec<f32>,
    cb2: Vec<f32>,
    cr2: Vec<f32>,
    dct: Option<DctMatrix>,
}

impl JpegScratch {
    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        vec_bytes(&self.y)
            + vec_bytes(&self.cb)
            + vec_bytes(&self.cr)
            + vec_bytes(&self.cb2)
            + vec_bytes(&self.cr2)
    }

    /// Makes room for images up to `width` pixels wide at any quality, so
    /// that crops of varying width within a frame of that width never grow
    /// the buffers after the first call.
    pub(crate) fn reserve_width(&mut self, width: usize) {
        let pw = width.div_ceil(16).saturating_mul(16);
        let full = pw.saturating_mul(16);
        for plane in [&mut self.y, &mut self.cb, &mut self.cr] {
            plane.reserve(full.saturating_sub(plane.len()));
        }
        for plane in [&mut self.cb2, &mut self.cr2] {
            plane.reserve((full / 4).saturating_sub(plane.len()));
        }
    }
}

/// Below this quality chroma is subsampled 2×2 (libjpeg's and
/// `jpeg-encoder`'s default).
const SUBSAMPLE_BELOW: u8 = 90;

/// Replaces `out` with the baseline JPEG of `img` at `quality` (1..=100,
/// clamped). Appends to `out`'s existing allocation: no allocation when
/// its capacity suffices, and none in `s` once it has seen an image as wide.
pub(crate) fn encode_rgb(img: &RgbView<'_>, quality: u8, out: &mut Vec<u8>, s: &mut JpegScratch) {
    let quality = quality.clamp(1, 100);
    let sub = quality < SUBSAMPLE_BELOW;
    let lq = scaled_quant(&LUMA_QUANT, quality);
    let cq = scaled_quant(&CHROMA_QUANT, quality);
    out.clear();
    write_headers(img, sub, &lq, &cq, out);

    let (w, h) = (img.width, img.height);
    let mcu = if sub { 16 } else { 8 };
    let pw = w.div_ceil(mcu) * mcu;
    let cw = if sub { pw / 2 } else { pw };
    for plane in [&mut s.y, &mut s.cb, &mut s.cr] {
        plane.resize(mcu * pw, 0.0);
    }
    if sub {
        s.cb2.resize(8 * cw, 0.0);
        s.cr2.resize(8 * cw, 0.0);
    }
    let dct = s.dct.get_or_insert_with(DctMatrix::new);
    let lr: [f32; 64] = lq.map(|v| 1.0 / f32::from(v));
    let cr: [f32; 64] = cq.map(|v| 1.0 / f32::from(v));

    let mut bits = BitWriter::new(out);
    let mut dc = [0i32; 3];
    let mut q = [0i32; 64];
    for my in 0..h.div_ceil(mcu) {
        // Rows past the bottom repeat the last one, and columns past the
        // right edge the last column: edge replication keeps the padding
        // from adding high frequencies to the edge blocks.
        for r in 0..mcu {
            let row = img.row((my * mcu + r).min(h - 1));
            let span = r * pw..(r + 1) * pw;
            let (yr, cbr, crr) = (
                &mut s.y[span.clone()],
                &mut s.cb[span.clone()],
                &mut s.cr[span],
            );
            rgb_row_to_ycbcr(row, &mut yr[..w], &mut cbr[..w], &mut crr[..w]);
            for plane in [yr, cbr, crr] {
                let last = plane[w - 1];
                plane[w..].fill(last);
            }
        }
        if sub {
            for r in 0..8 {
                for (full, half) in [(&s.cb, &mut s.cb2), (&s.cr, &mut s.cr2)] {
                    average_2x2(
                        &full[2 * r * pw..][..pw],
                        &full[(2 * r + 1) * pw..][..pw],
                        &mut half[r * cw..][..cw],
                    );
                }
            }
        }
        let (cbp, crp) = if sub {
            (&s.cb2, &s.cr2)
        } else {
            (&s.cb, &s.cr)
        };
        for mx in 0..pw / mcu {
            // Luma blocks of the MCU in raster order, then Cb, then Cr.
            for by in (0..mcu).step_by(8) {
                for bx in (0..mcu).step_by(8) {
                    let block = load(&s.y, pw, by, mx * mcu + bx);
                    fdct_quantize(&block, dct, &lr, &mut q);
                    bits.block(&q, &mut dc[0], &LUMA_DC_CODES, &LUMA_AC_CODES);
                }
            }
            for (plane, pred) in [(cbp, 1), (crp, 2)] {
                let block = load(plane, cw, 0, mx * 8);
                fdct_quantize(&block, dct, &cr, &mut q);
                bits.block(&q, &mut dc[pred], &CHROMA_DC_CODES, &CHROMA_AC_CODES);
            }
        }
    }
    bits.finish();
    out.extend_from_slice(&[0xFF, 0xD9]); // EOI
}

/// The 8×8 block at (`row0`, `col0`) of a plane `stride` wide.
fn load(plane: &[f32], stride: usize, row0: usize, col0: usize) -> Block {
    std::array::from_fn(|r| {
        let mut row = [0f32; 8];
        row.copy_from_slice(&plane[(row0 + r) * stride + col0..][..8]);
        row
    })
}

/// Starts a marker segment whose payload is `len` bytes.
fn segment(out: &mut Vec<u8>, marker: u8, len: usize) {
    out.extend_from_slice(&[0xFF, marker]);
    // Every payload here is a few hundred bytes at most.
    out.extend_from_slice(&((len + 2) as u16).to_be_bytes());
}

/// SOI, JFIF APP0, the two quantization tables, the frame header, the four
/// Huffman tables and the scan header.
fn write_headers(img: &RgbView<'_>, sub: bool, lq: &[u8; 64], cq: &[u8; 64], out: &mut Vec<u8>) {
    out.extend_from_slice(&[0xFF, 0xD8]); // SOI
    segment(out, 0xE0, 14);
    // "JFIF\0", version 1.01, no density units, 1:1 aspect, no thumbnail.
    out.extend_from_slice(b"JFIF\0\x01\x01\x00\x00\x01\x00\x01\x00\x00");
    segment(out, 0xDB, 2 * 65);
    for (id, table) in [(0u8, lq), (1, cq)] {
        out.push(id); // 8-bit precision, table id
        out.extend(ZIGZAG.iter().map(|&k| table[usize::from(k)]));
    }
    segment(out, 0xC0, 6 + 3 * 3); // SOF0: baseline
    out.push(8);
    // `RgbView::new` bounds both sides by 65535.
    out.extend_from_slice(&(img.height as u16).to_be_bytes());
    out.extend_from_slice(&(img.width as u16).to_be_bytes());
    out.push(3);
    let luma_sampling = if sub { 0x22 } else { 0x11 };
    out.extend_from_slice(&[1, luma_sampling, 0, 2, 0x11, 1, 3, 0x11, 1]);
    let tables: [(u8, &HuffSpec); 4] = [
        (0x00, &LUMA_DC),
        (0x10, &LUMA_AC),
        (0x01, &CHROMA_DC),
        (0x11, &CHROMA_AC),
    ];
    let len: usize = tables.iter().map(|(_, t)| 17 + t.vals.len()).sum();
    segment(out, 0xC4, len);
    for (class_id, t) in tables {
        out.push(class_id);
        out.extend_from_slice(&t.bits);
        out.extend_from_slice(t.vals);
    }
    segment(out, 0xDA, 1 + 3 * 2 + 3); // SOS
    out.extend_from_slice(&[3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]);
}

#[cfg(test)]
mod tests;
