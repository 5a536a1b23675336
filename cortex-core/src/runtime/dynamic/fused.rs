//! Fused strip groups of a run-time graph: each [`Step::Group`] built
//! from its members' registered strip forms ([`Ops::strip`]) and run by the
//! strip executor, as generated code runs it — the same inputs, the same
//! member arguments, the same leaving values — and, when fusion is off or
//! the group declines a frame, its members' own calls one after the other.
//! A member that may decline alone and did gets its own call after the
//! group, from the values the group published.
//!
//! [`Step::Group`]: crate::lower::Step::Group
//! [`Ops::strip`]: super::Ops::strip

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::lower::Frame;
use crate::model::access::StripShape;
use crate::model::ir::{Arg, Endpoint, NodeId};
use crate::model::weights::Weights;
use crate::passes::fusion::{Group, ValueRole};
use crate::runtime::error::PipelineError;
use crate::runtime::generated::FusionSlot;
use crate::runtime::observe::Observer;
use crate::runtime::strip::form::try_run;
use crate::runtime::strip::{
    AnyPlane, FormShape, FusedGroup, GroupBuilder, StripError, StripForm, Value as GroupValue,
};

use super::engine::{Shared, Values};
use super::ops::Value;

/// Reads a value of one registered type as a plane.
pub(crate) type PlaneFn =
    for<'a> fn(&'a (dyn Any + Send + Sync)) -> Option<Result<AnyPlane<'a>, StripError>>;

/// A strip form with its node's value type erased.
pub(crate) trait DynForm: Send + Sync {
    /// The shape it declares.
    fn shape(&self) -> StripShape;
    /// [`StripForm::add`].
    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<GroupValue>],
        weights: &Weights,
    ) -> Result<GroupValue, StripError>;
    /// [`StripForm::store`] into the node's value slot, reusing the value
    /// there when nothing else holds it.
    fn store(
        &self,
        group: &mut FusedGroup,
        k: usize,
        out: &mut Option<Value>,
    ) -> Result<(), StripError>;
}

/// A registered form.
pub(crate) type FormFn = dyn DynForm;

/// A [`StripForm`] behind [`DynForm`].
pub(crate) struct Form<F>(pub(crate) F);

impl<F> DynForm for Form<F>
where
    F: StripForm,
    F::Value: Any + Send + Sync + Default,
{
    fn shape(&self) -> StripShape {
        <F::Shape as FormShape>::SHAPE
    }

    fn add(
        &self,
        group: &mut GroupBuilder,
        inputs: &[Option<GroupValue>],
        weights: &Weights,
    ) -> Result<GroupValue, StripError> {
        self.0.add(group, inputs, weights)
    }

    fn store(
        &self,
        group: &mut FusedGroup,
        k: usize,
        out: &mut Option<Value>,
    ) -> Result<(), StripError> {
        let reusable = out
            .as_mut()
            .and_then(Arc::get_mut)
            .is_some_and(|v| v.is::<F::Value>());
        if !reusable {
            *out = Some(Arc::new(F::Value::default()));
        }
        let into = out
            .as_mut()
            .and_then(Arc::get_mut)
            .and_then(|v| v.downcast_mut::<F::Value>())
            .ok_or_else(|| StripError::Group("the node's value is shared".into()))?;
        self.0.store(group, k, into)
    }
}

/// A leaving member: its node, its output index, and whether it may
/// decline a frame alone.
#[derive(Clone, Copy)]
struct Leaving {
    node: NodeId,
    k: usize,
    alone: bool,
}

/// One group of one frame, as it runs: its members (kept for the
/// observer), the values it reads from outside, its leaving members and
/// the built group.
struct Site {
    members: &'static [NodeId],
    /// The live outside values it was built for (a weighted producer the
    /// plan does not run is read as `None`).
    inputs: Vec<Endpoint>,
    leaving: Vec<Leaving>,
    slot: FusionSlot,
}

/// The fused groups of one pipeline (or one pipelined first stage's
/// buffers), by frame and group, built on first use.
#[derive(Default)]
pub(super) struct Groups {
    sites: HashMap<(usize, usize), Site>,
}

/// The frame's context of a group step.
pub(super) struct GroupStep<'a> {
    pub(super) sh: &'a Shared,
    pub(super) frame: &'a Frame,
    pub(super) group: usize,
    pub(super) weights: &'a Weights,
    pub(super) inputs: &'a [Value],
    /// Whether member `id` runs in the frame's plan or phase.
    pub(super) live: &'a dyn Fn(NodeId) -> bool,
    /// Whether node `id`'s value exists this frame (computed or held): it
    /// is in the frame's plan. A weighted producer outside it is read as
    /// `None`.
    pub(super) planned: &'a dyn Fn(NodeId) -> bool,
    /// Whether fusion is on.
    pub(super) on: bool,
    /// The frame is the full graph's, for a plan chosen at run time: a
    /// group runs only when the plan runs it whole
    /// ([`Group::whole_needs`]), as generated code's plan-driven functions
    /// run it.
    pub(super) run_time: bool,
}

impl Groups {
    /// Runs one group step: fused when fusion is on, every member runs in
    /// this plan and the group takes the frame; else (and for a member
    /// that declined alone) the members' own calls. The observer sees the
    /// group begin and end, and each own call.
    pub(super) fn run(
        &mut self,
        step: &GroupStep<'_>,
        vals: &mut Values<'_>,
        obs: &mut dyn Observer,
    ) -> Result<(), PipelineError> {
        let Some(g) = step.frame.fusion.groups.get(step.group) else {
            return Ok(());
        };
        if !g.nodes.iter().any(|&n| (step.live)(n)) {
            return Ok(());
        }
        let whole = &step.sh.program.run_time.whole;
        let runs_whole = || {
            whole
                .get(step.group)
                .is_some_and(|needs| needs.iter().all(|&n| (step.live)(n)))
        };
        if step.run_time && !runs_whole() {
            for &node in &g.nodes {
                if (step.live)(node) {
                    call(step, vals, node, obs)?;
                }
            }
            return Ok(());
        }
        let key = (step.frame as *const Frame as usize, step.group);
        let site = self.sites.entry(key).or_insert_with(|| Site::new(step, g));
        if !same_inputs(step, g, &site.inputs) {
            *site = Site::new(step, g);
        }
        let Site {
            members,
            inputs,
            leaving,
            slot,
        } = site;
        obs.group_begin(members);
        let all_live = g.nodes.iter().all(|&n| (step.live)(n));
        let mut have: SmallVec<[bool; 8]> = SmallVec::new();
        let mut fused = false;
        let built = if all_live {
            build(slot, inputs, step, g)
        } else {
            None
        };
        if let Some(group) = built {
            let ran = {
                let mut planes: SmallVec<[AnyPlane<'_>; 8]> = SmallVec::new();
                for e in inputs.iter() {
                    match vals
                        .get(*e, step.inputs)
                        .and_then(|v| step.sh.table.as_plane(v))
                    {
                        Some(p) => planes.push(p),
                        None => break,
                    }
                }
                planes.len() == inputs.len() && try_run(Some(&mut *group), &planes)
            };
            if ran {
                fused = true;
                for l in leaving.iter() {
                    let form = step.sh.forms[l.node as usize].as_ref();
                    let stored = group.published(l.k)
                        && form.is_some_and(|f| {
                            f.store(group, l.k, &mut vals.values[l.node as usize])
                                .is_ok()
                        });
                    have.push(stored);
                    fused &= stored || l.alone;
                }
            }
        }
        obs.group_end(fused);
        if fused {
            for (l, &stored) in leaving.iter().zip(&have) {
                vals.ran[l.node as usize] = stored;
                if !stored {
                    call(step, vals, l.node, obs)?;
                }
            }
            return Ok(());
        }
        for &node in &g.nodes {
            if (step.live)(node) {
                call(step, vals, node, obs)?;
            }
        }
        Ok(())
    }
}

impl Site {
    fn new(step: &GroupStep<'_>, g: &Group) -> Site {
        let detachable = g.detachable(&step.sh.ir);
        let mut leaving = Vec::new();
        for ((&node, role), &alone) in g.nodes.iter().zip(&g.values).zip(&detachable) {
            if matches!(role, ValueRole::Leaving { .. }) {
                leaving.push(Leaving {
                    node,
                    k: leaving.len(),
                    alone,
                });
            }
        }
        Site {
            members: super::intern_ids(&g.nodes),
            inputs: g.inputs(&step.sh.ir, step.planned),
            leaving,
            slot: FusionSlot::default(),
        }
    }
}

/// The group of `slot`, reading `inputs` from outside, built on first use,
/// when fusion is on and every member has a form of the shape its node
/// declares.
fn build<'s>(
    slot: &'s mut FusionSlot,
    inputs: &[Endpoint],
    step: &GroupStep<'_>,
    g: &Group,
) -> Option<&'s mut FusedGroup> {
    let sh = step.sh;
    {
        slot.get(step.on, step.weights, |b| {
            let outside: SmallVec<[GroupValue; 8]> = inputs.iter().map(|_| b.input()).collect();
            let mut handles: SmallVec<[(NodeId, GroupValue); 16]> = SmallVec::new();
            for &m in &g.nodes {
                let node = &sh.ir.nodes[m as usize];
                let form = sh.forms[m as usize]
                    .as_ref()
                    .filter(|f| Some(f.shape()) == node.strip)
                    .ok_or_else(|| {
                        StripError::Group(format!("op `{}` has no strip form", node.op))
                    })?;
                let mut args: SmallVec<[Option<GroupValue>; 8]> = SmallVec::new();
                for arg in node.args.iter() {
                    let Arg::Value(e) = arg else { continue };
                    args.push(match e {
                        Endpoint::Node(p) if g.contains(*p) => {
                            handles.iter().find(|(n, _)| n == p).map(|(_, h)| *h)
                        }
                        Endpoint::Node(p) if !(step.planned)(*p) => None,
                        e => inputs.iter().position(|x| x == e).map(|i| outside[i]),
                    });
                }
                let h = form.add(b, &args, step.weights)?;
                handles.push((m, h));
            }
            for (&m, role) in g.nodes.iter().zip(&g.values) {
                if matches!(role, ValueRole::Leaving { .. }) {
                    if let Some((_, h)) = handles.iter().find(|(n, _)| *n == m) {
                        b.output(*h)?;
                    }
                }
            }
            Ok(())
        })
    }
}

/// Whether `known` is [`Group::inputs`]'s answer, without allocating (a
/// frame of another plan may read other values).
fn same_inputs(step: &GroupStep<'_>, g: &Group, known: &[Endpoint]) -> bool {
    let (mut n, mut same) = (0, true);
    g.each_input(&step.sh.ir, step.planned, |e| {
        if known[..n].contains(&e) {
            return true;
        }
        same = known.get(n) == Some(&e);
        n += 1;
        same
    });
    same && n == known.len()
}

/// Node `id`'s own call, its value arguments read from `vals`.
fn call(
    step: &GroupStep<'_>,
    vals: &mut Values<'_>,
    id: NodeId,
    obs: &mut dyn Observer,
) -> Result<(), PipelineError> {
    super::engine::call(step.sh, step.weights, step.inputs, vals, id, obs)
}
