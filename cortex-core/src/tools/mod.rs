//! Tools over a pipeline's graph: the listing and DCE diff ([`viz`]) and the
//! Graphviz DOT / Mermaid exporters ([`export`]).

pub mod export;
pub mod format;
pub mod viz;
