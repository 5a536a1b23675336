//! Which input rows a strip of output rows reads.

use std::ops::Range;

use super::kernel::Window;

/// The rows of an `in_h`-row input that output rows `out` of an `out_h`-row
/// output read through `window`: the input rows the output rows cover
/// (the same rows when the heights are equal, proportionally otherwise),
/// widened by the window, plus every row a reflect-101, reflect or
/// replicate border maps an out-of-plane row of that window to, clipped to
/// the plane. Empty for an empty `out`.
pub fn input_rows(out: Range<usize>, out_h: usize, in_h: usize, window: Window) -> Range<usize> {
    if out.is_empty() || out_h == 0 || in_h == 0 {
        return 0..0;
    }
    // floor(start·in/out) and ceil(end·in/out), in u128 so no product overflows.
    let (s, e, ih, oh) = (
        out.start as u128,
        out.end as u128,
        in_h as u128,
        out_h as u128,
    );
    let lo = (s * ih / oh) as usize;
    let hi = (e * ih).div_ceil(oh) as usize;
    let hi = hi.max(lo + 1).min(in_h);
    let mut start = lo as isize - window.above as isize;
    let mut end = (hi + window.below) as isize;
    // A row -k above the plane reflects to row k (reflect-101), k-1
    // (reflect) or 0 (replicate); a row h-1+k below it to h-1-k, h-k or h-1.
    if start < 0 {
        end = end.max(window.above as isize + 1);
    }
    if end > in_h as isize {
        start = start.min(in_h as isize - 1 - window.below as isize);
    }
    let start = start.max(0) as usize;
    let end = (end.max(0) as usize).min(in_h);
    start..end
}

/// The smallest range holding both (an empty one holds nothing).
pub fn hull(a: Range<usize>, b: Range<usize>) -> Range<usize> {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b,
        (_, true) => a,
        _ => a.start.min(b.start)..a.end.max(b.end),
    }
}

/// Strip `s` of `strips` over `len` rows: `[s·len/strips, (s+1)·len/strips)`.
/// The strips partition the rows for any count, empty ones included when
/// there are more strips than rows.
pub fn part(s: usize, strips: usize, len: usize) -> Range<usize> {
    let at = |i: usize| (i as u128 * len as u128 / strips.max(1) as u128) as usize;
    at(s)..at(s + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reflect-101, as the stencils use it.
    fn reflect101(p: isize, len: usize) -> usize {
        if len == 1 {
            return 0;
        }
        let n = len as isize;
        let mut p = p;
        while p < 0 || p >= n {
            p = if p < 0 { -p } else { 2 * (n - 1) - p };
        }
        p as usize
    }

    #[test]
    fn covers_every_row_a_reflecting_window_reads() {
        for h in 1..12 {
            for above in 0..5 {
                for below in 0..5 {
                    let w = Window { above, below };
                    for start in 0..h {
                        for end in start + 1..=h {
                            let r = input_rows(start..end, h, h, w);
                            for y in start..end {
                                for d in -(above as isize)..=below as isize {
                                    let p = y as isize + d;
                                    let rows =
                                        [reflect101(p, h), p.clamp(0, h as isize - 1) as usize];
                                    for row in rows {
                                        assert!(
                                            r.contains(&row),
                                            "h {h} {w:?} {start}..{end}: {row} not in {r:?}"
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn parts_partition() {
        for len in 0..20 {
            for strips in 1..30 {
                let mut next = 0;
                for s in 0..strips {
                    let p = part(s, strips, len);
                    assert_eq!(p.start, next);
                    next = p.end;
                }
                assert_eq!(next, len);
            }
        }
    }
}
