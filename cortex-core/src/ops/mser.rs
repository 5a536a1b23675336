//! Maximally stable extremal regions (MSER) — owned by the text-ROI issue.
