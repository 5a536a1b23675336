"""Interleaved A/B rounds of two builds of the wheel's module: each round
runs an inner script under both builds, in alternating order, each in a
fresh process whose ``PYTHONPATH`` is the build's directory (a
``cortex_rs`` package with its ``_native`` module copied in)."""

import argparse
import os
import subprocess
import sys


def arguments(**flags: bool) -> argparse.ArgumentParser:
    """The command line both A/B benches share: OLD_DIR NEW_DIR [video]
    [--rounds N], plus the boolean ``flags`` given (name → help)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("video", nargs="?", default="/tmp/vtest60.y4m")
    ap.add_argument("--rounds", type=int, default=7)
    for name, help_text in flags.items():
        ap.add_argument(f"--{name}", action="store_true", help=help_text)
    return ap


def rounds(a: argparse.Namespace, inner: str, *argv: str):
    """Yields ``(build, stdout)`` for every run of ``inner`` (with ``argv``)
    over ``a.rounds`` interleaved rounds, then the load averages seen, one
    per round, as ``("load", [..])``."""
    loads = []
    for r in range(a.rounds):
        for name in ["old", "new"] if r % 2 == 0 else ["new", "old"]:
            env = dict(os.environ, PYTHONPATH=getattr(a, name))
            out = subprocess.run(
                [sys.executable, "-c", inner, *argv], env=env, check=True, capture_output=True, text=True
            )
            yield name, out.stdout
        loads.append(os.getloadavg()[0])
    yield "load", loads
