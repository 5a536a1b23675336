"""Shared fixtures: the synthetic clip, and the Rust API's results for it
(the JSON lines of the `cortex-l2` command, built from the same
sources)."""

import json
import os
import pathlib
import subprocess

import pytest

import cortex_rs as cx

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def clip():
    """The first 48 frames of the synthetic clip at 320×240 (a blurred
    stretch and a cut included)."""
    return cx.demo_clip(48, 320, 240)


def rust_rows(mode: str, frames: int, size: str) -> list:
    """The Rust API's results for the synthetic clip: `cortex-l2 run --json`
    (`CORTEX_L2` names a built binary; otherwise it is run through cargo
    from the repository)."""
    args = ["run", "--json", "-q", "--mode", mode, "--frames", str(frames), "--size", size]
    binary = os.environ.get("CORTEX_L2")
    if binary:
        cmd = [binary, *args]
    else:
        cmd = ["cargo", "run", "--quiet", "--release", "-p", "cortex-runner", "--", *args]
    out = subprocess.run(cmd, cwd=REPO, check=True, capture_output=True, text=True).stdout
    return [json.loads(line)["outputs"] for line in out.splitlines() if line.strip()]


@pytest.fixture(scope="session")
def rust_reference():
    """Per mode, the Rust API's rows for the 48-frame clip at 320×240."""
    cache = {}

    def get(mode: str) -> list:
        if mode not in cache:
            cache[mode] = rust_rows(mode, 48, "320x240")
        return cache[mode]

    return get
