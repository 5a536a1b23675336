//! Weight tables: the per-mode (or per-call) values of the weight keys that
//! `#[weight_key = "…"]` nodes are scaled by.

use std::borrow::Cow;

/// One weight: its key and its value.
pub type WeightEntry = (Cow<'static, str>, f64);

/// A table of weights by key, e.g. `{ wc: 0.4, wt: 0.3, ws: 0.2, wm: 0.1 }`.
///
/// Mode tables are `const` (borrowed), tables built at run time are owned;
/// both are looked up the same way. Keys are few (a handful), so lookup is a
/// linear scan, which beats hashing at this size.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    entries: Cow<'static, [WeightEntry]>,
}

impl Weights {
    /// An empty table.
    pub const fn new() -> Self {
        Weights {
            entries: Cow::Borrowed(&[]),
        }
    }

    /// A table over `'static` entries, usable in `const` items.
    pub const fn from_static(entries: &'static [WeightEntry]) -> Self {
        Weights {
            entries: Cow::Borrowed(entries),
        }
    }

    /// Returns the table with `key` set to `value` (replacing an earlier value).
    #[must_use]
    pub fn with(mut self, key: impl Into<Cow<'static, str>>, value: f64) -> Self {
        self.set(key, value);
        self
    }

    /// Sets `key` to `value`, replacing an earlier value.
    pub fn set(&mut self, key: impl Into<Cow<'static, str>>, value: f64) {
        let key = key.into();
        let entries = self.entries.to_mut();
        match entries.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => entries.push((key, value)),
        }
    }

    /// The value of `key`, if the table has it.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.entries.iter().find(|(k, _)| k == key).map(|&(_, v)| v)
    }

    /// The value of `key`, or `0.0` when the table does not have it.
    pub fn get_or_zero(&self, key: &str) -> f64 {
        self.get(key).unwrap_or(0.0)
    }

    /// The entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.entries.iter().map(|(k, v)| (k.as_ref(), *v))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl Default for Weights {
    fn default() -> Self {
        Weights::new()
    }
}

impl<K: Into<Cow<'static, str>>> FromIterator<(K, f64)> for Weights {
    fn from_iter<I: IntoIterator<Item = (K, f64)>>(iter: I) -> Self {
        let mut w = Weights::new();
        for (k, v) in iter {
            w.set(k, v);
        }
        w
    }
}

/// Why a weight value is refused: a weight must be finite and non-negative.
/// One rule for mode tables (checked at compile time) and run-time tables.
pub fn check_weight_value(value: f64) -> Result<(), &'static str> {
    if value.is_nan() {
        Err("is NaN; a weight must be a finite number >= 0")
    } else if value.is_infinite() {
        Err("is infinite; a weight must be a finite number >= 0")
    } else if value < 0.0 {
        Err("is negative; a weight must be >= 0 (0 eliminates the node)")
    } else {
        Ok(())
    }
}

/// Why a run-time weight table does not fit a pipeline.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum WeightsError {
    /// The pipeline uses a key the table lacks.
    #[error("weight `{0}` is missing")]
    Missing(String),
    /// The table has a key no node uses.
    #[error("no node uses weight key `{0}`")]
    Unknown(String),
    /// A value is NaN, infinite or negative.
    #[error("weight `{key}` = {value} {why}")]
    Invalid {
        /// The key.
        key: String,
        /// Its value.
        value: f64,
        /// What is wrong.
        why: &'static str,
    },
}

impl Weights {
    /// Checks this table against a pipeline's weight keys and returns its
    /// zero pattern (bit `i` set: `keys[i]` is zero).
    pub fn zero_pattern(&self, keys: &[Cow<'static, str>]) -> Result<u64, WeightsError> {
        for (k, v) in self.iter() {
            if !keys.iter().any(|key| key == k) {
                return Err(WeightsError::Unknown(k.to_string()));
            }
            check_weight_value(v).map_err(|why| WeightsError::Invalid {
                key: k.to_string(),
                value: v,
                why,
            })?;
        }
        keys.iter()
            .enumerate()
            .try_fold(0u64, |mask, (i, key)| match self.get(key) {
                // `-0.0 == 0.0`: both eliminate.
                Some(v) => Ok(if v == 0.0 { mask | (1u64 << i) } else { mask }),
                None => Err(WeightsError::Missing(key.to_string())),
            })
    }
}
