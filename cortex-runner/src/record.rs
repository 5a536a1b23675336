//! One frame's results as named fields: printed as a table row or as the
//! `outputs` object of a JSON line.

use serde_json::{Map, Value};

/// A frame's outputs as named fields, in the order they were added.
///
/// A pipeline's record function builds one per frame, e.g.
/// `Record::new().field("blurry", out.blur.is_blurry).field("score", out.roi.score)`.
/// Values are JSON values: numbers, booleans, strings, `null` (shown `-`)
/// and small arrays (shown compactly, e.g. `[12,40,64,64]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    fields: Vec<(String, Value)>,
}

impl Record {
    /// An empty record.
    pub fn new() -> Self {
        Record::default()
    }

    /// Adds a field (builder style).
    pub fn field(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.push(name, value);
        self
    }

    /// Adds a field.
    pub fn push(&mut self, name: impl Into<String>, value: impl Into<Value>) {
        self.fields.push((name.into(), value.into()));
    }

    /// The fields, in order.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.fields.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The table's columns: a field whose value is an object (an output
    /// shown through its type's view) gives one column per field of the
    /// view, named by it; any other field is one column.
    pub(crate) fn columns(&self) -> Vec<(&str, &Value)> {
        let mut cols = Vec::new();
        for (k, v) in &self.fields {
            match v {
                Value::Object(m) => cols.extend(m.iter().map(|(k, v)| (k.as_str(), v))),
                _ => cols.push((k.as_str(), v)),
            }
        }
        cols
    }

    /// Keeps only the fields named in `names` (`run --outputs`).
    pub(crate) fn retain(&mut self, names: &[String]) {
        self.fields.retain(|(k, _)| names.iter().any(|n| n == k));
    }

    /// The value of field `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.fields.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The fields as a JSON object.
    pub fn to_json(&self) -> Value {
        Value::Object(
            self.fields
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Map<_, _>>(),
        )
    }
}

/// How a value appears in a table cell.
pub(crate) fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format_float(f),
            _ => n.to_string(),
        },
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(cell).collect();
            format!("[{}]", inner.join(","))
        }
        Value::Object(_) => v.to_string(),
    }
}

/// Four significant digits or so, without a wall of decimals.
fn format_float(f: f64) -> String {
    let a = f.abs();
    if a == 0.0 || (0.01..10_000.0).contains(&a) {
        let decimals = if a >= 100.0 {
            1
        } else if a >= 1.0 {
            3
        } else {
            4
        };
        format!("{f:.decimals$}")
    } else {
        format!("{f:.3e}")
    }
}

/// A table printed row by row: the column widths are fixed by the header
/// and the first row, so rows can be streamed as frames arrive.
#[derive(Debug, Default)]
pub(crate) struct Table {
    widths: Vec<usize>,
}

impl Table {
    /// The header line for rows shaped like `first`, fixing the widths.
    pub(crate) fn header(&mut self, first: &[String], names: &[&str]) -> String {
        self.widths = names
            .iter()
            .zip(first)
            .map(|(n, v)| n.chars().count().max(v.chars().count()).max(5))
            .collect();
        self.line(names.iter().map(|s| s.to_string()))
    }

    /// One row.
    pub(crate) fn row(&self, cells: &[String]) -> String {
        self.line(cells.iter().cloned())
    }

    fn line(&self, cells: impl Iterator<Item = String>) -> String {
        let mut s = String::new();
        for (i, c) in cells.enumerate() {
            let w = self.widths.get(i).copied().unwrap_or(5);
            if i > 0 {
                s.push_str("  ");
            }
            s.push_str(&format!("{c:>w$}"));
        }
        s.trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells() {
        assert_eq!(cell(&Value::from(true)), "yes");
        assert_eq!(cell(&Value::Null), "-");
        assert_eq!(cell(&Value::from(3u32)), "3");
        assert_eq!(cell(&Value::from(0.123456)), "0.1235");
        assert_eq!(cell(&Value::from(1234.56)), "1234.6");
        assert_eq!(cell(&Value::from(vec![1, 2, 3])), "[1,2,3]");
        let r = Record::new().field("a", 1).field("b", "x");
        assert_eq!(r.to_json().to_string(), r#"{"a":1,"b":"x"}"#);
        assert_eq!(r.get("b"), Some(&Value::from("x")));
        let nested = Record::new()
            .field(
                "blur",
                serde_json::json!({"sharpness": 2.5, "blurry": false}),
            )
            .field("t", 1);
        let cols: Vec<(&str, String)> = nested
            .columns()
            .into_iter()
            .map(|(k, v)| (k, cell(v)))
            .collect();
        assert_eq!(
            cols,
            [
                ("sharpness", "2.500".to_string()),
                ("blurry", "no".into()),
                ("t", "1".into())
            ]
        );
    }
}
