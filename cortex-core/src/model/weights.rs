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

/// Why a `key=value,…` list of weight overrides is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OverrideError {
    /// An entry without `=`.
    #[error("`{0}` is not `key=value`")]
    Malformed(String),
    /// A key no node of the pipeline uses.
    #[error("unknown weight key `{key}` ({})", known_keys(.known))]
    Unknown {
        /// The key as given.
        key: String,
        /// The pipeline's weight keys.
        known: Vec<String>,
    },
    /// A key given twice: most likely a typo for another key.
    #[error("weight `{0}` given twice")]
    Repeated(String),
    /// A value that does not parse as a number.
    #[error("weight `{key}`: `{text}` is not a number")]
    NotANumber {
        /// The key.
        key: String,
        /// The value as given.
        text: String,
    },
    /// A number that is not a weight ([`check_weight_value`]).
    #[error("weight `{key}` = {text} {why}")]
    Invalid {
        /// The key.
        key: String,
        /// The value as given.
        text: String,
        /// Why it is refused.
        why: &'static str,
    },
}

fn known_keys(known: &[String]) -> String {
    if known.is_empty() {
        "this pipeline has no weight keys".to_string()
    } else {
        format!("keys: {}", known.join(", "))
    }
}

/// Parses weight overrides written `k=v,k=v` (spaces around entries, keys
/// and values allowed; empty entries, as after a trailing comma, skipped)
/// against a pipeline's weight `keys`, in the order given. The one parser
/// for every place a user types weights: the runner's `--weights` and the
/// GStreamer element's `weights` property.
///
/// # Errors
/// The first entry that is malformed, names an unknown or repeated key, or
/// has a value that is not a finite number `>= 0`.
pub fn parse_overrides(
    text: &str,
    keys: &[Cow<'static, str>],
) -> Result<Vec<(Cow<'static, str>, f64)>, OverrideError> {
    let mut out: Vec<(Cow<'static, str>, f64)> = Vec::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (k, v) = entry
            .split_once('=')
            .ok_or_else(|| OverrideError::Malformed(entry.to_string()))?;
        let (k, v) = (k.trim(), v.trim());
        let Some(key) = keys.iter().find(|key| *key == k) else {
            return Err(OverrideError::Unknown {
                key: k.to_string(),
                known: keys.iter().map(|k| k.to_string()).collect(),
            });
        };
        if out.iter().any(|(seen, _)| seen == k) {
            return Err(OverrideError::Repeated(k.to_string()));
        }
        let value: f64 = v.parse().map_err(|_| OverrideError::NotANumber {
            key: k.to_string(),
            text: v.to_string(),
        })?;
        check_weight_value(value).map_err(|why| OverrideError::Invalid {
            key: k.to_string(),
            text: v.to_string(),
            why,
        })?;
        out.push((key.clone(), value));
    }
    Ok(out)
}

impl Weights {
    /// This table with `overrides` applied (later entries win; see
    /// [`parse_overrides`], which refuses repeats).
    pub fn with_overrides(&self, overrides: &[(Cow<'static, str>, f64)]) -> Weights {
        let mut w = self.clone();
        for (k, v) in overrides {
            w.set(k.clone(), *v);
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_parse_in_order_and_refuse_repeats() {
        let keys: Vec<Cow<'static, str>> = vec!["wc".into(), "wt".into()];
        let got = parse_overrides(" wt = 0.5 , wc=0,", &keys).unwrap();
        assert_eq!(got, vec![("wt".into(), 0.5), ("wc".into(), 0.0)]);
        let base = Weights::new().with("wc", 1.0).with("wt", 1.0);
        let w = base.with_overrides(&got);
        assert_eq!((w.get("wc"), w.get("wt")), (Some(0.0), Some(0.5)));
        let err = |t: &str| parse_overrides(t, &keys).unwrap_err().to_string();
        assert_eq!(err("wt=1,wt=2"), "weight `wt` given twice");
        assert_eq!(err("wx=1"), "unknown weight key `wx` (keys: wc, wt)");
        assert_eq!(err("wt"), "`wt` is not `key=value`");
        assert_eq!(err("wt=abc"), "weight `wt`: `abc` is not a number");
        assert!(err("wt=-1").starts_with("weight `wt` = -1 is negative"));
        assert_eq!(
            parse_overrides("a=1", &[]).unwrap_err().to_string(),
            "unknown weight key `a` (this pipeline has no weight keys)"
        );
    }
}
