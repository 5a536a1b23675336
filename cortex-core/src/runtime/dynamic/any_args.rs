//! A call's arguments as the values they are, for an op that takes values
//! of any type and tells them apart at run time (a Python callable, which
//! converts each argument by its type).

use super::desc::CallArgs;
use super::ops::Value;

impl<'a> CallArgs<'a> {
    /// How many arguments the call passes (inputs, then constants).
    pub fn len(&self) -> usize {
        self.args.len()
    }

    /// Whether the call passes no argument.
    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }

    /// Argument `i` as the value it is, whatever its type; `None` when it
    /// has no value (a weighted producer the plan does not run) or there is
    /// no argument `i`.
    pub fn value(&self, i: usize) -> Option<&'a Value> {
        self.args.get(i).copied().flatten()
    }
}
