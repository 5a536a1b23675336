//! A graph file extending another: `"extends": "l2.json"` takes that
//! file's graph (from this file's folder), `"replace": {"text": {…}}`
//! replaces its nodes by name, and the file's own `inputs`, `states`,
//! `nodes` and `outputs` are added to it; a mode of an extended mode's
//! name replaces it (a mode is one table of weights and rates), others are
//! added. A replacement is a node declaration without its `name` (the
//! key); it keeps the replaced node's `weight_key` unless it writes one,
//! for the weight is the node's place in the graph, not its op's.
//!
//! Each mistake is one problem at the line of this file that makes it:
//! a replaced name the extended graph does not declare, a name declared
//! twice, files extending each other in a cycle, and any problem of the
//! extended file (at the `extends` line, naming that file and its line).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::value::RawValue;

use crate::model::spec::{InputSpec, NodeSpec, OutputSpec, StateSpec};
use crate::passes::diag::did_you_mean;
use crate::runtime::untrusted::{echo, read_regular};

use super::{node_spec, At, FileError, GraphFile, LoadError, NodeDecl, MAX_GRAPH_FILE_BYTES};

/// The most files extending one another from the one loaded: a chain this
/// long is a mistake, not a design.
pub const MAX_EXTENDS_DEPTH: usize = 16;

/// A node of the extended graph replaced, as the extending file writes it.
pub(super) struct Replacement {
    name: String,
    pub(super) line: usize,
    node: NodeSpec,
    params: Option<serde_json::Map<String, serde_json::Value>>,
    /// Whether the replacement writes its `weight_key` (else it keeps the
    /// replaced node's).
    weight_key: bool,
}

/// Reads the graph file at `path` and, first, any file it extends;
/// `chain` holds the files being read (to refuse a cycle).
pub(super) fn load(path: &Path, chain: &mut Vec<PathBuf>) -> Result<GraphFile, LoadError> {
    let bytes = read_regular(path, MAX_GRAPH_FILE_BYTES)?;
    let text =
        String::from_utf8(bytes).map_err(|e| LoadError::NotText(e.utf8_error().valid_up_to()))?;
    let dir: Arc<Path> = Arc::from(path.parent().unwrap_or(Path::new("")));
    chain.push(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
    let file = GraphFile::parse_in(&text, Some(Arc::clone(&dir)), &mut |name| {
        let next = dir.join(name);
        let key = std::fs::canonicalize(&next).unwrap_or_else(|_| next.clone());
        let unlined = |m: String| FileError {
            problems: vec![(0, m)],
        };
        if let Some(k) = chain.iter().position(|p| *p == key) {
            let names: Vec<String> = chain[k..]
                .iter()
                .map(|p| {
                    p.file_name()
                        .map_or(p.display(), |n| Path::new(n).display())
                })
                .map(|n| echo(&n.to_string()))
                .chain(std::iter::once(echo(name)))
                .collect();
            return Err(unlined(format!(
                "the files extend one another in a cycle: {}",
                names.join(" → ")
            )));
        }
        if chain.len() >= MAX_EXTENDS_DEPTH {
            return Err(unlined(format!(
                "more than {MAX_EXTENDS_DEPTH} files extend one another"
            )));
        }
        load(&next, chain).map_err(|e| match e {
            LoadError::Problems(f) => f,
            other => unlined(other.to_string()),
        })
    });
    chain.pop();
    Ok(file?)
}

/// A problem of the file `label` extends, at this file's `extends` line.
pub(super) fn within(label: &str, line: usize, e: FileError) -> FileError {
    let label = echo(label);
    FileError {
        problems: e
            .problems
            .into_iter()
            .map(|(l, m)| match l {
                0 => (line, format!("extends `{label}`: {m}")),
                l => (line, format!("extends `{label}`, line {l}: {m}")),
            })
            .collect(),
    }
}

/// The `replace` object of a file, read: each entry a node declaration
/// without its name.
pub(super) fn replacements(
    raw: Option<(usize, &RawValue)>,
    line_of: &dyn Fn(&RawValue) -> usize,
    problems: &mut Vec<(usize, String)>,
) -> Vec<Replacement> {
    let Some((line, raw)) = raw else {
        return Vec::new();
    };
    let entries: Vec<(String, &RawValue)> =
        match serde_json::from_str::<std::collections::BTreeMap<String, &RawValue>>(raw.get()) {
            Ok(m) => m.into_iter().collect(),
            Err(e) => {
                problems.push((
                    line + e.line() - 1,
                    format!(
                        "replace: {} (an object: each node's name, then what replaces it)",
                        super::message(&e)
                    ),
                ));
                return Vec::new();
            }
        };
    let mut out = Vec::new();
    for (name, raw) in entries {
        let line = line_of(raw);
        let what = format!("replace `{}`", echo(&name));
        let mut decl =
            match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(raw.get()) {
                Ok(m) => m,
                Err(e) => {
                    problems.push((line, format!("{what}: {}", super::message(&e))));
                    continue;
                }
            };
        if decl.contains_key("name") {
            problems.push((
                line,
                format!("{what}: the replacement's name is its key: write no `name`"),
            ));
            continue;
        }
        decl.insert("name".into(), name.clone().into());
        let d: NodeDecl = match serde_json::from_value(serde_json::Value::Object(decl)) {
            Ok(d) => d,
            Err(e) => {
                problems.push((line, format!("{what}: {}", super::message(&e))));
                continue;
            }
        };
        let weight_key = d.weight_key.is_some();
        if let Some((node, params)) = node_spec(d, line, problems) {
            out.push(Replacement {
                name,
                line,
                node,
                params,
                weight_key,
            });
        }
    }
    out
}

impl GraphFile {
    /// This file's declarations over `base`, the graph of the file `label`
    /// its `extends` (at `line`) names, with the nodes of `replace`
    /// replaced.
    pub(super) fn extending(
        self,
        base: GraphFile,
        label: &str,
        line: usize,
        replace: Vec<Replacement>,
    ) -> Result<GraphFile, FileError> {
        let label = echo(label);
        let mut out = base;
        // The extended file's declarations are at this file's `extends`,
        // written at their own file and line.
        let relabel = |places: &mut Vec<At>| {
            for a in places.iter_mut() {
                let from = a
                    .from
                    .take()
                    .unwrap_or_else(|| Arc::from(format!("`{label}` line {}", a.line)));
                *a = At {
                    line,
                    from: Some(from),
                };
            }
        };
        let l = &mut out.lines;
        for places in [
            &mut l.inputs,
            &mut l.states,
            &mut l.writes,
            &mut l.modes,
            &mut l.nodes,
            &mut l.outputs,
        ] {
            relabel(places);
        }
        let mut problems = Vec::new();
        if !self.spec.name.is_empty() {
            out.spec.name = self.spec.name;
        }
        let (o, l) = (&mut out.spec, &mut out.lines);
        let none = std::iter::repeat(());
        let inputs = self.spec.inputs.into_iter().zip(self.lines.inputs);
        add_new(
            ("input", ""),
            inputs.zip(none.clone()),
            (&mut o.inputs, &mut l.inputs),
            |()| {},
            &mut problems,
        );
        let states = self.spec.states.into_iter().zip(self.lines.states);
        let writes = self.spec.writes.into_iter().zip(self.lines.writes);
        add_new(
            ("state", ""),
            states.zip(writes),
            (&mut o.states, &mut l.states),
            |(write, at)| {
                o.writes.push(write);
                l.writes.push(at);
            },
            &mut problems,
        );
        for (mode, at) in self.spec.modes.into_iter().zip(self.lines.modes) {
            match o.modes.iter().position(|x| x.name == mode.name) {
                Some(i) => {
                    o.modes[i] = mode;
                    l.modes[i] = at;
                }
                None => {
                    o.modes.push(mode);
                    l.modes.push(at);
                }
            }
        }
        let extended = o.nodes.len();
        let nodes = self.spec.nodes.into_iter().zip(self.lines.nodes);
        let (params, dirs) = (&mut out.params, &mut out.dirs);
        add_new(
            ("node", ": replace it under `replace`"),
            nodes.zip(self.params.into_iter().zip(self.dirs)),
            (&mut o.nodes, &mut l.nodes),
            |(p, d)| {
                params.push(p);
                dirs.push(d);
            },
            &mut problems,
        );
        let outputs = self.spec.outputs.into_iter().zip(self.lines.outputs);
        add_new(
            ("output", ""),
            outputs.zip(none),
            (&mut o.outputs, &mut l.outputs),
            |()| {},
            &mut problems,
        );
        for mut r in replace {
            let Some(i) = out.spec.nodes[..extended]
                .iter()
                .position(|x| x.name == r.name)
            else {
                let names = out.spec.nodes[..extended].iter().map(|n| n.name.as_str());
                let mut m = format!("replace: `{label}` declares no node `{}`", echo(&r.name));
                if let Some(s) = did_you_mean(&r.name, names) {
                    m.push_str(&format!(" (did you mean `{s}`?)"));
                }
                problems.push((r.line, m));
                continue;
            };
            if !r.weight_key {
                r.node.weight_key = out.spec.nodes[i].weight_key.clone();
                r.node.source = r.node.dsl_source();
            }
            out.spec.nodes[i] = r.node;
            out.params[i] = r.params;
            out.dirs[i] = self.dir.clone();
            out.lines.nodes[i] = At::here(r.line);
        }
        out.dir = self.dir;
        if problems.is_empty() {
            Ok(out)
        } else {
            Err(FileError { problems })
        }
    }
}

/// A declaration with a name that a graph may declare once.
trait Named {
    fn name(&self) -> &str;
}

macro_rules! named {
    ($($t:ty),*) => {$(
        impl Named for $t {
            fn name(&self) -> &str {
                &self.name
            }
        }
    )*};
}

named!(InputSpec, StateSpec, NodeSpec, OutputSpec);

/// Adds the declarations of one kind an extending file makes to the
/// extended graph's (`into`: the declarations and their places): a name
/// declared there already is a problem at the new one's line (`what`: the
/// kind, and how to mend it); otherwise the declaration is appended, and
/// `rest` appends what goes with it (a state's write, a node's
/// parameters and folder).
fn add_new<T: Named, R>(
    (kind, fix): (&str, &str),
    items: impl IntoIterator<Item = ((T, At), R)>,
    (decls, places): (&mut Vec<T>, &mut Vec<At>),
    mut rest: impl FnMut(R),
    problems: &mut Vec<(usize, String)>,
) {
    for ((item, at), r) in items {
        match decls.iter().position(|x| x.name() == item.name()) {
            Some(i) => {
                let from = places[i].from.as_deref().unwrap_or("");
                problems.push((
                    at.line,
                    format!(
                        "{kind} `{}` is declared already, at {from}{fix}",
                        echo(item.name())
                    ),
                ));
            }
            None => {
                decls.push(item);
                places.push(at);
                rest(r);
            }
        }
    }
}
