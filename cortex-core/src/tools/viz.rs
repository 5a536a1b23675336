//! Text views of a graph: the listing of its nodes (kind, time, weight key)
//! and the dead-node-elimination diff of a plan, with per-node times from any
//! [`Timings`]. The naming and ordering helpers they share with the exporters
//! live in [`crate::tools::format`].
//!
//! Both are plain `String`s (or `Display` values via [`Listing`] and
//! [`DceDiff`]), so they work in logs, tests and terminals alike. They never
//! panic on a malformed IR: every index that comes from data is looked up
//! with `.get()`, and unknown names print as `?`.

use std::fmt::{self, Write as _};

use crate::model::ir::{GraphIr, NodeId, RateIr};
use crate::model::plan::Plan;
use crate::passes::fusion::ValueRole;
use crate::passes::islands::{islands, Island};
use crate::passes::memory::BufferPlan;
use crate::passes::rates::shown_fusion_plan;
use crate::tools::format::{fmt_ms, node_key_name, node_name, rate_text, why_removed};
// Part of this module's API since before the helpers moved to `format`.
pub use crate::tools::format::{display_order, endpoint_name, reason_text};

/// Per-node times in milliseconds, for the views to print and sum.
///
/// Implemented by [`crate::runtime::profile::Profiler`] (mean time), by `()` (nothing
/// measured), by slices, arrays and vectors of `f64` indexed by node id, and
/// by closures `Fn(NodeId) -> Option<f64>`. Non-finite values count as
/// unmeasured.
pub trait Timings {
    /// The time node `node` takes, if known.
    fn node_ms(&self, node: NodeId) -> Option<f64>;

    /// What the listing prints at the end of node `node`'s line besides its
    /// time (e.g. a model node's backend and input shape); none by default.
    fn node_note(&self, node: NodeId) -> Option<String> {
        let _ = node;
        None
    }
}

/// Times with a note per node (by node id) for the listing: what a program
/// knows about a node that the graph does not (a model's backend and input
/// shape).
#[derive(Clone, Copy)]
pub struct Noted<'a> {
    /// Where the times come from.
    pub timings: &'a dyn Timings,
    /// One note per node id (`None`: nothing to say).
    pub notes: &'a [Option<String>],
}

impl Timings for Noted<'_> {
    fn node_ms(&self, node: NodeId) -> Option<f64> {
        self.timings.node_ms(node)
    }

    fn node_note(&self, node: NodeId) -> Option<String> {
        self.notes.get(node as usize).cloned().flatten()
    }
}

impl Timings for () {
    fn node_ms(&self, _node: NodeId) -> Option<f64> {
        None
    }
}

impl Timings for [f64] {
    fn node_ms(&self, node: NodeId) -> Option<f64> {
        self.get(node as usize).copied()
    }
}

impl<const N: usize> Timings for [f64; N] {
    fn node_ms(&self, node: NodeId) -> Option<f64> {
        self.as_slice().node_ms(node)
    }
}

impl Timings for Vec<f64> {
    fn node_ms(&self, node: NodeId) -> Option<f64> {
        self.as_slice().node_ms(node)
    }
}

impl<F: Fn(NodeId) -> Option<f64>> Timings for F {
    fn node_ms(&self, node: NodeId) -> Option<f64> {
        self(node)
    }
}

/// A usable time: finite and not negative (anything else is unmeasured).
fn measured(t: &dyn Timings, node: NodeId) -> Option<f64> {
    t.node_ms(node).filter(|v| v.is_finite() && *v >= 0.0)
}

/// The least width of the `=` rules; they grow to frame longer lines.
const RULE: usize = 55;

/// The graph listing as a `Display` value; see [`listing`].
pub struct Listing<'a> {
    /// The graph.
    pub ir: &'a GraphIr,
    /// Where node times come from.
    pub timings: &'a dyn Timings,
}

/// The graph as text: a banner `Cortex Graph IR: <name>`, a short header
/// (inputs, states, outputs, weight keys, modes), then one line per node in
/// topological order with its kind tag, name, time (`-` when unmeasured) and
/// weight key, the total of the measured times, and the compilable islands
/// of the full graph ([`island_section`]).
///
/// ```text
///   [external_call]  gray      ( 0.50 ms)
///   [compilable]     saliency  ( 3.10 ms)  weight ws
/// ```
pub fn listing(ir: &GraphIr, timings: &dyn Timings) -> String {
    Listing { ir, timings }.to_string()
}

impl fmt::Display for Listing<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ir = self.ir;
        let order = display_order(ir);
        let times: Vec<String> = order
            .iter()
            .map(|&id| fmt_ms(measured(self.timings, id)))
            .collect();
        let name_w = order
            .iter()
            .map(|&id| node_name(ir, id).chars().count())
            .max()
            .unwrap_or(0);
        let time_w = times.iter().map(String::len).max().unwrap_or(1);
        let mut lines = Vec::with_capacity(order.len());
        for (&id, time) in order.iter().zip(&times) {
            let Some(node) = ir.nodes.get(id as usize) else {
                continue;
            };
            let mut line = format!(
                "  {:<15}  {:<name_w$}  ({time:>time_w$} ms)",
                node.kind.tag(),
                node.name
            );
            if let Some(key) = node_key_name(ir, node) {
                let _ = write!(line, "  weight {key}");
            }
            if let Some(note) = self.timings.node_note(id) {
                let _ = write!(line, "  [{note}]");
            }
            lines.push(line);
        }
        let width = lines
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0)
            .max(RULE);
        let rule = "=".repeat(width);
        writeln!(f, "{rule}")?;
        writeln!(f, "Cortex Graph IR: {}", ir.name)?;
        writeln!(f, "{rule}")?;
        header(f, ir)?;
        writeln!(f, "{}", "-".repeat(width))?;
        for line in &lines {
            writeln!(f, "{line}")?;
        }
        let measured_all: Vec<f64> = order
            .iter()
            .filter_map(|&id| measured(self.timings, id))
            .collect();
        if !measured_all.is_empty() {
            writeln!(f, "{}", "-".repeat(width))?;
            let total: f64 = measured_all.iter().sum();
            writeln!(
                f,
                "  {:<15}  {:<name_w$}  ({total:.2} ms, {} of {} nodes measured)",
                "total",
                "",
                measured_all.len(),
                order.len()
            )?;
        }
        writeln!(f, "{}", "-".repeat(width))?;
        f.write_str(&island_section(ir, &islands(ir, None)))?;
        if ir.nodes.iter().any(|n| n.strip.is_some()) {
            writeln!(f, "{}", "-".repeat(width))?;
            let full = crate::passes::dce::plan_for_pattern(ir, 0, "full graph");
            f.write_str(&fusion_section(ir, &full))?;
        }
        if ir.nodes.iter().any(|n| n.fills_buffer()) {
            writeln!(f, "{}", "-".repeat(width))?;
            let full = crate::passes::dce::plan_for_pattern(ir, 0, "full graph");
            f.write_str(&buffer_section(ir, &full, None))?;
        }
        writeln!(f, "{rule}")
    }
}

/// The listing's island section for `islands` (computed for a plan, or for
/// the full graph as [`listing`] does): one line per island with its nodes in
/// topological order, then the external calls that separate them.
///
/// ```text
/// islands:
///   island 0  center, saliency, motion, fused
///   external  gray, scene
/// ```
pub fn island_section(ir: &GraphIr, islands: &[Island]) -> String {
    let mut out = String::from("islands:");
    if islands.is_empty() {
        out.push_str(" none (no running compilable node)");
    }
    out.push('\n');
    let label_w = format!("island {}", islands.len().saturating_sub(1))
        .len()
        .max("external".len());
    for (i, island) in islands.iter().enumerate() {
        let names: Vec<&str> = island.nodes.iter().map(|&id| node_name(ir, id)).collect();
        let label = format!("island {i}");
        let _ = writeln!(out, "  {label:<label_w$}  {}", names.join(", "));
    }
    let external: Vec<&str> = display_order(ir)
        .into_iter()
        .filter(|&id| {
            ir.nodes
                .get(id as usize)
                .is_some_and(|n| !n.is_compilable())
        })
        .map(|id| node_name(ir, id))
        .collect();
    let external = if external.is_empty() {
        "(none)".to_string()
    } else {
        external.join(", ")
    };
    let _ = writeln!(out, "  {:<label_w$}  {external}", "external");
    out
}

/// The fused groups of `plan` as its mode runs them
/// ([`shown_fusion_plan`]): one line per
/// group with its nodes in the order they run and what leaves it, then each
/// compilable node in no group with the reason.
///
/// ```text
/// fused groups (BALANCED):
///   group 0  gray, laplacian, scene, center   leave: gray, laplacian, scene, center
///   group 1  fused                            leave: fused
///   unfused  blur: no strip form: it runs as a whole-frame call
/// ```
pub fn fusion_section(ir: &GraphIr, plan: &Plan) -> String {
    let fusion = shown_fusion_plan(ir, plan);
    let mut out = format!("fused groups ({}):", plan.label);
    if fusion.groups.is_empty() {
        out.push_str(" none");
    }
    out.push('\n');
    let rows: Vec<(String, String)> = fusion
        .groups
        .iter()
        .map(|g| {
            let names: Vec<&str> = g.nodes.iter().map(|&id| node_name(ir, id)).collect();
            let leaving: Vec<&str> = g
                .nodes
                .iter()
                .zip(&g.values)
                .filter(|(_, v)| matches!(v, ValueRole::Leaving { .. }))
                .map(|(&id, _)| node_name(ir, id))
                .collect();
            (names.join(", "), leaving.join(", "))
        })
        .collect();
    let label_w = format!("group {}", rows.len().saturating_sub(1))
        .len()
        .max("unfused".len());
    let names_w = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (k, (names, leaving)) in rows.iter().enumerate() {
        let label = format!("group {k}");
        let _ = writeln!(
            out,
            "  {label:<label_w$}  {names:<names_w$}  leave: {leaving}"
        );
    }
    for u in &fusion.unfused {
        let _ = writeln!(
            out,
            "  {:<label_w$}  {}: {}",
            "unfused",
            node_name(ir, u.node),
            u.why.describe(ir)
        );
    }
    out
}

/// The buffers of `plan` run sequentially: one line per buffer with its
/// type, the values that take turns in it (and the state a value is swapped
/// into), and, given a pipeline's [`buffer_bytes`], the bytes it holds now.
///
/// ```text
/// buffers (BALANCED):
///   buffer 0  GrayImage  gray (-> _prev_gray)   0.3 MB
///   buffer 1  ScoreMap   center                 1.2 MB
/// ```
///
/// [`buffer_bytes`]: crate::runtime::pipeline::Pipeline::buffer_bytes
pub fn buffer_section(ir: &GraphIr, plan: &Plan, bytes: Option<&[(&str, u32, usize)]>) -> String {
    let bufs = BufferPlan::sequential(ir, plan);
    let mut out = format!("buffers ({}):", plan.label);
    if bufs.buffers.is_empty() {
        out.push_str(" none (no running node fills a buffer)\n");
        return out;
    }
    out.push('\n');
    let rows: Vec<(String, String, String)> = bufs
        .buffers
        .iter()
        .map(|b| {
            let values: Vec<String> = b
                .values
                .iter()
                .map(|&v| {
                    let states: Vec<&str> = ir
                        .states
                        .iter()
                        .enumerate()
                        .filter(|(s, st)| st.writer == v && plan.writes_state(*s as u32))
                        .map(|(_, st)| st.name.as_ref())
                        .collect();
                    if states.is_empty() {
                        node_name(ir, v).to_string()
                    } else {
                        format!("{} (-> {})", node_name(ir, v), states.join(", "))
                    }
                })
                .collect();
            let held = bytes
                .and_then(|all| {
                    all.iter()
                        .find(|(ty, k, _)| *ty == b.ty && *k == b.index_in_type)
                })
                .map_or(String::new(), |&(_, _, n)| fmt_bytes(n));
            (b.ty.clone(), values.join(", "), held)
        })
        .collect();
    let ty_w = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let val_w = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    for (i, (ty, values, held)) in rows.iter().enumerate() {
        let line = format!("  buffer {i}  {ty:<ty_w$}  {values:<val_w$}  {held}");
        let _ = writeln!(out, "{}", line.trim_end());
    }
    if let Some(all) = bytes {
        let total: usize = bufs
            .buffers
            .iter()
            .filter_map(|b| {
                all.iter()
                    .find(|(ty, k, _)| *ty == b.ty && *k == b.index_in_type)
                    .map(|t| t.2)
            })
            .sum();
        let _ = writeln!(out, "  total  {}", fmt_bytes(total));
    }
    out
}

/// `1.2 MB`, `340 KB`, `512 B`.
fn fmt_bytes(n: usize) -> String {
    let n = n as f64;
    if n >= 1e6 {
        format!("{:.1} MB", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.0} KB", n / 1e3)
    } else {
        format!("{n} B")
    }
}

/// The listing's header: inputs, states, outputs, weight keys and modes.
fn header(f: &mut fmt::Formatter<'_>, ir: &GraphIr) -> fmt::Result {
    let join = |items: Vec<String>| {
        if items.is_empty() {
            "(none)".to_string()
        } else {
            items.join(", ")
        }
    };
    let inputs = ir
        .inputs
        .iter()
        .map(|i| format!("{}: {}", i.name, i.ty))
        .collect();
    let states = ir
        .states
        .iter()
        .map(|s| {
            format!(
                "{}: {} (written by {})",
                s.name,
                s.ty,
                node_name(ir, s.writer)
            )
        })
        .collect();
    let outputs = ir
        .outputs
        .iter()
        .map(|o| {
            let opt = if o.optional { " (optional)" } else { "" };
            format!("{}: {}{opt}", node_name(ir, o.node), o.ty)
        })
        .collect();
    let keys = ir.weight_keys.iter().map(|k| k.to_string()).collect();
    let modes = ir
        .modes
        .iter()
        .map(|m| {
            let ws: Vec<String> = ir
                .weight_keys
                .iter()
                .zip(m.weights.iter())
                .map(|(k, w)| format!("{k} {w}"))
                .collect();
            let rates: Vec<String> = m.rates.iter().map(|r| rate_text(ir, r)).collect();
            if rates.is_empty() {
                format!("{} {{{}}}", m.name, ws.join(", "))
            } else {
                format!(
                    "{} {{{}}} where {}",
                    m.name,
                    ws.join(", "),
                    rates.join(", ")
                )
            }
        })
        .collect();
    writeln!(f, "inputs:  {}", join(inputs))?;
    writeln!(f, "states:  {}", join(states))?;
    writeln!(f, "outputs: {}", join(outputs))?;
    writeln!(f, "weights: {}", join(keys))?;
    writeln!(f, "modes:   {}", join(modes))
}

/// What a plan saves compared with running every node.
#[derive(Debug, Clone, PartialEq)]
pub struct DceSavings {
    /// The nodes the plan does not run, in topological order.
    pub removed: Vec<NodeId>,
    /// The measured time of the removed nodes, in ms.
    pub saved_ms: f64,
    /// The measured time of every node, in ms.
    pub total_ms: f64,
    /// Removed nodes without a measured time (not in `saved_ms`).
    pub unmeasured_removed: usize,
}

impl DceSavings {
    /// `saved_ms` as a percentage of `total_ms` (`None` when nothing was
    /// measured).
    pub fn percent(&self) -> Option<f64> {
        (self.total_ms > 0.0).then(|| self.saved_ms / self.total_ms * 100.0)
    }
}

/// What `plan` removes from `ir` and the time that saves, per `timings`.
pub fn dce_savings(ir: &GraphIr, plan: &Plan, timings: &dyn Timings) -> DceSavings {
    let mut s = DceSavings {
        removed: Vec::new(),
        saved_ms: 0.0,
        total_ms: 0.0,
        unmeasured_removed: 0,
    };
    for id in display_order(ir) {
        let t = measured(timings, id);
        s.total_ms += t.unwrap_or(0.0);
        if !plan.is_live(id) {
            s.removed.push(id);
            match t {
                Some(t) => s.saved_ms += t,
                None => s.unmeasured_removed += 1,
            }
        }
    }
    s
}

/// What a rated mode's holds save over its steady cycle (no trigger
/// firing): see [`held_savings`].
#[derive(Debug, Clone, PartialEq)]
pub struct HeldSavings<'a> {
    /// The mode's rates.
    pub rates: &'a [RateIr],
    /// Frames in the steady cycle.
    pub cycle: usize,
    /// Frames of the cycle that hold at least one value.
    pub holding_frames: usize,
    /// The measured time the held frames do not run, averaged over the
    /// cycle, in ms a frame (`None` when nothing held was measured).
    pub saved_ms: Option<f64>,
}

/// What the mode of `plan` (by its label) saves by its rates, when it has
/// any: the work its phase plans leave out, averaged over its steady
/// cycle, per `timings`.
pub fn held_savings<'a>(
    ir: &'a GraphIr,
    plan: &Plan,
    timings: &dyn Timings,
) -> Option<HeldSavings<'a>> {
    let mode = ir.modes.iter().position(|m| *m.name == *plan.label)?;
    let rates = &ir.modes[mode].rates;
    if rates.is_empty() {
        return None;
    }
    let phases = crate::passes::dce::phase_plans(ir, mode);
    let cycle = crate::passes::rates::steady_cycle(ir, mode);
    let (mut total, mut measured_any) = (0.0, false);
    for &mask in &cycle {
        let Some(phase) = phases.get(mask as usize) else {
            continue;
        };
        for &id in plan.order.iter().filter(|&&id| !phase.is_live(id)) {
            if let Some(t) = measured(timings, id) {
                total += t;
                measured_any = true;
            }
        }
    }
    Some(HeldSavings {
        rates,
        cycle: cycle.len(),
        holding_frames: cycle.iter().filter(|&&m| m != 0).count(),
        saved_ms: measured_any.then(|| total / cycle.len().max(1) as f64),
    })
}

/// A plan's dead-node-elimination diff as a `Display` value; see
/// [`dce_diff`].
pub struct DceDiff<'a> {
    /// The full graph.
    pub ir: &'a GraphIr,
    /// The plan compared with it.
    pub plan: &'a Plan,
    /// Where node times come from.
    pub timings: &'a dyn Timings,
}

/// What dead-node elimination does in `plan`: every node in topological
/// order, `✓` when it runs or `- REMOVED` with the reason when it does not,
/// each with the time it costs; then the state writes the plan skips, any
/// non-optional outputs it loses, and a summary line:
///
/// ```text
/// [dead_node_elimination diff: POWER_SAVE]
///   ✓          gray      (~0.50 ms)
///   - REMOVED  saliency  (~3.10 ms)  its weight `ws` is 0
///   state writes skipped: none
///   removed: saliency, motion — saves ~4.5 ms of 54.0 ms (8.3%)
/// ```
pub fn dce_diff(ir: &GraphIr, plan: &Plan, timings: &dyn Timings) -> String {
    DceDiff { ir, plan, timings }.to_string()
}

impl fmt::Display for DceDiff<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (ir, plan) = (self.ir, self.plan);
        let order = display_order(ir);
        let times: Vec<String> = order
            .iter()
            .map(|&id| match measured(self.timings, id) {
                Some(v) => format!("~{v:.2}"),
                None => "-".to_string(),
            })
            .collect();
        let name_w = order
            .iter()
            .map(|&id| node_name(ir, id).chars().count())
            .max()
            .unwrap_or(0);
        let time_w = times.iter().map(String::len).max().unwrap_or(1);
        writeln!(f, "[dead_node_elimination diff: {}]", plan.label)?;
        for (&id, time) in order.iter().zip(&times) {
            let name = node_name(ir, id);
            if plan.is_live(id) {
                writeln!(f, "  {:<9}  {name:<name_w$}  ({time:>time_w$} ms)", "✓")?;
            } else {
                writeln!(
                    f,
                    "  {:<9}  {name:<name_w$}  ({time:>time_w$} ms)  {}",
                    "- REMOVED",
                    why_removed(ir, plan, id)
                )?;
            }
        }
        let skipped: Vec<String> = ir
            .states
            .iter()
            .enumerate()
            .filter(|(s, _)| !plan.writes_state(*s as u32))
            .map(|(_, st)| format!("{} (by {})", st.name, node_name(ir, st.writer)))
            .collect();
        if skipped.is_empty() {
            writeln!(f, "  state writes skipped: none")?;
        } else {
            writeln!(f, "  state writes skipped: {}", skipped.join(", "))?;
        }
        if !plan.missing_outputs.is_empty() {
            let names: Vec<&str> = plan
                .missing_outputs
                .iter()
                .map(|&id| node_name(ir, id))
                .collect();
            writeln!(
                f,
                "  missing outputs: {} (a run-time pattern like this is refused)",
                names.join(", ")
            )?;
        }
        if let Some(held) = held_savings(ir, plan, self.timings) {
            let rates: Vec<String> = held.rates.iter().map(|r| rate_text(ir, r)).collect();
            write!(
                f,
                "  rates: {} — {} of {} frames hold a value",
                rates.join(", "),
                held.holding_frames,
                held.cycle
            )?;
            match held.saved_ms {
                Some(ms) => writeln!(f, "; saves ~{ms:.1} ms a frame on average (no trigger)")?,
                None => writeln!(f, "; saving unmeasured")?,
            }
        }
        let s = dce_savings(ir, plan, self.timings);
        write!(f, "  removed: ")?;
        if s.removed.is_empty() {
            return writeln!(f, "nothing — the plan runs every node");
        }
        let names: Vec<&str> = s.removed.iter().map(|&id| node_name(ir, id)).collect();
        write!(f, "{}", names.join(", "))?;
        match s.percent() {
            Some(pct) if s.unmeasured_removed < s.removed.len() => {
                write!(
                    f,
                    " — saves ~{:.1} ms of {:.1} ms ({pct:.1}%)",
                    s.saved_ms, s.total_ms
                )?;
                if s.unmeasured_removed > 0 {
                    write!(f, " + {} unmeasured", s.unmeasured_removed)?;
                }
            }
            _ => write!(f, " — saving unmeasured")?,
        }
        writeln!(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::*;
    use crate::model::plan::Reason;
    use crate::model::spec::GraphSpec;
    use crate::passes::check::check;
    use crate::passes::dce::plan_for_mode;

    #[test]
    fn listing_has_every_node_in_topo_order_with_tags() {
        let ir = l2_ir();
        let out = listing(&ir, &L2_MS);
        assert!(out.contains("Cortex Graph IR: L2"), "{out}");
        assert!(out.contains("inputs:  frame: Frame"), "{out}");
        assert!(
            out.contains("_prev_gray: GrayImage (written by gray)"),
            "{out}"
        );
        assert!(out.contains("weights: wc, ws, wm"), "{out}");
        assert!(out.contains("POWER_SAVE {wc 1, ws 0, wm 0}"), "{out}");
        let node_lines: Vec<&str> = out.lines().filter(|l| l.starts_with("  [")).collect();
        assert_eq!(node_lines.len(), ir.nodes.len(), "{out}");
        for (line, &id) in node_lines.iter().zip(ir.topo.iter()) {
            let node = ir.node(id);
            let mut words = line.split_whitespace();
            assert_eq!(words.next(), Some(node.kind.tag()), "{line}");
            assert_eq!(words.next(), Some(node.name.as_ref()), "{line}");
        }
        assert!(
            out.contains("  [compilable]     saliency  ( 3.10 ms)  weight ws"),
            "{out}"
        );
        assert!(
            out.contains("  [external_call]  scene     (12.30 ms)\n"),
            "{out}"
        );
        assert!(out.contains("(18.11 ms, 6 of 6 nodes measured)"), "{out}");
        // Aligned: every time column opens at the same position.
        let cols: Vec<usize> = node_lines.iter().map(|l| l.find('(').unwrap()).collect();
        assert!(cols.windows(2).all(|w| w[0] == w[1]), "{out}");
    }

    #[test]
    fn listing_without_timings_shows_dashes() {
        let ir = l2_ir();
        let out = listing(&ir, &());
        assert!(out.contains("  [external_call]  gray      (- ms)"), "{out}");
        assert!(!out.contains("total"), "{out}");
        // A closure works too; non-finite values count as unmeasured.
        let out = listing(&ir, &|id: NodeId| (id == 0).then_some(f64::NAN));
        assert!(out.contains("gray      (- ms)"), "{out}");
    }

    #[test]
    fn dce_diff_power_save_removes_saliency_and_motion() {
        let ir = l2_ir();
        let ps = ir.mode_index("POWER_SAVE").unwrap();
        let plan = plan_for_mode(&ir, ps);
        let out = dce_diff(&ir, &plan, &L2_MS);
        let removed: Vec<&str> = out.lines().filter(|l| l.contains("- REMOVED")).collect();
        assert_eq!(removed.len(), 2, "{out}");
        assert!(removed[0].contains("saliency") && removed[0].contains("its weight `ws` is 0"));
        assert!(removed[1].contains("motion") && removed[1].contains("its weight `wm` is 0"));
        let kept = out.lines().filter(|l| l.starts_with("  ✓")).count();
        assert_eq!(kept, 4, "{out}");
        assert!(out.contains("state writes skipped: none"), "{out}");
        // 3.1 + 1.4 = 4.5 of 18.11 → 24.8%.
        assert!(
            out.contains("removed: saliency, motion — saves ~4.5 ms of 18.1 ms (24.8%)"),
            "{out}"
        );
        let s = dce_savings(&ir, &plan, &L2_MS);
        assert!((s.saved_ms - 4.5).abs() < 1e-9);
        assert_eq!(s.unmeasured_removed, 0);

        let balanced = plan_for_mode(&ir, ir.mode_index("BALANCED").unwrap());
        let out = dce_diff(&ir, &balanced, &L2_MS);
        assert!(!out.contains("REMOVED"), "{out}");
        assert!(out.contains("removed: nothing"), "{out}");
    }

    #[test]
    fn dce_diff_totals_and_unmeasured() {
        let ir = l2_ir();
        let plan = plan_for_mode(&ir, ir.mode_index("POWER_SAVE").unwrap());
        // Scale so the full graph costs 54.0 ms and the percentage is small.
        let times = [0.5, 48.19, 0.8, 3.1, 1.4, 0.01];
        let out = dce_diff(&ir, &plan, &times);
        assert!(out.contains("saves ~4.5 ms of 54.0 ms (8.3%)"), "{out}");
        let sal = ir.node_id("saliency").unwrap();
        let partial = |id: NodeId| (id == sal).then_some(3.1);
        let out = dce_diff(&ir, &plan, &partial);
        assert!(
            out.contains("saves ~3.1 ms of 3.1 ms (100.0%) + 1 unmeasured"),
            "{out}"
        );
        let out = dce_diff(&ir, &plan, &());
        assert!(
            out.contains("removed: saliency, motion — saving unmeasured"),
            "{out}"
        );
    }

    /// The reduced L2 graph where only `motion` reads `_prev_gray` and
    /// `edges` is a helper only `motion` uses; with `trail`, an optional
    /// output reading `_prev_motion`, which `motion` writes.
    fn helper_variant(trail: bool) -> GraphSpec {
        let b = GraphSpec::builder("L2").input("frame", "Frame").state(
            "_prev_gray",
            "GrayImage",
            "GrayImage::default()",
        );
        let b = if trail {
            b.state("_prev_motion", "MotionMap", "MotionMap::default()")
        } else {
            b
        };
        let b = b
            .node("gray", "ops::to_gray", ["frame"])
            .node("scene", "ops::scene_change", ["gray"])
            .node("center", "ops::center_prior", ["gray"])
            .compilable()
            .weight_key("wc")
            .node("saliency", "ops::saliency_dft", ["gray"])
            .compilable()
            .weight_key("ws")
            .node("edges", "ops::to_gray", ["gray"])
            .node("motion", "ops::motion_map", ["gray", "_prev_gray", "edges"])
            .compilable()
            .weight_key("wm")
            .node(
                "fused",
                "ops::fuse",
                ["center", "saliency", "motion", "weights"],
            )
            .compilable()
            .write("gray", "_prev_gray")
            .mode("BALANCED", [("wc", 0.5), ("ws", 0.3), ("wm", 0.2)])
            .mode("POWER_SAVE", [("wc", 1.0), ("ws", 0.0), ("wm", 0.0)])
            .output("fused", "ScoreMap")
            .output("scene", "bool");
        if trail {
            b.node("trail", "ops::to_gray", ["_prev_motion"])
                .write("motion", "_prev_motion")
                .optional_output("trail", "Trail")
                .build()
        } else {
            b.build()
        }
    }

    #[test]
    fn dce_diff_reports_helpers_and_skipped_state_writes() {
        // POWER_SAVE zeroes `wm`, so: motion (weight), edges (no live
        // consumer), and `_prev_gray` is not worth writing.
        let spec = helper_variant(false);
        let ir = ir_of(&spec);
        let plan = plan_for_mode(&ir, ir.mode_index("POWER_SAVE").unwrap());
        let out = dce_diff(&ir, &plan, &());
        let line = |out: &str, name: &str| {
            let pat = format!(" {name} ");
            out.lines()
                .find(|l| l.contains(&pat))
                .unwrap_or("")
                .to_string()
        };
        assert!(line(&out, "motion").contains("- REMOVED"), "{out}");
        assert!(
            line(&out, "motion").contains("its weight `wm` is 0"),
            "{out}"
        );
        assert!(
            line(&out, "edges").contains("nothing that runs consumes it"),
            "{out}"
        );
        assert!(
            line(&out, "saliency").contains("its weight `ws` is 0"),
            "{out}"
        );
        assert!(
            out.contains("state writes skipped: _prev_gray (by gray)"),
            "{out}"
        );
        assert!(
            out.contains("removed: saliency, edges, motion — saving unmeasured"),
            "{out}"
        );

        // Now `trail` (an output) reads `_prev_motion`, written by `motion`:
        // the full graph feeds it motion's real value, so `motion` keeps
        // running for its state despite its zero weight.
        let spec = helper_variant(true);
        let ir = ir_of(&spec);
        let plan = plan_for_mode(&ir, ir.mode_index("POWER_SAVE").unwrap());
        let out = dce_diff(&ir, &plan, &());
        assert!(line(&out, "motion").contains("✓"), "{out}");
        assert!(line(&out, "edges").contains("✓"), "{out}");
        assert!(line(&out, "trail").contains("✓"), "{out}");
        assert!(
            out.contains("removed: saliency — saving unmeasured"),
            "{out}"
        );
        assert!(out.contains("state writes skipped: none"), "{out}");
        assert_eq!(
            reason_text(&ir, Reason::ZeroWeight { key: 99 }),
            "its weight `?` is 0"
        );
    }

    #[test]
    fn malformed_ir_does_not_panic() {
        let mut ir = l2_ir();
        let plan = plan_for_mode(&ir, 1);
        ir.topo = vec![99, 0, 0, 5].into();
        ir.states.to_mut()[0].writer = 42;
        ir.outputs.to_mut()[0].node = 77;
        ir.nodes.to_mut()[2].weight_key = Some(9);
        let out = listing(&ir, &L2_MS);
        // Every node still listed exactly once.
        assert_eq!(
            out.lines().filter(|l| l.starts_with("  [")).count(),
            6,
            "{out}"
        );
        assert!(out.contains("written by ?"), "{out}");
        let _ = dce_diff(&ir, &plan, &L2_MS);
        let empty = GraphIr {
            name: "empty".into(),
            inputs: Vec::new().into(),
            states: Vec::new().into(),
            nodes: Vec::new().into(),
            edges: Vec::new().into(),
            weight_keys: Vec::new().into(),
            modes: Vec::new().into(),
            outputs: Vec::new().into(),
            topo: Vec::new().into(),
        };
        assert!(listing(&empty, &()).contains("Cortex Graph IR: empty"));
        assert!(dce_diff(&empty, &plan, &()).contains("removed: nothing"));
        assert!(check(&l2_spec()).ir.is_some());
    }
}
