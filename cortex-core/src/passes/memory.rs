//! Memory planning: which buffers a plan's buffer-filling nodes
//! (`node v: T = f(…, &mut v)`) write, shared by liveness.
//!
//! Each filled value lives from the step that writes it to the last step
//! that reads it — or to the end of the frame when it is an output, the
//! next value of a state, or a rated node's value to keep. Values of the same declared type whose lifetimes
//! do not overlap share one buffer: interval colouring, greedy by start,
//! which is optimal for intervals (as many buffers of a type as values of
//! that type alive at once). A step is a position in the plan's order for
//! sequential runs, or a wave of [`waves`] for parallel runs, where every
//! node of a wave runs at once and so needs its own buffer.
//!
//! The macro assigns buffers at compile time with this pass, and the tools
//! report the same assignment.
//!
//! "The same declared type" is decided on the type as written, since a
//! macro cannot resolve paths: two declarations are the same type when they
//! are spelled alike up to spacing and a `self::` prefix ([`same_type`]), so
//! `Vec<u8>`, `Vec < u8 >` and `self::Vec<u8>`… share, while `ScoreMap` and
//! `ops::ScoreMap` get a buffer each even when they name one type (they
//! could name two, and one buffer for two types would not compile). Write a
//! type alike in every node whose buffer it should share.

use crate::model::ir::{Endpoint, GraphIr, NodeId};
use crate::model::plan::Plan;
use crate::passes::schedule::waves;

/// One buffer the pipeline owns, and the values that take turns in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    /// The declared type of its values, as the first node of the graph
    /// declaring it ([`same_type`]) writes it (so every plan names a type
    /// alike).
    pub ty: String,
    /// Its index among this plan's buffers of the same type (the pipeline
    /// keeps, per type, as many buffers as its hungriest plan needs).
    pub index_in_type: u32,
    /// The values written into it, in the order they are written.
    pub values: Vec<NodeId>,
}

/// The buffers of one plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BufferPlan {
    /// The buffers, in order of first use.
    pub buffers: Vec<Buffer>,
    /// Per node: the index in [`buffers`](Self::buffers) of the buffer it
    /// fills, `None` for a node returning its value (or not running).
    pub of_node: Vec<Option<u32>>,
}

impl BufferPlan {
    /// The buffers of `plan` run sequentially, in its order.
    pub fn sequential(ir: &GraphIr, plan: &Plan) -> BufferPlan {
        let mut step = vec![usize::MAX; ir.nodes.len()];
        for (i, &id) in plan.order.iter().enumerate() {
            step[id as usize] = i;
        }
        colour(ir, plan, &step)
    }

    /// The buffers of `plan` run wave by wave ([`waves`]), every node of a
    /// wave at once.
    pub fn parallel(ir: &GraphIr, plan: &Plan) -> BufferPlan {
        let mut step = vec![usize::MAX; ir.nodes.len()];
        for (w, wave) in waves(ir, plan).iter().enumerate() {
            for &id in wave {
                step[id as usize] = w;
            }
        }
        colour(ir, plan, &step)
    }

    /// The buffers when node `id` runs at step `steps[id]` (nodes of one
    /// step run at once: a fused group's members share its step, the
    /// nodes of a wave share the wave's).
    pub fn from_steps(ir: &GraphIr, plan: &Plan, steps: &[usize]) -> BufferPlan {
        let mut step = vec![usize::MAX; ir.nodes.len()];
        for (s, &t) in step.iter_mut().zip(steps) {
            *s = t;
        }
        colour(ir, plan, &step)
    }

    /// How many buffers of type `ty` ([`same_type`]) this plan uses.
    pub fn count_of(&self, ty: &str) -> usize {
        let key = type_key(ty);
        self.buffers
            .iter()
            .filter(|b| type_key(&b.ty) == key)
            .count()
    }

    /// The buffer node `id` fills, if any.
    pub fn buffer_of(&self, id: NodeId) -> Option<&Buffer> {
        let b = (*self.of_node.get(id as usize)?)?;
        self.buffers.get(b as usize)
    }
}

/// Greedy interval colouring of the filled values of `plan`, with each live
/// node at `step[node]`.
fn colour(ir: &GraphIr, plan: &Plan, step: &[usize]) -> BufferPlan {
    // Values read after the last step: outputs and the next states.
    let mut to_end = vec![false; ir.nodes.len()];
    for o in ir.outputs.iter() {
        to_end[o.node as usize] = true;
    }
    for (s, st) in ir.states.iter().enumerate() {
        if plan.writes_state(s as u32) {
            to_end[st.writer as usize] = true;
        }
    }
    // A rated node's value is kept after the frame (in every mode, so a
    // value's buffer never depends on which mode rates it).
    for rate in ir.modes.iter().flat_map(|m| m.rates.iter()) {
        if let Some(t) = to_end.get_mut(rate.node as usize) {
            *t = true;
        }
    }
    let mut last_read = step.to_vec();
    for e in ir.edges.iter() {
        if let (Endpoint::Node(p), Endpoint::Node(c)) = (e.from, e.to) {
            if plan.is_live(p) && plan.is_live(c) {
                let l = &mut last_read[p as usize];
                *l = (*l).max(step[c as usize]);
            }
        }
    }

    let mut filled: Vec<NodeId> = plan
        .order
        .iter()
        .copied()
        .filter(|&id| ir.nodes[id as usize].fills_buffer() && ir.nodes[id as usize].ty.is_some())
        .collect();
    filled.sort_by_key(|&id| (step[id as usize], id));

    let mut out = BufferPlan {
        buffers: Vec::new(),
        of_node: vec![None; ir.nodes.len()],
    };
    // Per buffer: the step after which it is free (`usize::MAX`: never).
    let mut free_after: Vec<usize> = Vec::new();
    for id in filled {
        let key = type_key(ir.nodes[id as usize].ty.as_deref().unwrap_or_default());
        // The type as its first declaration in the graph writes it.
        let ty = ir
            .nodes
            .iter()
            .filter(|n| n.fills_buffer())
            .filter_map(|n| n.ty.as_deref())
            .find(|t| type_key(t) == key)
            .unwrap_or_default();
        let start = step[id as usize];
        let end = if to_end[id as usize] {
            usize::MAX
        } else {
            last_read[id as usize]
        };
        // A buffer whose last value was read strictly before this value is
        // written: a node never reads and writes the same buffer.
        let reuse = out
            .buffers
            .iter()
            .zip(&free_after)
            .position(|(b, &f)| b.ty == ty && f < start);
        let b = match reuse {
            Some(b) => b,
            None => {
                let index_in_type = out.count_of(ty) as u32;
                out.buffers.push(Buffer {
                    ty: ty.to_string(),
                    index_in_type,
                    values: Vec::new(),
                });
                free_after.push(0);
                out.buffers.len() - 1
            }
        };
        out.buffers[b].values.push(id);
        free_after[b] = end;
        out.of_node[id as usize] = Some(b as u32);
    }
    out
}

/// Whether two declared buffer types are the same type for sharing: alike
/// once spacing is normalised and `self::` prefixes are dropped (see the
/// module docs for why paths are not compared further).
pub fn same_type(a: &str, b: &str) -> bool {
    type_key(a) == type_key(b)
}

/// `ty` with spacing normalised (one space between two word characters, as
/// in `dyn Trait` or `&'a T`, none elsewhere) and every `self::` at the
/// start of a path dropped.
fn type_key(ty: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut spaced = String::with_capacity(ty.len());
    let mut gap = false;
    for c in ty.chars() {
        if c.is_whitespace() {
            gap = true;
            continue;
        }
        if gap && word(c) && spaced.chars().next_back().is_some_and(word) {
            spaced.push(' ');
        }
        gap = false;
        spaced.push(c);
    }
    let mut key = String::with_capacity(spaced.len());
    let mut rest = spaced.as_str();
    while let Some(i) = rest.find("self::") {
        // A path's first segment: not the end of a longer word (`myself::`)
        // nor a later segment (`a::self::`, which is no valid path anyway).
        let before = rest[..i].chars().next_back();
        let starts_path = !matches!(before, Some(c) if word(c) || c == ':');
        key.push_str(&rest[..i]);
        if !starts_path {
            key.push_str("self::");
        }
        rest = &rest[i + "self::".len()..];
    }
    key.push_str(rest);
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::spec::ArgSpec;
    use crate::model::spec::GraphSpec;

    /// `a → b → c → d` all filling `Map` buffers, `d` the output: `a` and
    /// `c` can share (a is last read by b), `b` and `d` can share.
    fn chain() -> GraphIr {
        GraphSpec::builder("Chain")
            .input("x", "u8")
            .node("a", "f", [ArgSpec::name("x"), ArgSpec::buffer()])
            .ty("Map")
            .node("b", "f", [ArgSpec::name("a"), ArgSpec::buffer()])
            .ty("Map")
            .node("c", "f", [ArgSpec::name("b"), ArgSpec::buffer()])
            .ty("Map")
            .node("d", "f", [ArgSpec::name("c"), ArgSpec::buffer()])
            .ty("Map")
            .output("d", "Map")
            .check()
            .ir
            .expect("valid")
    }

    #[test]
    fn a_chain_needs_two_buffers() {
        let ir = chain();
        let plan = crate::passes::dce::plan_for_mode(&ir, 0);
        let b = BufferPlan::sequential(&ir, &plan);
        assert_eq!(b.buffers.len(), 2);
        assert_eq!(b.buffers[0].values, vec![0, 2]);
        assert_eq!(b.buffers[1].values, vec![1, 3]);
    }

    #[test]
    fn types_alike_but_for_spacing_and_self_share() {
        for (a, b) in [
            ("ScoreMap", "self::ScoreMap"),
            ("ScoreMap", "self :: ScoreMap"),
            ("Vec<u8>", "Vec < u8 >"),
            ("Vec<self::Map>", "Vec < Map >"),
            ("Box<dyn Fn(u8)>", "Box < dyn Fn ( u8 ) >"),
            ("&'static [f32]", "& 'static [ f32 ]"),
        ] {
            assert!(same_type(a, b), "{a} and {b} should share");
        }
    }

    #[test]
    fn types_spelled_otherwise_do_not_share() {
        for (a, b) in [
            ("ScoreMap", "ops::ScoreMap"),
            ("ops::ScoreMap", "crate::ops::ScoreMap"),
            ("ScoreMap", "super::ScoreMap"),
            ("dyn Foo", "dynFoo"),
            ("myself::Map", "my::Map"),
            ("Vec<u8>", "Vec<u16>"),
        ] {
            assert!(!same_type(a, b), "{a} and {b} should not share");
        }
    }

    /// The chain of [`chain`] with its values' types spelled `Map`,
    /// `self::Map`, `Map`, `ops::Map`: `a` and `c` still share (`self::Map`
    /// is `Map`), `d` (`ops::Map`, which may be another type) gets its own.
    #[test]
    fn buffers_are_shared_by_type_as_written() {
        let ir = GraphSpec::builder("Chain")
            .input("x", "u8")
            .node("a", "f", [ArgSpec::name("x"), ArgSpec::buffer()])
            .ty("self :: Map")
            .node("b", "f", [ArgSpec::name("a"), ArgSpec::buffer()])
            .ty("Map")
            .node("c", "f", [ArgSpec::name("b"), ArgSpec::buffer()])
            .ty("Map")
            .node("d", "f", [ArgSpec::name("c"), ArgSpec::buffer()])
            .ty("ops :: Map")
            .output("d", "ops :: Map")
            .check()
            .ir
            .expect("valid");
        let plan = crate::passes::dce::plan_for_mode(&ir, 0);
        let b = BufferPlan::sequential(&ir, &plan);
        let shape: Vec<(&str, Vec<NodeId>)> = b
            .buffers
            .iter()
            .map(|b| (b.ty.as_str(), b.values.clone()))
            .collect();
        // Every buffer of `Map` is named as the graph first writes it.
        assert_eq!(
            shape,
            vec![
                ("self :: Map", vec![0, 2]),
                ("self :: Map", vec![1]),
                ("ops :: Map", vec![3]),
            ]
        );
        assert_eq!(b.count_of("Map"), 2);
        assert_eq!(b.count_of("ops::Map"), 1);
    }
}
