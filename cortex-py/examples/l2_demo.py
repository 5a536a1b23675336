"""L2 from Python: one row per frame (sharpness, blur, scene cut, the ROI
box, its score and JPEG size), on the built-in synthetic clip or on a file.

    python cortex-py/examples/l2_demo.py                 # synthetic clip
    python cortex-py/examples/l2_demo.py clip.y4m --mode POWER_SAVE
"""

import argparse
import sys

import cortex_rs as cx


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="?", help="a Y4M file, PNG/JPEG glob, or (FFmpeg builds) any video")
    parser.add_argument("--mode", default="BALANCED", choices=cx.L2.modes())
    parser.add_argument("--frames", type=int, default=48)
    parser.add_argument("--parallel", action="store_true", help="independent nodes at once")
    args = parser.parse_args()
    if args.frames < 1:
        parser.error("--frames: at least 1")

    try:
        frames = cx.open(args.input) if args.input else cx.demo_clip(args.frames, 320, 240)
    except (OSError, ValueError) as e:
        print(f"l2_demo: {e}", file=sys.stderr)
        return 2

    l2 = cx.L2(profile=True)
    print(f"{'frame':>5} {'sharpness':>10} {'blurry':>6} {'cut':>4} {'roi (x, y, w, h)':>22} {'score':>6} {'jpeg':>6}")
    try:
        for i, r in enumerate(cx.stream(l2, frames, args.mode, parallel=args.parallel)):
            if i >= args.frames:
                break
            print(
                f"{r['frame']:>5} {r['blur']['sharpness']:>10.1f} {str(r['blur']['blurry']):>6} "
                f"{'cut' if r['scene']['cut'] else '':>4} {str(tuple(r['roi']['roi'])):>22} "
                f"{r['roi']['score']:>6.3f} {len(r['roi']['jpeg']):>6}"
            )
    except (OSError, cx.PipelineError) as e:
        print(f"l2_demo: {e}", file=sys.stderr)
        return 1
    print()
    print(l2.profile_report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
