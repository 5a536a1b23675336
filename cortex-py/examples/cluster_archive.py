"""Recorded video spread over a Dask cluster: each worker runs L2
(`cortex_rs`) over whole files and returns one summary per file.

    # one machine, two worker processes on loopback:
    python cortex-py/examples/cluster_archive.py --local 2 archive/*.mp4
    # a cluster: `dask scheduler` on one box, `dask worker tcp://HOST:8786`
    # on each box (each with cortex_rs installed and the files at the same
    # paths, e.g. a shared mount), then:
    python cortex-py/examples/cluster_archive.py --scheduler tcp://HOST:8786 /mnt/archive/*.mp4

A file is a task: a file that cannot be read costs that file (its summary
carries the error), a worker that dies costs the files it was running,
which the scheduler runs again on another worker. Prints one JSON line per
file, then the totals on stderr.
"""

import argparse
import json
import sys
import time

import cortex_rs as cx


def summarize(path: str, mode: str = "BALANCED") -> dict:
    """L2 over every frame of `path`, summed up: frames, mean sharpness,
    blurry frames, scene cuts, the mean region-of-interest score, the time
    spent, and which worker ran it. A file that cannot be read or a frame
    that fails is reported in `error`, not raised: one file never ends a
    batch."""
    started = time.perf_counter()
    summary = {"file": path, "frames": 0, "sharpness_mean": None, "blurry": 0,
               "cuts": 0, "roi_score_mean": None, "error": None}
    sharp = score = 0.0
    try:
        l2 = cx.L2()
        for r in cx.stream(l2, cx.open(path), mode):
            summary["frames"] += 1
            sharp += r["blur"]["sharpness"]
            score += r["roi"]["score"]
            summary["blurry"] += bool(r["blur"]["blurry"])
            summary["cuts"] += bool(r["scene"]["cut"])
    except (OSError, ValueError, RuntimeError) as e:
        summary["error"] = str(e)
    if summary["frames"]:
        summary["sharpness_mean"] = sharp / summary["frames"]
        summary["roi_score_mean"] = score / summary["frames"]
    summary["seconds"] = time.perf_counter() - started
    summary["worker"] = _worker()
    return summary


def _worker() -> str:
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return "local"


def run(client, paths, mode="BALANCED"):
    """Summaries of `paths` (in their order) computed on `client`'s
    cluster, one task per file. `pure=False`: a file's content may change
    between runs, so results are never reused by name."""
    futures = client.map(summarize, paths, mode=mode, pure=False)
    return client.gather(futures)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="videos any worker can read at that path")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", help="a running Dask scheduler, tcp://HOST:8786")
    where.add_argument("--local", type=int, metavar="N",
                       help="a cluster of N worker processes on this machine (loopback)")
    parser.add_argument("--mode", default="BALANCED", choices=cx.L2.modes())
    args = parser.parse_args()
    if args.local is not None and args.local < 1:
        parser.error("--local: at least 1 worker")
    from distributed import Client, LocalCluster

    if args.local:
        cluster = LocalCluster(n_workers=args.local, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None)
        client = Client(cluster)
    else:
        cluster, client = None, Client(args.scheduler)
    try:
        started = time.perf_counter()
        summaries = run(client, args.files, args.mode)
        wall = time.perf_counter() - started
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    for s in summaries:
        print(json.dumps(s))
    frames = sum(s["frames"] for s in summaries)
    failed = [s for s in summaries if s["error"]]
    print(f"{len(summaries)} files, {frames} frames in {wall:.2f} s "
          f"({frames / wall:.1f} frames/s); {len(failed)} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
