//! Which of a pipeline's outputs a caller reads: the roots of a plan's
//! liveness search, so that only the producers of what is read run.

use crate::model::ir::GraphIr;

/// A set of a pipeline's outputs, by their index in declaration order
/// (`GraphIr::outputs`). Outputs past the 64th cannot be left out: they are
/// always in the set.
///
/// An output left out of the set is not computed: its producer, and what
/// only it needed, do not run (see the run functions taking a set for how an
/// absent output shows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OutputSet(u64);

/// An output name the pipeline does not declare.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("pipeline `{pipeline}` has no output `{name}` (it has {known})")]
pub struct UnknownOutput {
    /// The name asked for.
    pub name: String,
    /// The pipeline's name.
    pub pipeline: String,
    /// Its outputs, comma-separated.
    pub known: String,
}

impl Default for OutputSet {
    fn default() -> Self {
        OutputSet::ALL
    }
}

impl OutputSet {
    /// Every output: what a run without a set computes.
    pub const ALL: OutputSet = OutputSet(u64::MAX);
    /// No output (states and a rated mode's triggers still keep their
    /// writers running).
    pub const NONE: OutputSet = OutputSet(0);

    /// The set with output `index` added (an index past 63 changes nothing:
    /// such outputs are always in).
    #[must_use]
    pub const fn with(self, index: usize) -> OutputSet {
        if index < 64 {
            OutputSet(self.0 | 1 << index)
        } else {
            self
        }
    }

    /// Whether output `index` is in the set.
    #[inline]
    pub const fn contains(self, index: usize) -> bool {
        index >= 64 || self.0 & (1 << index) != 0
    }

    /// The outputs of `ir` named in `names` (an output's name is its node's).
    ///
    /// # Errors
    /// A name that is not one of `ir`'s outputs.
    pub fn named<S: AsRef<str>>(ir: &GraphIr, names: &[S]) -> Result<OutputSet, UnknownOutput> {
        let mut set = OutputSet::NONE;
        for name in names {
            let name = name.as_ref();
            let index = ir
                .outputs
                .iter()
                .position(|o| {
                    ir.nodes
                        .get(o.node as usize)
                        .is_some_and(|n| *n.name == *name)
                })
                .ok_or_else(|| UnknownOutput {
                    name: name.to_string(),
                    pipeline: ir.name.to_string(),
                    known: output_names(ir).join(", "),
                })?;
            set = set.with(index);
        }
        Ok(set)
    }

    /// The set restricted to `ir`'s outputs: equal sets of one pipeline
    /// compare equal whatever bits past its outputs they carry.
    #[must_use]
    pub fn of(self, ir: &GraphIr) -> OutputSet {
        let n = ir.outputs.len();
        if n >= 64 {
            self
        } else {
            OutputSet(self.0 & ((1u64 << n) - 1))
        }
    }

    /// Whether the set holds every output of `ir`.
    #[inline]
    pub fn covers(self, ir: &GraphIr) -> bool {
        self.of(ir) == OutputSet::ALL.of(ir)
    }

    /// The names of the outputs of `ir` in the set, in declaration order.
    pub fn names(self, ir: &GraphIr) -> Vec<&str> {
        output_names(ir)
            .into_iter()
            .enumerate()
            .filter(|&(i, _)| self.contains(i))
            .map(|(_, n)| n)
            .collect()
    }

    /// The set's bits (bit `i`: output `i`).
    pub const fn bits(self) -> u64 {
        self.0
    }
}

impl std::ops::BitOr for OutputSet {
    type Output = OutputSet;
    fn bitor(self, rhs: OutputSet) -> OutputSet {
        OutputSet(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for OutputSet {
    fn bitor_assign(&mut self, rhs: OutputSet) {
        self.0 |= rhs.0;
    }
}

/// The names of `ir`'s outputs, in declaration order.
fn output_names(ir: &GraphIr) -> Vec<&str> {
    ir.outputs
        .iter()
        .map(|o| {
            ir.nodes
                .get(o.node as usize)
                .map_or("?", |n| n.name.as_ref())
        })
        .collect()
}
