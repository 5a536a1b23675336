//! Fused groups: each compilable island's nodes that have a strip form,
//! grouped so that each group can run strip by strip as one unit
//! (`FusedGroup` in the runtime), per plan. Pure data: the macro, the
//! runtime and the tools read the same answer.
//!
//! Two running nodes of one island join a group when one reads the other's
//! value (a data or weighted edge), both have a strip form, and the
//! producer is not a reduction (a reduction's result needs every row, so
//! nothing in the same strip can read it). A join is refused when it would
//! make the group non-convex: when a node outside the group lies on a path
//! from one member to another (it would need the first member's whole value
//! before the second could run). A node with a strip form and no partner
//! is a group of one: it still runs in strips over every core.
//!
//! Each member's value is classified: internal when every consumer that
//! runs is in the group and it is neither an output nor a written state
//! (it then lives only in per-strip scratch), leaving otherwise.
//!
//! Nothing here panics on a malformed IR: ids out of range are skipped.

use crate::model::access::StripShape;
use crate::model::ir::{Arg, EdgeKind, Endpoint, GraphIr, NodeId};
use crate::model::plan::{Plan, Reason};
use crate::passes::islands::islands;

/// The fused groups of one plan, and why each other compilable node is not
/// in one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FusionPlan {
    /// The groups, ordered by their first node in topological order.
    pub groups: Vec<Group>,
    /// Every compilable node in no group, with the reason, in topological
    /// order.
    pub unfused: Vec<Unfused>,
}

/// One fused group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The island (index into [`islands`]'s answer for the plan) it is in.
    pub island: usize,
    /// Its nodes, in topological order.
    pub nodes: Vec<NodeId>,
    /// The role of each node's value, in the order of `nodes`.
    pub values: Vec<ValueRole>,
}

impl Group {
    /// Whether node `id` is a member.
    pub fn contains(&self, id: NodeId) -> bool {
        self.nodes.contains(&id)
    }

    /// Calls `f` with each value a member reads from outside the group, in
    /// the order the members read them (repeats included), until `f`
    /// returns `false`: the frame's inputs, states, and the values of the
    /// nodes outside it that `live` says exist this frame. The one
    /// definition of what a group takes in: its strip inputs (generated
    /// and at run time), [`read_nodes`](Self::read_nodes) and
    /// [`whole_needs`](Self::whole_needs) all read it.
    pub fn each_input(
        &self,
        ir: &GraphIr,
        live: impl Fn(NodeId) -> bool,
        mut f: impl FnMut(Endpoint) -> bool,
    ) {
        for &m in &self.nodes {
            let args = ir
                .nodes
                .get(m as usize)
                .into_iter()
                .flat_map(|n| n.args.iter());
            for arg in args {
                if let Arg::Value(e) = arg {
                    let outside = match e {
                        Endpoint::Node(p) => !self.contains(*p) && live(*p),
                        _ => true,
                    };
                    if outside && !f(*e) {
                        return;
                    }
                }
            }
        }
    }

    /// The values its members read from outside it
    /// ([`each_input`](Self::each_input)), each once.
    pub fn inputs(&self, ir: &GraphIr, live: impl Fn(NodeId) -> bool) -> Vec<Endpoint> {
        let mut out = Vec::new();
        self.each_input(ir, live, |e| {
            if !out.contains(&e) {
                out.push(e);
            }
            true
        });
        out
    }

    /// The nodes outside the group whose values its members read, each
    /// once, in the order the members read them.
    pub fn read_nodes(&self, ir: &GraphIr) -> Vec<NodeId> {
        self.inputs(ir, |_| true)
            .into_iter()
            .filter_map(|e| match e {
                Endpoint::Node(p) => Some(p),
                _ => None,
            })
            .collect()
    }

    /// The nodes a frame of a plan chosen at run time must run for the
    /// group to run fused: every member and every node whose value they
    /// read. A frame that leaves one out runs its live members' own calls,
    /// as no group. A declared mode's groups, built for its plan, need no
    /// such check. Lowered once per group
    /// ([`RunTimeProgram::whole`](crate::lower::RunTimeProgram::whole)).
    pub fn whole_needs(&self, ir: &GraphIr) -> Vec<NodeId> {
        let mut out = self.nodes.clone();
        out.extend(self.read_nodes(ir));
        out
    }

    /// Whether a frame of a plan chosen at run time (`live`: the nodes it
    /// runs) runs every node of [`whole_needs`](Self::whole_needs).
    pub fn runs_whole(&self, ir: &GraphIr, live: impl Fn(NodeId) -> bool) -> bool {
        self.whole_needs(ir).into_iter().all(live)
    }

    /// The members whose value stays inside the group.
    pub fn internal(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes
            .iter()
            .zip(&self.values)
            .filter(|(_, v)| matches!(v, ValueRole::Internal))
            .map(|(&n, _)| n)
    }

    /// Per member, in the order of `nodes`: whether it may decline a frame
    /// alone while the rest of the group runs fused
    /// ([`may_decline_alone`](crate::model::access::may_decline_alone)).
    pub fn detachable(&self, ir: &GraphIr) -> Vec<bool> {
        let leaving: Vec<bool> = self
            .values
            .iter()
            .map(|v| matches!(v, ValueRole::Leaving { .. }))
            .collect();
        let reads: Vec<Vec<usize>> = self
            .nodes
            .iter()
            .map(|&m| {
                ir.nodes
                    .get(m as usize)
                    .into_iter()
                    .flat_map(|n| n.args.iter())
                    .filter_map(|a| match a {
                        crate::model::ir::Arg::Value(Endpoint::Node(p)) => {
                            self.nodes.iter().position(|n| n == p)
                        }
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        crate::model::access::may_decline_alone(&leaving, &reads)
    }
}

/// Where a member's value goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueRole {
    /// Read only by members of the group: it lives in per-strip scratch,
    /// never as a whole frame.
    Internal,
    /// Written to a whole-frame buffer.
    Leaving {
        /// It is a pipeline output.
        output: bool,
        /// It is written to a state for the next frame.
        state: bool,
        /// Running nodes outside the group that read it.
        consumers: Vec<NodeId>,
        /// It is a reduction's result (it needs every row).
        reduction: bool,
    },
}

/// A compilable node in no group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unfused {
    /// The node.
    pub node: NodeId,
    /// Why.
    pub why: WhyUnfused,
}

/// Why a compilable node is in no fused group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhyUnfused {
    /// The plan does not run it.
    Eliminated(Reason),
    /// It has no strip form (it needs its whole input at once, e.g. an FFT
    /// or a region growing): it stays a whole-frame call.
    NoStripForm,
}

impl WhyUnfused {
    /// The reason in words, as tools print it.
    pub fn describe(self, ir: &GraphIr) -> String {
        match self {
            WhyUnfused::Eliminated(r) => format!("eliminated: {}", r.describe(ir)),
            WhyUnfused::NoStripForm => "no strip form: it runs as a whole-frame call".into(),
        }
    }
}

/// The fused groups of `plan` over `ir`, from the strip forms its nodes
/// declare (`#[compilable(strip = …)]`, `#[compilable(reduce = …)]`): what
/// the generated code runs and the tools show.
pub fn declared_fusion_plan(ir: &GraphIr, plan: &Plan) -> FusionPlan {
    let forms: Vec<Option<StripShape>> = ir.nodes.iter().map(|n| n.strip).collect();
    fusion_plan(ir, plan, &forms)
}

/// [`declared_fusion_plan`] with no group spanning two stages: nodes join
/// only when `stage[a] == stage[b]` (a pipelined run's state-free first
/// stage and the rest run at different times, on different frames).
pub fn declared_fusion_plan_in_stages(ir: &GraphIr, plan: &Plan, stage: &[bool]) -> FusionPlan {
    let labels: Vec<u8> = stage.iter().map(|&a| u8::from(a)).collect();
    declared_fusion_plan_in_parts(ir, plan, &labels, &[])
}

/// [`declared_fusion_plan`] with nodes joining only within one part
/// (`part[a] == part[b]`), and the nodes marked in `unfused` left out of
/// every group (e.g. a rated mode's work that runs only on some frames).
pub fn declared_fusion_plan_in_parts(
    ir: &GraphIr,
    plan: &Plan,
    part: &[u8],
    unfused: &[bool],
) -> FusionPlan {
    let forms: Vec<Option<StripShape>> = ir
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            n.strip
                .filter(|_| !unfused.get(i).copied().unwrap_or(false))
        })
        .collect();
    fusion_plan_within(ir, plan, &forms, Some(part))
}

/// The fused groups of `plan` over `ir`. `strip_forms[id]` describes node
/// `id`'s strip form (its [`Kind`](crate::model::access::Kind) or just its
/// [`StripShape`]), `None` (or missing) when it has none.
pub fn fusion_plan<S: Into<StripShape> + Copy>(
    ir: &GraphIr,
    plan: &Plan,
    strip_forms: &[Option<S>],
) -> FusionPlan {
    fusion_plan_within(ir, plan, strip_forms, None)
}

/// [`fusion_plan`], joining two nodes only when `stage` (if given) puts
/// them in the same stage.
fn fusion_plan_within<S: Into<StripShape> + Copy>(
    ir: &GraphIr,
    plan: &Plan,
    strip_forms: &[Option<S>],
    stage: Option<&[u8]>,
) -> FusionPlan {
    let n = ir.nodes.len();
    let same_stage =
        |a: NodeId, b: NodeId| stage.is_none_or(|s| s.get(a as usize) == s.get(b as usize));
    let form = |id: NodeId| {
        strip_forms
            .get(id as usize)
            .copied()
            .flatten()
            .map(Into::into)
    };
    let live = |id: NodeId| (id as usize) < n && plan.is_live(id);
    // Within-frame edges between running nodes.
    let mut succ: Vec<Vec<NodeId>> = vec![Vec::new(); n];
    for e in ir.edges.iter() {
        if let (EdgeKind::Data | EdgeKind::Weighted, Endpoint::Node(a), Endpoint::Node(b)) =
            (e.kind, e.from, e.to)
        {
            if live(a) && live(b) && !succ[a as usize].contains(&b) {
                succ[a as usize].push(b);
            }
        }
    }
    let order = crate::model::ir::display_order(ir);
    let mut group_of: Vec<Option<usize>> = vec![None; n];
    let mut groups: Vec<Group> = Vec::new();
    for (island_index, island) in islands(ir, Some(plan)).iter().enumerate() {
        // Each fusable node starts alone; joins merge in topological order
        // of the consumer, keeping every group convex.
        let mut sets: Vec<Vec<NodeId>> = Vec::new();
        let mut set_of: Vec<Option<usize>> = vec![None; n];
        for &id in &island.nodes {
            if form(id).is_some() {
                set_of[id as usize] = Some(sets.len());
                sets.push(vec![id]);
            }
        }
        for &b in &island.nodes {
            for &a in &island.nodes {
                if !succ[a as usize].contains(&b)
                    || form(a) == Some(StripShape::Reduction)
                    || !same_stage(a, b)
                {
                    continue;
                }
                let (Some(sa), Some(sb)) = (set_of[a as usize], set_of[b as usize]) else {
                    continue;
                };
                if sa == sb {
                    continue;
                }
                let mut union: Vec<NodeId> = sets[sa].iter().chain(&sets[sb]).copied().collect();
                union.sort_unstable();
                if convex(&succ, &union) && !reads_own_reduction(&succ, &union, form) {
                    let moved = std::mem::take(&mut sets[sb]);
                    for &m in &moved {
                        set_of[m as usize] = Some(sa);
                    }
                    sets[sa] = union;
                }
            }
        }
        for &id in &island.nodes {
            let Some(s) = set_of[id as usize] else {
                continue;
            };
            if sets[s].is_empty() {
                continue;
            }
            let members = std::mem::take(&mut sets[s]);
            let nodes: Vec<NodeId> = order
                .iter()
                .copied()
                .filter(|m| members.contains(m))
                .collect();
            for &m in &nodes {
                group_of[m as usize] = Some(groups.len());
            }
            groups.push(Group {
                island: island_index,
                nodes,
                values: Vec::new(),
            });
        }
    }
    for g in &mut groups {
        g.values = g
            .nodes
            .iter()
            .map(|&m| role(ir, plan, &succ, &g.nodes, m, form(m)))
            .collect();
    }
    groups.sort_by_key(|g| order.iter().position(|&x| x == g.nodes[0]));
    let unfused = order
        .iter()
        .copied()
        .filter(|&id| {
            ir.nodes
                .get(id as usize)
                .is_some_and(|node| node.is_compilable())
                && group_of[id as usize].is_none()
        })
        .map(|id| Unfused {
            node: id,
            why: match plan.reason(id) {
                Some(r) if !plan.is_live(id) => WhyUnfused::Eliminated(r),
                _ if !plan.is_live(id) => WhyUnfused::Eliminated(Reason::NoLiveConsumer),
                _ => WhyUnfused::NoStripForm,
            },
        })
        .collect();
    FusionPlan { groups, unfused }
}

/// Whether no node outside `set` lies on a path between two of its members.
fn convex(succ: &[Vec<NodeId>], set: &[NodeId]) -> bool {
    // Nodes reachable from the set through at least one outsider...
    let n = succ.len();
    let mut seen = vec![false; n];
    let mut stack: Vec<NodeId> = set
        .iter()
        .flat_map(|&m| succ[m as usize].iter().copied())
        .filter(|x| set.binary_search(x).is_err())
        .collect();
    while let Some(x) = stack.pop() {
        if std::mem::replace(&mut seen[x as usize], true) {
            continue;
        }
        for &y in &succ[x as usize] {
            // ...must not lead back into it.
            if set.binary_search(&y).is_ok() {
                return false;
            }
            stack.push(y);
        }
    }
    true
}

/// Whether a member reads a reduction of the same set.
fn reads_own_reduction(
    succ: &[Vec<NodeId>],
    set: &[NodeId],
    form: impl Fn(NodeId) -> Option<StripShape>,
) -> bool {
    set.iter().any(|&r| {
        form(r) == Some(StripShape::Reduction)
            && succ[r as usize]
                .iter()
                .any(|c| set.binary_search(c).is_ok())
    })
}

/// The role of member `m`'s value in the group `members`.
fn role(
    ir: &GraphIr,
    plan: &Plan,
    succ: &[Vec<NodeId>],
    members: &[NodeId],
    m: NodeId,
    form: Option<StripShape>,
) -> ValueRole {
    let output = ir.outputs.iter().any(|o| o.node == m);
    let state = ir
        .states
        .iter()
        .enumerate()
        .any(|(s, st)| st.writer == m && plan.writes_state(s as u32));
    let consumers: Vec<NodeId> = succ[m as usize]
        .iter()
        .copied()
        .filter(|c| !members.contains(c))
        .collect();
    let reduction = form == Some(StripShape::Reduction);
    if !output && !state && consumers.is_empty() && !reduction {
        ValueRole::Internal
    } else {
        ValueRole::Leaving {
            output,
            state,
            consumers,
            reduction,
        }
    }
}

impl FusionPlan {
    /// The group node `id` is in, if any.
    pub fn group_of(&self, id: NodeId) -> Option<usize> {
        self.groups.iter().position(|g| g.contains(id))
    }
}

/// The units a fused plan runs: each group as one unit, each other running
/// node as its own, in an order that respects every edge between them
/// (groups are convex, so one exists), closest to the plan's order. Each
/// unit lists its nodes in topological order.
pub fn units(ir: &GraphIr, plan: &Plan, fusion: &FusionPlan) -> Vec<Vec<NodeId>> {
    let n = ir.nodes.len();
    let mut unit_of: Vec<Option<usize>> = vec![None; n];
    let mut members: Vec<Vec<NodeId>> = Vec::new();
    for &id in plan.order.iter() {
        if (id as usize) >= n || unit_of[id as usize].is_some() {
            continue;
        }
        let nodes = match fusion.group_of(id) {
            Some(g) => fusion.groups[g].nodes.clone(),
            None => vec![id],
        };
        for &m in &nodes {
            if let Some(u) = unit_of.get_mut(m as usize) {
                *u = Some(members.len());
            }
        }
        members.push(nodes);
    }
    // Edges between units (by the first position each unit takes in the
    // plan's order, so ties keep that order).
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); members.len()];
    for e in ir.edges.iter() {
        if let (EdgeKind::Data | EdgeKind::Weighted, Endpoint::Node(a), Endpoint::Node(b)) =
            (e.kind, e.from, e.to)
        {
            let (Some(Some(ua)), Some(Some(ub))) =
                (unit_of.get(a as usize), unit_of.get(b as usize))
            else {
                continue;
            };
            if ua != ub && !preds[*ub].contains(ua) {
                preds[*ub].push(*ua);
            }
        }
    }
    // Kahn's order taking the first unit in plan order whose readers'
    // producers have all run.
    let mut waiting: Vec<usize> = preds.iter().map(Vec::len).collect();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); members.len()];
    for (u, ps) in preds.iter().enumerate() {
        for &p in ps {
            succs[p].push(u);
        }
    }
    let mut ready: std::collections::BTreeSet<usize> =
        (0..members.len()).filter(|&u| waiting[u] == 0).collect();
    let mut done = vec![false; members.len()];
    let mut out = Vec::with_capacity(members.len());
    while let Some(next) = ready.pop_first() {
        done[next] = true;
        out.push(members[next].clone());
        for &s in &succs[next] {
            waiting[s] -= 1;
            if waiting[s] == 0 {
                ready.insert(s);
            }
        }
    }
    // Unreachable for convex groups; keep every node rather than drop any.
    out.extend(
        (0..members.len())
            .filter(|&u| !done[u])
            .map(|u| members[u].clone()),
    );
    out
}

/// `plan` with its order rearranged so each group's members run together
/// ([`units`], flattened): the order the generated code and its memory
/// plan follow when the plan runs fused.
pub fn fused_plan(ir: &GraphIr, plan: &Plan, fusion: &FusionPlan) -> Plan {
    let order: Vec<NodeId> = units(ir, plan, fusion).into_iter().flatten().collect();
    Plan {
        order: order.into(),
        ..plan.clone()
    }
}

/// The units of a fused plan in waves: a unit's wave is one more than the
/// latest wave of the units it reads, so the units of one wave may run at
/// once. Each wave lists its units' nodes.
pub fn unit_waves(ir: &GraphIr, plan: &Plan, fusion: &FusionPlan) -> Vec<Vec<Vec<NodeId>>> {
    unit_waves_from(ir, plan, fusion, |_| 0)
}

/// [`unit_waves`], each unit in wave `floor(unit)` at the earliest: a
/// rated mode's work only some phases run waits for the phase decision.
pub fn unit_waves_from(
    ir: &GraphIr,
    plan: &Plan,
    fusion: &FusionPlan,
    floor: impl Fn(&[NodeId]) -> usize,
) -> Vec<Vec<Vec<NodeId>>> {
    let units = units(ir, plan, fusion);
    let into = ir.edges_into();
    let n = ir.nodes.len();
    let mut wave_of_node = vec![0usize; n];
    let mut out: Vec<Vec<Vec<NodeId>>> = Vec::new();
    for unit in units {
        let w = unit
            .iter()
            .filter_map(|&b| into.get(b as usize))
            .flatten()
            .filter_map(|e| match (e.kind, e.from) {
                (EdgeKind::Data | EdgeKind::Weighted, Endpoint::Node(a))
                    if !unit.contains(&a) && plan.is_live(a) =>
                {
                    wave_of_node.get(a as usize).map(|w| w + 1)
                }
                _ => None,
            })
            .max()
            .unwrap_or(0)
            .max(floor(&unit));
        for &m in &unit {
            if let Some(x) = wave_of_node.get_mut(m as usize) {
                *x = w;
            }
        }
        if out.len() <= w {
            out.resize_with(w + 1, Vec::new);
        }
        out[w].push(unit);
    }
    out
}
