//! A frame's rows split into horizontal bands that run at once on rayon's
//! pool: how a whole-frame kernel uses every core when its node runs alone.

use std::ops::Range;

/// How many bands `rows` rows make on `threads` threads when no band may
/// have fewer than `least` rows: one per thread, at least 1.
pub(crate) fn bands_for(rows: usize, least: usize, threads: usize) -> usize {
    threads.min(rows / least.max(1)).max(1)
}

/// Rows of band `k` of `n`: `[k·rows/n, (k+1)·rows/n)`.
fn band_rows(k: usize, n: usize, rows: usize) -> Range<usize> {
    k * rows / n..(k + 1) * rows / n
}

/// Runs `f(rows, scratch, out)` for every band of the `rows`-row frame,
/// one band per element of `scratches`, all at once (halves on
/// `rayon::join`, no allocation). `out` holds `row_len` items per row of
/// the frame; each band gets exactly its rows of it.
pub(crate) fn run_bands<S: Send, T: Send>(
    rows: usize,
    scratches: &mut [S],
    out: &mut [T],
    row_len: usize,
    f: &(impl Fn(Range<usize>, &mut S, &mut [T]) + Sync),
) {
    let n = scratches.len();
    split(rows, n, 0, scratches, out, row_len, f);
}

/// Bands `first ..` of `n` (`scratches` theirs, `out` exactly their rows).
fn split<S: Send, T: Send>(
    rows: usize,
    n: usize,
    first: usize,
    scratches: &mut [S],
    out: &mut [T],
    row_len: usize,
    f: &(impl Fn(Range<usize>, &mut S, &mut [T]) + Sync),
) {
    if let [scratch] = scratches {
        f(band_rows(first, n, rows), scratch, out);
        return;
    }
    let half = scratches.len() / 2;
    let cut = (band_rows(first + half, n, rows).start - band_rows(first, n, rows).start) * row_len;
    let (top, bottom) = scratches.split_at_mut(half);
    let (top_out, bottom_out) = out.split_at_mut(cut.min(out.len()));
    rayon::join(
        || split(rows, n, first, top, top_out, row_len, f),
        || split(rows, n, first + half, bottom, bottom_out, row_len, f),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_run_once_by_its_band() {
        for rows in [1, 2, 7, 64, 577] {
            for n in 1..=9.min(rows) {
                let mut scratches = vec![0usize; n];
                let mut out = vec![usize::MAX; rows * 3];
                run_bands(
                    rows,
                    &mut scratches,
                    &mut out,
                    3,
                    &|r, s, o: &mut [usize]| {
                        assert_eq!(o.len(), r.len() * 3);
                        *s += 1;
                        for (i, v) in o.iter_mut().enumerate() {
                            *v = r.start + i / 3;
                        }
                    },
                );
                assert!(scratches.iter().all(|&s| s == 1), "{rows} rows, {n} bands");
                let want: Vec<usize> = (0..rows * 3).map(|i| i / 3).collect();
                assert_eq!(out, want, "{rows} rows, {n} bands");
            }
        }
        assert_eq!(bands_for(576, 64, 2), 2);
        assert_eq!(bands_for(100, 64, 8), 1);
        assert_eq!(bands_for(10, 0, 4), 4);
    }
}
