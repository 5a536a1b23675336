//! Graphviz DOT and Mermaid flowchart exports of a graph IR, optionally
//! overlaid with a plan whose eliminated nodes are greyed out.
//!
//! One driver, [`write_graph`], walks the IR (inputs, states, nodes in
//! topological order, edges in IR order) and hands each element to a
//! [`GraphWrite`] implementation; [`Dot`] and [`Mermaid`] only decide the
//! syntax. (The split follows hydro's `dfir_lang` graph writers: adding a
//! format never touches the walk.)
//!
//! Styling, the same in both formats:
//! - inputs are parallelograms, states cylinders;
//! - `[compilable]` nodes are green rounded boxes, `[external_call]` nodes
//!   blue boxes (double-bordered in DOT, subroutine-shaped in Mermaid); a
//!   weight key is shown in the label;
//! - data edges are solid, weighted edges dashed and labelled with their key,
//!   state writes dotted, labelled `next frame` (and in DOT not used for
//!   ranking, since they point back up the graph);
//! - with a plan, eliminated nodes, unwritten states and the edges touching
//!   them are grey and dashed, and the node label says why;
//! - with islands (see [`crate::passes::islands`]), each island's nodes are
//!   grouped in a dashed green frame: a `cluster_<i>` subgraph in DOT, a
//!   `subgraph island_<i>` block in Mermaid.
//!
//! Every id is derived from the element's kind and index (`n3_saliency`), so
//! it is unique and valid in both formats whatever the names contain; names
//! and types only ever appear inside escaped, quoted labels.

use std::collections::BTreeMap;
use std::fmt;

use crate::model::ir::{
    Edge, EdgeKind, Endpoint, GraphIr, InputId, InputIr, NodeId, NodeIr, NodeKind, StateId, StateIr,
};
use crate::model::plan::Plan;
use crate::passes::fusion::{FusionPlan, Group};
use crate::passes::islands::Island;
use crate::tools::format::{
    display_order, endpoint_name, node_key_name, rate_of, rate_text, why_removed,
};

/// Whether a node or state takes part in the plan being drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// No plan was given: draw the full graph.
    Unplanned,
    /// The plan runs the node (or writes the state).
    Runs,
    /// The plan leaves it out, for this reason (in words).
    Eliminated(String),
}

impl Status {
    /// Whether the plan leaves it out.
    pub fn is_eliminated(&self) -> bool {
        matches!(self, Status::Eliminated(_))
    }
}

/// A node as the driver presents it to a writer.
#[derive(Debug, Clone)]
pub struct NodeView<'a> {
    /// Its id in the IR.
    pub id: NodeId,
    /// The node.
    pub node: &'a NodeIr,
    /// The name of its weight key, if it has one.
    pub weight_key: Option<&'a str>,
    /// Its part in the plan.
    pub status: Status,
    /// The rate the plan's mode runs it at (`every 4 or scene.changed`).
    pub rate: Option<String>,
    /// What the program says about it (e.g. a model node's backend and
    /// input shape), from [`Overlay::notes`].
    pub note: Option<&'a str>,
}

/// An edge as the driver presents it to a writer.
#[derive(Debug, Clone)]
pub struct EdgeView<'a> {
    /// Its position in `ir.edges`.
    pub index: usize,
    /// The edge.
    pub edge: &'a Edge,
    /// For a weighted edge, the producer's weight key.
    pub weight_key: Option<&'a str>,
    /// With a plan: whether both ends take part in it.
    pub live: Option<bool>,
}

/// A textual graph format. [`write_overlaid`] calls `write_prologue` first,
/// then every input, state, node and edge, then every island of the overlay,
/// then `write_epilogue`.
pub trait GraphWrite {
    /// Begins the graph.
    fn write_prologue(&mut self, ir: &GraphIr) -> fmt::Result;
    /// Declares input `id`.
    fn write_input(&mut self, ir: &GraphIr, id: InputId, input: &InputIr) -> fmt::Result;
    /// Declares state `id`; with a plan, `Eliminated` means it is not written.
    fn write_state(
        &mut self,
        ir: &GraphIr,
        id: StateId,
        state: &StateIr,
        status: &Status,
    ) -> fmt::Result;
    /// Declares a node.
    fn write_node(&mut self, ir: &GraphIr, node: &NodeView<'_>) -> fmt::Result;
    /// Draws an edge.
    fn write_edge(&mut self, ir: &GraphIr, edge: &EdgeView<'_>) -> fmt::Result;
    /// Groups the nodes of island number `index` (already declared), with
    /// the fused groups inside it (each with its index in the plan's
    /// [`FusionPlan`]). The default draws nothing, for formats without
    /// grouping.
    fn write_island(
        &mut self,
        ir: &GraphIr,
        index: usize,
        island: &Island,
        groups: &[(usize, &Group)],
    ) -> fmt::Result {
        let _ = (ir, index, island, groups);
        Ok(())
    }
    /// Ends the graph.
    fn write_epilogue(&mut self, ir: &GraphIr) -> fmt::Result;
}

/// What to draw over a graph besides its structure.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overlay<'a> {
    /// Grey out what this plan eliminates.
    pub plan: Option<&'a Plan>,
    /// Frame each island's nodes, e.g.
    /// `islands(ir, plan)` ([`crate::passes::islands::islands`]).
    pub islands: Option<&'a [Island]>,
    /// Frame each fused group inside its island (computed for the same plan
    /// as `islands`, e.g. [`crate::passes::fusion::declared_fusion_plan`]).
    pub fusion: Option<&'a FusionPlan>,
    /// A line of the program's under a node's name, by node id (e.g. which
    /// backend runs a model node, at which input shape).
    pub notes: Option<&'a [Option<String>]>,
}

/// Walks `ir` into `w`; with `plan`, marks what it eliminates.
pub fn write_graph<W: GraphWrite + ?Sized>(
    w: &mut W,
    ir: &GraphIr,
    plan: Option<&Plan>,
) -> fmt::Result {
    write_overlaid(
        w,
        ir,
        &Overlay {
            plan,
            islands: None,
            fusion: None,
            notes: None,
        },
    )
}

/// Walks `ir` into `w` with everything `overlay` asks for.
pub fn write_overlaid<W: GraphWrite + ?Sized>(
    w: &mut W,
    ir: &GraphIr,
    overlay: &Overlay<'_>,
) -> fmt::Result {
    let plan = overlay.plan;
    w.write_prologue(ir)?;
    for (i, input) in ir.inputs.iter().enumerate() {
        w.write_input(ir, i as InputId, input)?;
    }
    for (s, state) in ir.states.iter().enumerate() {
        let status = match plan {
            None => Status::Unplanned,
            Some(p) if p.writes_state(s as StateId) => Status::Runs,
            Some(_) => Status::Eliminated("not written: no running node reads it".into()),
        };
        w.write_state(ir, s as StateId, state, &status)?;
    }
    for id in display_order(ir) {
        let Some(node) = ir.nodes.get(id as usize) else {
            continue;
        };
        let status = match plan {
            None => Status::Unplanned,
            Some(p) if p.is_live(id) => Status::Runs,
            Some(p) => Status::Eliminated(why_removed(ir, p, id)),
        };
        let rate = plan.and_then(|p| rate_of(ir, p, id)).map(|r| {
            let text = rate_text(ir, r);
            text.split_once(' ')
                .map_or(text.clone(), |(_, rest)| rest.to_string())
        });
        let note = overlay
            .notes
            .and_then(|n| n.get(id as usize))
            .and_then(|n| n.as_deref());
        let view = NodeView {
            id,
            node,
            weight_key: node_key_name(ir, node),
            status,
            rate,
            note,
        };
        w.write_node(ir, &view)?;
    }
    for (index, edge) in ir.edges.iter().enumerate() {
        let weight_key = match (edge.kind, edge.from) {
            (EdgeKind::Weighted, Endpoint::Node(n)) => {
                ir.nodes.get(n as usize).and_then(|n| node_key_name(ir, n))
            }
            _ => None,
        };
        let live = plan.map(|p| endpoint_live(p, edge.from) && endpoint_live(p, edge.to));
        let view = EdgeView {
            index,
            edge,
            weight_key,
            live,
        };
        w.write_edge(ir, &view)?;
    }
    for (index, island) in overlay.islands.unwrap_or_default().iter().enumerate() {
        let groups: Vec<(usize, &Group)> = overlay
            .fusion
            .map(|f| {
                f.groups
                    .iter()
                    .enumerate()
                    .filter(|(_, g)| g.island == index)
                    .collect()
            })
            .unwrap_or_default();
        w.write_island(ir, index, island, &groups)?;
    }
    w.write_epilogue(ir)
}

/// The graph in Graphviz DOT; with `plan`, its eliminated nodes greyed out.
pub fn to_dot(ir: &GraphIr, plan: Option<&Plan>) -> String {
    to_dot_with(
        ir,
        &Overlay {
            plan,
            islands: None,
            fusion: None,
            notes: None,
        },
    )
}

/// The graph in Graphviz DOT with an overlay (plan, islands).
pub fn to_dot_with(ir: &GraphIr, overlay: &Overlay<'_>) -> String {
    let mut dot = Dot::new(String::new());
    // Writing into a String cannot fail.
    let _ = write_overlaid(&mut dot, ir, overlay);
    dot.into_inner()
}

/// The graph as a Mermaid flowchart; with `plan`, its eliminated nodes
/// greyed out.
pub fn to_mermaid(ir: &GraphIr, plan: Option<&Plan>) -> String {
    to_mermaid_with(
        ir,
        &Overlay {
            plan,
            islands: None,
            fusion: None,
            notes: None,
        },
    )
}

/// The graph as a Mermaid flowchart with an overlay (plan, islands).
pub fn to_mermaid_with(ir: &GraphIr, overlay: &Overlay<'_>) -> String {
    let mut mermaid = Mermaid::new(String::new());
    // Writing into a String cannot fail.
    let _ = write_overlaid(&mut mermaid, ir, overlay);
    mermaid.into_inner()
}

/// Whether an edge end takes part in `plan` (inputs always do).
fn endpoint_live(plan: &Plan, e: Endpoint) -> bool {
    match e {
        Endpoint::Input(_) => true,
        Endpoint::State(s) => plan.writes_state(s),
        Endpoint::Node(n) => plan.is_live(n),
    }
}

/// The id of an endpoint in both formats: a kind letter, the index, and the
/// name with everything but ASCII letters, digits and `_` replaced by `_`
/// (readable, and unique thanks to the index). E.g. `n3_saliency`.
pub fn endpoint_id(ir: &GraphIr, e: Endpoint) -> String {
    let (prefix, index) = match e {
        Endpoint::Input(i) => ('i', i),
        Endpoint::State(s) => ('s', s),
        Endpoint::Node(n) => ('n', n),
    };
    let name = endpoint_name(ir, e);
    if name == "?" {
        return format!("{prefix}{index}");
    }
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{prefix}{index}_{clean}")
}

/// The lines of a node's label: name, op, kind, weight key, and why it is
/// eliminated.
fn node_label(view: &NodeView<'_>) -> Vec<String> {
    let node = view.node;
    let mut lines = vec![
        node.name.to_string(),
        node.op.to_string(),
        node.kind.tag().to_string(),
    ];
    if let Some(k) = view.weight_key {
        lines.push(format!("weight: {k}"));
    }
    if let Some(r) = &view.rate {
        lines.push(format!("runs {r}"));
    }
    if let Some(n) = view.note {
        lines.push(n.to_string());
    }
    if let Status::Eliminated(why) = &view.status {
        lines.push(format!("REMOVED: {why}"));
    }
    lines
}

/// A state's label lines: `name: Type`, `= init`, and why it is not written.
fn state_label(state: &StateIr, status: &Status) -> Vec<String> {
    let mut lines = vec![
        format!("{}: {}", state.name, state.ty),
        format!("= {}", state.init),
    ];
    if let Status::Eliminated(why) = status {
        lines.push(why.clone());
    }
    lines
}

const COMPILABLE_FILL: &str = "#d9f2d9";
const EXTERNAL_FILL: &str = "#dbe7fb";
const INPUT_FILL: &str = "#fff4d6";
const STATE_FILL: &str = "#f3e5f5";
const DEAD_FILL: &str = "#eeeeee";
const DEAD_INK: &str = "#999999";
const DEAD_EDGE: &str = "#bbbbbb";
const ISLAND_INK: &str = "#3a7d3a";
/// The frame of a fused group (inside its island's).
const GROUP_INK: &str = "#1565c0";

/// The title of fused group number `k`, the same in both formats.
fn group_title(k: usize, group: &Group) -> String {
    let n = group.nodes.len();
    let s = if n == 1 { "" } else { "s" };
    format!("fused group {k} ({n} node{s}, strip by strip)")
}

/// The title of island number `index`, the same in both formats.
fn island_title(index: usize, island: &Island) -> String {
    let n = island.nodes.len();
    let s = if n == 1 { "" } else { "s" };
    format!("island {index} ({n} compilable node{s})")
}

/// A DOT string literal: quoted, with `\` and `"` escaped and each line
/// break as DOT's `\n` (centered line).
pub fn dot_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            // A lone backslash would start a DOT escape such as `\l` or `\N`.
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Writes Graphviz DOT.
#[derive(Debug, Clone, Default)]
pub struct Dot<W> {
    out: W,
}

impl<W: fmt::Write> Dot<W> {
    /// A DOT writer into `out`.
    pub fn new(out: W) -> Self {
        Dot { out }
    }

    /// The written text.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: fmt::Write> GraphWrite for Dot<W> {
    fn write_prologue(&mut self, ir: &GraphIr) -> fmt::Result {
        writeln!(self.out, "digraph {} {{", dot_quote(&ir.name))?;
        writeln!(self.out, "  rankdir=LR;")?;
        writeln!(self.out, "  node [fontname=\"Helvetica\", fontsize=11];")?;
        writeln!(self.out, "  edge [fontname=\"Helvetica\", fontsize=9];")
    }

    fn write_input(&mut self, ir: &GraphIr, id: InputId, input: &InputIr) -> fmt::Result {
        writeln!(
            self.out,
            "  {} [label={}, shape=parallelogram, style=filled, fillcolor=\"{INPUT_FILL}\"];",
            dot_quote(&endpoint_id(ir, Endpoint::Input(id))),
            dot_quote(&format!("{}: {}", input.name, input.ty)),
        )
    }

    fn write_state(
        &mut self,
        ir: &GraphIr,
        id: StateId,
        state: &StateIr,
        status: &Status,
    ) -> fmt::Result {
        let style = if status.is_eliminated() {
            format!(
                "style=\"filled,dashed\", fillcolor=\"{DEAD_FILL}\", fontcolor=\"{DEAD_INK}\", color=\"{DEAD_INK}\""
            )
        } else {
            format!("style=filled, fillcolor=\"{STATE_FILL}\"")
        };
        writeln!(
            self.out,
            "  {} [label={}, shape=cylinder, {style}];",
            dot_quote(&endpoint_id(ir, Endpoint::State(id))),
            dot_quote(&state_label(state, status).join("\n")),
        )
    }

    fn write_node(&mut self, ir: &GraphIr, view: &NodeView<'_>) -> fmt::Result {
        let (shape_style, fill) = match view.node.kind {
            NodeKind::Compilable => ("rounded,filled", COMPILABLE_FILL),
            NodeKind::ExternalCall => ("filled", EXTERNAL_FILL),
        };
        let extra = match view.node.kind {
            NodeKind::ExternalCall => ", peripheries=2",
            NodeKind::Compilable => "",
        };
        let style = if view.status.is_eliminated() {
            format!(
                "style=\"{shape_style},dashed\", fillcolor=\"{DEAD_FILL}\", fontcolor=\"{DEAD_INK}\", color=\"{DEAD_INK}\""
            )
        } else {
            format!("style=\"{shape_style}\", fillcolor=\"{fill}\"")
        };
        writeln!(
            self.out,
            "  {} [label={}, shape=box, {style}{extra}];",
            dot_quote(&endpoint_id(ir, Endpoint::Node(view.id))),
            dot_quote(&node_label(view).join("\n")),
        )
    }

    fn write_edge(&mut self, ir: &GraphIr, view: &EdgeView<'_>) -> fmt::Result {
        let mut attrs: Vec<String> = Vec::new();
        match view.edge.kind {
            EdgeKind::Data => {}
            EdgeKind::Weighted => {
                attrs.push("style=dashed".into());
                if let Some(k) = view.weight_key {
                    attrs.push(format!("label={}", dot_quote(k)));
                }
            }
            EdgeKind::State => {
                attrs.push("style=dotted".into());
                attrs.push("label=\"next frame\"".into());
                // It points back up the graph; let it not bend the ranking.
                attrs.push("constraint=false".into());
            }
        }
        if view.live == Some(false) {
            attrs.push(format!("color=\"{DEAD_EDGE}\", fontcolor=\"{DEAD_EDGE}\""));
        }
        let attrs = if attrs.is_empty() {
            String::new()
        } else {
            format!(" [{}]", attrs.join(", "))
        };
        writeln!(
            self.out,
            "  {} -> {}{attrs};",
            dot_quote(&endpoint_id(ir, view.edge.from)),
            dot_quote(&endpoint_id(ir, view.edge.to)),
        )
    }

    fn write_island(
        &mut self,
        ir: &GraphIr,
        index: usize,
        island: &Island,
        groups: &[(usize, &Group)],
    ) -> fmt::Result {
        // Mentioning a declared node inside a `cluster_` subgraph puts it in
        // the cluster's frame without redeclaring it; a group's nodes go in
        // its own cluster, nested in the island's.
        writeln!(self.out, "  subgraph cluster_{index} {{")?;
        writeln!(
            self.out,
            "    label={}; style=\"rounded,dashed\"; color=\"{ISLAND_INK}\"; fontcolor=\"{ISLAND_INK}\";",
            dot_quote(&island_title(index, island))
        )?;
        for &(k, group) in groups {
            writeln!(self.out, "    subgraph cluster_{index}_group_{k} {{")?;
            writeln!(
                self.out,
                "      label={}; style=\"rounded\"; color=\"{GROUP_INK}\"; fontcolor=\"{GROUP_INK}\";",
                dot_quote(&group_title(k, group))
            )?;
            for &id in &group.nodes {
                writeln!(
                    self.out,
                    "      {};",
                    dot_quote(&endpoint_id(ir, Endpoint::Node(id)))
                )?;
            }
            writeln!(self.out, "    }}")?;
        }
        for &id in &island.nodes {
            if groups.iter().any(|(_, g)| g.contains(id)) {
                continue;
            }
            writeln!(
                self.out,
                "    {};",
                dot_quote(&endpoint_id(ir, Endpoint::Node(id)))
            )?;
        }
        writeln!(self.out, "  }}")
    }

    fn write_epilogue(&mut self, _ir: &GraphIr) -> fmt::Result {
        writeln!(self.out, "}}")
    }
}

/// Text for inside a quoted Mermaid label: Mermaid's `#code;` entities for
/// the characters that would end the quote, open an HTML tag or an entity, or
/// start markdown; line breaks become `<br/>`.
pub fn mermaid_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("#34;"),
            '#' => out.push_str("#35;"),
            '&' => out.push_str("#38;"),
            '<' => out.push_str("#60;"),
            '>' => out.push_str("#62;"),
            '`' => out.push_str("#96;"),
            '\n' => out.push_str("<br/>"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// Writes a Mermaid flowchart.
#[derive(Debug, Clone, Default)]
pub struct Mermaid<W> {
    out: W,
    /// Node ids per class, emitted as `class …` lines at the end.
    classes: BTreeMap<&'static str, Vec<String>>,
    /// Link indices per `linkStyle`, emitted at the end (Mermaid styles links
    /// by their position, and a later `linkStyle` for the same link would
    /// replace the earlier one, so each link gets exactly one).
    link_styles: BTreeMap<String, Vec<usize>>,
    links: usize,
}

impl<W: fmt::Write> Mermaid<W> {
    /// A Mermaid writer into `out`.
    pub fn new(out: W) -> Self {
        Mermaid {
            out,
            classes: BTreeMap::new(),
            link_styles: BTreeMap::new(),
            links: 0,
        }
    }

    /// The written text.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn class(&mut self, class: &'static str, id: String) {
        self.classes.entry(class).or_default().push(id);
    }
}

impl<W: fmt::Write> GraphWrite for Mermaid<W> {
    fn write_prologue(&mut self, ir: &GraphIr) -> fmt::Result {
        // A comment ends at the line's end, so the name must not break it.
        let name: String = ir
            .name
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        writeln!(self.out, "%% Cortex graph {name}")?;
        writeln!(self.out, "flowchart LR")
    }

    fn write_input(&mut self, ir: &GraphIr, id: InputId, input: &InputIr) -> fmt::Result {
        let mid = endpoint_id(ir, Endpoint::Input(id));
        let label = mermaid_text(&format!("{}: {}", input.name, input.ty));
        writeln!(self.out, "  {mid}[/\"{label}\"/]")?;
        self.class("input", mid);
        Ok(())
    }

    fn write_state(
        &mut self,
        ir: &GraphIr,
        id: StateId,
        state: &StateIr,
        status: &Status,
    ) -> fmt::Result {
        let mid = endpoint_id(ir, Endpoint::State(id));
        let label = mermaid_text(&state_label(state, status).join("\n"));
        writeln!(self.out, "  {mid}[(\"{label}\")]")?;
        let class = if status.is_eliminated() {
            "eliminated"
        } else {
            "state"
        };
        self.class(class, mid);
        Ok(())
    }

    fn write_node(&mut self, ir: &GraphIr, view: &NodeView<'_>) -> fmt::Result {
        let mid = endpoint_id(ir, Endpoint::Node(view.id));
        let label = mermaid_text(&node_label(view).join("\n"));
        let (class, open, close) = match view.node.kind {
            NodeKind::Compilable => ("compilable", "(", ")"),
            // Mermaid's subroutine shape: a call into something opaque.
            NodeKind::ExternalCall => ("external", "[[", "]]"),
        };
        writeln!(self.out, "  {mid}{open}\"{label}\"{close}")?;
        let class = if view.status.is_eliminated() {
            "eliminated"
        } else {
            class
        };
        self.class(class, mid);
        Ok(())
    }

    fn write_edge(&mut self, ir: &GraphIr, view: &EdgeView<'_>) -> fmt::Result {
        let from = endpoint_id(ir, view.edge.from);
        let to = endpoint_id(ir, view.edge.to);
        let mut style: Vec<String> = Vec::new();
        match view.edge.kind {
            EdgeKind::Data => writeln!(self.out, "  {from} --> {to}")?,
            EdgeKind::Weighted => {
                let key = mermaid_text(view.weight_key.unwrap_or("weighted"));
                writeln!(self.out, "  {from} -.->|\"{key}\"| {to}")?;
                style.push("stroke-dasharray:6 4".into());
            }
            EdgeKind::State => {
                writeln!(self.out, "  {from} -.->|\"next frame\"| {to}")?;
                style.push("stroke-dasharray:2 3".into());
            }
        }
        if view.live == Some(false) {
            style.push(format!("stroke:{DEAD_EDGE}"));
        }
        if !style.is_empty() {
            self.link_styles
                .entry(style.join(","))
                .or_default()
                .push(self.links);
        }
        self.links += 1;
        Ok(())
    }

    fn write_island(
        &mut self,
        ir: &GraphIr,
        index: usize,
        island: &Island,
        groups: &[(usize, &Group)],
    ) -> fmt::Result {
        // Listing declared nodes inside a subgraph moves them into it; a
        // group's nodes go in its own subgraph, nested in the island's.
        let title = mermaid_text(&island_title(index, island));
        writeln!(self.out, "  subgraph island_{index} [\"{title}\"]")?;
        for &(k, group) in groups {
            let title = mermaid_text(&group_title(k, group));
            writeln!(self.out, "    subgraph group_{k} [\"{title}\"]")?;
            for &id in &group.nodes {
                writeln!(self.out, "      {}", endpoint_id(ir, Endpoint::Node(id)))?;
            }
            writeln!(self.out, "    end")?;
        }
        for &id in &island.nodes {
            if groups.iter().any(|(_, g)| g.contains(id)) {
                continue;
            }
            writeln!(self.out, "    {}", endpoint_id(ir, Endpoint::Node(id)))?;
        }
        writeln!(self.out, "  end")?;
        for &(k, _) in groups {
            writeln!(self.out, "  style group_{k} fill:none,stroke:{GROUP_INK}")?;
        }
        writeln!(
            self.out,
            "  style island_{index} fill:none,stroke:{ISLAND_INK},stroke-dasharray:5 5"
        )
    }

    fn write_epilogue(&mut self, _ir: &GraphIr) -> fmt::Result {
        writeln!(
            self.out,
            "  classDef compilable fill:{COMPILABLE_FILL},stroke:#3a7d3a"
        )?;
        writeln!(
            self.out,
            "  classDef external fill:{EXTERNAL_FILL},stroke:#3a5d9c"
        )?;
        writeln!(
            self.out,
            "  classDef input fill:{INPUT_FILL},stroke:#b38f00"
        )?;
        writeln!(
            self.out,
            "  classDef state fill:{STATE_FILL},stroke:#7b1fa2"
        )?;
        writeln!(
            self.out,
            "  classDef eliminated fill:{DEAD_FILL},stroke:{DEAD_INK},color:{DEAD_INK},stroke-dasharray:4 3"
        )?;
        for (class, ids) in &self.classes {
            writeln!(self.out, "  class {} {class}", ids.join(","))?;
        }
        for (style, links) in &self.link_styles {
            let links: Vec<String> = links.iter().map(usize::to_string).collect();
            writeln!(self.out, "  linkStyle {} {style}", links.join(","))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::l2_ir;
    use crate::passes::dce::plan_for_mode;

    /// Checks DOT structure without Graphviz: quoted strings close (escapes
    /// honoured), braces balance outside them, and the text is one graph.
    fn dot_structure_ok(dot: &str) -> bool {
        let mut depth = 0i32;
        let mut in_str = false;
        let mut escaped = false;
        for c in dot.chars() {
            if in_str {
                match (escaped, c) {
                    (true, _) => escaped = false,
                    (false, '\\') => escaped = true,
                    (false, '"') => in_str = false,
                    (false, '\n') => return false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => in_str = true,
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth < 0 {
                        return false;
                    }
                }
                _ => {}
            }
        }
        !in_str && depth == 0 && dot.starts_with("digraph ") && dot.trim_end().ends_with('}')
    }

    /// The lines of a DOT text that are edges (`"a" -> "b"` outside labels).
    fn dot_edge_lines(dot: &str) -> Vec<&str> {
        dot.lines()
            .filter(|l| l.trim_start().starts_with('"') && l.contains("\" -> \""))
            .collect()
    }

    #[test]
    fn dot_is_structurally_sound() {
        let ir = l2_ir();
        let dot = to_dot(&ir, None);
        assert!(dot_structure_ok(&dot), "{dot}");
        for i in 0..ir.nodes.len() {
            let id = endpoint_id(&ir, Endpoint::Node(i as NodeId));
            assert_eq!(
                dot.matches(&format!("\"{id}\" [label=")).count(),
                1,
                "{id}\n{dot}"
            );
        }
        assert!(
            dot.contains("\"i0_frame\" [label=\"frame: Frame\""),
            "{dot}"
        );
        assert!(
            dot.contains(
                "\"s0__prev_gray\" [label=\"_prev_gray: GrayImage\\n= GrayImage::default()\""
            ),
            "{dot}"
        );
        let edges = dot_edge_lines(&dot);
        assert_eq!(edges.len(), ir.edges.len(), "{dot}");
        for (line, e) in edges.iter().zip(ir.edges.iter()) {
            let expect = format!(
                "\"{}\" -> \"{}\"",
                endpoint_id(&ir, e.from),
                endpoint_id(&ir, e.to)
            );
            assert!(line.contains(&expect), "{line} vs {expect}");
            match e.kind {
                EdgeKind::Data => assert!(!line.contains("style="), "{line}"),
                EdgeKind::Weighted => assert!(line.contains("style=dashed, label=\"w"), "{line}"),
                EdgeKind::State => assert!(line.contains("style=dotted"), "{line}"),
            }
        }
        let weighted = ir
            .edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Weighted)
            .count();
        assert_eq!(weighted, 3);
        assert_eq!(dot.matches("style=dashed").count(), weighted, "{dot}");
        assert!(
            dot.contains("\"n3_saliency\" -> \"n5_fused\" [style=dashed, label=\"ws\"]"),
            "{dot}"
        );
        // Compilable and external nodes styled apart.
        let line_of = |id: &str| {
            dot.lines()
                .find(|l| l.contains(&format!("\"{id}\" [label=")))
                .unwrap()
        };
        assert!(
            line_of("n3_saliency").contains("rounded,filled")
                && line_of("n3_saliency").contains("weight: ws")
        );
        assert!(line_of("n0_gray").contains("peripheries=2"));
        assert!(!dot.contains("REMOVED"), "{dot}");
    }

    #[test]
    fn dot_with_plan_greys_out_eliminated_nodes() {
        let ir = l2_ir();
        let plan = plan_for_mode(&ir, ir.mode_index("POWER_SAVE").unwrap());
        let dot = to_dot(&ir, Some(&plan));
        assert!(dot_structure_ok(&dot), "{dot}");
        let line_of = |id: &str| {
            dot.lines()
                .find(|l| l.contains(&format!("\"{id}\" [label=")))
                .unwrap()
        };
        for (id, key) in [("n3_saliency", "ws"), ("n4_motion", "wm")] {
            let l = line_of(id);
            assert!(
                l.contains(&format!("REMOVED: its weight `{key}` is 0")),
                "{l}"
            );
            assert!(l.contains(DEAD_FILL) && l.contains("dashed"), "{l}");
        }
        for id in ["n0_gray", "n1_scene", "n2_center", "n5_fused"] {
            assert!(!line_of(id).contains(DEAD_FILL), "{}", line_of(id));
        }
        // Edges into and out of eliminated nodes are grey; the rest are not.
        let grey = dot_edge_lines(&dot)
            .into_iter()
            .filter(|l| l.contains(DEAD_EDGE))
            .count();
        let dead = ir
            .edges
            .iter()
            .filter(|e| !(endpoint_live(&plan, e.from) && endpoint_live(&plan, e.to)))
            .count();
        assert_eq!(dead, 5); // gray→sal, gray→motion, prev→motion, sal→fused, motion→fused
        assert_eq!(grey, dead, "{dot}");
    }

    #[test]
    fn mermaid_has_one_line_per_edge_and_every_node() {
        let ir = l2_ir();
        let plan = plan_for_mode(&ir, ir.mode_index("POWER_SAVE").unwrap());
        let mm = to_mermaid(&ir, Some(&plan));
        assert!(mm.lines().any(|l| l == "flowchart LR"), "{mm}");
        let edge_lines: Vec<&str> = mm
            .lines()
            .filter(|l| l.contains("-->") || l.contains("-.->"))
            .collect();
        assert_eq!(edge_lines.len(), ir.edges.len(), "{mm}");
        for i in 0..ir.nodes.len() {
            let id = endpoint_id(&ir, Endpoint::Node(i as NodeId));
            let decl = format!("  {id}");
            let declared = mm
                .lines()
                .filter(|l| {
                    l.starts_with(&decl)
                        && (l[decl.len()..].starts_with('(') || l[decl.len()..].starts_with("[["))
                })
                .count();
            assert_eq!(declared, 1, "{id}\n{mm}");
        }
        assert!(mm.contains("  n3_saliency -.->|\"ws\"| n5_fused"), "{mm}");
        assert!(
            mm.contains("  n0_gray -.->|\"next frame\"| s0__prev_gray"),
            "{mm}"
        );
        assert!(mm.contains("  i0_frame --> n0_gray"), "{mm}");
        assert!(
            mm.contains("  n0_gray[[\"gray<br/>ops::to_gray<br/>[external_call]\"]]"),
            "{mm}"
        );
        assert!(
            mm.contains("  class n3_saliency,n4_motion eliminated"),
            "{mm}"
        );
        assert!(mm.contains("REMOVED: its weight #96;ws#96; is 0"), "{mm}");
        // Every link gets at most one linkStyle.
        let mut styled: Vec<usize> = mm
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("linkStyle "))
            .flat_map(|l| {
                l.split(' ')
                    .next()
                    .unwrap()
                    .split(',')
                    .map(|n| n.parse::<usize>().unwrap())
            })
            .collect();
        let n = styled.len();
        styled.sort_unstable();
        styled.dedup();
        assert_eq!(styled.len(), n, "{mm}");
        assert!(styled.iter().all(|&i| i < ir.edges.len()));
    }

    #[test]
    fn names_and_types_are_escaped() {
        let mut ir = l2_ir();
        ir.inputs.to_mut()[0].ty = "Vec<&'static str>".into();
        ir.states.to_mut()[0].ty = "Tagged<\"q\">".into();
        ir.states.to_mut()[0].init = "path(\"C:\\\\x\")".into();
        ir.nodes.to_mut()[0].op = "ops::to_gray::<u8>".into();
        ir.nodes.to_mut()[1].name = "scene \"v2\" #1\nx".into();
        ir.name = "L2 \"test\" {x}".into();

        let dot = to_dot(&ir, None);
        assert!(dot_structure_ok(&dot), "{dot}");
        assert!(
            dot.starts_with("digraph \"L2 \\\"test\\\" {x}\" {"),
            "{dot}"
        );
        assert!(dot.contains("label=\"frame: Vec<&'static str>\""), "{dot}");
        assert!(
            dot.contains("_prev_gray: Tagged<\\\"q\\\">\\n= path(\\\"C:\\\\\\\\x\\\")"),
            "{dot}"
        );
        assert!(dot.contains("ops::to_gray::<u8>"), "{dot}");
        assert!(
            dot.contains("\"n1_scene__v2___1_x\" [label=\"scene \\\"v2\\\" #1\\nx\\n"),
            "{dot}"
        );
        assert_eq!(dot_edge_lines(&dot).len(), ir.edges.len(), "{dot}");
        // DOT record shapes would give `<>{}|` meaning even inside quotes.
        assert!(!dot.contains("shape=record"));

        let mm = to_mermaid(&ir, None);
        assert!(
            mm.contains("i0_frame[/\"frame: Vec#60;#38;'static str#62;\"/]"),
            "{mm}"
        );
        assert!(
            mm.contains("_prev_gray: Tagged#60;#34;q#34;#62;<br/>= path(#34;C:\\\\x#34;)"),
            "{mm}"
        );
        assert!(mm.contains("ops::to_gray::#60;u8#62;"), "{mm}");
        assert!(
            mm.contains("n1_scene__v2___1_x[[\"scene #34;v2#34; #35;1<br/>x<br/>"),
            "{mm}"
        );
        assert!(
            mm.starts_with("%% Cortex graph L2 \"test\" {x}\nflowchart LR\n"),
            "{mm}"
        );
        // Inside labels, no raw quote, `<` or `>` survives except our `<br/>`.
        for line in mm
            .lines()
            .filter(|l| l.contains("[\"") || l.contains("(\""))
        {
            let open = line.find('"').unwrap();
            let close = line.rfind('"').unwrap();
            let inner = line[open + 1..close].replace("<br/>", "");
            assert!(!inner.contains(['"', '<', '>']), "{line}");
        }
    }

    #[test]
    fn malformed_ir_does_not_panic() {
        let mut ir = l2_ir();
        ir.edges.to_mut().push(Edge {
            from: Endpoint::Node(99),
            to: Endpoint::State(42),
            arg: 0,
            kind: EdgeKind::Weighted,
        });
        ir.nodes.to_mut()[3].weight_key = Some(77);
        ir.topo = vec![5, 5, 123].into();
        let plan = plan_for_mode(&l2_ir(), 1);
        for out in [to_dot(&ir, Some(&plan)), to_dot(&ir, None)] {
            assert!(dot_structure_ok(&out), "{out}");
            assert!(out.contains("\"n99\" -> \"s42\""), "{out}");
            assert!(out.contains("weight: ?"), "{out}");
            assert_eq!(dot_edge_lines(&out).len(), ir.edges.len());
        }
        let mm = to_mermaid(&ir, Some(&plan));
        assert!(mm.contains("n99 -.->|\"weighted\"| s42"), "{mm}");
    }
}
