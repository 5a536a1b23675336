//! How a registry selects and where it keeps its decisions: the user's
//! [`Preference`], the measurement settings ([`TuneConfig`]) and the
//! [`Config`] read from the environment.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::cache;
use super::op::Backend;

/// The environment variable for the [`Preference`]: `measure` (default),
/// `pure-rust`, or `prefer-<backend>` (`prefer-opencv`, `prefer-turbojpeg`).
pub const PREFERENCE_ENV: &str = "CORTEX_KERNELS";

/// The environment variable that forces kernels: `op=kernel[,op=kernel…]`,
/// e.g. `encode_roi=opencv`.
pub const FORCE_ENV: &str = "CORTEX_FORCE_KERNEL";

/// A user's preference among the kernels that support a shape.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Preference {
    /// Measure every supported kernel and keep the fastest.
    #[default]
    Measure,
    /// Only pure-Rust kernels, for calls and for fallback.
    PureRustOnly,
    /// Only kernels of this backend when one supports the shape (measured
    /// among themselves); the others stay as fallbacks.
    Prefer(Backend),
}

impl Preference {
    /// Parses the [`PREFERENCE_ENV`] syntax.
    pub fn parse(text: &str) -> Option<Preference> {
        match text.trim() {
            "" | "measure" => Some(Preference::Measure),
            "pure-rust" | "pure-rust-only" => Some(Preference::PureRustOnly),
            "prefer-opencv" => Some(Preference::Prefer(Backend::OpenCv)),
            "prefer-turbojpeg" => Some(Preference::Prefer(Backend::TurboJpeg)),
            "prefer-pure-rust" => Some(Preference::Prefer(Backend::PureRust)),
            _ => None,
        }
    }
}

impl fmt::Display for Preference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Preference::Measure => f.write_str("measure"),
            Preference::PureRustOnly => f.write_str("pure-rust only"),
            Preference::Prefer(b) => write!(f, "prefer {b}"),
        }
    }
}

/// How a selection is measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TuneConfig {
    /// Untimed runs of each candidate first (caches, page faults, lazy
    /// initialization). Default 1.
    pub warmup: u32,
    /// Timed runs of each candidate, interleaved across candidates so that
    /// a burst of load hits them alike; the median counts. At least 1.
    /// Default 5.
    pub runs: u32,
    /// Time budget of the timed rounds: while all candidates together have
    /// taken less, rounds go on past `runs` (up to `max_runs`), so that
    /// cheap ops, whose kernels differ by less than a burst of load, get
    /// enough samples. Default 20 ms.
    pub budget: Duration,
    /// Most timed rounds. Default 30.
    pub max_runs: u32,
    /// Relative tie band: among candidates whose median is within
    /// `tie × fastest` of the fastest, the first in the op's kernel order
    /// wins (pure Rust first), so that noise does not flip a decision
    /// toward a system library. Default 0.03.
    pub tie: f64,
}

impl Default for TuneConfig {
    fn default() -> Self {
        TuneConfig {
            warmup: 1,
            runs: 5,
            budget: Duration::from_millis(20),
            max_runs: 30,
            tie: 0.03,
        }
    }
}

/// How a [`super::Registry`] selects and where it keeps its decisions.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The user's preference.
    pub preference: Preference,
    /// Measurement settings.
    pub tune: TuneConfig,
    /// The autotune cache file; `None` keeps decisions in memory only.
    pub cache_path: Option<PathBuf>,
    /// Forced kernels, `(op, kernel)`.
    pub forced: Vec<(String, String)>,
    /// Do not print warnings on stderr (they are kept in
    /// [`super::Registry::warnings`] and the report either way).
    pub quiet: bool,
}

impl Config {
    /// The configuration of the process registry: [`PREFERENCE_ENV`],
    /// [`FORCE_ENV`] and the cache at [`cache::default_path`]. Returns the
    /// warnings about values it could not read.
    pub fn from_env() -> (Config, Vec<String>) {
        let mut warnings = Vec::new();
        let mut config = Config {
            cache_path: cache::default_path(),
            ..Config::default()
        };
        if let Ok(v) = std::env::var(PREFERENCE_ENV) {
            match Preference::parse(&v) {
                Some(p) => config.preference = p,
                None => warnings.push(format!(
                    "{PREFERENCE_ENV}={} not understood; measuring",
                    cache::echo(&v)
                )),
            }
        }
        if let Ok(v) = std::env::var(FORCE_ENV) {
            for item in v.split(',').filter(|s| !s.trim().is_empty()) {
                match item.split_once('=') {
                    Some((op, k)) => config
                        .forced
                        .push((op.trim().to_string(), k.trim().to_string())),
                    None => warnings.push(format!(
                        "{FORCE_ENV}: `{}` is not op=kernel",
                        cache::echo(item)
                    )),
                }
            }
        }
        (config, warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preference_syntax() {
        assert_eq!(Preference::parse("measure"), Some(Preference::Measure));
        assert_eq!(
            Preference::parse(" pure-rust "),
            Some(Preference::PureRustOnly)
        );
        assert_eq!(
            Preference::parse("prefer-opencv"),
            Some(Preference::Prefer(Backend::OpenCv))
        );
        assert_eq!(Preference::parse("fastest please"), None);
    }
}
