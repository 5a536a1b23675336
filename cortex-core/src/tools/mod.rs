//! Tools over a pipeline's graph: the listing and DCE diff ([`viz`]), the
//! Graphviz DOT / Mermaid exporters ([`export`]) and the naming and
//! formatting helpers they share ([`format`]).

pub mod export;
pub mod format;
pub mod viz;
