//! How the tools name and order things: the helpers shared by the listing
//! ([`crate::tools::viz`]) and the exporters ([`crate::tools::export`]), so both print a
//! graph the same way.
//!
//! Tools may be handed any IR (a hand-edited one, or a plan for another
//! graph), so nothing here panics: every index that comes from data is
//! looked up with `.get()`, and unknown names print as `?`.

use crate::model::ir::{Endpoint, GraphIr, KeyId, NodeId, NodeIr, RateIr};
use crate::model::plan::{Plan, Reason};

/// What an out-of-range name prints as.
pub const UNKNOWN: &str = "?";

pub use crate::model::ir::display_order;

/// The name of an endpoint, or `?` when it is out of range.
pub fn endpoint_name(ir: &GraphIr, e: Endpoint) -> &str {
    let name = match e {
        Endpoint::Input(i) => ir.inputs.get(i as usize).map(|x| &x.name),
        Endpoint::State(s) => ir.states.get(s as usize).map(|x| &x.name),
        Endpoint::Node(n) => ir.nodes.get(n as usize).map(|x| &x.name),
    };
    name.map_or(UNKNOWN, |s| s.as_ref())
}

/// The name of node `id`, or `?`.
pub fn node_name(ir: &GraphIr, id: NodeId) -> &str {
    endpoint_name(ir, Endpoint::Node(id))
}

/// The name of weight key `key`, or `?`.
pub fn key_name(ir: &GraphIr, key: KeyId) -> &str {
    ir.weight_keys
        .get(key as usize)
        .map_or(UNKNOWN, |k| k.as_ref())
}

/// The name of `node`'s weight key, if it has one (`?` if out of range).
pub fn node_key_name<'a>(ir: &'a GraphIr, node: &NodeIr) -> Option<&'a str> {
    node.weight_key.map(|k| key_name(ir, k))
}

/// A sentence explaining an elimination reason: the wording of the
/// compiler's diagnostics ([`Reason::describe`]), which also tolerates
/// out-of-range ids.
pub fn reason_text(ir: &GraphIr, reason: Reason) -> String {
    reason.describe(ir)
}

/// Why `plan` does not run node `id`, in words.
pub fn why_removed(ir: &GraphIr, plan: &Plan, id: NodeId) -> String {
    plan.reason(id).map_or_else(
        // A plan for another IR (or hand-made) may drop a node silently.
        || "not in this plan".to_string(),
        |r| reason_text(ir, r),
    )
}

/// A rate as written: `text every 4 or scene.changed`.
pub fn rate_text(ir: &GraphIr, rate: &RateIr) -> String {
    let mut s = format!("{} every {}", node_name(ir, rate.node), rate.every);
    if let Some(t) = &rate.trigger {
        s.push_str(" or ");
        s.push_str(endpoint_name(ir, t.source));
        for f in t.fields.iter() {
            s.push('.');
            s.push_str(f);
        }
    }
    s
}

/// The rate mode `plan` (by its label) gives node `id`, if any.
pub fn rate_of<'a>(ir: &'a GraphIr, plan: &Plan, id: NodeId) -> Option<&'a RateIr> {
    ir.modes
        .iter()
        .find(|m| *m.name == *plan.label)?
        .rates
        .iter()
        .find(|r| r.node == id)
}

/// Milliseconds as the views print node times: two decimals, `-` when
/// unmeasured.
pub fn fmt_ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::l2_ir;
    use crate::passes::dce::plan_for_mode;

    #[test]
    fn display_order_repairs_a_malformed_topo() {
        let mut ir = l2_ir();
        assert_eq!(display_order(&ir), ir.topo.to_vec());
        ir.topo = vec![99, 4, 4, 1].into();
        assert_eq!(display_order(&ir), [4, 1, 0, 2, 3, 5]);
    }

    #[test]
    fn names_fall_back_to_question_mark() {
        let ir = l2_ir();
        assert_eq!(endpoint_name(&ir, Endpoint::Input(0)), "frame");
        assert_eq!(endpoint_name(&ir, Endpoint::State(0)), "_prev_gray");
        assert_eq!(node_name(&ir, 3), "saliency");
        assert_eq!(node_name(&ir, 42), "?");
        assert_eq!(endpoint_name(&ir, Endpoint::State(7)), "?");
        assert_eq!(key_name(&ir, 1), "ws");
        assert_eq!(key_name(&ir, 9), "?");
        assert_eq!(node_key_name(&ir, ir.node(0)), None);
        assert_eq!(node_key_name(&ir, ir.node(4)), Some("wm"));
    }

    #[test]
    fn why_removed_and_ms() {
        let ir = l2_ir();
        let plan = plan_for_mode(&ir, ir.mode_index("POWER_SAVE").unwrap());
        assert_eq!(why_removed(&ir, &plan, 3), "its weight `ws` is 0");
        // Node 0 runs, so the plan has no reason for it.
        assert_eq!(why_removed(&ir, &plan, 0), "not in this plan");
        assert_eq!(
            reason_text(&ir, Reason::ZeroWeight { key: 99 }),
            "its weight `?` is 0"
        );
        assert_eq!(fmt_ms(None), "-");
        assert_eq!(fmt_ms(Some(1.2371)), "1.24");
        assert_eq!(fmt_ms(Some(12.3)), "12.30");
    }
}
