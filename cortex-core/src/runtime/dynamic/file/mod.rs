//! Graph files: a pipeline described in JSON — inputs, states (with the
//! node written into each), modes (weights and rates), nodes (a described
//! op with its inputs and parameters, or a plain op with its arguments)
//! and outputs — read into a [`GraphSpec`] and built into a
//! [`DynPipeline`]. Every error names the
//! line of the declaration it is about and what is declared there (`node
//! `gray``), with the diagnostics the macro gives for the same mistake.
//!
//! JSON rather than TOML: `serde_json` is already the engine's and the
//! runner's, it keeps a span for each declaration (`RawValue` borrows the
//! text, so its offset is its line), and every language writes it.

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::model::access::StripShape;
use crate::model::spec::{
    ArgSpec, GraphSpec, InputSpec, ModeSpec, NodeSpec, OutputSpec, RateSpec, StateSpec, WriteSpec,
    WEIGHTS_ARG,
};
use crate::passes::diag::{Loc, Severity};
use crate::runtime::untrusted::{echo, echo_cut, is_hidden, ReadError};

use super::engine::DynPipeline;
use super::ops::{Ops, DEFAULT_INIT};

mod export;
mod extend;
mod library;

pub use export::ExportError;

/// Why a graph file cannot be read or built: each problem with the line
/// it is on (1-based).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render(.problems))]
pub struct FileError {
    /// `(line, message)`, in the order found.
    pub problems: Vec<(usize, String)>,
}

fn render(problems: &[(usize, String)]) -> String {
    let lines: Vec<String> = problems
        .iter()
        .map(|(line, m)| format!("line {line}: {m}"))
        .collect();
    lines.join("\n")
}

/// The largest graph file read: 16 MiB. L2's file is 5 KB and a node
/// takes about 150 bytes, so this holds some 100 000 nodes; a larger file
/// (or a device, a FIFO) is refused before it is read.
pub const MAX_GRAPH_FILE_BYTES: u64 = 16 << 20;

/// The longest name, type, op or constant a graph file may write: 256
/// characters, none of them control or invisible formatting characters.
/// Every such string is echoed by some error message, so each is checked
/// when the file is read.
pub const MAX_NAME_CHARS: usize = 256;

/// The most characters of one error message about a graph file; the rest is
/// cut (a message repeats names from the file).
const MAX_MESSAGE_CHARS: usize = 1000;

/// Why a graph file could not be loaded from a path.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The path could not be read: missing, not a regular file, or larger
    /// than [`MAX_GRAPH_FILE_BYTES`].
    #[error("{0}")]
    Read(#[from] ReadError),
    /// The bytes are not UTF-8 text.
    #[error("it is not UTF-8 text (byte {0} is not)")]
    NotText(usize),
    /// The text is not a graph file this version reads.
    #[error("{0}")]
    Problems(#[from] FileError),
}

/// A graph file, read: the declaration and where each part was written.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphFile {
    /// The pipeline as declared; a node calling a described op has its
    /// inputs as arguments until [`build`](Self::build) resolves its
    /// parameters.
    pub spec: GraphSpec,
    /// Per node: the `params` of a node written in the library's form.
    params: Vec<Option<serde_json::Map<String, serde_json::Value>>>,
    /// Per node: the folder of the file that wrote its `params`, which a
    /// relative file parameter is taken from (`None`: the working
    /// directory).
    dirs: Vec<Option<Arc<Path>>>,
    /// The folder of this file (`None`: read from text, not a path).
    dir: Option<Arc<Path>>,
    lines: Lines,
}

/// Where each declaration was written, by its index in the spec's lists.
#[derive(Debug, Clone, Default, PartialEq)]
struct Lines {
    inputs: Vec<At>,
    states: Vec<At>,
    /// Per write: the place of the state declaring it.
    writes: Vec<At>,
    modes: Vec<At>,
    nodes: Vec<At>,
    outputs: Vec<At>,
}

/// Where a declaration was written: a line of this file, and for one
/// taken from the file it `extends`, that file and line (this file's line
/// is then its `extends`).
#[derive(Debug, Clone, PartialEq)]
struct At {
    line: usize,
    from: Option<Arc<str>>,
}

impl At {
    fn here(line: usize) -> At {
        At { line, from: None }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Top<'a> {
    /// Required, but for a file extending another (whose name it keeps).
    #[serde(default)]
    name: Option<String>,
    /// The graph file this one extends, from this file's folder.
    #[serde(borrow, default)]
    extends: Option<&'a RawValue>,
    /// With `extends`: nodes of the extended file replaced, by name.
    #[serde(borrow, default)]
    replace: Option<&'a RawValue>,
    #[serde(borrow, default)]
    inputs: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    states: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    modes: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    nodes: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    outputs: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InputDecl {
    name: String,
    #[serde(rename = "type")]
    ty: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StateDecl {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    /// Its initial value: the type's own when not written.
    #[serde(default)]
    init: Option<String>,
    /// The node whose value the state keeps (`from -> name;`).
    from: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModeDecl {
    name: String,
    #[serde(default)]
    weights: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    rates: Vec<RateDecl>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RateDecl {
    node: String,
    every: u32,
    #[serde(default)]
    trigger: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeDecl {
    name: String,
    op: String,
    /// The library's form: the nodes, inputs or states read, in the op's
    /// order.
    #[serde(default)]
    inputs: Option<Vec<String>>,
    /// The library's form: the op's parameters by name.
    #[serde(default)]
    params: Option<serde_json::Map<String, serde_json::Value>>,
    /// A plain op's form: its arguments as the call writes them.
    #[serde(default)]
    args: Option<Vec<ArgDecl>>,
    #[serde(rename = "type", default)]
    ty: Option<String>,
    #[serde(default)]
    compilable: Compilable,
    #[serde(default)]
    weight_key: Option<String>,
    #[serde(default)]
    fallible: bool,
}

/// An argument: a name (`"weights"` is the weight table, `"&mut <node>"`
/// the node's own buffer) or `{"const": "<expression>"}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum ArgDecl {
    Name(String),
    Const {
        #[serde(rename = "const")]
        value: String,
    },
}

/// `"compilable"`: `false` (an external call, the default), `true`, or
/// the strip form it declares, `"map"` or `"reduce"`.
#[derive(Deserialize, Default)]
#[serde(untagged)]
enum Compilable {
    #[default]
    No,
    Flag(bool),
    Form(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputDecl {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    optional: bool,
}

impl GraphFile {
    /// Reads the graph file at `path`: a regular file of at most
    /// [`MAX_GRAPH_FILE_BYTES`] of UTF-8 text, opened without blocking (a
    /// FIFO or a device is refused at once), then [`parse`](Self::parse)d.
    ///
    /// # Errors
    /// [`LoadError`]: the file cannot be read, is not text, or is not a
    /// graph file.
    ///
    /// A file may extend another (`"extends": "l2.json"`, from its folder),
    /// replacing nodes by name and adding declarations; a relative path in
    /// a parameter naming a file (a model's `path`) is taken from the folder
    /// of the file that wrote it.
    pub fn load(path: &Path) -> Result<GraphFile, LoadError> {
        extend::load(path, &mut Vec::new())
    }

    /// Reads a graph file's text. Checks its form only; [`build`](Self::build)
    /// checks the graph. Relative file parameters are taken from the
    /// working directory; a file that `extends` another is refused (there
    /// is no folder to find it in: [`load`](Self::load) it, or give the
    /// extended graph with [`parse_extending`](Self::parse_extending)).
    pub fn parse(text: &str) -> Result<GraphFile, FileError> {
        GraphFile::parse_in(text, None, &mut |name| {
            Err(FileError {
                problems: vec![(
                    0,
                    format!(
                        "`{}` cannot be found: a graph file read from text extends the graph \
                         it is given (GraphFile::load finds it beside the file)",
                        echo(name)
                    ),
                )],
            })
        })
    }

    /// Reads the text of a graph file that `extends` another, with that
    /// other graph given: `base` stands for whatever file the text's
    /// `extends` names. A graph of the library's ops extended in code (a
    /// compiled pipeline written out with [`from_ir`](Self::from_ir), one
    /// of its nodes replaced) is read this way.
    pub fn parse_extending(text: &str, base: &GraphFile) -> Result<GraphFile, FileError> {
        let mut given = false;
        let file = GraphFile::parse_in(text, None, &mut |_| {
            given = true;
            Ok(base.clone())
        })?;
        if given {
            Ok(file)
        } else {
            Err(FileError {
                problems: vec![(
                    1,
                    "the file extends nothing: write `\"extends\"`, naming the graph it extends"
                        .into(),
                )],
            })
        }
    }

    /// [`parse`](Self::parse) with the file's folder and a way to read the
    /// file it extends (its name as written; a problem with no line is at
    /// line 0).
    fn parse_in(
        text: &str,
        dir: Option<Arc<Path>>,
        base_of: &mut dyn FnMut(&str) -> Result<GraphFile, FileError>,
    ) -> Result<GraphFile, FileError> {
        let one = |line: usize, message: String| FileError {
            problems: vec![(line, message)],
        };
        if text.trim().is_empty() {
            return Err(one(
                1,
                "the file is empty: a graph file is a JSON object with `name`, `inputs`, \
                 `nodes` and `outputs`"
                    .into(),
            ));
        }
        let top: Top<'_> = serde_json::from_str(text)
            .map_err(|e| one(e.line(), format!("not a graph file: {}", message(&e))))?;
        // Each declaration's line from its offset, by a search in the
        // offsets of the text's line breaks, found once.
        let breaks: Vec<usize> = text.match_indices('\n').map(|(i, _)| i).collect();
        let line_of = |raw: &RawValue| {
            let offset = (raw.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
            breaks.partition_point(|&b| b < offset) + 1
        };
        let mut problems = Vec::new();
        let extends = top.extends.map(|raw| {
            let line = line_of(raw);
            let name = decl::<String>(raw, line, "extends", &mut problems)
                .filter(|n| fits(line, "extends", [("file", n)], &mut problems));
            (line, name)
        });
        let name = match (top.name, &extends) {
            (Some(name), _) => name,
            (None, Some(_)) => String::new(),
            (None, None) => {
                return Err(one(
                    1,
                    "not a graph file: missing field `name` (a file that does not `extends` \
                     another names its pipeline)"
                        .into(),
                ))
            }
        };
        let mut spec = GraphSpec {
            name,
            ..GraphSpec::default()
        };
        let mut lines = Lines::default();
        let mut params = Vec::new();
        // Each declaration parsed alone, so an error in one names its line
        // and the others are still read.
        fn decl<'a, T: Deserialize<'a>>(
            raw: &'a RawValue,
            line: usize,
            what: &str,
            problems: &mut Vec<(usize, String)>,
        ) -> Option<T> {
            serde_json::from_str(raw.get())
                .map_err(|e| {
                    problems.push((line + e.line() - 1, format!("{what}: {}", message(&e))))
                })
                .ok()
        }
        for raw in top.inputs {
            let line = line_of(raw);
            let d = decl::<InputDecl>(raw, line, "input", &mut problems).filter(|d| {
                fits(
                    line,
                    "input",
                    [("name", &d.name), ("type", &d.ty)],
                    &mut problems,
                )
            });
            if let Some(d) = d {
                spec.inputs.push(InputSpec {
                    name: d.name,
                    ty: d.ty,
                });
                lines.inputs.push(At::here(line));
            }
        }
        for raw in top.states {
            let line = line_of(raw);
            let d = decl::<StateDecl>(raw, line, "state", &mut problems).filter(|d| {
                let strings = [("name", &d.name), ("type", &d.ty), ("from", &d.from)];
                let init = d.init.iter().map(|i| ("init", i));
                fits(
                    line,
                    "state",
                    strings.into_iter().chain(init),
                    &mut problems,
                )
            });
            if let Some(d) = d {
                spec.writes.push(WriteSpec {
                    from: d.from,
                    to: d.name.clone(),
                });
                lines.writes.push(At::here(line));
                spec.states.push(StateSpec {
                    name: d.name,
                    ty: d.ty,
                    init: d.init.unwrap_or_else(|| DEFAULT_INIT.to_string()),
                });
                lines.states.push(At::here(line));
            }
        }
        for raw in top.modes {
            let line = line_of(raw);
            let Some(d) = decl::<ModeDecl>(raw, line, "mode", &mut problems) else {
                continue;
            };
            let strings = std::iter::once(("name", &d.name))
                .chain(d.weights.keys().map(|k| ("weight", k)))
                .chain(d.rates.iter().map(|r| ("rate's node", &r.node)))
                .chain(
                    d.rates
                        .iter()
                        .filter_map(|r| Some(("trigger", r.trigger.as_ref()?))),
                );
            if !fits(line, "mode", strings, &mut problems) {
                continue;
            }
            let mut weights = Vec::new();
            for (k, v) in d.weights {
                match v.as_f64() {
                    Some(x) => weights.push((k, x)),
                    None => problems.push((
                        line,
                        format!("mode `{}`: weight `{k}` = {v} is not a number", d.name),
                    )),
                }
            }
            let rates = d
                .rates
                .into_iter()
                .map(|r| RateSpec {
                    node: r.node,
                    every: r.every,
                    trigger: r.trigger.map(|t| {
                        let mut parts = t.split('.').map(str::to_string);
                        let source = parts.next().unwrap_or_default();
                        (source, parts.collect())
                    }),
                })
                .collect();
            spec.modes.push(ModeSpec {
                name: d.name,
                weights,
                rates,
            });
            lines.modes.push(At::here(line));
        }
        for raw in top.nodes {
            let line = line_of(raw);
            let Some(d) = decl::<NodeDecl>(raw, line, "node", &mut problems) else {
                continue;
            };
            if let Some((node, p)) = node_spec(d, line, &mut problems) {
                spec.nodes.push(node);
                params.push(p);
                lines.nodes.push(At::here(line));
            }
        }
        for raw in top.outputs {
            let line = line_of(raw);
            let d = decl::<OutputDecl>(raw, line, "output", &mut problems).filter(|d| {
                fits(
                    line,
                    "output",
                    [("name", &d.name), ("type", &d.ty)],
                    &mut problems,
                )
            });
            if let Some(d) = d {
                spec.outputs.push(OutputSpec {
                    name: d.name,
                    ty: d.ty,
                    optional: d.optional,
                });
                lines.outputs.push(At::here(line));
            }
        }
        let replace = top.replace.map(|raw| (line_of(raw), raw));
        let replace = extend::replacements(replace, &line_of, &mut problems);
        if !problems.is_empty() {
            return Err(FileError { problems });
        }
        let own = GraphFile {
            dirs: vec![dir.clone(); spec.nodes.len()],
            dir,
            spec,
            params,
            lines,
        };
        match extends {
            None if replace.is_empty() => Ok(own),
            None => Err(one(
                replace[0].line,
                "`replace` replaces nodes of the graph the file `extends`, and it extends none"
                    .into(),
            )),
            Some((line, name)) => {
                let name = name.unwrap_or_default();
                let base = base_of(&name).map_err(|e| extend::within(&name, line, e))?;
                own.extending(base, &name, line, replace)
            }
        }
    }

    /// Checks the graph with the macro's rules and the types of its
    /// described ops, and builds it over the ops of `ops`; every error
    /// (warnings left out) at its line.
    pub fn build(&self, ops: &Ops) -> Result<DynPipeline, FileError> {
        let (spec, ops) = self.resolve(ops)?;
        DynPipeline::new(&spec, &ops).map_err(|e| FileError {
            problems: e
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .map(|d| {
                    let (line, what) = self.place(d.loc);
                    // Each line of a diagnostic (its message, then its
                    // notes) escaped alone: the line breaks are the
                    // diagnostic's own.
                    let text = format!("{what}: {}", d.render());
                    let lines: Vec<String> = text
                        .lines()
                        .map(|l| echo_cut(l, MAX_MESSAGE_CHARS))
                        .collect();
                    (line, lines.join("\n"))
                })
                .collect(),
        })
    }

    /// The line of a diagnostic's place and what is declared there (with
    /// the file and line it was written at, when taken from the file this
    /// one extends).
    fn place(&self, loc: Loc) -> (usize, String) {
        let s = &self.spec;
        let l = &self.lines;
        let named = |kind: &str, name: Option<&String>, lines: &[At], i: usize| {
            let at = lines.get(i);
            let what = format!("{kind} `{}`", name.map_or("?", String::as_str));
            let what = match at.and_then(|a| a.from.as_ref()) {
                Some(from) => format!("{what} (written at {from})"),
                None => what,
            };
            (at.map_or(1, |a| a.line), what)
        };
        match loc {
            Loc::Pipeline => (1, format!("pipeline `{}`", s.name)),
            Loc::Input(i) => named("input", s.inputs.get(i).map(|x| &x.name), &l.inputs, i),
            Loc::State(i) => named("state", s.states.get(i).map(|x| &x.name), &l.states, i),
            Loc::Node(i) | Loc::NodeArg { node: i, .. } | Loc::NodeWeightKey(i) => {
                named("node", s.nodes.get(i).map(|x| &x.name), &l.nodes, i)
            }
            Loc::WriteFrom(i) | Loc::WriteTo(i) => {
                named("state", s.writes.get(i).map(|x| &x.to), &l.writes, i)
            }
            Loc::Mode(i)
            | Loc::ModeKey { mode: i, .. }
            | Loc::ModeValue { mode: i, .. }
            | Loc::ModeRate { mode: i, .. }
            | Loc::ModeRateEvery { mode: i, .. }
            | Loc::ModeRateTrigger { mode: i, .. } => {
                named("mode", s.modes.get(i).map(|x| &x.name), &l.modes, i)
            }
            Loc::Output(i) => named("output", s.outputs.get(i).map(|x| &x.name), &l.outputs, i),
        }
    }
}

/// A node's declaration as the spec's node and, for the library's form,
/// its `params`; `None` when a problem was found (and pushed).
#[allow(clippy::type_complexity)]
fn node_spec(
    d: NodeDecl,
    line: usize,
    problems: &mut Vec<(usize, String)>,
) -> Option<(NodeSpec, Option<serde_json::Map<String, serde_json::Value>>)> {
    let strings = [("name", &d.name), ("op", &d.op)]
        .into_iter()
        .chain(d.ty.iter().map(|t| ("type", t)))
        .chain(d.weight_key.iter().map(|k| ("weight_key", k)))
        .chain(d.inputs.iter().flatten().map(|n| ("input", n)))
        .chain(d.args.iter().flatten().map(|a| match a {
            ArgDecl::Name(n) => ("argument", n),
            ArgDecl::Const { value } => ("constant", value),
        }));
    if !fits(line, "node", strings, problems) {
        return None;
    }
    if d.args.is_some() && (d.inputs.is_some() || d.params.is_some()) {
        problems.push((
            line,
            format!(
                "node `{}`: `args` (a plain op's arguments) cannot go with `inputs` and \
                     `params` (a described op's)",
                d.name
            ),
        ));
        return None;
    }
    let (compilable, strip) = match d.compilable {
        Compilable::No | Compilable::Flag(false) => (false, None),
        Compilable::Flag(true) => (true, None),
        Compilable::Form(f) if f == "map" => (true, Some(StripShape::Map)),
        Compilable::Form(f) if f == "reduce" => (true, Some(StripShape::Reduction)),
        Compilable::Form(f) => {
            problems.push((
                line,
                format!(
                    "node `{}`: `compilable` is true, false, \"map\" or \"reduce\", not \"{f}\"",
                    d.name
                ),
            ));
            (true, None)
        }
    };
    let own_buffer = format!("&mut {}", d.name);
    let library = d.args.is_none();
    let args: Vec<ArgSpec> = match d.args {
        None => d
            .inputs
            .unwrap_or_default()
            .into_iter()
            .map(ArgSpec::Name)
            .collect(),
        Some(args) => args
            .into_iter()
            .map(|a| match a {
                ArgDecl::Name(n) if n == WEIGHTS_ARG => ArgSpec::Weights,
                ArgDecl::Name(n) if n.split_whitespace().eq(own_buffer.split_whitespace()) => {
                    ArgSpec::Buffer
                }
                ArgDecl::Name(n) => ArgSpec::Name(n),
                ArgDecl::Const { value } => ArgSpec::Const(value),
            })
            .collect(),
    };
    let mut node = NodeSpec {
        compilable,
        strip,
        weight_key: d.weight_key,
        fallible: d.fallible,
        ty: d.ty,
        ..NodeSpec::new(d.name, d.op, Vec::<ArgSpec>::new())
    };
    node.args = args;
    node.source = node.dsl_source();
    Some((node, library.then(|| d.params.unwrap_or_default())))
}

/// A parser's message about the file, cut and escaped: it may quote the
/// file's text.
fn message(e: &serde_json::Error) -> String {
    echo_cut(&e.to_string(), MAX_MESSAGE_CHARS)
}

/// Whether each of a declaration's `strings` (field, value) is at most
/// [`MAX_NAME_CHARS`] visible characters; the first that is not is a
/// problem at `line`, quoting it cut and escaped.
fn fits<'s>(
    line: usize,
    what: &str,
    strings: impl IntoIterator<Item = (&'static str, &'s String)>,
    problems: &mut Vec<(usize, String)>,
) -> bool {
    for (field, value) in strings {
        let long = value.chars().nth(MAX_NAME_CHARS).is_some();
        if long || value.chars().any(is_hidden) {
            let why = if long {
                format!("longer than {MAX_NAME_CHARS} characters")
            } else {
                "holds a control or invisible formatting character".to_string()
            };
            problems.push((line, format!("{what}: {field} \"{}\" {why}", echo(value))));
            return false;
        }
    }
    true
}
