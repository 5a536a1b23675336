from typing import Dict, Iterable, Iterator, Optional

from ._native import L2 as L2, PipelineError as PipelineError, Results, Source as Source
from ._native import demo_clip as demo_clip, open as open

def stream(
    pipeline: L2,
    frames: Iterable,
    mode: str = ...,
    *,
    weights: Optional[Dict[str, float]] = ...,
    parallel: bool = ...,
    fused: bool = ...,
) -> Iterator[Results]: ...
