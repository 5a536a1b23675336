from typing import Iterable, Iterator, Optional

from ._native import PipelineError as PipelineError, Results, Source as Source
from ._native import demo_clip as demo_clip, open as open
from ._native import MODELS as MODELS, GraphError as GraphError, Pipeline as Pipeline
from ._native import inspect as inspect, ops as ops, run_streams as run_streams
from .graph import GrayImage as GrayImage, Graph as Graph, PyObject as PyObject
from .graph import Rate as Rate, RgbFrame as RgbFrame, ScoreMap as ScoreMap
from .graph import State as State, Value as Value, every as every, load_graph as load_graph
from .l2_graph import L2 as L2, Weights, l2_graph as l2_graph

def stream(
    pipeline: L2,
    frames: Iterable,
    mode: str = ...,
    *,
    weights: Optional[Weights] = ...,
    parallel: bool = ...,
    fused: bool = ...,
) -> Iterator[Results]: ...
