//! The text map's last step: the kept boxes counted per pixel, averaged
//! over the smoothing window and scaled to `[0, 1]`, in horizontal bands
//! that run at once on rayon's pool.
//!
//! Each band builds the integral image of only the rows its windows reach,
//! from the boxes clipped to those rows. A window sum is a difference of
//! integral rows inside the band, so it does not depend on where the band's
//! sums start: every band gives the rows of the one-band map bit for bit.

use crate::ops::bands;
use crate::ops::border::prepare_out;
use crate::ops::mser::RegionBox;
use crate::ops::scratch::vec_bytes;
use crate::ops::simd::multiversion;
use crate::ops::ScoreMap;

/// Fewest output rows a band gets: below it, the `2 · radius` rows each band
/// integrates beyond its own, and the hand-off to another thread, cost more
/// than the split saves.
const MIN_BAND_ROWS: usize = 64;

/// Bands for a `rows`-row map with smoothing `radius` on `threads` threads:
/// one per thread, each at least [`MIN_BAND_ROWS`] and `4 · radius` rows.
pub(super) fn bands_for(rows: usize, radius: usize, threads: usize) -> usize {
    bands::bands_for(rows, MIN_BAND_ROWS.max(radius.saturating_mul(4)), threads)
}

/// Memory reused from frame to frame: one integral image per band and the
/// window columns all bands share.
#[derive(Debug, Default)]
pub(super) struct Density {
    bands: Vec<Band>,
    /// Smoothing window `[start, end)` of every column.
    spans: Vec<(u32, u32)>,
}

/// One band's wrapping `u32` integral image of the region-count map (box
/// sums of it are exact as long as they are below 2³²) and the row of
/// counts kept while it is built.
#[derive(Debug, Default)]
struct Band {
    integral: Vec<u32>,
    carry: Vec<u32>,
}

/// What every band reads.
struct Frame<'a> {
    regions: &'a [RegionBox],
    spans: &'a [(u32, u32)],
    rows: usize,
    cols: usize,
    radius: usize,
    saturation: f32,
}

impl Density {
    /// Bytes kept between frames.
    pub(super) fn heap_bytes(&self) -> usize {
        vec_bytes(&self.spans)
            + vec_bytes(&self.bands)
            + self
                .bands
                .iter()
                .map(|b| vec_bytes(&b.integral) + vec_bytes(&b.carry))
                .sum::<usize>()
    }

    /// The map of `regions` into `map` (reshaped to `rows × cols`), in
    /// `bands` bands (at least 1, at most `rows`).
    pub(super) fn render(
        &mut self,
        regions: &[RegionBox],
        (rows, cols): (usize, usize),
        radius: usize,
        saturation: f32,
        bands: usize,
        map: &mut ScoreMap,
    ) {
        // Window columns are the same for every row. `u32` halves the
        // table; frames are far below 2³² columns (`check_limits`).
        self.spans.clear();
        self.spans.extend((0..cols).map(|x| {
            (
                x.saturating_sub(radius) as u32,
                (x + radius + 1).min(cols) as u32,
            )
        }));
        let bands = bands.clamp(1, rows.max(1));
        if self.bands.len() < bands {
            self.bands.resize_with(bands, Band::default);
        }
        let frame = Frame {
            regions,
            spans: &self.spans,
            rows,
            cols,
            radius,
            saturation,
        };
        let out = prepare_out(map, rows, cols);
        bands::run_bands(
            rows,
            &mut self.bands[..bands],
            out,
            cols,
            &|rows, band, out| band.render(&frame, rows.start, rows.end, out),
        );
    }
}

impl Band {
    /// Rows `[a, b)` of the map into `out`. The band's integral image starts
    /// at the first row its windows reach, `a - radius`, and ends at the last,
    /// `b + radius`.
    fn render(&mut self, f: &Frame<'_>, a: usize, b: usize, out: &mut [f32]) {
        let (rows, cols, radius) = (f.rows, f.cols, f.radius);
        let origin = a.saturating_sub(radius);
        let end = (b + radius).min(rows);
        // A `(end - origin + 2) × (cols + 2)` buffer. Each box, clipped to
        // rows `[origin, end)`, puts corner deltas one row and one column
        // below/right of its corners; one 2D prefix sum turns them into the
        // per-pixel count (shifted by one, row and column 0 stay zero), a
        // second one into the integral image `I[y][x] = Σ count over rows
        // origin..origin + y, columns < x`. All arithmetic is mod 2³², exact
        // for the box sums we take (they are < 2³²).
        let stride = cols + 2;
        let integral = &mut self.integral;
        integral.clear();
        integral.resize((end - origin + 2) * stride, 0);
        for r in f.regions {
            let (x0, y0) = (r.bbox.x, r.bbox.y.max(origin));
            let (x1, y1) = (r.bbox.right().min(cols), r.bbox.bottom().min(end));
            if x0 >= x1 || y0 >= y1 {
                continue;
            }
            let (y0, y1) = (y0 - origin, y1 - origin);
            for (idx, d) in [
                ((y0 + 1) * stride + x0 + 1, 1u32),
                ((y0 + 1) * stride + x1 + 1, u32::MAX),
                ((y1 + 1) * stride + x0 + 1, u32::MAX),
                ((y1 + 1) * stride + x1 + 1, 1u32),
            ] {
                if let Some(v) = integral.get_mut(idx) {
                    *v = v.wrapping_add(d);
                }
            }
        }
        integrate_twice(integral, &mut self.carry, stride);

        // Columns whose window lies inside the frame: `[x - radius, x +
        // radius + 1)`, the same width for all, so their loop reads four
        // shifted runs of the integral rows and vectorises.
        let inner = radius..cols.saturating_sub(radius).max(radius);
        for (y, row) in (a..b).zip(out.chunks_exact_mut(cols.max(1))) {
            let ya = y.saturating_sub(radius);
            let yb = (y + radius + 1).min(rows);
            let top = &integral[(ya - origin) * stride..];
            let bottom = &integral[(yb - origin) * stride..];
            let scale = 1.0 / ((yb - ya) as f32 * f.saturation);
            let window = |o: &mut f32, (xa, xb): (u32, u32)| {
                let (xa, xb) = (xa as usize, xb as usize);
                let sum = bottom[xb]
                    .wrapping_sub(top[xb])
                    .wrapping_sub(bottom[xa])
                    .wrapping_add(top[xa]);
                *o = (sum as f32 * scale / (xb - xa) as f32).min(1.0);
            };
            if inner.is_empty() {
                row.iter_mut()
                    .zip(f.spans.iter())
                    .for_each(|(o, &s)| window(o, s));
                continue;
            }
            let (head, rest) = row.split_at_mut(inner.start);
            let (mid, tail) = rest.split_at_mut(inner.len());
            head.iter_mut()
                .zip(f.spans.iter())
                .for_each(|(o, &s)| window(o, s));
            let tail_spans = f.spans.get(inner.end..).unwrap_or(&[]);
            tail.iter_mut()
                .zip(tail_spans)
                .for_each(|(o, &s)| window(o, s));
            let width = 2 * radius + 1;
            let n = mid.len();
            window_row(
                mid,
                &top[..n],
                &top[width..width + n],
                &bottom[..n],
                &bottom[width..width + n],
                scale,
                width as f32,
            );
        }
    }
}

/// Applies the in-place 2D inclusive prefix sum (mod 2³²) twice to a
/// buffer of rows `stride` long: corner deltas → per-pixel counts →
/// integral image. One sweep down the rows does both (row `y` of the first
/// sum is `carry`, the column sums so far of the rows' prefix sums), so the
/// buffer, larger than the core's cache at video sizes, is read and
/// written once instead of four times. Modular sums are exact in any
/// order: the result is that of the two separate sums bit for bit.
fn integrate_twice(buf: &mut [u32], carry: &mut Vec<u32>, stride: usize) {
    carry.clear();
    carry.resize(stride, 0);
    let mut prev: Option<&mut [u32]> = None;
    for row in buf.chunks_exact_mut(stride) {
        let mut acc = 0u32;
        for (v, c) in row.iter_mut().zip(carry.iter_mut()) {
            acc = acc.wrapping_add(*v);
            *c = c.wrapping_add(acc);
            *v = *c;
        }
        let mut acc = 0u32;
        match prev {
            Some(p) => {
                for (v, &above) in row.iter_mut().zip(p.iter()) {
                    acc = acc.wrapping_add(*v);
                    *v = acc.wrapping_add(above);
                }
            }
            None => {
                for v in row.iter_mut() {
                    acc = acc.wrapping_add(*v);
                    *v = acc;
                }
            }
        }
        prev = Some(row);
    }
}

multiversion! {
    /// One row of the map where every window has the full `width`: `out[i]`
    /// from the integral rows above (`top_*`) and below (`bottom_*`) the
    /// window at its left (`*_a`) and right (`*_b`) edges, with the same
    /// operations in the same order as the edge columns (bit-identical).
    fn window_row(
        out: &mut [f32],
        top_a: &[u32],
        top_b: &[u32],
        bottom_a: &[u32],
        bottom_b: &[u32],
        scale: f32,
        width: f32,
    ) {
        let edges = top_a.iter().zip(top_b).zip(bottom_a.iter().zip(bottom_b));
        for (o, ((&ta, &tb), (&ba, &bb))) in out.iter_mut().zip(edges) {
            let sum = bb.wrapping_sub(tb).wrapping_sub(ba).wrapping_add(ta);
            *o = (sum as f32 * scale / width).min(1.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Density, ScoreMap};
    use crate::ops::mser::{BBox, Polarity, RegionBox};

    /// The map the straightforward way: two separate in-place 2D prefix
    /// sums and one window lookup per pixel through the clipped spans.
    fn reference_map(
        boxes: &[BBox],
        rows: usize,
        cols: usize,
        radius: usize,
        sat: f32,
    ) -> Vec<f32> {
        let stride = cols + 2;
        let mut integral = vec![0u32; (rows + 2) * stride];
        for b in boxes {
            let (x1, y1) = (b.right().min(cols), b.bottom().min(rows));
            if b.x >= x1 || b.y >= y1 {
                continue;
            }
            for (idx, d) in [
                ((b.y + 1) * stride + b.x + 1, 1u32),
                ((b.y + 1) * stride + x1 + 1, u32::MAX),
                ((y1 + 1) * stride + b.x + 1, u32::MAX),
                ((y1 + 1) * stride + x1 + 1, 1u32),
            ] {
                integral[idx] = integral[idx].wrapping_add(d);
            }
        }
        for _ in 0..2 {
            for row in integral.chunks_exact_mut(stride) {
                let mut acc = 0u32;
                for v in row.iter_mut() {
                    acc = acc.wrapping_add(*v);
                    *v = acc;
                }
            }
            for y in 1..rows + 2 {
                for x in 0..stride {
                    integral[y * stride + x] =
                        integral[y * stride + x].wrapping_add(integral[(y - 1) * stride + x]);
                }
            }
        }
        let mut out = Vec::with_capacity(rows * cols);
        for y in 0..rows {
            let (ya, yb) = (y.saturating_sub(radius), (y + radius + 1).min(rows));
            let scale = 1.0 / ((yb - ya) as f32 * sat);
            for x in 0..cols {
                let (xa, xb) = (x.saturating_sub(radius), (x + radius + 1).min(cols));
                let at = |yy: usize, xx: usize| integral[yy * stride + xx];
                let sum = at(yb, xb)
                    .wrapping_sub(at(ya, xb))
                    .wrapping_sub(at(yb, xa))
                    .wrapping_add(at(ya, xa));
                out.push((sum as f32 * scale / (xb - xa) as f32).min(1.0));
            }
        }
        out
    }

    /// The one-sweep integral image, the vectorised inner columns and the
    /// bands give the straightforward map bit for bit, for windows narrower
    /// and wider than the frame and than a band, maps that saturate, and
    /// one band per row.
    #[test]
    fn score_map_matches_the_straightforward_sums_bit_for_bit() {
        let mut seed = 0x2545_f491_u32;
        let mut next = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as usize % m
        };
        let mut density = Density::default();
        let mut map = ScoreMap::zeros((0, 0));
        for (rows, cols) in [
            (1, 1),
            (3, 7),
            (17, 5),
            (40, 61),
            (96, 128),
            (7, 300),
            (130, 9),
        ] {
            for radius in [1, 2, 3, 6, 20, 64, 400] {
                for sat in [1.0f32, 0.37, 4.0] {
                    let boxes: Vec<BBox> = (0..next(60))
                        .map(|_| BBox {
                            x: next(cols + 3),
                            y: next(rows + 3),
                            width: next(cols + 1),
                            height: next(rows + 1),
                        })
                        .collect();
                    let regions: Vec<RegionBox> = boxes
                        .iter()
                        .map(|&bbox| RegionBox {
                            bbox,
                            area: 1,
                            polarity: Polarity::Dark,
                        })
                        .collect();
                    let want = reference_map(&boxes, rows, cols, radius, sat);
                    let want: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
                    for bands in [1, 2, 3, 7, rows] {
                        density.render(&regions, (rows, cols), radius, sat, bands, &mut map);
                        let got: Vec<u32> = map.iter().map(|v| v.to_bits()).collect();
                        assert_eq!(
                            got, want,
                            "{cols}x{rows}, radius {radius}, saturation {sat}, {bands} bands"
                        );
                    }
                }
            }
        }
    }
}
