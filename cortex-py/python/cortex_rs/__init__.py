"""cortex from Python: pipelines built from the op library and your own
numpy functions, and the L2 region-of-interest pipeline, on numpy frames.

Frames are ``H×W×3`` ``uint8`` RGB numpy arrays; results are plain dicts.
Each frame runs in Rust with the GIL released, so Python threads can feed
several pipelines at once.

>>> import cortex_rs as cx
>>> l2 = cx.L2()
>>> for frame in cx.demo_clip(3, 160, 120):
...     r = l2.run(frame, "BALANCED")
>>> sorted(r)
['blur', 'frame', 'qp_map', 'regions', 'roi', 'scene']
"""

from typing import Dict, Iterable, Iterator, Optional

from ._native import (
    MODELS,
    GraphError,
    Pipeline,
    PipelineError,
    Source,
    demo_clip,
    inspect,
    open,
    ops,
    run_streams,
)
from .graph import (
    GrayImage,
    Graph,
    PyObject,
    Rate,
    RgbFrame,
    ScoreMap,
    State,
    Value,
    every,
    load_graph,
)
from .l2_graph import L2, l2_graph

__all__ = [
    "MODELS",
    "L2",
    "Graph",
    "GraphError",
    "GrayImage",
    "Pipeline",
    "PipelineError",
    "PyObject",
    "Rate",
    "RgbFrame",
    "ScoreMap",
    "Source",
    "State",
    "Value",
    "demo_clip",
    "every",
    "inspect",
    "l2_graph",
    "load_graph",
    "open",
    "ops",
    "run_streams",
    "stream",
]


def stream(
    pipeline: L2,
    frames: Iterable,
    mode: str = "BALANCED",
    *,
    weights: Optional[Dict[str, float]] = None,
    parallel: bool = False,
    fused: bool = False,
) -> Iterator[dict]:
    """Runs every frame of ``frames`` (numpy arrays, or a ``cortex_rs.open``
    source) through ``pipeline`` in order, yielding each frame's results.

    Frames run one after the other (each reusing the last frame's buffers);
    ``parallel=True`` runs each frame's independent nodes at once.
    """
    for frame in frames:
        yield pipeline.run(frame, mode, weights=weights, parallel=parallel, fused=fused)
