//! What runs where and why: the text report, and the kernel of a node's op
//! path for tools that annotate a listing.

use std::fmt::Write as _;

use super::decision::Reason;
use super::Registry;
use cortex_core::ir::GraphIr;

impl Registry {
    /// The kernel(s) a node's op path runs, for tools that annotate a
    /// listing: `Some("turbojpeg (measured) at 640x480")` for a path whose
    /// last segment is an op with decisions and which goes through the
    /// registry (a segment `registry` before it, as in
    /// `registry::ops::encode_roi`); `None` otherwise.
    pub fn kernel_for(&self, op_path: &str) -> Option<String> {
        let path: String = op_path.chars().filter(|c| !c.is_whitespace()).collect();
        let path = path.split(['(', '<']).next().unwrap_or("");
        let mut segments: Vec<&str> = path.split("::").collect();
        let op = segments.pop()?;
        let op = op.strip_suffix("_into").unwrap_or(op);
        if !segments.contains(&"registry") {
            return None;
        }
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
