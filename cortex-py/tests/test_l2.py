"""L2 from Python against the Rust API, across engines, modes and weight
tables."""

import numpy as np
import pytest

import cortex_rs as cx


def row(r: dict) -> dict:
    """A Python result as the runner's JSON `outputs` show it: each output
    under its name, through its type's view (`blur`, `scene`, `roi`)."""
    x, y, w, h = r["roi"]["box"]
    return {
        "blur": {
            "sharpness": r["blur"]["variance"],
            "baseline": r["blur"]["baseline"],
            "blurry": r["blur"]["is_blurry"],
            "below_100": r["blur"]["below_threshold"],
        },
        "scene": {
            "ssim": r["scene"]["ssim"],
            "cut": r["scene"]["changed"] and r["scene"]["ssim"] is not None,
        },
        "roi": {"roi": [x, y, w, h], "score": r["roi"]["score"], "jpeg_bytes": len(r["roi"]["jpeg"])},
    }


@pytest.mark.parametrize("mode", cx.L2.modes())
def test_results_equal_the_rust_api(clip, rust_reference, mode):
    l2 = cx.L2()
    ours = [row(l2.run(f, mode)) for f in clip]
    theirs = rust_reference(mode)
    assert len(theirs) == len(clip)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == {name: b[name] for name in a}, f"frame {i}, mode {mode}"


def assert_same(a, b):
    assert row(a) == row(b)
    assert a["roi"]["jpeg"] == b["roi"]["jpeg"]
    assert a["regions"] == b["regions"]
    np.testing.assert_array_equal(a["qp_map"]["offsets"], b["qp_map"]["offsets"])
    np.testing.assert_array_equal(a["fused"], b["fused"])


@pytest.mark.parametrize("mode", cx.L2.modes())
def test_the_parallel_engine_agrees_with_the_sequential_one(clip, mode):
    seq, par = cx.L2(), cx.L2()
    for f in clip[:30]:
        assert_same(seq.run(f, mode, fused=True), par.run(f, mode, parallel=True, fused=True))


@pytest.mark.parametrize("mode", cx.L2.modes())
def test_a_modes_weight_table_at_run_time_runs_its_plan(clip, mode):
    # A weight table carries no node rates (those belong to a declared
    # mode), so both sides run every node on every frame.
    by_mode, by_table, by_table_par = cx.L2(rates=False), cx.L2(rates=False), cx.L2(rates=False)
    table = cx.L2.mode_weights(mode)
    for f in clip[:30]:
        a = by_mode.run(f, mode, fused=True)
        assert_same(a, by_table.run(f, weights=table, fused=True))
        assert_same(a, by_table_par.run(f, weights=table, parallel=True, fused=True))


def test_results_are_plain_python_objects(clip):
    r = cx.L2().run(clip[0], fused=True)
    assert r["frame"] == 0
    assert isinstance(r["roi"]["jpeg"], bytes) and r["roi"]["jpeg"][:2] == b"\xff\xd8"
    assert all(isinstance(v, int) for v in r["roi"]["box"])
    assert r["fused"].shape == (240, 320) and r["fused"].dtype == np.float32
    q = r["qp_map"]
    assert q["offsets"].shape == (-(-240 // q["block"]), -(-320 // q["block"]))
    assert isinstance(r["regions"], list) and r["regions"]
    assert set(r["regions"][0]) == {"box", "score", "area", "mass"}


def test_a_zero_weight_mode_removes_nodes_from_its_plan():
    diff = cx.L2().dce_diff("POWER_SAVE")
    assert "saliency" in diff and "motion" in diff
    assert cx.L2.dot("POWER_SAVE").startswith("digraph")
    assert "flowchart" in cx.L2.mermaid()


def test_profiling_times_every_node(clip):
    l2 = cx.L2(profile=True)
    for f in clip[:5]:
        l2.run(f)
    report = l2.profile_report()
    for node in ("gray", "text", "fused", "roi"):
        assert node in report
    assert "gray" in l2.listing()
    with pytest.raises(ValueError, match="profile=True"):
        cx.L2().profile_report()


def test_stream_reuses_one_pipeline_in_order(clip):
    a = [row(r) for r in cx.stream(cx.L2(), clip[:12], "TEXT_FOCUS")]
    l2 = cx.L2()
    b = [row(l2.run(f, "TEXT_FOCUS")) for f in clip[:12]]
    assert a == b


def test_reset_starts_a_new_stream(clip):
    l2 = cx.L2()
    first = [row(l2.run(f)) for f in clip[:6]]
    l2.reset()
    assert l2.frame_index == 0
    again = [row(l2.run(f)) for f in clip[:6]]
    assert first == again
