//! The op table, what a run-time graph may name: ops (described ones by
//! their library name, [`OpDesc`], and plain ones by the path a node
//! calls), types by name with their initial values, constants (by the
//! expression a node passes or a state starts from) and the `bool` fields
//! a rate's trigger reads.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::model::weights::Weights;
use crate::runtime::error::NodeFailure;
use crate::runtime::strip::{AnyPlane, PlaneValue, StripError, StripForm};

use super::desc::{CallArgs, OpDesc};
use super::fused::{Form, FormFn, PlaneFn};

/// Makes a node's strip form from its constant arguments.
type MakeForm = dyn Fn(&FormArgs<'_>) -> Option<Arc<FormFn>> + Send + Sync;

/// A node's constant arguments, as its strip form is made from them
/// ([`Ops::strip`]).
pub struct FormArgs<'a> {
    pub(crate) consts: &'a [Option<Value>],
}

impl FormArgs<'_> {
    /// Argument `i` when it is a constant of type `T`.
    pub fn constant<T: Any>(&self, i: usize) -> Option<&T> {
        self.consts.get(i)?.as_ref()?.downcast_ref::<T>()
    }
}

/// A value between run-time nodes: shared, immutable, of any type.
pub type Value = Arc<dyn Any + Send + Sync>;

/// An op: computes one node's value from its [`Call`], by
/// [`Call::put`] or by filling [`Call::fill`].
pub type OpFn = dyn Fn(&mut Call<'_>) -> Result<(), NodeFailure> + Send + Sync;

/// Reads a `bool` field of a value of a registered type.
type FlagFn = dyn Fn(&(dyn Any + Send + Sync)) -> Option<bool> + Send + Sync;

/// Shows a value of a registered type as JSON.
type ShowFn = dyn Fn(&(dyn Any + Send + Sync)) -> Option<serde_json::Value> + Send + Sync;

/// Reads the payload fields of a value of a registered type.
type PayloadFn = dyn for<'v> Fn(&'v (dyn Any + Send + Sync)) -> Option<Vec<(&'static str, Payload<'v>)>>
    + Send
    + Sync;

/// Data a type's view only summarises (a JPEG's size, a grid's shape),
/// handed whole to a reader that takes it: Python's result dicts add each
/// field beside the view's, as `bytes` or a numpy array; JSON shows the
/// summary alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Payload<'v> {
    /// Bytes, such as an encoded image.
    Bytes(&'v [u8]),
    /// A `rows × cols` grid of `f32`, row-major.
    GridF32 {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// `rows · cols` values, row by row.
        data: &'v [f32],
    },
}

/// The ops, constants and trigger fields a run-time graph may name, and
/// how to show the values of its types.
#[derive(Clone, Default)]
pub struct Ops {
    ops: HashMap<String, Arc<OpFn>>,
    constants: HashMap<String, Value>,
    flags: HashMap<(TypeId, String), Arc<FlagFn>>,
    shows: HashMap<TypeId, Arc<ShowFn>>,
    payloads: HashMap<TypeId, Arc<PayloadFn>>,
    forms: HashMap<String, Arc<MakeForm>>,
    planes: HashMap<TypeId, PlaneFn>,
    descs: BTreeMap<String, Arc<OpDesc>>,
    types: BTreeMap<String, TypeId>,
    type_names: HashMap<TypeId, String>,
    initials: HashMap<TypeId, Value>,
}

/// The initial value a state written `"default"` (or with no `init` in a
/// graph file) starts from: its type's, as registered with [`Ops::ty`].
pub const DEFAULT_INIT: &str = "default";

impl std::fmt::Debug for Ops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut ops: Vec<&String> = self.ops.keys().collect();
        ops.sort();
        f.debug_struct("Ops")
            .field("ops", &ops)
            .field("types", &self.types.keys().collect::<Vec<_>>())
            .field("constants", &self.constants.len())
            .finish()
    }
}

impl Ops {
    /// An empty op table.
    pub fn new() -> Ops {
        Ops::default()
    }

    /// Registers `op` under `name`, the path a node calls (e.g.
    /// `ops::to_gray_into`); a later registration under the same name
    /// replaces it.
    pub fn op(
        &mut self,
        name: impl Into<String>,
        op: impl Fn(&mut Call<'_>) -> Result<(), NodeFailure> + Send + Sync + 'static,
    ) -> &mut Self {
        self.ops.insert(name.into(), Arc::new(op));
        self
    }

    /// Registers a described op under its name: how it runs, its strip
    /// form, and what the build-time checks, graph files' `params` and the
    /// listing read of it. A later registration under the same name
    /// replaces it.
    pub fn describe(&mut self, desc: OpDesc) -> &mut Self {
        let name = desc.name.clone();
        self.ops.insert(name.clone(), desc.run.clone());
        match desc.form.clone() {
            Some(make) => {
                let at = desc.inputs.len();
                let form = move |a: &FormArgs<'_>| {
                    let p: &(dyn Any + Send + Sync) = &**a.consts.get(at)?.as_ref()?;
                    make(p)
                };
                self.forms.insert(name.clone(), Arc::new(form));
            }
            None => {
                self.forms.remove(&name);
            }
        }
        self.descs.insert(name, Arc::new(desc));
        self
    }

    /// Names type `T` for graph files and descriptors' messages (`GrayImage`
    /// rather than `ndarray::ArrayBase<…>`), with the value a state of
    /// this type starts from when its file writes no `init`.
    pub fn ty<T: Any + Send + Sync>(&mut self, name: &str, initial: T) -> &mut Self {
        let id = TypeId::of::<T>();
        self.types.insert(name.to_string(), id);
        self.type_names.insert(id, name.to_string());
        self.initials.insert(id, Arc::new(initial));
        self
    }

    /// The descriptor of op `name`, when it was registered with
    /// [`describe`](Self::describe).
    pub fn descriptor(&self, name: &str) -> Option<&OpDesc> {
        self.descs.get(name).map(|d| &**d)
    }

    /// The descriptor naming `path`'s function (`ops::to_gray_into`, by
    /// its last segment) among the Rust functions a compiled graph calls
    /// for it ([`OpDesc::calls`]).
    pub fn descriptor_calling(&self, path: &str) -> Option<&OpDesc> {
        let last = path.rsplit("::").next().unwrap_or(path).trim();
        self.descriptors()
            .find(|d| d.calls().iter().any(|c| c == last))
    }

    /// Every descriptor, by name.
    pub fn descriptors(&self) -> impl Iterator<Item = &OpDesc> {
        self.descs.values().map(|d| &**d)
    }

    /// The type registered under `name`.
    pub fn type_named(&self, name: &str) -> Option<TypeId> {
        self.types.get(name).copied()
    }

    /// The registered name of a type, when it has one.
    pub fn name_of(&self, id: TypeId) -> Option<&str> {
        self.type_names.get(&id).map(String::as_str)
    }

    /// The registered type names, sorted.
    pub fn type_names(&self) -> impl Iterator<Item = &str> {
        self.types.keys().map(String::as_str)
    }

    /// Registers how op `name` runs inside a fused strip group: `make`
    /// gives the form (what `#[compilable(strip = …)]` or
    /// `#[compilable(reduce = …)]` names for a compiled pipeline) of a node
    /// calling `name`, from the node's constant arguments — or `None` for
    /// constants it cannot take, and the node runs its own call. A node
    /// whose form has the shape it declares (`"compilable": "map"` or
    /// `"reduce"`) joins the fused groups of its plans, and its op's own
    /// call runs whenever the group declines a frame, so the form must
    /// compute exactly what the op computes. The group reads the values it
    /// takes from outside as planes: register their types with
    /// [`plane`](Self::plane).
    pub fn strip<F, M>(&mut self, name: impl Into<String>, make: M) -> &mut Self
    where
        F: StripForm + 'static,
        F::Value: Any + Send + Sync + Default,
        M: Fn(&FormArgs<'_>) -> Option<F> + Send + Sync + 'static,
    {
        let make =
            move |args: &FormArgs<'_>| make(args).map(|form| Arc::new(Form(form)) as Arc<FormFn>);
        self.forms.insert(name.into(), Arc::new(make));
        self
    }

    /// Registers `T` as a value a fused group reads as a plane, without a
    /// copy (a frame, a gray image, a score map). A group reading a value
    /// of a type not registered declines every frame: its members run
    /// their own calls.
    pub fn plane<T: PlaneValue + Any + Send + Sync>(&mut self) -> &mut Self {
        fn read<T: PlaneValue + Any>(
            v: &(dyn Any + Send + Sync),
        ) -> Option<Result<AnyPlane<'_>, StripError>> {
            v.downcast_ref::<T>().map(PlaneValue::as_plane)
        }
        self.planes.insert(TypeId::of::<T>(), read::<T>);
        self
    }

    /// Registers a constant: the value a node argument or a state's initial
    /// value written as `text` stands for. Spacing and a leading `&` do not
    /// matter (`&CenterParams::DEFAULT` is `CenterParams::DEFAULT`). Number
    /// literals and `true`/`false` need no registration: they are `f64` and
    /// `bool`.
    pub fn constant<T: Any + Send + Sync>(&mut self, text: &str, value: T) -> &mut Self {
        self.constants.insert(constant_key(text), Arc::new(value));
        self
    }

    /// Registers a constant already made a [`Value`] (a node's parsed
    /// parameters).
    pub(crate) fn constant_erased(&mut self, text: &str, value: Value) {
        self.constants.insert(constant_key(text), value);
    }

    /// Registers `field` of values of type `T` as a `bool` a rate's trigger
    /// may read (`scene.changed` reads field `changed` of `scene`'s value).
    pub fn flag<T: Any + Send + Sync>(
        &mut self,
        field: impl Into<String>,
        read: fn(&T) -> bool,
    ) -> &mut Self {
        let f = move |v: &(dyn Any + Send + Sync)| v.downcast_ref::<T>().map(read);
        self.flags
            .insert((TypeId::of::<T>(), field.into()), Arc::new(f));
        self
    }

    /// Registers how a value of type `T` is shown (in the runner's JSON
    /// lines, for one): what it means to a reader, not every byte.
    pub fn show<T: Any + Send + Sync>(&mut self, show: fn(&T) -> serde_json::Value) -> &mut Self {
        let f = move |v: &(dyn Any + Send + Sync)| v.downcast_ref::<T>().map(show);
        self.shows.insert(TypeId::of::<T>(), Arc::new(f));
        self
    }

    /// Registers the payload of values of type `T`: the data its view
    /// ([`show`](Self::show)) only summarises, each field by the name a
    /// reader that takes it gives it.
    pub fn payload<T: Any + Send + Sync>(
        &mut self,
        fields: for<'v> fn(&'v T) -> Vec<(&'static str, Payload<'v>)>,
    ) -> &mut Self {
        // The bound gives the closure its signature: its fields borrow
        // from the value, for any lifetime of it.
        fn read<F>(f: F) -> F
        where
            F: for<'v> Fn(&'v (dyn Any + Send + Sync)) -> Option<Vec<(&'static str, Payload<'v>)>>,
        {
            f
        }
        let f = read(move |v| v.downcast_ref::<T>().map(fields));
        self.payloads.insert(TypeId::of::<T>(), Arc::new(f));
        self
    }

    /// The payload fields of `value` registered with
    /// [`payload`](Self::payload) for its type; none for another type.
    pub fn payload_of<'v>(&self, value: &'v Value) -> Vec<(&'static str, Payload<'v>)> {
        let v: &'v (dyn Any + Send + Sync) = &**value;
        self.payloads
            .get(&v.type_id())
            .and_then(|fields| fields(v))
            .unwrap_or_default()
    }

    /// `value` as JSON, when its type was registered with
    /// [`show`](Self::show); a `f64`, `f32`, `bool`, integer or `String`
    /// shows as itself; anything else is `null`.
    pub fn to_json(&self, value: &Value) -> serde_json::Value {
        let v: &(dyn Any + Send + Sync) = &**value;
        if let Some(show) = self.shows.get(&v.type_id()) {
            return show(v).unwrap_or_default();
        }
        use serde_json::Value as J;
        if let Some(x) = v.downcast_ref::<f64>() {
            J::from(*x)
        } else if let Some(x) = v.downcast_ref::<f32>() {
            J::from(*x)
        } else if let Some(x) = v.downcast_ref::<bool>() {
            J::from(*x)
        } else if let Some(x) = v.downcast_ref::<u64>() {
            J::from(*x)
        } else if let Some(x) = v.downcast_ref::<i64>() {
            J::from(*x)
        } else if let Some(x) = v.downcast_ref::<String>() {
            J::from(x.as_str())
        } else {
            J::Null
        }
    }

    /// Every op and constant of `other`, replacing those of the same name.
    pub fn extend(&mut self, other: &Ops) -> &mut Self {
        self.ops
            .extend(other.ops.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.constants
            .extend(other.constants.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.flags
            .extend(other.flags.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.shows
            .extend(other.shows.iter().map(|(k, v)| (*k, v.clone())));
        self.payloads
            .extend(other.payloads.iter().map(|(k, v)| (*k, v.clone())));
        self.forms
            .extend(other.forms.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.planes
            .extend(other.planes.iter().map(|(k, v)| (*k, *v)));
        self.descs
            .extend(other.descs.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.types
            .extend(other.types.iter().map(|(k, v)| (k.clone(), *v)));
        self.type_names
            .extend(other.type_names.iter().map(|(k, v)| (*k, v.clone())));
        self.initials
            .extend(other.initials.iter().map(|(k, v)| (*k, v.clone())));
        self
    }

    /// Whether an op is registered under `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.ops.contains_key(name)
    }

    /// The names of the registered ops.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.ops.keys().map(String::as_str)
    }

    /// The op registered under `name`.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<OpFn>> {
        self.ops.get(name).cloned()
    }

    /// The strip form of a node calling op `name` with constant
    /// arguments `consts`, when one is registered and takes them.
    pub(crate) fn form(&self, name: &str, consts: &[Option<Value>]) -> Option<Arc<FormFn>> {
        self.forms.get(name)?(&FormArgs { consts })
    }

    /// `value` as a plane, when its type was registered with
    /// [`plane`](Self::plane) and it is one.
    pub(crate) fn as_plane<'v>(&self, value: &'v Value) -> Option<AnyPlane<'v>> {
        let v: &(dyn Any + Send + Sync) = &**value;
        let read = self.planes.get(&v.type_id())?;
        read(v)?.ok()
    }

    /// The value of the constant written `text`: registered, or a number
    /// or `bool` literal.
    pub(crate) fn constant_value(&self, text: &str) -> Option<Value> {
        let key = constant_key(text);
        if let Some(v) = self.constants.get(&key) {
            return Some(v.clone());
        }
        match key.as_str() {
            "true" => Some(Arc::new(true)),
            "false" => Some(Arc::new(false)),
            k => k.parse::<f64>().ok().map(|x| Arc::new(x) as Value),
        }
    }

    /// The initial value of a state of type `ty` written `init`: a
    /// registered constant, a literal, or — written [`DEFAULT_INIT`] — the
    /// initial value registered for the type.
    pub(crate) fn state_initial(&self, init: &str, ty: &str) -> Option<Value> {
        if init.trim() == DEFAULT_INIT {
            let id = self.type_named(ty.trim())?;
            return self.initials.get(&id).cloned();
        }
        self.constant_value(init)
    }

    /// The `bool` fields registered with [`flag`](Self::flag) for values
    /// of type `ty`, sorted (what a trigger on such a value may read).
    pub(crate) fn flag_fields(&self, ty: TypeId) -> Vec<&str> {
        let mut fields: Vec<&str> = self
            .flags
            .keys()
            .filter(|(t, _)| *t == ty)
            .map(|(_, f)| f.as_str())
            .collect();
        fields.sort_unstable();
        fields
    }

    /// Reads `fields` (one field, or none: the value is a `bool`) of `v`.
    pub(crate) fn read_flag(&self, v: &(dyn Any + Send + Sync), fields: &[&str]) -> Option<bool> {
        match fields {
            [] => v.downcast_ref::<bool>().copied(),
            [field] => {
                let read = self.flags.get(&(v.type_id(), (*field).to_string()))?;
                read(v)
            }
            _ => None,
        }
    }
}

/// `text` without a leading `&` and without spacing outside string
/// literals (a path in a model's parameters keeps its spaces, so two paths
/// differing only in spacing stay two constants).
fn constant_key(text: &str) -> String {
    let mut key = String::with_capacity(text.len());
    let (mut quoted, mut escaped) = (false, false);
    for c in text.chars() {
        if quoted {
            key.push(c);
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => quoted = false,
                _ => escaped = false,
            }
        } else if c == '"' {
            quoted = true;
            key.push(c);
        } else if !c.is_whitespace() {
            key.push(c);
        }
    }
    key.strip_prefix('&').map_or(key.clone(), str::to_string)
}

/// One node's call: its arguments in call order, the weight table and the
/// node's value to set.
pub struct Call<'a> {
    pub(crate) node: &'a str,
    pub(crate) args: &'a [Option<&'a Value>],
    pub(crate) weights: &'a Weights,
    pub(crate) out: &'a mut Option<Value>,
    pub(crate) set: bool,
}

impl<'a> Call<'a> {
    /// What the call reads (its arguments and the weight table), apart
    /// from the buffer it fills.
    pub fn args(&self) -> CallArgs<'a> {
        CallArgs {
            node: self.node,
            args: self.args,
            weights: self.weights,
        }
    }

    /// The node's name.
    pub fn node(&self) -> &str {
        self.node
    }

    /// Argument `i` (a required edge, an input, a state or a constant),
    /// as a `T`.
    pub fn arg<T: Any>(&self, i: usize) -> Result<&'a T, NodeFailure> {
        self.args().arg(i)
    }

    /// Argument `i` from a weighted node: `None` when its producer does not
    /// run.
    pub fn opt<T: Any>(&self, i: usize) -> Result<Option<&'a T>, NodeFailure> {
        self.args().opt(i)
    }

    /// The running weight table (an argument written `weights`).
    pub fn weights(&self) -> &'a Weights {
        self.weights
    }

    /// Sets the node's value.
    pub fn put<T: Any + Send + Sync>(&mut self, value: T) {
        *self.out = Some(Arc::new(value));
        self.set = true;
    }

    /// The node's buffer, to fill in place (an argument written `&mut
    /// name`): last frame's value when nothing else holds it any more and
    /// it is a `T`, else `T::default()`. The op must overwrite it whatever
    /// it held.
    pub fn fill<T: Any + Send + Sync + Default>(&mut self) -> Result<&mut T, NodeFailure> {
        let reusable = self
            .out
            .as_mut()
            .and_then(Arc::get_mut)
            .is_some_and(|v| v.is::<T>());
        if !reusable {
            *self.out = Some(Arc::new(T::default()));
        }
        self.set = true;
        // The slot now holds a `T` nothing else shares: reused or made
        // just above.
        let node = self.node;
        self.out
            .as_mut()
            .and_then(Arc::get_mut)
            .and_then(|v| v.downcast_mut::<T>())
            .ok_or_else(|| format!("the buffer of `{node}` is shared").into())
    }
}
