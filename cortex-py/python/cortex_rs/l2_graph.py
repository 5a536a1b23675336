"""L2 declared in Python from the op library: the graph
``examples/graphs/l2.json`` holds and ``cortex_rs.L2`` compiles, as an
ordinary ``Graph`` to build, extend or change."""

from .graph import Graph, GrayImage, RgbFrame, every


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
