//! What runs where and why: the text report, and the kernel of a node's op
//! path for tools that annotate a listing.

use std::fmt::Write as _;

use super::decision::Reason;
use super::ops::OP_NAMES;
use super::Registry;
use cortex_core::ir::GraphIr;

impl Registry {
    /// The kernel(s) a node's op path runs, for tools that annotate a
    /// listing: `Some("turbojpeg (measured) at 640x480")` for a call of a
    /// function of [`super::ops`] (its path ends in `registry::ops::NAME`
    /// or `registry::ops::NAME_into`, e.g. `registry::ops::encode_roi`,
    /// `cortex::registry::ops::to_gray_into`) whose op has decisions;
    /// `None` otherwise, a direct kernel such as `ops::to_gray` included.
    pub fn kernel_for(&self, op_path: &str) -> Option<String> {
        let op = registry_op(op_path)?;
        let inner = self.lock();
        let notes: Vec<String> = inner
            .decisions
            .iter()
            .filter(|d| d.op == op)
            .map(|d| {
                let why = match &d.reason {
                    _ if d.kernel != d.chosen => "fallback",
                    Reason::Rule(_) => "rule",
                    Reason::Measured(_) => "measured",
                    Reason::Cached(_) => "cached",
                    Reason::Forced(_) => "forced",
                };
                format!("{} ({why}) at {}", d.kernel, d.shape)
            })
            .collect();
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    /// [`Registry::kernel_for`] of every node of `ir`, indexed by node id.
    pub fn annotate(&self, ir: &GraphIr) -> Vec<Option<String>> {
        ir.nodes.iter().map(|n| self.kernel_for(&n.op)).collect()
    }

    /// A text table: per op and shape, the kernel that runs and why, the
    /// failures, the cache file and the warnings.
    pub fn report(&self) -> String {
        let inner = self.lock();
        let mut out = String::new();
        let cache = match &self.config.cache_path {
            Some(p) => p.display().to_string(),
            None => "none (in memory)".to_string(),
        };
        let _ = writeln!(
            out,
            "kernel registry: preference {}, cache {cache}",
            self.config.preference
        );
        let _ = writeln!(out, "{:<14} {:<22} {:<11} why", "op", "shape", "kernel");
        for d in &inner.decisions {
            let _ = writeln!(
                out,
                "{:<14} {:<22} {:<11} {}",
                d.op,
                d.shape.to_string(),
                d.kernel,
                d.reason
            );
            if !d.fallbacks.is_empty() {
                let _ = writeln!(out, "{:49}fallbacks: {}", "", d.fallbacks.join(", "));
            }
            for f in &d.failures {
                let _ = writeln!(
                    out,
                    "{:49}FAILED: {} ({}); computed by {}, not retried at this shape",
                    "", f.kernel, f.error, f.fallback
                );
            }
        }
        let failures: usize = inner.decisions.iter().map(|d| d.failures.len()).sum();
        let _ = writeln!(out, "kernel failures: {failures}");
        for w in &inner.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        out
    }
}

/// The registry op a node's call path dispatches to: the path's last three
/// segments are `registry`, `ops` and one of [`OP_NAMES`] (or its `_into`
/// form). Generic arguments end the path; whitespace between segments is
/// ignored.
fn registry_op(op_path: &str) -> Option<&'static str> {
    let path = op_path.split(['<', '(']).next()?.trim_end();
    let path = path.strip_suffix("::").unwrap_or(path);
    let segments: Vec<&str> = path.split("::").map(str::trim).collect();
    let [.., module, ops, function] = segments.as_slice() else {
        return None;
    };
    if (*module, *ops) != ("registry", "ops") {
        return None;
    }
    let name = function.strip_suffix("_into").unwrap_or(function);
    OP_NAMES.iter().copied().find(|op| *op == name)
}

#[cfg(test)]
mod tests {
    use super::registry_op;

    #[test]
    fn only_paths_into_the_registry_ops_module_name_an_op() {
        assert_eq!(registry_op("registry::ops::to_gray"), Some("to_gray"));
        assert_eq!(registry_op("registry::ops::to_gray_into"), Some("to_gray"));
        assert_eq!(
            registry_op("::cortex::registry::ops::encode_roi"),
            Some("encode_roi")
        );
        assert_eq!(
            registry_op("registry :: ops :: saliency_dft_into"),
            Some("saliency_dft")
        );
        assert_eq!(registry_op("registry::ops::to_gray::<u8>"), Some("to_gray"));
        for direct in [
            "ops::to_gray",
            "ops::to_gray_into",
            "to_gray",
            "cortex::ops::to_gray",
            "registry::declare::to_gray",
            "registry::to_gray",
            "my_registry::ops::to_gray",
            "registry::ops::helpers::to_gray",
            "registry::ops::not_an_op",
            "registry::ops::to_gray_into_into",
            "registry::ops::",
        ] {
            assert_eq!(registry_op(direct), None, "{direct}");
        }
    }
}
