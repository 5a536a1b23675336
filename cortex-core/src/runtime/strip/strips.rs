//! How a fused run cuts its rows into strips: a count, a height, or the
//! default that keeps every worker busy.

use super::error::StripError;

/// How a fused run cuts its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strips {
    /// This many strips (at least 1), and at most one a row: a count
    /// above the rows is cut to the rows, since the extra strips would be
    /// empty (and a count from outside could otherwise size a list of
    /// strips past any memory).
    Count(usize),
    /// Strips of about this many rows of the tallest output.
    Rows(usize),
    /// The default: strips of [`Strips::AUTO_ROWS`] rows, and at least four
    /// per worker thread so the pool stays balanced.
    Auto,
}

impl Strips {
    /// Rows per strip of [`Strips::Auto`]: the middle of the heights the
    /// `fusion` bench measured fastest on a 2-core machine with 1 MiB of L2
    /// per core (16 to 64 rows; 8-row strips recompute more halo and pay
    /// more per-strip overhead, 128-row strips' scratch leaves L2).
    pub const AUTO_ROWS: usize = 32;

    /// The strip count for `rows` rows: never more than `rows` (one strip
    /// for an empty frame).
    ///
    /// # Errors
    /// [`StripError::Group`] for a count or height of 0.
    pub fn count(self, rows: usize) -> Result<usize, StripError> {
        match self {
            Strips::Count(0) | Strips::Rows(0) => {
                Err(StripError::Group("a strip count or height of 0".into()))
            }
            Strips::Count(n) => Ok(n.min(rows.max(1))),
            Strips::Rows(r) => Ok(rows.div_ceil(r).max(1)),
            Strips::Auto => Ok(Self::auto_count(rows, Self::AUTO_ROWS)),
        }
    }

    /// [`Strips::Auto`]'s count for a group whose widest member window
    /// spans `window` rows (above plus below): strips at least eight times
    /// that tall, so the halo each strip recomputes stays near an eighth of
    /// its rows (an 11-row SSIM window gets 80-row strips, not 32).
    pub(crate) fn auto_for(rows: usize, window: usize) -> usize {
        Self::auto_count(rows, Self::AUTO_ROWS.max(8 * window))
    }

    fn auto_count(rows: usize, strip_rows: usize) -> usize {
        rows.div_ceil(strip_rows)
            .max(4 * rayon::current_num_threads())
            .min(rows.max(1))
    }
}

impl std::fmt::Display for Strips {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Strips::Auto => f.write_str("default"),
            Strips::Rows(r) => write!(f, "{r}-row strips"),
            Strips::Count(n) => write!(f, "{n} strips"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Strips;

    #[test]
    fn a_count_is_at_most_one_strip_a_row() {
        assert_eq!(Strips::Count(3).count(10).unwrap(), 3);
        assert_eq!(Strips::Count(11).count(10).unwrap(), 10);
        assert_eq!(Strips::Count(usize::MAX).count(10).unwrap(), 10);
        assert_eq!(Strips::Count(5).count(0).unwrap(), 1);
        assert!(Strips::Count(0).count(10).is_err());
    }
}
