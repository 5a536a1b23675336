//! A fluent builder for [`GraphSpec`]: graphs built in code (at run time, in
//! tests, by generators) without spelling out every struct literal.
//!
//! The builder only assembles the declaration; it validates nothing, so a
//! test can build a graph with exactly the mistake it wants
//! [`crate::passes::check::check`] to find. Call [`GraphSpec::check`] (or
//! [`crate::passes::check::check`]) on the result to get the IR and plans, or the
//! diagnostics.
//!
//! ```
//! use cortex_core::spec::{ArgSpec, GraphSpec};
//!
//! let spec = GraphSpec::builder("Smooth")
//!     .input("x", "f32")
//!     .state("_prev", "f32", "0.0")
//!     .node("avg", "mean2", ["x", "_prev"])
//!     .compilable()
//!     .node("boost", "scale", [ArgSpec::from("x"), ArgSpec::constant("2.0")])
//!     .weight_key("wb")
//!     .fallible()
//!     .node("sum", "add_opt", ["avg", "boost", "weights"])
//!     .write("avg", "_prev")
//!     .mode("ON", [("wb", 1.0)])
//!     .mode("OFF", [("wb", 0.0)])
//!     .output("sum", "f32")
//!     .optional_output("boost", "f32")
//!     .build();
//! assert_eq!(spec.nodes[1].source, "node boost = scale(x, 2.0)?;");
//! let checked = spec.check();
//! assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
//! assert_eq!(checked.mode_plans.len(), 2);
//! ```

use crate::model::access::StripShape;
use crate::model::spec::{
    ArgSpec, GraphBuilder, GraphSpec, InputSpec, ModeSpec, NodeSpec, OutputSpec, RateSpec,
    StateSpec, WriteSpec, WEIGHTS_ARG,
};

impl GraphSpec {
    /// Starts a builder for a pipeline named `name`.
    pub fn builder(name: impl Into<String>) -> GraphBuilder {
        GraphBuilder {
            spec: GraphSpec {
                name: name.into(),
                ..GraphSpec::default()
            },
            explicit_source: Vec::new(),
        }
    }
}

impl ArgSpec {
    /// A reference to an input, state or node by name (an edge), even when
    /// the name is `weights` — useful to test the reserved-name rule.
    pub fn name(name: impl Into<String>) -> Self {
        ArgSpec::Name(name.into())
    }

    /// A constant Rust expression passed as written (not an edge).
    pub fn constant(expr: impl Into<String>) -> Self {
        ArgSpec::Const(expr.into())
    }

    /// The node's own buffer (`&mut name` in the DSL), filled in place.
    pub fn buffer() -> Self {
        ArgSpec::Buffer
    }
}

/// `"weights"` is the running weight table ([`ArgSpec::Weights`]), as in the
/// DSL; any other string is a name ([`ArgSpec::Name`]). Use
/// [`ArgSpec::constant`] for a constant.
impl From<&str> for ArgSpec {
    fn from(s: &str) -> Self {
        if s == WEIGHTS_ARG {
            ArgSpec::Weights
        } else {
            ArgSpec::Name(s.to_string())
        }
    }
}

impl From<String> for ArgSpec {
    fn from(s: String) -> Self {
        ArgSpec::from(s.as_str())
    }
}

impl NodeSpec {
    /// An `#[external_call]`, infallible node calling `op` with `args`; its
    /// source text is the declaration as the DSL would spell it.
    pub fn new<A: Into<ArgSpec>>(
        name: impl Into<String>,
        op: impl Into<String>,
        args: impl IntoIterator<Item = A>,
    ) -> Self {
        let mut node = NodeSpec {
            name: name.into(),
            op: op.into(),
            args: args.into_iter().map(Into::into).collect(),
            compilable: false,
            strip: None,
            weight_key: None,
            fallible: false,
            ty: None,
            source: String::new(),
        };
        node.source = node.dsl_source();
        node
    }

    /// The declaration in DSL syntax, e.g. `node blur = ops::blur(gray)?;`
    /// (attributes left out).
    pub fn dsl_source(&self) -> String {
        let args: Vec<String> = self
            .args
            .iter()
            .map(|a| match a {
                ArgSpec::Name(n) | ArgSpec::Const(n) => n.clone(),
                ArgSpec::Weights => WEIGHTS_ARG.to_string(),
                ArgSpec::Buffer => format!("&mut {}", self.name),
            })
            .collect();
        let q = if self.fallible { "?" } else { "" };
        let ty = self.ty.as_ref().map_or(String::new(), |t| format!(": {t}"));
        format!(
            "node {}{ty} = {}({}){q};",
            self.name,
            self.op,
            args.join(", ")
        )
    }
}

impl GraphBuilder {
    /// `input name: ty;`
    pub fn input(mut self, name: impl Into<String>, ty: impl Into<String>) -> Self {
        self.spec.inputs.push(InputSpec {
            name: name.into(),
            ty: ty.into(),
        });
        self
    }

    /// `state name: ty = init;`
    pub fn state(
        mut self,
        name: impl Into<String>,
        ty: impl Into<String>,
        init: impl Into<String>,
    ) -> Self {
        self.spec.states.push(StateSpec {
            name: name.into(),
            ty: ty.into(),
            init: init.into(),
        });
        self
    }

    /// `node name = op(args);` — an `#[external_call]`, infallible node
    /// without weight key until a modifier says otherwise. Each argument is
    /// anything `Into<ArgSpec>`: a `&str` is a name (or `"weights"`, the
    /// weight table); use [`ArgSpec::constant`] for a constant.
    pub fn node<A: Into<ArgSpec>>(
        self,
        name: impl Into<String>,
        op: impl Into<String>,
        args: impl IntoIterator<Item = A>,
    ) -> Self {
        self.push_node(NodeSpec::new(name, op, args))
    }

    /// Adds a node given in full (its source text kept as given).
    pub fn push_node(mut self, node: NodeSpec) -> Self {
        let explicit = !node.source.is_empty() && node.source != node.dsl_source();
        self.spec.nodes.push(node);
        self.explicit_source.push(explicit);
        self
    }

    /// Marks the last node `#[compilable]`.
    ///
    /// # Panics
    /// If no node was added yet.
    pub fn compilable(mut self) -> Self {
        self.last_node("compilable").compilable = true;
        self
    }

    /// Gives the last node a strip form of this shape (it becomes
    /// `#[compilable]`): `#[compilable(strip = …)]` or
    /// `#[compilable(reduce = …)]` in the DSL.
    ///
    /// # Panics
    /// If no node was added yet.
    pub fn strip(mut self, shape: StripShape) -> Self {
        let node = self.last_node("strip");
        node.compilable = true;
        node.strip = Some(shape);
        self
    }

    /// Marks the last node `#[external_call]` (the default).
    ///
    /// # Panics
    /// If no node was added yet.
    pub fn external(mut self) -> Self {
        let node = self.last_node("external");
        node.compilable = false;
        node.strip = None;
        self
    }

    /// Gives the last node `#[weight_key = key]`.
    ///
    /// # Panics
    /// If no node was added yet.
    pub fn weight_key(mut self, key: impl Into<String>) -> Self {
        self.last_node("weight_key").weight_key = Some(key.into());
        self
    }

    /// Marks the last node fallible (written with `?`: it returns a `Result`).
    ///
    /// # Panics
    /// If no node was added yet.
    pub fn fallible(mut self) -> Self {
        self.last_node("fallible").fallible = true;
        self
    }

    /// Declares the last node's value type (`node name: Type = …`), which a
    /// node filling its own buffer ([`ArgSpec::buffer`]) needs.
    ///
    /// # Panics
    /// If no node was added yet.
    pub fn ty(mut self, ty: impl Into<String>) -> Self {
        self.last_node("ty").ty = Some(ty.into());
        self
    }

    /// Sets the last node's source text (by default, its DSL declaration).
    ///
    /// # Panics
    /// If no node was added yet.
    pub fn source(mut self, text: impl Into<String>) -> Self {
        self.last_node("source").source = text.into();
        if let Some(e) = self.explicit_source.last_mut() {
            *e = true;
        }
        self
    }

    /// `from -> to;`: node `from`'s value becomes state `to`'s next value.
    pub fn write(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.spec.writes.push(WriteSpec {
            from: from.into(),
            to: to.into(),
        });
        self
    }

    /// `mode name { key: value, … }`, entries in the given order.
    pub fn mode<K: Into<String>>(
        mut self,
        name: impl Into<String>,
        weights: impl IntoIterator<Item = (K, f64)>,
    ) -> Self {
        self.spec.modes.push(ModeSpec {
            name: name.into(),
            weights: weights.into_iter().map(|(k, v)| (k.into(), v)).collect(),
            rates: Vec::new(),
        });
        self
    }

    /// `where node every k` on the most recently added mode: `node` runs on
    /// every `every`-th frame of that mode, its consumers reading its last
    /// value in between. Without a mode, it does nothing.
    pub fn rate(mut self, node: impl Into<String>, every: u32) -> Self {
        if let Some(m) = self.spec.modes.last_mut() {
            m.rates.push(RateSpec {
                node: node.into(),
                every,
                trigger: None,
            });
        }
        self
    }

    /// `… or source.field…` on the most recently added rate: the node also
    /// runs on a frame where that `bool` graph value is true. `path` is the
    /// graph value's name, then its fields, dot-separated (`scene.is_cut`).
    pub fn trigger(mut self, path: &str) -> Self {
        let mut parts = path.split('.').map(str::to_string);
        let source = parts.next().unwrap_or_default();
        if let Some(r) = self.spec.modes.last_mut().and_then(|m| m.rates.last_mut()) {
            r.trigger = Some((source, parts.collect()));
        }
        self
    }

    /// `output name: ty;` — a non-optional output.
    pub fn output(self, name: impl Into<String>, ty: impl Into<String>) -> Self {
        self.push_output(name, ty, false)
    }

    /// `#[optional] output name: ty;` — a plan may eliminate it.
    pub fn optional_output(self, name: impl Into<String>, ty: impl Into<String>) -> Self {
        self.push_output(name, ty, true)
    }

    fn push_output(
        mut self,
        name: impl Into<String>,
        ty: impl Into<String>,
        optional: bool,
    ) -> Self {
        self.spec.outputs.push(OutputSpec {
            name: name.into(),
            ty: ty.into(),
            optional,
        });
        self
    }

    /// The spec, unvalidated.
    pub fn build(mut self) -> GraphSpec {
        for (node, explicit) in self.spec.nodes.iter_mut().zip(&self.explicit_source) {
            if !explicit {
                node.source = node.dsl_source();
            }
        }
        self.spec
    }

    fn last_node(&mut self, modifier: &str) -> &mut NodeSpec {
        match self.spec.nodes.last_mut() {
            Some(n) => n,
            None => panic!("GraphBuilder::{modifier} applies to the last node, but none was added"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_same_spec_as_struct_literals() {
        let built = GraphSpec::builder("P")
            .input("a", "f32")
            .state("s", "f32", "0.0")
            .node("n", "f", ["a", "s"])
            .compilable()
            .node("w", "g", [ArgSpec::from("a"), ArgSpec::constant("&[1, 2]")])
            .weight_key("wk")
            .fallible()
            .node("o", "h", ["n", "w", "weights"])
            .write("n", "s")
            .mode("M", [("wk", 0.5)])
            .output("o", "f32")
            .optional_output("w", "u8")
            .build();
        let node = |name: &str, op: &str, args: Vec<ArgSpec>, source: &str| NodeSpec {
            name: name.into(),
            op: op.into(),
            args,
            compilable: false,
            strip: None,
            weight_key: None,
            fallible: false,
            ty: None,
            source: source.into(),
        };
        let expected = GraphSpec {
            name: "P".into(),
            inputs: vec![InputSpec {
                name: "a".into(),
                ty: "f32".into(),
            }],
            states: vec![StateSpec {
                name: "s".into(),
                ty: "f32".into(),
                init: "0.0".into(),
            }],
            nodes: vec![
                NodeSpec {
                    compilable: true,
                    strip: None,
                    ..node(
                        "n",
                        "f",
                        vec![ArgSpec::Name("a".into()), ArgSpec::Name("s".into())],
                        "node n = f(a, s);",
                    )
                },
                NodeSpec {
                    weight_key: Some("wk".into()),
                    fallible: true,
                    ..node(
                        "w",
                        "g",
                        vec![ArgSpec::Name("a".into()), ArgSpec::Const("&[1, 2]".into())],
                        "node w = g(a, &[1, 2])?;",
                    )
                },
                node(
                    "o",
                    "h",
                    vec![
                        ArgSpec::Name("n".into()),
                        ArgSpec::Name("w".into()),
                        ArgSpec::Weights,
                    ],
                    "node o = h(n, w, weights);",
                ),
            ],
            writes: vec![WriteSpec {
                from: "n".into(),
                to: "s".into(),
            }],
            modes: vec![ModeSpec {
                name: "M".into(),
                weights: vec![("wk".into(), 0.5)],
                rates: Vec::new(),
            }],
            outputs: vec![
                OutputSpec {
                    name: "o".into(),
                    ty: "f32".into(),
                    optional: false,
                },
                OutputSpec {
                    name: "w".into(),
                    ty: "u8".into(),
                    optional: true,
                },
            ],
        };
        assert_eq!(built, expected);
        let checked = built.check();
        assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
    }

    #[test]
    fn explicit_source_survives_modifiers() {
        let spec = GraphSpec::builder("P")
            .node("n", "f", ["a"])
            .source("node n = f(a) /* custom */;")
            .fallible()
            .push_node(NodeSpec {
                source: "kept".into(),
                ..NodeSpec::new("m", "g", ["n"])
            })
            .external()
            .build();
        assert_eq!(spec.nodes[0].source, "node n = f(a) /* custom */;");
        assert!(spec.nodes[0].fallible);
        assert_eq!(spec.nodes[1].source, "kept");
        assert!(!spec.nodes[1].compilable);
    }

    #[test]
    fn name_weights_is_a_name_not_the_table() {
        assert_eq!(ArgSpec::from("weights"), ArgSpec::Weights);
        assert_eq!(
            ArgSpec::name("weights"),
            ArgSpec::Name("weights".to_string())
        );
        assert_eq!(ArgSpec::from(String::from("x")), ArgSpec::Name("x".into()));
    }

    #[test]
    #[should_panic(expected = "GraphBuilder::compilable applies to the last node")]
    fn modifier_without_node_panics() {
        let _ = GraphSpec::builder("P").compilable();
    }
}
