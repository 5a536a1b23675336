//! What the registry decided for an op at a shape, why, and the kernel
//! failures it fell back from.

use std::fmt;
use std::time::Duration;

use super::op::Shape;

/// Why a kernel was chosen.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// The rules left one candidate; the text says what ruled the others out.
    Rule(String),
    /// Measured on this call: each candidate's median, fastest first.
    Measured(Vec<(&'static str, Duration)>),
    /// Taken from the autotune cache (with the medians it recorded).
    Cached(Vec<(String, Duration)>),
    /// Forced by the API, the environment, or a cache entry marked forced.
    Forced(&'static str),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let times = |f: &mut fmt::Formatter<'_>, list: Vec<(&str, Duration)>| {
            for (i, (k, d)) in list.iter().enumerate() {
                let sep = if i == 0 { "" } else { ", " };
                write!(f, "{sep}{k} {:.3} ms", d.as_secs_f64() * 1e3)?;
            }
            Ok(())
        };
        match self {
            Reason::Rule(why) => write!(f, "rule: {why}"),
            Reason::Measured(list) => {
                f.write_str("measured: ")?;
                times(f, list.iter().map(|(k, d)| (*k, *d)).collect())
            }
            Reason::Cached(list) => {
                f.write_str("cached: ")?;
                times(f, list.iter().map(|(k, d)| (k.as_str(), *d)).collect())
            }
            Reason::Forced(by) => write!(f, "forced by {by}"),
        }
    }
}

/// A run-time failure of a kernel, after which the call fell back.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The kernel that failed.
    pub kernel: &'static str,
    /// Its error.
    pub error: String,
    /// The kernel that computed the call instead.
    pub fallback: &'static str,
}

/// What the registry decided for one op at one shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The op.
    pub op: &'static str,
    /// The problem shape.
    pub shape: Shape,
    /// The kernel that runs now (after any fallback).
    pub kernel: &'static str,
    /// The kernel first chosen, and why.
    pub chosen: &'static str,
    /// Why `chosen` was chosen.
    pub reason: Reason,
    /// The kernels tried next if `kernel` fails, in order.
    pub fallbacks: Vec<&'static str>,
    /// Kernels that failed at this shape (each is no longer tried here).
    pub failures: Vec<Failure>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_prints_times_in_ms() {
        let r = Reason::Measured(vec![
            ("a", Duration::from_micros(1500)),
            ("b", Duration::from_millis(2)),
        ]);
        assert_eq!(r.to_string(), "measured: a 1.500 ms, b 2.000 ms");
    }
}
