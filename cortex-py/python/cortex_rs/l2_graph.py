"""L2 declared in Python from the op library: the graph
``examples/graphs/l2.json`` holds, as an ordinary ``Graph`` to build,
extend or change; and ``cortex_rs.L2``, that graph built, with L2's
defaults (mode ``BALANCED``, the fused map only when asked for)."""

import functools
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Tuple, Union

from . import _native
from .graph import Graph, GrayImage, RgbFrame, every

if TYPE_CHECKING:
    from ._native import Results


def l2_graph() -> Graph:
    """L2: blur and scene-change checks, four score maps fused with per-mode
    weights, the JPEG of the top region, the encoder's regions and QP map;
    modes ``BALANCED``, ``POWER_SAVE`` (no saliency or motion, the text map
    and regions every 4th frame or on a cut) and ``TEXT_FOCUS``."""
    g = Graph("L2")
    frame = g.input("frame", RgbFrame)
    prev = g.state("_prev_gray", GrayImage)
    sharpness = g.state("_sharpness", "BlurVerdict")
    g.mode("BALANCED", wc=0.4, wt=0.3, ws=0.2, wm=0.1)
    g.mode(
        "POWER_SAVE",
        wc=0.7, wt=0.3, ws=0.0, wm=0.0,
        rates={
            "text": every(4, trigger="scene.changed"),
            "regions": every(4, trigger="scene.changed"),
        },
    )
    g.mode("TEXT_FOCUS", wc=0.2, wt=0.6, ws=0.2, wm=0.0)
    gray = g.node("gray", "vision.to_gray", frame)
    prev.keeps(gray)
    laplacian = g.node("laplacian", "vision.blur_detector", gray)
    scene = g.node("scene", "vision.scene_change", gray, prev)
    blur = g.node("blur", "vision.blur_verdict", laplacian, scene, sharpness)
    sharpness.keeps(blur)
    center = g.node("center", "vision.center_crop", gray, weight="wc")
    text = g.node("text", "vision.text_map", gray, weight="wt")
    saliency = g.node("saliency", "vision.saliency_dft", gray, weight="ws")
    motion = g.node("motion", "vision.motion_map", gray, prev, weight="wm")
    fused = g.node("fused", "vision.score_fusion", center, text, saliency, motion)
    roi = g.node("roi", "vision.encode_roi", frame, fused)
    regions = g.node("regions", "vision.roi_regions", fused)
    qp_map = g.node("qp_map", "vision.qp_map", fused, blur)
    g.outputs(blur, scene, fused, roi, regions, qp_map)
    return g


Weights = Union[Dict[str, float], Iterable[Tuple[str, float]]]


@functools.lru_cache(maxsize=1)
def _shown() -> "_native.Pipeline":
    """One built L2 for what reads no frame (modes, weights, drawings)."""
    return l2_graph().build()


class L2:
    """The L2 region-of-interest pipeline: ``l2_graph()`` built, its
    results each output through its type's view, as for every pipeline.

    One instance keeps its state (the previous frame, the sharpness
    baseline, held values of node rates) between frames; use one per video
    stream. Frames run with the GIL released, so Python threads can feed
    several pipelines at once. ``pipeline`` is the ``cortex_rs.Pipeline``
    underneath (for ``run_streams``, ``stream`` and the tools).
    """

    __slots__ = ("pipeline",)

    def __init__(self, *, profile: bool = False, rates: bool = True, fusion: bool = True) -> None:
        """Every state at its initial value. ``profile=True`` times every
        node of every frame (see ``profile_report``); ``rates=False`` runs
        rated nodes on every frame; ``fusion=False`` runs fused strip
        groups node by node (the results are identical either way)."""
        self.pipeline = l2_graph().build(profile=profile)
        self.pipeline.set_rates(rates)
        self.pipeline.set_fusion(fusion)

    @staticmethod
    def modes() -> List[str]:
        """The names of the declared modes."""
        return _shown().modes

    @staticmethod
    def mode_weights(mode: str) -> List[Tuple[str, float]]:
        """A declared mode's weight table."""
        return _shown().mode_weights(mode)

    def run(
        self,
        frame,
        mode: str = "BALANCED",
        *,
        weights: Optional[Weights] = None,
        parallel: bool = False,
        fused: bool = False,
    ) -> "Results":
        """Runs one frame (``H×W×3`` ``uint8`` RGB numpy array) and returns
        its results: ``frame`` (its index), then ``blur``, ``scene``,
        ``roi``, ``regions`` and ``qp_map`` through their types' views
        (the JPEG's bytes under ``roi["jpeg"]``, the QP offsets as an
        array under ``qp_map["offsets"]``), and with ``fused=True`` the
        fused score map. ``weights`` (a dict, or pairs, of every weight
        key) runs a table given at run time instead of ``mode``;
        ``parallel=True`` runs independent nodes at once (identical
        results). Raises as ``Pipeline.run`` does."""
        table = None if weights is None else dict(weights)
        r = self.pipeline.run(frame, mode, weights=table, parallel=parallel)
        if not fused:
            del r["fused"]
        return r

    def reset(self) -> None:
        """Every state back to its initial value (a new stream)."""
        self.pipeline.reset()

    @property
    def frame_index(self) -> int:
        """Frames run so far (since construction or ``reset``)."""
        return self.pipeline.frame_index

    def listing(self) -> str:
        """The graph as text (with each node's mean time when profiling)."""
        return self.pipeline.listing()

    def dce_diff(self, mode: str) -> str:
        """What ``mode``'s plan removes, why, and what those nodes cost."""
        return self.pipeline.dce_diff(mode)

    @staticmethod
    def dot(mode: Optional[str] = None) -> str:
        """The graph as Graphviz DOT, ``mode``'s eliminated nodes greyed."""
        return _shown().dot(mode)

    @staticmethod
    def mermaid(mode: Optional[str] = None) -> str:
        """The graph as a Mermaid flowchart, like ``dot``."""
        return _shown().mermaid(mode)

    def profile_report(self) -> str:
        """The profiler's report, when made with ``profile=True``."""
        return self.pipeline.profile_report()

    def __repr__(self) -> str:
        return "cortex_rs.L2()"
