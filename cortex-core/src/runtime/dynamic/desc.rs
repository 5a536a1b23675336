//! Op descriptors: an op declared once — a stable name, typed inputs and
//! output, typed parameters with defaults, how it runs, its strip form and
//! the kernels behind it. [`Ops::describe`](super::Ops::describe) registers
//! one; the run-time table, graph files (`"op": "vision.text_map",
//! "params": {…}`), the build-time type checks and the `ops` listing all
//! read it, so nothing else lists the op.

use std::any::{type_name, Any, TypeId};
use std::marker::PhantomData;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::model::access::StripShape;
use crate::runtime::error::NodeFailure;
use crate::runtime::strip::{FormShape, StripForm};
use crate::weights::Weights;

use super::fused::{Form, FormFn};
use super::ops::{Call, OpFn, Value};
use super::params::{parse_params, ParamsDesc};

/// An op's parameters: a struct read from a graph file's `"params"` by
/// serde, every field optional (`#[serde(default)]`: a field not written
/// keeps [`Default`]'s value) and no other field accepted
/// (`#[serde(deny_unknown_fields)]`).
pub trait Params: Serialize + DeserializeOwned + Default + Send + Sync + 'static {
    /// Checks the values' ranges (serde has checked their types): the
    /// reason, in the parameters' own words, when one is out of range.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }

    /// Loads what the parameters name (a model file), once, when the graph
    /// is built and after [`check`](Self::check): the loaded resource is
    /// kept in a field serde skips, and every node passing the same
    /// parameters to the same op shares it.
    fn prepare(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// The parameters of an op that takes none: `"params"` must be empty.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl Params for NoParams {}

/// A type as a descriptor names it: its identity and its Rust name; the
/// name a graph file writes is the one registered with
/// [`Ops::ty`](super::Ops::ty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeRef {
    /// Its identity.
    pub id: TypeId,
    /// Its Rust path, for messages when it has no registered name.
    pub rust: &'static str,
}

impl TypeRef {
    /// The type `T`.
    pub fn of<T: Any>() -> TypeRef {
        TypeRef {
            id: TypeId::of::<T>(),
            rust: type_name::<T>(),
        }
    }
}

/// One input of an op.
#[derive(Debug, Clone)]
pub struct Port {
    /// Its name, for the listing and messages.
    pub name: String,
    /// The type it reads.
    pub ty: TypeRef,
    /// Read as `Option<&T>`: absent when its producer does not run (a
    /// weighted node).
    pub optional: bool,
}

/// An op, declared once; made with [`OpDesc::builder`].
pub struct OpDesc {
    pub(crate) name: String,
    pub(crate) summary: String,
    pub(crate) inputs: Vec<Port>,
    pub(crate) output: TypeRef,
    pub(crate) fills: bool,
    pub(crate) weights: bool,
    pub(crate) compilable: bool,
    pub(crate) strip: Option<StripShape>,
    pub(crate) params: ParamsDesc,
    pub(crate) kernels: Vec<String>,
    pub(crate) calls: Vec<String>,
    pub(crate) files: Vec<String>,
    pub(crate) run: Arc<OpFn>,
    pub(crate) form: Option<Arc<MakeTypedForm>>,
}

/// Makes a node's strip form from its parameters.
pub(crate) type MakeTypedForm =
    dyn Fn(&(dyn Any + Send + Sync)) -> Option<Arc<FormFn>> + Send + Sync;

impl std::fmt::Debug for OpDesc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpDesc")
            .field("name", &self.name)
            .field("inputs", &self.inputs)
            .field("output", &self.output.rust)
            .finish_non_exhaustive()
    }
}

impl OpDesc {
    /// Starts the descriptor of op `name` (`"vision.to_gray"`: a family, a
    /// dot, the op) taking parameters `P` ([`NoParams`] for none);
    /// `summary` is its one line in the listing.
    pub fn builder<P: Params>(name: impl Into<String>, summary: impl Into<String>) -> OpBuilder<P> {
        OpBuilder {
            name: name.into(),
            summary: summary.into(),
            inputs: Vec::new(),
            weights: false,
            compilable: false,
            strip: None,
            docs: Vec::new(),
            kernels: Vec::new(),
            calls: Vec::new(),
            files: Vec::new(),
            form: None,
            params: PhantomData,
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its one-line summary.
    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// Its inputs, in call order.
    pub fn inputs(&self) -> &[Port] {
        &self.inputs
    }

    /// The type of its value.
    pub fn output(&self) -> TypeRef {
        self.output
    }

    /// Whether it reads the running mode's weight table.
    pub fn reads_weights(&self) -> bool {
        self.weights
    }

    /// Whether it fills a buffer the pipeline owns (planned memory) rather
    /// than returning a new value.
    pub fn fills(&self) -> bool {
        self.fills
    }

    /// The strip form's shape, when it has one.
    pub fn strip(&self) -> Option<StripShape> {
        self.strip
    }

    /// The kernels the registry chooses from for it, by name.
    pub fn kernels(&self) -> &[String] {
        &self.kernels
    }

    /// The Rust functions a compiled graph calls for it, by name
    /// (`to_gray_into`, `to_gray`): what writes a `cortex_graph!` pipeline
    /// out as a graph file ([`GraphFile::from_ir`](super::GraphFile::from_ir)).
    pub fn calls(&self) -> &[String] {
        &self.calls
    }

    /// Whether `text`, a compiled call's constant argument, is this op's
    /// default parameters as Rust writes them: `&P::DEFAULT` or
    /// `P::default()`, `P` the parameters' type by its last path segment.
    pub(crate) fn is_default_params(&self, text: &str) -> bool {
        let text: String = text.split_whitespace().collect();
        let text = text.trim_start_matches('&');
        let ty = self.params.type_name;
        [format!("{ty}::DEFAULT"), format!("{ty}::default()")]
            .iter()
            .any(|spelling| text == spelling || text.ends_with(&format!("::{spelling}")))
    }

    /// The parameters naming files ([`OpBuilder::file`]): a graph file's
    /// relative path in one is taken from the graph file's folder.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// Each parameter (dotted path for a nested one), its default as JSON
    /// and its documentation.
    pub fn params(&self) -> Vec<(String, serde_json::Value, &str)> {
        self.params.list()
    }

    /// Parses a node's `params` into the value its op reads.
    ///
    /// # Errors
    /// One line naming the parameter and what is wrong: an unknown name
    /// (with the valid names), a wrong type, or a value out of range.
    pub fn parse(
        &self,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Value, String> {
        (self.params.parse)(params)
    }
}

/// A descriptor being made: inputs, parameters' documentation, strip form;
/// [`returns`](Self::returns) or [`fills`](Self::fills) finishes it.
pub struct OpBuilder<P> {
    name: String,
    summary: String,
    inputs: Vec<Port>,
    weights: bool,
    compilable: bool,
    strip: Option<StripShape>,
    docs: Vec<(String, String)>,
    kernels: Vec<String>,
    calls: Vec<String>,
    files: Vec<String>,
    form: Option<Arc<MakeTypedForm>>,
    params: PhantomData<fn() -> P>,
}

impl<P: Params> OpBuilder<P> {
    /// Adds an input of type `T`, read with [`CallArgs::arg`].
    pub fn input<T: Any>(mut self, name: &str) -> Self {
        self.inputs.push(Port {
            name: name.into(),
            ty: TypeRef::of::<T>(),
            optional: false,
        });
        self
    }

    /// Adds an input of type `T` that may be absent (its producer is a
    /// weighted node the plan does not run), read with [`CallArgs::opt`].
    pub fn optional<T: Any>(mut self, name: &str) -> Self {
        self.inputs.push(Port {
            name: name.into(),
            ty: TypeRef::of::<T>(),
            optional: true,
        });
        self
    }

    /// The op reads the running mode's weight table ([`CallArgs::weights`]).
    pub fn weights(mut self) -> Self {
        self.weights = true;
        self
    }

    /// Documents parameter `path` (`"delta"`, or `"mser.delta"` for a
    /// nested one): what it means and its valid range, for the listing.
    pub fn param(mut self, path: &str, doc: &str) -> Self {
        self.docs.push((path.into(), doc.into()));
        self
    }

    /// Documents parameter `name`, a string naming a file (a model): a
    /// relative path a graph file writes is taken from the graph file's
    /// folder, as an `include` is, so the file runs from any working
    /// directory; an absolute path is kept.
    pub fn file(mut self, name: &str, doc: &str) -> Self {
        self.files.push(name.into());
        self.param(name, doc)
    }

    /// Names the Rust functions a compiled graph calls for this op (the
    /// last segment of the path: `"to_gray_into"`, `"to_gray"`), so a
    /// `cortex_graph!` pipeline calling them can be written out as a graph
    /// file over this op.
    pub fn calls(mut self, names: &[&str]) -> Self {
        self.calls = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Names the kernels the registry chooses from (`"rust"`, `"opencv"`),
    /// each with how it may be chosen where that is not by measurement
    /// alone (the registry's declaration of the op gives them).
    pub fn kernels<S: AsRef<str>>(mut self, names: &[S]) -> Self {
        self.kernels = names.iter().map(|s| s.as_ref().to_string()).collect();
        self
    }

    /// The op is a pure function of its inputs: a node calling it may be
    /// grouped with others in an island (`#[compilable]`).
    pub fn compilable(mut self) -> Self {
        self.compilable = true;
        self
    }

    /// The op's strip form, made from a node's parameters (`None` for
    /// parameters it cannot take: the node runs its own call). The form
    /// must compute exactly what the op computes: a fused group falls back
    /// to the op whenever it declines a frame.
    pub fn strip<F>(mut self, make: impl Fn(&P) -> Option<F> + Send + Sync + 'static) -> Self
    where
        F: StripForm + 'static,
        F::Value: Any + Send + Sync + Default,
    {
        self.compilable = true;
        self.strip = Some(<F::Shape as FormShape>::SHAPE);
        let make = move |p: &(dyn Any + Send + Sync)| {
            let p = p.downcast_ref::<P>()?;
            make(p).map(|form| Arc::new(Form(form)) as Arc<FormFn>)
        };
        self.form = Some(Arc::new(make));
        self
    }

    /// Finishes an op that returns a new `T` each call.
    pub fn returns<T: Any + Send + Sync>(
        self,
        run: impl Fn(&CallArgs<'_>, &P) -> Result<T, NodeFailure> + Send + Sync + 'static,
    ) -> OpDesc {
        let at = self.inputs.len();
        let op = move |c: &mut Call<'_>| -> Result<(), NodeFailure> {
            let ins = c.args();
            let v = run(&ins, ins.arg::<P>(at)?)?;
            c.put(v);
            Ok(())
        };
        self.finish(TypeRef::of::<T>(), false, Arc::new(op))
    }

    /// Finishes an op that fills the node's buffer, a `T` the pipeline
    /// owns and reuses frame after frame: `run` must overwrite it whatever
    /// it held.
    pub fn fills<T: Any + Send + Sync + Default>(
        self,
        run: impl Fn(&CallArgs<'_>, &P, &mut T) -> Result<(), NodeFailure> + Send + Sync + 'static,
    ) -> OpDesc {
        let at = self.inputs.len();
        let op = move |c: &mut Call<'_>| -> Result<(), NodeFailure> {
            let ins = c.args();
            let p = ins.arg::<P>(at)?;
            run(&ins, p, c.fill::<T>()?)
        };
        self.finish(TypeRef::of::<T>(), true, Arc::new(op))
    }

    fn finish(self, output: TypeRef, fills: bool, run: Arc<OpFn>) -> OpDesc {
        OpDesc {
            name: self.name,
            summary: self.summary,
            inputs: self.inputs,
            output,
            fills,
            weights: self.weights,
            compilable: self.compilable,
            strip: self.strip,
            params: ParamsDesc::new::<P>(self.docs, parse_params::<P>),
            kernels: self.kernels,
            calls: self.calls,
            files: self.files,
            run,
            form: self.form,
        }
    }
}

/// What a described op reads of one call: its inputs, in the order the
/// descriptor declares them, and the weight table.
#[derive(Clone, Copy)]
pub struct CallArgs<'a> {
    pub(crate) node: &'a str,
    pub(crate) args: &'a [Option<&'a Value>],
    pub(crate) weights: &'a Weights,
}

impl<'a> CallArgs<'a> {
    /// Input `i` as a `T`.
    ///
    /// # Errors
    /// The input has no value or is not a `T` (a graph the build-time type
    /// check let through only when built without descriptors).
    pub fn arg<T: Any>(&self, i: usize) -> Result<&'a T, NodeFailure> {
        match self.args.get(i).copied().flatten() {
            Some(v) => v.downcast_ref::<T>().ok_or_else(|| {
                format!(
                    "argument {i} of `{}` is not a `{}`",
                    self.node,
                    type_name::<T>()
                )
                .into()
            }),
            None => Err(format!("argument {i} of `{}` has no value", self.node).into()),
        }
    }

    /// Optional input `i`: `None` when its producer does not run.
    ///
    /// # Errors
    /// As [`arg`](Self::arg), for a value of another type.
    pub fn opt<T: Any>(&self, i: usize) -> Result<Option<&'a T>, NodeFailure> {
        match self.args.get(i).copied().flatten() {
            Some(_) => self.arg(i).map(Some),
            None => Ok(None),
        }
    }

    /// The running weight table.
    pub fn weights(&self) -> &'a Weights {
        self.weights
    }

    /// The node's name.
    pub fn node(&self) -> &'a str {
        self.node
    }
}
