"""Type stubs of the ``cortex_rs._native`` extension module."""

from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Literal,
    Optional,
    Sequence,
    Tuple,
    TypedDict,
    overload,
)

import numpy as np
import numpy.typing as npt

Frame = npt.NDArray[np.uint8]

class PipelineError(RuntimeError):
    """A frame failed in one of the pipeline's nodes; the state is as it was."""

class GraphError(ValueError):
    """A graph that cannot be built: every mistake, one per line."""
    problems: List[Tuple[int, str]]

MODELS: bool

class Pipeline:
    """A pipeline built at run time from the op library and Python callables."""

    def __init__(
        self,
        text: Optional[str] = ...,
        *,
        path: Optional[str] = ...,
        functions: Optional[Dict[str, Callable[..., Any]]] = ...,
        profile: bool = ...,
    ) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def modes(self) -> List[str]: ...
    @property
    def inputs(self) -> List[str]: ...
    @property
    def outputs(self) -> List[str]: ...
    @property
    def frame_index(self) -> int: ...
    def mode_weights(self, mode: str) -> List[Tuple[str, float]]: ...
    def run(
        self,
        inputs: Any,
        mode: Optional[str] = ...,
        *,
        weights: Optional[Dict[str, float]] = ...,
        parallel: bool = ...,
        outputs: Optional[Sequence[str]] = ...,
    ) -> Dict[str, Any]: ...
    def stream(
        self,
        frames: Iterable[Any],
        mode: Optional[str] = ...,
        *,
        on_result: Optional[Callable[[Any], None]] = ...,
        in_flight: int = ...,
        outputs: Optional[Sequence[str]] = ...,
    ) -> Optional[List[Any]]: ...
    def reset(self) -> None: ...
    def set_rates(self, on: bool) -> None: ...
    def set_fusion(self, on: bool) -> None: ...
    def listing(self) -> str: ...
    def dce_diff(self, mode: str) -> str: ...
    def program(self) -> str: ...
    def dot(self, mode: Optional[str] = ...) -> str: ...
    def mermaid(self, mode: Optional[str] = ...) -> str: ...
    def profile_report(self) -> str: ...

def ops() -> List[Dict[str, Any]]: ...
def inspect(name: Optional[str] = ...) -> str: ...
class StreamStats(TypedDict):
    received: int
    processed: int
    failed: int
    dropped: int
    discarded: int
    latency_p50_ms: Optional[float]
    latency_p99_ms: Optional[float]
    frames_per_second: float
    end: str

Overflow = Literal["block", "drop_oldest", "keep_latest"]

@overload
def run_streams(
    streams: Sequence[Tuple[Any, ...]],
    threads: int = ...,
    *,
    stats: Literal[False] = ...,
    overflow: Optional[Overflow] = ...,
    queue: int = ...,
    outputs: Optional[Sequence[str]] = ...,
) -> List[List[Any]]: ...
@overload
def run_streams(
    streams: Sequence[Tuple[Any, ...]],
    threads: int = ...,
    *,
    stats: Literal[True],
    overflow: Optional[Overflow] = ...,
    queue: int = ...,
    outputs: Optional[Sequence[str]] = ...,
) -> Tuple[List[List[Any]], List[StreamStats]]: ...

# The result dicts of L2's outputs: each type's view (what the runner's
# JSON lines show), with its payload (the JPEG's bytes, the QP offsets)
# beside the summary.

class Blur(TypedDict):
    sharpness: float
    baseline: Optional[float]
    blurry: bool
    below_100: bool

class Scene(TypedDict):
    ssim: Optional[float]
    cut: bool

class Roi(TypedDict):
    roi: List[int]
    score: float
    jpeg_bytes: int
    jpeg: bytes

class Regions(TypedDict):
    regions: List[List[int]]
    peak: float

class QpMap(TypedDict):
    blocks: List[int]
    offsets: npt.NDArray[np.float32]

class Results(TypedDict, total=False):
    frame: int
    blur: Blur
    scene: Scene
    roi: Roi
    regions: Regions
    qp_map: QpMap
    fused: npt.NDArray[np.float32]

class Source:
    """Frames read from a file, as ``H×W×3`` ``uint8`` arrays."""

    def __iter__(self) -> Iterator[Frame]: ...
    def __next__(self) -> Frame: ...
    def len_hint(self) -> Optional[int]: ...

def demo_clip(count: int = ..., width: int = ..., height: int = ...) -> List[Frame]: ...
def open(path: str) -> Source: ...
