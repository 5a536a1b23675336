//! The outputs of one frame of a run-time pipeline, by name.

use std::any::Any;
use std::sync::Arc;

use super::ops::Value;
use crate::model::outputs::OutputSet;

/// One frame's outputs, in the graph's output order; an optional output a
/// plan eliminates is absent.
#[derive(Clone)]
pub struct DynOutputs {
    pub(crate) names: Arc<[String]>,
    pub(crate) values: Vec<Option<Value>>,
}

impl std::fmt::Debug for DynOutputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let present: Vec<(&str, bool)> = self
            .names
            .iter()
            .zip(&self.values)
            .map(|(n, v)| (n.as_str(), v.is_some()))
            .collect();
        f.debug_struct("DynOutputs")
            .field("present", &present)
            .finish()
    }
}

impl DynOutputs {
    /// Output `name` as a `T`: `None` when absent, unknown or of another
    /// type.
    pub fn get<T: Any>(&self, name: &str) -> Option<&T> {
        self.value(name)?.downcast_ref::<T>()
    }

    /// Output `name`'s value, when present.
    pub fn value(&self, name: &str) -> Option<&Value> {
        let i = self.names.iter().position(|n| n == name)?;
        self.values.get(i)?.as_ref()
    }

    /// The output names, in the graph's order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Takes the outputs in `read` from `got`, a later frame's, leaving
    /// the others as they were; outputs of another graph are replaced
    /// whole.
    pub(crate) fn merge(&mut self, got: DynOutputs, read: OutputSet) {
        if self.names != got.names || self.values.len() != got.values.len() {
            *self = got;
            return;
        }
        for (i, v) in got.values.into_iter().enumerate() {
            if read.contains(i) {
                self.values[i] = v;
            }
        }
    }
}
