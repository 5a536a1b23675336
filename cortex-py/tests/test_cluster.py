"""Files across a cluster (cortex-py/examples/cluster_archive.py): a Dask
LocalCluster of two worker processes on loopback, each running cortex_rs
over whole files, gives every file the summary the same function gives it
run here, sequentially; a file that cannot be read costs that file only."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

import cortex_rs as cx

distributed = pytest.importorskip("distributed")

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "cluster_archive.py"


def load_example():
    spec = importlib.util.spec_from_file_location("cluster_archive", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def write_y4m(path, frames):
    """A 4:4:4 Y4M file, BT.601 limited range (what the source reads)."""
    h, w, _ = frames[0].shape
    with open(path, "wb") as out:
        out.write(f"YUV4MPEG2 W{w} H{h} F30:1 Ip A1:1 C444\n".encode())
        for f in frames:
            r, g, b = (f[..., c].astype(np.float64) for c in range(3))
            y = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
            cb = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
            cr = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255
            out.write(b"FRAME\n")
            for plane in (y, cb, cr):
                out.write(np.clip(np.rint(plane), 0, 255).astype(np.uint8).tobytes())


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """Five recordings of different lengths (different stretches of the
    synthetic clip: blur, a cut) and one that is not a video."""
    root = tmp_path_factory.mktemp("archive")
    clip = cx.demo_clip(48, 160, 120)
    paths = []
    for k, (start, n) in enumerate([(0, 12), (8, 20), (20, 16), (30, 18), (4, 9)]):
        p = root / f"cam{k}.y4m"
        write_y4m(p, clip[start:start + n])
        paths.append(str(p))
    bad = root / "broken.y4m"
    bad.write_bytes(b"YUV4MPEG2 W160 H120 F30:1 C444\nFRAME\n" + bytes(100))
    paths.insert(2, str(bad))
    return paths


def comparable(summary):
    return {k: v for k, v in summary.items() if k not in ("seconds", "worker")}


def test_two_local_workers_give_every_file_its_sequential_summary(archive):
    example = load_example()
    want = [example.summarize(p) for p in archive]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        # The workers import the example by name: Dask ships it to them.
        client.upload_file(str(EXAMPLE))
        got = example.run(client, archive)
        workers = set(cluster.scheduler_info["workers"])
    assert [s["file"] for s in got] == archive
    assert [comparable(s) for s in got] == [comparable(s) for s in want]
    # Every task ran on a worker of the cluster (not in this process).
    assert {s["worker"] for s in got} <= workers
    assert all(s["worker"] != "local" for s in got)
    # The broken file failed alone, with the source's error.
    broken = got[2]
    assert broken["frames"] == 0 and "truncated" in broken["error"]
    assert all(s["error"] is None and s["frames"] > 0 for s in got if s is not broken)
    assert sum(s["frames"] for s in got) == 12 + 20 + 16 + 18 + 9
