//! L2's per-block quantiser-offset map as `AVRegionOfInterest` rectangles
//! that a codec's FFmpeg wrapper turns back into the same per-block offsets.
//!
//! FFmpeg's libx264, libx265 and libvpx wrappers read only rectangles with a
//! quantiser offset on the −1…1 scale of the codec's range, and rebuild a
//! per-block map from them: a rectangle covers the blocks from
//! `floor(top / block)` to `ceil(bottom / block)` (the same across), the
//! first rectangle of the list winning where two overlap. So the map goes
//! out as one rectangle per block-aligned run of equal offsets (runs of
//! successive rows merged where they match), zero-offset blocks skipped:
//!
//! - **x264, x265**: 16×16 blocks (x265's `qg-size` 8 is not used here),
//!   the float offset `qoffset × 51` per block. Offsets go out in steps of
//!   1/1024 QP, so each block gets back its map offset to within 1/2048 QP.
//! - **libvpx-vp9**: 8×8 blocks; **libvpx** (VP8): 16×16. The wrapper turns
//!   each offset into an integer `delta_q = trunc(qoffset × 63)` and keeps
//!   at most 8 segments (VP8: 4), segment 0 being the zero offset: so the
//!   map is quantised to the levels `−3 … 3` (VP8: `−1 … 1`) times
//!   `max |offset| / 3` (VP8: `/ 1`), each level sent as the `delta_q`
//!   nearest `level × step × 63 / 51` — the map's QP steps are the 51-step
//!   range of H.264 — and the codec gets back exactly that `delta_q`.
//!
//! The map's block and the codec's need not agree: each codec block takes
//! the mean of the map's offsets over its pixels (weighted by the area each
//! map block covers). When the map's block is a multiple of the codec's
//! (16 onto VP9's 8) that is the map's own offset; when it is the same it is
//! the identity.
//!
//! At most [`MAX_RECTS`] rectangles go to a frame: past that, the weakest
//! (smallest `|offset|`) are dropped and their blocks keep the codec's own
//! quantiser — counted in the encode's summary. The list is ordered strongest
//! first, as FFmpeg expects (and as libvpx's segment allocation needs).

// Only the FFmpeg encoder reads the rectangles; the conversion is compiled
// (and tested) in every build.
#![cfg_attr(not(feature = "ffmpeg"), allow(dead_code))]

use cortex_vision::ops::qp_map::QpMap;

/// The QP range the map's offsets are steps of (H.264's 0…51, which the
/// map's ±8 QP refers to).
pub(crate) const MAP_RANGE: f32 = 51.0;

/// The most rectangles sent with one frame: every 16×16 block of a
/// 1920×1088 frame (8160) fits, 256 KiB of side data at most.
pub(crate) const MAX_RECTS: usize = 8192;

/// Sub-steps of one QP in the offsets sent to x264 and x265.
const FLOAT_STEPS: i32 = 1024;

/// How a codec's FFmpeg wrapper reads the rectangles back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// `qoffset × range` as a float per block (x264, x265).
    Float,
    /// `trunc(qoffset × range)` as an integer per block, at most `segments`
    /// distinct values counting 0 (libvpx).
    Segments {
        /// The segments the codec has (VP9 8, VP8 4).
        segments: usize,
    },
}

/// A codec's block grid as FFmpeg's wrapper builds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CodecGrid {
    /// Block side in pixels.
    pub(crate) block: usize,
    /// What FFmpeg multiplies `qoffset` by (x264/x265 at 8 bits: 51; libvpx:
    /// 63, its `delta_q` limit).
    pub(crate) range: i32,
    /// How the offsets are read.
    pub(crate) reading: Reading,
}

impl CodecGrid {
    /// The grid of an encoder that reads `AVRegionOfInterest`, if `codec`
    /// is one.
    pub(crate) fn of(codec: &str) -> Option<CodecGrid> {
        let (block, range, reading) = match codec {
            "libx264" | "libx265" => (16, 51, Reading::Float),
            "libvpx-vp9" => (8, 63, Reading::Segments { segments: 8 }),
            "libvpx" => (16, 63, Reading::Segments { segments: 4 }),
            _ => return None,
        };
        Some(CodecGrid {
            block,
            range,
            reading,
        })
    }

    /// Blocks across and down a frame of `w × h`.
    pub(crate) fn dims(&self, (w, h): (usize, usize)) -> (usize, usize) {
        (w.div_ceil(self.block), h.div_ceil(self.block))
    }
}

/// One `AVRegionOfInterest`, in pixels, with `qoffset = num / den`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Roi {
    pub(crate) left: i32,
    pub(crate) top: i32,
    pub(crate) right: i32,
    pub(crate) bottom: i32,
    pub(crate) num: i32,
    pub(crate) den: i32,
}

/// A frame's rectangles and what did not fit.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct MapRois {
    /// Strongest first.
    pub(crate) rois: Vec<Roi>,
    /// Rectangles left out past [`MAX_RECTS`].
    pub(crate) dropped: usize,
}

/// Why a map cannot go with a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MapMismatch(pub(crate) String);

/// The rectangles of `map` for a frame of `size` (pixels) encoded on
/// `grid`, at most `max` of them (see the module documentation).
pub(crate) fn map_rois(
    map: &QpMap,
    grid: &CodecGrid,
    size: (usize, usize),
    max: usize,
) -> Result<MapRois, MapMismatch> {
    let offsets = resample(map, grid, size)?;
    let codes = quantise(&offsets, grid);
    let (cols, rows) = grid.dims(size);
    let mut rects = rectangles(&codes, cols, rows);
    // Strongest first; of equal strength, finer (negative) first.
    rects.sort_by_key(|r| (std::cmp::Reverse(r.code.unsigned_abs()), r.code));
    let dropped = rects.len().saturating_sub(max);
    rects.truncate(max);
    let (w, h) = (size.0 as i32, size.1 as i32);
    let b = grid.block as i32;
    let rois = rects
        .iter()
        .map(|r| {
            let (num, den) = rational(r.code, grid);
            Roi {
                left: r.x0 as i32 * b,
                top: r.y0 as i32 * b,
                right: (r.x1 as i32 * b).min(w),
                bottom: (r.y1 as i32 * b).min(h),
                num,
                den,
            }
        })
        .collect();
    Ok(MapRois { rois, dropped })
}

/// The map's offsets (QP steps) on the codec's blocks, row-major: each codec
/// block the area-weighted mean of the map blocks under its pixels.
pub(crate) fn resample(
    map: &QpMap,
    grid: &CodecGrid,
    (w, h): (usize, usize),
) -> Result<Vec<f32>, MapMismatch> {
    let mb = map.block;
    if mb == 0 || map.cols != w.div_ceil(mb) || map.rows != h.div_ceil(mb) {
        return Err(MapMismatch(format!(
            "a QP map of {}x{} blocks of {mb} px does not fit frames of {w}x{h}",
            map.cols, map.rows
        )));
    }
    if map.offsets.len() != map.cols * map.rows {
        return Err(MapMismatch(format!(
            "a QP map of {}x{} blocks holds {} offsets",
            map.cols,
            map.rows,
            map.offsets.len()
        )));
    }
    let cb = grid.block;
    let (cols, rows) = grid.dims((w, h));
    if cb == mb {
        return Ok(map.offsets.clone());
    }
    let mut out = Vec::with_capacity(cols * rows);
    for r in 0..rows {
        let (y0, y1) = (r * cb, ((r + 1) * cb).min(h));
        for c in 0..cols {
            let (x0, x1) = (c * cb, ((c + 1) * cb).min(w));
            let (mut sum, mut area) = (0f64, 0usize);
            for mr in y0 / mb..=(y1 - 1) / mb {
                let dy = (y1.min((mr + 1) * mb)) - y0.max(mr * mb);
                for mc in x0 / mb..=(x1 - 1) / mb {
                    let dx = (x1.min((mc + 1) * mb)) - x0.max(mc * mb);
                    sum += f64::from(map.offsets[mr * map.cols + mc]) * (dx * dy) as f64;
                    area += dx * dy;
                }
            }
            out.push((sum / area as f64) as f32);
        }
    }
    Ok(out)
}

/// Each block's offset (QP steps) as the integer code the codec reads back:
/// 1/1024 QP for float readers, `delta_q` for segment readers.
pub(crate) fn quantise(offsets: &[f32], grid: &CodecGrid) -> Vec<i32> {
    let clean = |v: f32| if v.is_finite() { v } else { 0.0 };
    match grid.reading {
        Reading::Float => {
            let lim = grid.range * FLOAT_STEPS;
            offsets
                .iter()
                .map(|&v| ((clean(v) * FLOAT_STEPS as f32).round() as i32).clamp(-lim, lim))
                .collect()
        }
        Reading::Segments { segments } => {
            let step = segment_step(offsets, segments);
            let k = segment_levels(segments) as f32;
            offsets
                .iter()
                .map(|&v| {
                    if step <= 0.0 {
                        return 0;
                    }
                    let level = (clean(v) / step).round().clamp(-k, k);
                    let dq = (level * step * grid.range as f32 / MAP_RANGE).round() as i32;
                    dq.clamp(-grid.range, grid.range)
                })
                .collect()
        }
    }
}

/// Non-zero levels on each side of 0 for a codec with `segments` segments
/// (one is the zero offset's).
pub(crate) fn segment_levels(segments: usize) -> usize {
    segments.saturating_sub(1) / 2
}

/// The quantisation step (QP) of a segment reader: `max |offset|` over the
/// levels on one side.
pub(crate) fn segment_step(offsets: &[f32], segments: usize) -> f32 {
    let k = segment_levels(segments);
    if k == 0 {
        return 0.0;
    }
    let max = offsets
        .iter()
        .filter(|v| v.is_finite())
        .fold(0f32, |m, v| m.max(v.abs()));
    max / k as f32
}

/// `qoffset` as a fraction the codec reads back as `code`.
fn rational(code: i32, grid: &CodecGrid) -> (i32, i32) {
    match grid.reading {
        // code / 1024 QP = (code / (1024 × range)) × range.
        Reading::Float => (code, FLOAT_STEPS * grid.range),
        // Half a step past the integer, so the truncation lands on it
        // whatever the float rounding.
        Reading::Segments { .. } => (2 * code + code.signum(), 2 * grid.range),
    }
}

/// What the codec's wrapper reads from `code`'s rational, in the codec's
/// units (float: QP; segments: `delta_q`), as FFmpeg computes it.
#[cfg(test)]
pub(crate) fn read_back(roi: &Roi, grid: &CodecGrid) -> f32 {
    let q = roi.num as f32 / roi.den as f32;
    let r = grid.range as f32;
    match grid.reading {
        Reading::Float => (q * r).clamp(-r, r),
        Reading::Segments { .. } => ((q * r) as i32).clamp(-grid.range, grid.range) as f32,
    }
}

/// A block-aligned rectangle `[x0, x1) × [y0, y1)` of equal code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rect {
    x0: usize,
    y0: usize,
    x1: usize,
    y1: usize,
    code: i32,
}

/// Rectangles covering exactly the non-zero codes: each row's runs of equal
/// code, a run extending the rectangle above it when it spans the same
/// columns with the same code.
fn rectangles(codes: &[i32], cols: usize, rows: usize) -> Vec<Rect> {
    let mut done = Vec::new();
    // Rectangles still open at the previous row, by their first column.
    let mut open: Vec<Rect> = Vec::new();
    for y in 0..rows {
        let row = &codes[y * cols..(y + 1) * cols];
        let mut next = Vec::new();
        let mut x = 0;
        while x < cols {
            let code = row[x];
            let start = x;
            while x < cols && row[x] == code {
                x += 1;
            }
            if code == 0 {
                continue;
            }
            let above = open
                .iter()
                .position(|r| r.x0 == start && r.x1 == x && r.code == code);
            match above {
                Some(i) => {
                    let mut r = open.swap_remove(i);
                    r.y1 = y + 1;
                    next.push(r);
                }
                None => next.push(Rect {
                    x0: start,
                    y0: y,
                    x1: x,
                    y1: y + 1,
                    code,
                }),
            }
        }
        done.append(&mut open);
        open = next;
    }
    done.append(&mut open);
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_vision::ops::qp_map::Neutral;
    use proptest::prelude::*;

    /// The per-block values a codec's wrapper builds from `rois`, as
    /// FFmpeg's libx264/libx265/libvpx code does: the list read from its end
    /// so the first rectangle wins, block ranges `floor(start / b)` to
    /// `ceil(end / b)`; libvpx assigns segments in list order and skips
    /// offsets past its segment count.
    fn codec_blocks(rois: &[Roi], grid: &CodecGrid, size: (usize, usize)) -> Vec<f32> {
        let (cols, rows) = grid.dims(size);
        let b = grid.block as i32;
        let mut allowed: Vec<i32> = vec![0];
        if let Reading::Segments { segments } = grid.reading {
            for r in rois {
                let v = read_back(r, grid) as i32;
                if !allowed.contains(&v) {
                    if allowed.len() == segments {
                        break;
                    }
                    allowed.push(v);
                }
            }
        }
        let mut out = vec![0f32; cols * rows];
        for r in rois.iter().rev() {
            let v = read_back(r, grid);
            if matches!(grid.reading, Reading::Segments { .. }) && !allowed.contains(&(v as i32)) {
                continue;
            }
            let ys = (r.top / b) as usize..((r.bottom + b - 1) / b).min(rows as i32) as usize;
            let xs = (r.left / b) as usize..((r.right + b - 1) / b).min(cols as i32) as usize;
            for y in ys {
                for x in xs.clone() {
                    out[y * cols + x] = v;
                }
            }
        }
        out
    }

    fn map(block: usize, (w, h): (usize, usize), offsets: Vec<f32>) -> QpMap {
        QpMap {
            block,
            cols: w.div_ceil(block),
            rows: h.div_ceil(block),
            offsets,
            neutral: Neutral::No,
        }
    }

    /// Every block of the codec gets back the map's offset: float readers to
    /// 1/2048 QP, segment readers to half a quantisation step plus half a
    /// `delta_q`; and the codec's values are exactly the codes sent.
    fn check_recovered(m: &QpMap, grid: &CodecGrid, size: (usize, usize)) {
        let sent = map_rois(m, grid, size, MAX_RECTS).unwrap();
        assert_eq!(sent.dropped, 0);
        let got = codec_blocks(&sent.rois, grid, size);
        let want = resample(m, grid, size).unwrap();
        let codes = quantise(&want, grid);
        assert_eq!(got.len(), want.len());
        let step = match grid.reading {
            Reading::Float => 0.0,
            Reading::Segments { segments } => segment_step(&want, segments),
        };
        for (i, ((&g, &w), &c)) in got.iter().zip(&want).zip(&codes).enumerate() {
            match grid.reading {
                Reading::Float => {
                    assert!(
                        (g - c as f32 / 1024.0).abs() < 1e-4,
                        "block {i}: {g} vs code {c}"
                    );
                    assert!(
                        (g - w).abs() <= 1.0 / 2048.0 + 1e-4,
                        "block {i}: {g} vs map {w}"
                    );
                }
                Reading::Segments { .. } => {
                    assert_eq!(g, c as f32, "block {i}");
                    let qp = g * MAP_RANGE / grid.range as f32;
                    let tol = step / 2.0 + 0.5 * MAP_RANGE / grid.range as f32 + 1e-4;
                    assert!(
                        (qp - w).abs() <= tol,
                        "block {i}: {qp} QP vs map {w}, step {step}"
                    );
                }
            }
        }
        if let Reading::Segments { segments } = grid.reading {
            let mut distinct: Vec<i32> = codes.iter().copied().filter(|&c| c != 0).collect();
            distinct.sort_unstable();
            distinct.dedup();
            assert!(distinct.len() < segments, "{distinct:?}");
        }
        // No zero-offset rectangle, none empty.
        for r in &sent.rois {
            assert_ne!(r.num, 0);
            assert!(r.left < r.right && r.top < r.bottom, "{r:?}");
        }
    }

    const CODECS: [&str; 4] = ["libx264", "libx265", "libvpx-vp9", "libvpx"];

    #[test]
    fn a_blob_map_comes_back_on_every_codec() {
        // 100×70 (partial blocks at the right and bottom): a −8 blob, a +2
        // background, a zero block.
        let size = (100, 70);
        let mut offsets = vec![2.0f32; 7 * 5];
        offsets[7 + 2] = -8.0;
        offsets[7 + 3] = -8.0;
        offsets[2 * 7 + 2] = -5.5;
        offsets[4 * 7 + 6] = 0.0;
        let m = map(16, size, offsets);
        for codec in CODECS {
            check_recovered(&m, &CodecGrid::of(codec).unwrap(), size);
        }
        // Equal runs merge: x264 needs far fewer rectangles than blocks.
        let grid = CodecGrid::of("libx264").unwrap();
        let rois = map_rois(&m, &grid, size, MAX_RECTS).unwrap().rois;
        assert!(rois.len() <= 8, "{}", rois.len());
        // Strongest first: the −8 blob.
        assert_eq!(read_back(&rois[0], &grid), -8.0);
        assert_eq!(
            (rois[0].left, rois[0].top, rois[0].right, rois[0].bottom),
            (32, 16, 64, 32)
        );
    }

    #[test]
    fn neutral_maps_send_nothing() {
        let size = (64, 48);
        let m = map(16, size, vec![0.0; 12]);
        for codec in CODECS {
            let sent = map_rois(&m, &CodecGrid::of(codec).unwrap(), size, MAX_RECTS).unwrap();
            assert!(sent.rois.is_empty());
        }
    }

    #[test]
    fn past_the_bound_the_weakest_are_dropped() {
        // A checkerboard of distinct offsets: no two blocks merge.
        let size = (64, 64);
        let offsets: Vec<f32> = (0..16).map(|i| -(i as f32 + 1.0) / 2.0).collect();
        let m = map(16, size, offsets.clone());
        let grid = CodecGrid::of("libx264").unwrap();
        let sent = map_rois(&m, &grid, size, 5).unwrap();
        assert_eq!((sent.rois.len(), sent.dropped), (5, 11));
        let got = codec_blocks(&sent.rois, &grid, size);
        for (i, (&g, &o)) in got.iter().zip(&offsets).enumerate() {
            // The five strongest (−8 … −6) stay, the rest are 0.
            let want = if o <= -6.0 { o } else { 0.0 };
            assert!((g - want).abs() < 1e-3, "block {i}: {g} vs {want}");
        }
    }

    #[test]
    fn coarser_codec_blocks_take_the_mean_of_the_map() {
        // An 8-px map on x264's 16-px blocks: each macroblock the mean of
        // its four map blocks; a partial one weighted by area.
        let size = (24, 16);
        let m = map(8, size, vec![-4.0, 0.0, 2.0, -4.0, -2.0, 2.0]);
        let grid = CodecGrid::of("libx264").unwrap();
        let r = resample(&m, &grid, size).unwrap();
        assert_eq!(r, vec![-2.5, 2.0]);
        check_recovered(&m, &grid, size);
    }

    #[test]
    fn a_map_of_another_size_is_refused() {
        let m = map(16, (64, 48), vec![1.0; 12]);
        let grid = CodecGrid::of("libx264").unwrap();
        assert!(map_rois(&m, &grid, (80, 48), MAX_RECTS).is_err());
    }

    proptest! {
        #[test]
        fn every_block_is_recovered(
            w in 1usize..120,
            h in 1usize..90,
            block in prop::sample::select(vec![8usize, 16, 32]),
            palette in prop::collection::vec(-8.0f32..8.0, 1..5),
            picks in prop::collection::vec(0usize..6, 15 * 12),
            codec in prop::sample::select(CODECS.to_vec()),
        ) {
            let (cols, rows) = (w.div_ceil(block), h.div_ceil(block));
            // Offsets from a small palette (so runs merge), 0 included.
            let offsets = (0..cols * rows)
                .map(|i| palette.get(picks[i % picks.len()]).copied().unwrap_or(0.0))
                .collect();
            let m = map(block, (w, h), offsets);
            check_recovered(&m, &CodecGrid::of(codec).unwrap(), (w, h));
        }
    }
}
