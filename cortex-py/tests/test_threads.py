"""Threads: the GIL is released while a frame runs, several pipelines run
from several threads at once with the results of one thread, and memory
stays flat over many frames."""

import threading

import numpy as np

import cortex_rs as cx


def summary(r):
    return (r["blur"]["sharpness"], r["scene"]["ssim"], r["roi"]["roi"], r["roi"]["jpeg"])


def test_two_threads_with_a_pipeline_each_give_one_threads_results(clip):
    one = cx.L2()
    expected = [summary(one.run(f)) for f in clip]
    got = {}

    def work(name, mode_parallel):
        l2 = cx.L2()
        got[name] = [summary(l2.run(f, parallel=mode_parallel)) for f in clip]

    threads = [threading.Thread(target=work, args=(i, i == 1)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got[0] == expected and got[1] == expected


def test_one_pipeline_shared_by_threads_runs_one_frame_at_a_time(clip):
    l2 = cx.L2()
    errors = []

    def work():
        try:
            for f in clip[:10]:
                l2.run(f)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert l2.frame_index == 30


def test_python_threads_run_while_a_frame_runs():
    # A frame holding the GIL would let no bytecode of another thread run
    # until it returned (the interpreter's switch only interrupts bytecode).
    frame = cx.demo_clip(1, 1920, 1080)[0]
    l2 = cx.L2()
    l2.run(frame)
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        during = []
        for _ in range(5):
            before = count[0]
            l2.run(frame)
            during.append(count[0] - before)
    finally:
        stop.set()
        spinner.join()
    assert max(during) > 100, during


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_memory_stays_flat_over_many_frames(clip):
    l2 = cx.L2()
    frames = clip * 8  # 384 frames, cuts included
    for f in frames[:48]:
        l2.run(f, fused=True)
    before = rss_bytes()
    for f in frames[48:]:
        l2.run(f, fused=True)
    grown = rss_bytes() - before
    # One frame's results (JPEG, regions, QP map and the 300 KB score map)
    # leaked per frame would be more than 100 MB over these 336 frames.
    assert grown < 8 << 20, grown


def test_run_streams_calls_from_two_threads_on_the_same_pipelines_count_every_frame():
    # Each call holds its pipelines until its streams end and lends them to
    # its pool: calls from two threads, naming the pipelines in opposite
    # orders, take turns, and every frame of both lands in the pipelines'
    # state (each pipeline runs 10 calls of 6 frames).
    frames = cx.demo_clip(6, 96, 64)
    p, q = cx.l2_graph().build(), cx.l2_graph().build()
    got = {}

    def call(name, pipes):
        for _ in range(5):
            got[name] = cx.run_streams([(x, frames) for x in pipes], threads=2)

    threads = [
        threading.Thread(target=call, args=("pq", (p, q))),
        threading.Thread(target=call, args=("qp", (q, p))),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "the calls waited for each other"
    assert p.frame_index == q.frame_index == 10 * len(frames)
