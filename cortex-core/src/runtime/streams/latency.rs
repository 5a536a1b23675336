//! Latency percentiles in constant memory: a log-linear histogram of
//! microseconds (32 linear buckets per power of two, so a reported
//! percentile is at most about 3 % above the true one), the memory of a
//! stream's statistics staying the same however long it runs.

use std::time::Duration;

/// Linear buckets per power of two (a power of two itself).
const SUB: u64 = 32;
/// `log2(SUB)`.
const SUB_BITS: u32 = 5;
/// Enough buckets for every `u64` of microseconds.
const BUCKETS: usize = ((64 - SUB_BITS as usize) + 1) * SUB as usize;

/// Counts of latencies by bucket.
#[derive(Clone)]
pub(crate) struct Histogram {
    counts: Box<[u64]>,
    total: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            total: 0,
        }
    }
}

/// The bucket of `v` microseconds.
fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // ≥ SUB_BITS
    let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
    ((e - SUB_BITS + 1) as u64 * SUB + sub) as usize
}

/// The largest value of bucket `i`.
fn upper(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let e = (i / SUB) as u32 + SUB_BITS - 1;
    let sub = i % SUB;
    let width = 1u64 << (e - SUB_BITS);
    ((SUB + sub) << (e - SUB_BITS)).saturating_add(width - 1)
}

impl Histogram {
    /// Counts one latency.
    pub(crate) fn record(&mut self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.counts[bucket(us)] += 1;
        self.total += 1;
    }

    /// The latency at or below which a fraction `q` (in [0, 1]) of the
    /// counted ones lie, rounded up to its bucket's end; `None` before the
    /// first.
    pub(crate) fn quantile(&self, q: f64) -> Option<Duration> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(Duration::from_micros(upper(i)));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_ordered_and_hold_their_values() {
        let mut last = 0;
        for v in (0..5000u64).chain([1 << 20, (1 << 20) + 12345, u64::MAX / 3, u64::MAX]) {
            let b = bucket(v);
            assert!(b >= last, "bucket of {v} went back");
            last = b;
            assert!(upper(b) >= v, "bucket {b} ends at {} below {v}", upper(b));
            if b > 0 {
                assert!(upper(b - 1) < v, "{v} belongs to an earlier bucket");
            }
        }
    }

    #[test]
    fn quantiles_are_within_three_percent_above() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile(0.5), None);
        // 1..=1000 ms: the true p50 is 500 ms, p99 990 ms.
        for ms in 1..=1000u64 {
            h.record(Duration::from_millis(ms));
        }
        for (q, want) in [(0.5, 500_000.0), (0.99, 990_000.0), (1.0, 1_000_000.0)] {
            let got = h.quantile(q).unwrap().as_micros() as f64;
            assert!(got >= want && got <= want * 1.032, "q{q}: {got} for {want}");
        }
        let low = h.quantile(0.0).unwrap().as_micros() as f64;
        assert!((1000.0..1032.0).contains(&low), "{low}");
    }
}
