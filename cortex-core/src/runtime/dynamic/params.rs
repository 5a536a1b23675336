//! An op's parameters as a graph file writes them: a JSON object read into
//! the op's own parameter struct by serde (types), then checked by the
//! struct (ranges); nested fields written as objects or as dotted names
//! (`"mser.delta": 3`). And the other way: each parameter's default and
//! documentation, for the listing.

use std::sync::Arc;

use serde_json::{Map, Value as Json};

use super::desc::Params;
use super::ops::Value;

/// The parameters of one op, type-erased.
pub(crate) struct ParamsDesc {
    /// The defaults, as JSON (an object).
    defaults: Json,
    /// `(dotted path, documentation)`, in the order documented.
    docs: Vec<(String, String)>,
    /// The parameters' type, by the last segment of its path.
    pub(crate) type_name: &'static str,
    /// Reads a node's `params`.
    pub(crate) parse: fn(&Map<String, Json>) -> Result<Value, String>,
}

impl ParamsDesc {
    pub(crate) fn new<P: Params>(
        docs: Vec<(String, String)>,
        parse: fn(&Map<String, Json>) -> Result<Value, String>,
    ) -> ParamsDesc {
        ParamsDesc {
            defaults: serde_json::to_value(P::default()).unwrap_or(Json::Null),
            type_name: short_name(std::any::type_name::<P>()),
            docs,
            parse,
        }
    }

    /// Every parameter (dotted path), its default and its documentation,
    /// in the order of the struct's fields.
    pub(crate) fn list(&self) -> Vec<(String, Json, &str)> {
        let mut out = Vec::new();
        flatten("", &self.defaults, &mut out);
        out.into_iter()
            .map(|(path, v)| {
                let doc = self
                    .docs
                    .iter()
                    .find(|(p, _)| *p == path)
                    .map_or("", |(_, d)| d.as_str());
                (path, v, doc)
            })
            .collect()
    }
}

/// The last segment of a type's path (`CenterParams` of
/// `cortex_vision::ops::center::CenterParams`).
fn short_name(path: &'static str) -> &'static str {
    path.rsplit("::").next().unwrap_or(path)
}

/// The leaves of `v` with their dotted paths.
fn flatten(prefix: &str, v: &Json, out: &mut Vec<(String, Json)>) {
    match v {
        Json::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&path, x, out);
            }
        }
        Json::Object(_) => {}
        _ => out.push((prefix.to_string(), v.clone())),
    }
}

/// Reads `params` as a `P`: dotted names nested, then serde, then
/// [`Params::check`] and [`Params::prepare`].
pub(crate) fn parse_params<P: Params>(params: &Map<String, Json>) -> Result<Value, String> {
    let nested = nest(params)?;
    let mut p: P = serde_json::from_value(Json::Object(nested)).map_err(|e| e.to_string())?;
    p.check()?;
    p.prepare()?;
    Ok(Arc::new(p))
}

/// `params` with each dotted name (`"mser.delta": 3`) written as nested
/// objects (`"mser": {"delta": 3}`), merged with any object already there.
fn nest(params: &Map<String, Json>) -> Result<Map<String, Json>, String> {
    let mut out = Map::new();
    for (key, v) in params {
        let mut parts = key.split('.').peekable();
        let mut at = &mut out;
        let mut path = String::new();
        while let Some(part) = parts.next() {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(part);
            if parts.peek().is_none() {
                match (at.get_mut(part), v) {
                    (Some(Json::Object(old)), Json::Object(new)) => {
                        old.extend(new.iter().map(|(k, x)| (k.clone(), x.clone())))
                    }
                    (Some(_), _) => return Err(format!("parameter `{path}` is written twice")),
                    (None, _) => {
                        at.insert(part.to_string(), v.clone());
                    }
                }
            } else {
                let slot = at
                    .entry(part.to_string())
                    .or_insert_with(|| Json::Object(Map::new()));
                at = match slot {
                    Json::Object(m) => m,
                    _ => return Err(format!("parameter `{path}` is not a group of parameters")),
                };
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Inner {
        delta: u8,
        area: u32,
    }

    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Outer {
        inner: Inner,
        on: bool,
    }

    impl Params for Outer {
        fn check(&self) -> Result<(), String> {
            if self.inner.delta == 0 {
                return Err("`inner.delta` must be at least 1".into());
            }
            Ok(())
        }
    }

    fn map(j: Json) -> Map<String, Json> {
        j.as_object().cloned().unwrap_or_default()
    }

    fn parse(j: Json) -> Result<Outer, String> {
        let v = parse_params::<Outer>(&map(j))?;
        Ok(v.downcast_ref::<Outer>()
            .map(|o| Outer {
                inner: Inner { ..o.inner },
                on: o.on,
            })
            .unwrap_or_default())
    }

    #[test]
    fn dotted_and_nested_names_read_the_same_and_merge() {
        let a = parse(serde_json::json!({"inner.delta": 3, "inner": {"area": 9}})).unwrap();
        let b = parse(serde_json::json!({"inner": {"delta": 3, "area": 9}})).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.inner, Inner { delta: 3, area: 9 });
    }

    #[test]
    fn unknown_names_wrong_types_and_ranges_are_refused_in_words() {
        let e = parse(serde_json::json!({"inner": {"dleta": 3}})).unwrap_err();
        assert!(
            e.contains("unknown field `dleta`") && e.contains("`delta`"),
            "{e}"
        );
        let e = parse(serde_json::json!({"inner.delta": "five"})).unwrap_err();
        assert!(e.contains("invalid type"), "{e}");
        let e = parse(serde_json::json!({"inner.delta": 300})).unwrap_err();
        assert!(e.contains("300"), "{e}");
        let e = parse(serde_json::json!({"inner.delta": 0})).unwrap_err();
        assert!(e.contains("at least 1"), "{e}");
        let e = parse(serde_json::json!({"on": true, "on.x": 1})).unwrap_err();
        assert!(e.contains("`on`"), "{e}");
    }

    #[test]
    fn the_listing_flattens_defaults_with_their_docs() {
        let d = ParamsDesc::new::<Outer>(
            vec![("inner.delta".into(), "step".into())],
            parse_params::<Outer>,
        );
        let l = d.list();
        let names: Vec<&str> = l.iter().map(|(p, _, _)| p.as_str()).collect();
        assert_eq!(names, ["inner.delta", "inner.area", "on"]);
        assert_eq!(l[0].2, "step");
        assert_eq!(l[2].1, Json::Bool(false));
    }
}
