//! The validated graph IR: what a `cortex_graph!` pipeline is, as data.
//!
//! The macro builds it at compile time (owned) and emits it as `'static`
//! `const` data (borrowed); tools read it at run time. `Cow` lets one type
//! serve both.

use crate::model::access::StripShape;
use std::borrow::Cow;

/// A string that is `&'static` in generated consts and owned when built.
pub type Str = Cow<'static, str>;
/// A list that is `&'static` in generated consts and owned when built.
pub type List<T> = Cow<'static, [T]>;

/// Index of a node in [`GraphIr::nodes`].
pub type NodeId = u32;
/// Index of a state in [`GraphIr::states`].
pub type StateId = u32;
/// Index of an input in [`GraphIr::inputs`].
pub type InputId = u32;
/// Index of a weight key in [`GraphIr::weight_keys`].
pub type KeyId = u32;

/// A pipeline graph, resolved and validated.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphIr {
    /// The pipeline's name (the generated struct's name).
    pub name: Str,
    /// Per-frame inputs, passed by reference to `run`.
    pub inputs: List<InputIr>,
    /// Temporal state: last frame's value of some node.
    pub states: List<StateIr>,
    /// Nodes in declaration order.
    pub nodes: List<NodeIr>,
    /// All edges (derived from node arguments and state writes).
    pub edges: List<Edge>,
    /// Weight keys used by `#[weight_key]` nodes, in first-use order; bit `i`
    /// of a zero pattern refers to `weight_keys[i]`.
    pub weight_keys: List<Str>,
    /// Named modes with their weight tables.
    pub modes: List<ModeIr>,
    /// The pipeline's outputs.
    pub outputs: List<OutputIr>,
    /// Nodes in a topological order of the within-frame data edges
    /// (declaration order breaks ties).
    pub topo: List<NodeId>,
}

/// A per-frame input.
#[derive(Debug, Clone, PartialEq)]
pub struct InputIr {
    /// Its name.
    pub name: Str,
    /// Its Rust type, as written.
    pub ty: Str,
}

/// A temporal state slot.
#[derive(Debug, Clone, PartialEq)]
pub struct StateIr {
    /// Its name, e.g. `_prev_gray`.
    pub name: Str,
    /// Its Rust type, as written.
    pub ty: Str,
    /// The initial-value expression, as written.
    pub init: Str,
    /// The node whose output is stored into it after each successful frame.
    pub writer: NodeId,
}

/// How a node is executed: the partition into compilable islands and
/// external calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// Pure Rust, a candidate for fusion.
    Compilable,
    /// A call into an opaque implementation (e.g. OpenCV).
    ExternalCall,
}

impl NodeKind {
    /// The tag the visualizer prints: `[compilable]` or `[external_call]`.
    pub const fn tag(self) -> &'static str {
        match self {
            NodeKind::Compilable => "[compilable]",
            NodeKind::ExternalCall => "[external_call]",
        }
    }
}

/// A node: a call to a Rust function.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeIr {
    /// Its name (the value it produces).
    pub name: Str,
    /// The called function's path, as written.
    pub op: Str,
    /// Compilable or external call.
    pub kind: NodeKind,
    /// The strip form a compilable node declares, if any: the fusion pass
    /// may run it strip by strip inside a fused group.
    pub strip: Option<StripShape>,
    /// The weight key scaling its contribution, if any.
    pub weight_key: Option<KeyId>,
    /// Its arguments, in call order.
    pub args: List<Arg>,
    /// Whether the call returns a `Result` (written with `?` in the DSL).
    pub fallible: bool,
    /// The declared type of its value, as written (`node name: Type = …`).
    pub ty: Option<Str>,
    /// The declaration's source text.
    pub source: Str,
}

impl NodeIr {
    /// Whether the call fills a buffer the pipeline owns ([`Arg::Buffer`])
    /// rather than returning a new value.
    pub fn fills_buffer(&self) -> bool {
        self.args.iter().any(|a| matches!(a, Arg::Buffer))
    }

    /// Whether this node is `#[compilable]`.
    pub const fn is_compilable(&self) -> bool {
        matches!(self.kind, NodeKind::Compilable)
    }
}

/// A node argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A value from the graph (an edge).
    Value(Endpoint),
    /// The weight table of the running mode (`weights`), as `&Weights`.
    Weights,
    /// The node's own buffer (`&mut name`), as `&mut Type`: the call fills
    /// it in place, and the node's value is the buffer.
    Buffer,
    /// A constant Rust expression passed as written.
    Const(Str),
}

/// Where a value comes from or goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Endpoint {
    /// A per-frame input.
    Input(InputId),
    /// A temporal state slot.
    State(StateId),
    /// A node's output.
    Node(NodeId),
}

/// The kind of an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// A required value: the consumer cannot run without it (`&T`).
    Data,
    /// From a `#[weight_key]` node: arrives as `Option<&T>`, `None` when the
    /// producer is eliminated, so the consumer keeps running.
    Weighted,
    /// A state write: the producer's value becomes the state's value for the
    /// next frame.
    State,
}

/// An edge of the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Edge {
    /// The producer.
    pub from: Endpoint,
    /// The consumer: a node (data/weighted) or a state (state write).
    pub to: Endpoint,
    /// The argument position at a node consumer (0 for state writes).
    pub arg: u32,
    /// Data, weighted or state.
    pub kind: EdgeKind,
}

/// A named mode and its weights.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeIr {
    /// Its name as declared, e.g. `POWER_SAVE`.
    pub name: Str,
    /// The value of each weight key, indexed like [`GraphIr::weight_keys`].
    pub weights: List<f64>,
    /// The nodes this mode runs at a lower rate, in declaration order.
    pub rates: List<RateIr>,
}

/// `node every k or trigger` in a mode: the node runs on every `k`-th frame
/// (and on a frame whose trigger is true); in between, its consumers read
/// the value of the last frame it ran on.
#[derive(Debug, Clone, PartialEq)]
pub struct RateIr {
    /// The rated node.
    pub node: NodeId,
    /// It runs when its held value is this many frames old (≥ 1).
    pub every: u32,
    /// A graph value that makes it run at once when true.
    pub trigger: Option<TriggerIr>,
}

/// A rate's trigger: a `bool` graph value, or a `bool` field of one
/// (`scene.is_cut`).
#[derive(Debug, Clone, PartialEq)]
pub struct TriggerIr {
    /// The value read.
    pub source: Endpoint,
    /// The field path into it (empty: the value itself is the `bool`).
    pub fields: List<Str>,
}

/// A pipeline output.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputIr {
    /// The node it returns.
    pub node: NodeId,
    /// Its Rust type, as written.
    pub ty: Str,
    /// Whether a plan may eliminate it (then it is an `Option`).
    pub optional: bool,
}

impl GraphIr {
    /// An empty graph named `name`: what the macro emits beside the errors
    /// of an invalid pipeline, so the rest of the crate still type-checks.
    pub const fn empty(name: &'static str) -> GraphIr {
        GraphIr {
            name: Cow::Borrowed(name),
            inputs: Cow::Borrowed(&[]),
            states: Cow::Borrowed(&[]),
            nodes: Cow::Borrowed(&[]),
            edges: Cow::Borrowed(&[]),
            weight_keys: Cow::Borrowed(&[]),
            modes: Cow::Borrowed(&[]),
            outputs: Cow::Borrowed(&[]),
            topo: Cow::Borrowed(&[]),
        }
    }

    /// A 64-bit fingerprint of the graph's structure (names, types, node
    /// calls, edges, keys, outputs): every plan records the fingerprint of
    /// the graph it was computed for, so a plan handed to another pipeline
    /// is refused before it touches any state. FNV-1a, stable across builds
    /// and platforms, so the macro's value equals the run-time one.
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fnv::default();
        h.str(&self.name);
        for i in self.inputs.iter() {
            h.str(&i.name).str(&i.ty);
        }
        for s in self.states.iter() {
            h.str(&s.name).str(&s.ty).u64(u64::from(s.writer));
        }
        for n in self.nodes.iter() {
            h.str(&n.name)
                .str(&n.op)
                .u64(n.weight_key.map_or(u64::MAX, u64::from));
            h.u64(u64::from(n.fallible)).u64(n.args.len() as u64);
            h.str(n.ty.as_deref().unwrap_or(""));
            for a in n.args.iter() {
                h.u64(match a {
                    Arg::Value(_) => 0,
                    Arg::Weights => 1,
                    Arg::Const(_) => 2,
                    Arg::Buffer => 3,
                });
            }
        }
        for e in self.edges.iter() {
            h.endpoint(e.from).endpoint(e.to).u64(u64::from(e.arg));
            h.u64(e.kind as u64);
        }
        for k in self.weight_keys.iter() {
            h.str(k);
        }
        for o in self.outputs.iter() {
            h.u64(u64::from(o.node))
                .str(&o.ty)
                .u64(u64::from(o.optional));
        }
        h.0
    }

    /// Per node, the edges into it, in `edges` order: built once, so a pass
    /// over every node reads each edge once instead of scanning all edges
    /// per node (quadratic on the graphs files can declare).
    pub fn edges_into(&self) -> Vec<Vec<&Edge>> {
        let mut into = vec![Vec::new(); self.nodes.len()];
        for e in self.edges.iter() {
            if let Endpoint::Node(c) = e.to {
                if let Some(list) = into.get_mut(c as usize) {
                    list.push(e);
                }
            }
        }
        into
    }

    /// Every node `id` reads within a frame, directly or through other
    /// nodes (state reads, which are last frame's values, not included).
    pub fn upstream(&self, id: NodeId) -> Vec<NodeId> {
        let mut seen = Vec::new();
        let mut stack = vec![id];
        while let Some(n) = stack.pop() {
            for arg in self
                .nodes
                .get(n as usize)
                .into_iter()
                .flat_map(|x| x.args.iter())
            {
                if let Arg::Value(Endpoint::Node(p)) = arg {
                    if !seen.contains(p) {
                        seen.push(*p);
                        stack.push(*p);
                    }
                }
            }
        }
        seen
    }

    /// The node with this name.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as NodeId)
    }

    /// The node `id`.
    ///
    /// # Panics
    /// If `id` is out of range (ids come from this IR).
    pub fn node(&self, id: NodeId) -> &NodeIr {
        &self.nodes[id as usize]
    }

    /// The name of an endpoint.
    pub fn endpoint_name(&self, e: Endpoint) -> &str {
        match e {
            Endpoint::Input(i) => &self.inputs[i as usize].name,
            Endpoint::State(s) => &self.states[s as usize].name,
            Endpoint::Node(n) => &self.nodes[n as usize].name,
        }
    }

    /// The mode with this name.
    pub fn mode_index(&self, name: &str) -> Option<usize> {
        self.modes.iter().position(|m| m.name == name)
    }

    /// The zero pattern of a weight vector indexed like `weight_keys`: bit
    /// `i` is set when weight `i` is zero.
    pub fn zero_pattern(weights: &[f64]) -> u64 {
        weights
            .iter()
            .enumerate()
            .filter(|(_, w)| **w == 0.0)
            .fold(0, |mask, (i, _)| mask | (1u64 << i))
    }

    /// The kind of the edges leaving node `producer` towards nodes.
    pub fn out_edge_kind(&self, producer: Endpoint) -> EdgeKind {
        match producer {
            Endpoint::Node(n) if self.node(n).weight_key.is_some() => EdgeKind::Weighted,
            _ => EdgeKind::Data,
        }
    }
}

/// FNV-1a over the pieces of a graph, each length-prefixed so that
/// `("ab", "c")` and `("a", "bc")` differ.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        self
    }

    fn u64(&mut self, v: u64) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }

    fn str(&mut self, s: &str) -> &mut Self {
        self.u64(s.len() as u64).bytes(s.as_bytes())
    }

    fn endpoint(&mut self, e: Endpoint) -> &mut Self {
        match e {
            Endpoint::Input(i) => self.u64(1).u64(u64::from(i)),
            Endpoint::State(i) => self.u64(2).u64(u64::from(i)),
            Endpoint::Node(i) => self.u64(3).u64(u64::from(i)),
        }
    }
}

/// The order in which tools and reports list nodes: `ir.topo`, skipping ids that are out
/// of range or repeated, then any node `topo` missed, in declaration order —
/// so every node appears exactly once even in a malformed IR.
pub fn display_order(ir: &GraphIr) -> Vec<NodeId> {
    let n = ir.nodes.len();
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for &id in ir.topo.iter() {
        if let Some(s) = seen.get_mut(id as usize) {
            if !*s {
                *s = true;
                order.push(id);
            }
        }
    }
    order.extend((0..n).filter(|&i| !seen[i]).map(|i| i as NodeId));
    order
}
