//! The op library as text, in the manner of `gst-inspect-1.0`: every
//! described op on one line, or one op in full — inputs, output,
//! parameters with their types and defaults, strip form and kernels.

use std::fmt::Write;

use serde_json::Value as Json;

use super::desc::OpDesc;
use super::ops::Ops;
use super::typecheck::signature;

impl Ops {
    /// Every described op, one line each (`vision.to_gray  RgbFrame ->
    /// GrayImage  the luma of an RGB frame`), sorted by name; then the
    /// registered types.
    pub fn listing(&self) -> String {
        let width = self.descriptors().map(|d| d.name.len()).max().unwrap_or(0);
        let mut s = String::new();
        for d in self.descriptors() {
            let _ = writeln!(
                s,
                "{:width$}  ({}) -> {}  {}",
                d.name,
                signature(d, self),
                self.type_label(d),
                d.summary
            );
        }
        let types: Vec<&str> = self.type_names().collect();
        let _ = writeln!(s, "\ntypes: {}", types.join(", "));
        s
    }

    /// Op `name` in full, when it is described.
    pub fn inspect(&self, name: &str) -> Option<String> {
        let d = self.descriptor(name)?;
        let mut s = String::new();
        let _ = writeln!(s, "{}: {}\n", d.name, d.summary);
        let _ = writeln!(s, "inputs:");
        if d.inputs.is_empty() {
            let _ = writeln!(s, "  (none)");
        }
        for p in &d.inputs {
            let ty = self.name_of(p.ty.id).unwrap_or(p.ty.rust);
            let when = if p.optional {
                "  (absent when its node does not run)"
            } else {
                ""
            };
            let _ = writeln!(s, "  {}: {ty}{when}", p.name);
        }
        if d.weights {
            let _ = writeln!(s, "  the running mode's weights");
        }
        let how = if d.fills {
            "filled in a buffer the pipeline owns"
        } else {
            "a new value each call"
        };
        let _ = writeln!(s, "output: {} ({how})", self.type_label(d));
        let params = d.params();
        let _ = writeln!(s, "parameters:");
        if params.is_empty() {
            let _ = writeln!(s, "  (none)");
        }
        let width = params.iter().map(|(p, _, _)| p.len()).max().unwrap_or(0);
        for (path, default, doc) in params {
            let kind = kind_of(&default);
            let default = shortest(&default);
            let _ = writeln!(s, "  {path:width$}  {kind:7}  default {default}");
            if !doc.is_empty() {
                let _ = writeln!(s, "  {:width$}  {doc}", "");
            }
        }
        let strip = match d.strip {
            Some(shape) => format!("{shape:?}").to_lowercase(),
            None if d.compilable => "none (compilable: grouped in islands)".into(),
            None => "none".into(),
        };
        let _ = writeln!(s, "strip form: {strip}");
        if !d.kernels.is_empty() {
            let _ = writeln!(s, "kernels: {}", d.kernels.join(", "));
        }
        Some(s)
    }

    fn type_label(&self, d: &OpDesc) -> String {
        self.name_of(d.output.id)
            .unwrap_or(d.output.rust)
            .to_string()
    }
}

/// `v` as JSON, a number that is an `f32` widened written as the `f32`
/// (`0.1`, not `0.10000000149011612`): what the parameter's author wrote.
fn shortest(v: &Json) -> String {
    match v {
        Json::Number(n) if !n.is_i64() && !n.is_u64() => {
            let x = n.as_f64().unwrap_or_default();
            let f = x as f32;
            if f64::from(f) == x {
                format!("{f:?}")
            } else {
                format!("{x:?}")
            }
        }
        Json::Array(items) => {
            let items: Vec<String> = items.iter().map(shortest).collect();
            format!("[{}]", items.join(", "))
        }
        _ => v.to_string(),
    }
}

/// The JSON kind of a parameter, from its default.
fn kind_of(v: &Json) -> &'static str {
    match v {
        Json::Bool(_) => "bool",
        Json::Number(n) if n.is_u64() => "integer",
        Json::Number(n) if n.is_i64() => "integer",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "list",
        Json::Object(_) => "object",
        Json::Null => "null",
    }
}
