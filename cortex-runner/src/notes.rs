//! Notes the tools print beside a node — the listing, the DOT and Mermaid
//! drawings, the profile —, given by the program: e.g. which backend runs a
//! model node and at which input shape, known only once the model is loaded
//! (and the backend once a frame has run).

use cortex_core::ir::GraphIr;
use cortex_core::pipeline::Pipeline;

use crate::App;

/// A program's notes: one per node of the graph, by node id.
pub(crate) type NotesFn = Box<dyn Fn(&GraphIr) -> Vec<Option<String>>>;

impl<P: Pipeline + 'static> App<P> {
    /// What the listing, the drawings and the profile print beside a node:
    /// `notes(ir)` gives one entry per node (by node id), asked each time a
    /// tool prints — after the run for `profile` and the tour, so a note can
    /// say what the run chose.
    pub fn node_notes(mut self, notes: impl Fn(&GraphIr) -> Vec<Option<String>> + 'static) -> Self {
        self.notes = Some(Box::new(notes));
        self
    }

    /// The notes of `ir`'s nodes (all `None` without [`App::node_notes`]).
    pub(crate) fn notes_of(&self, ir: &GraphIr) -> Vec<Option<String>> {
        match &self.notes {
            Some(f) => {
                let mut notes = f(ir);
                notes.resize(ir.nodes.len(), None);
                notes
            }
            None => vec![None; ir.nodes.len()],
        }
    }
}

/// The notes as a section of their own, for views that have no place for
/// them on a node's line (the profile): `notes:` then `  node: note` per
/// noted node; empty without notes.
pub(crate) fn notes_section(ir: &GraphIr, notes: &[Option<String>]) -> String {
    let mut out = String::new();
    for (node, note) in ir.nodes.iter().zip(notes) {
        if let Some(note) = note {
            if out.is_empty() {
                out.push_str("notes:\n");
            }
            out.push_str(&format!("  {}: {note}\n", node.name));
        }
    }
    out
}
