//! The ops a graph file run by this program may call, and the `ops`
//! command that lists them: the vision library, the model library (feature
//! `models`) and the program's own ([`App::graph_ops`](crate::App::graph_ops)).

use std::io::Write;

use cortex_core::dynamic::Ops;
use cortex_core::passes::diag::did_you_mean;

use crate::error::RunnerError;

/// Every op a graph file may call here, `extra` on top.
pub(crate) fn library(extra: &Ops) -> Ops {
    let mut ops = cortex_vision::library::vision_ops();
    #[cfg(feature = "models")]
    ops.extend(&cortex_models::library::model_ops());
    ops.extend(extra);
    ops
}

/// `ops [NAME]`: every described op on a line, or op `NAME` in full.
pub(crate) fn ops_command(
    name: Option<&str>,
    extra: &Ops,
    out: &mut dyn Write,
) -> Result<(), RunnerError> {
    let ops = library(extra);
    let text = match name {
        None => ops.listing(),
        Some(name) => ops.inspect(name).ok_or_else(|| {
            let names: Vec<&str> = ops.descriptors().map(|d| d.name()).collect();
            let hint = did_you_mean(name, names.iter().copied())
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            RunnerError::Usage(format!(
                "no op `{}`{hint}; `ops` lists them",
                cortex_core::untrusted::echo(name)
            ))
        })?,
    };
    out.write_all(text.as_bytes())
        .map_err(|source| RunnerError::Io {
            what: "writing the op listing".into(),
            source,
        })
}
