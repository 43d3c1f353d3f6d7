"""Deep-EAS training speed: one REINFORCE iteration at the paper's size.

The paper trains 1,000 iterations of 150 job sequences x 20 trajectories and
reports about 97 s per iteration. This runs ``--iterations`` iterations at
that size (lambda 0.7, beta 0.5) and reports the last one (the first pays
the compilation), split into the episodes (the lockstep rollouts) and the
gradient, with the decisions it covers. Writes ``results/deep_eas_speed.md``
and ``.json``::

    python benchmarks/deep_eas_speed.py          # about 4 min on 2 cores
    python benchmarks/deep_eas_speed.py --quick  # seconds, to a temporary folder
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from _bench import add_options, out_dir

from moga.outputs import atomic_write
from moga.rl import ClusterConfig
from moga.rl.train import PAPER_BUDGET, TrainConfig, train

ROOT = Path(__file__).resolve().parents[1]
#: The paper's reported seconds per training iteration.
PAPER_SECONDS = 97.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--sequences", type=int, default=None,
                    help=f"job sequences per iteration (default {PAPER_BUDGET[1]}, the paper's)")
    ap.add_argument("--trajectories", type=int, default=None,
                    help=f"trajectories per sequence (default {PAPER_BUDGET[2]}, the paper's)")
    add_options(ap, "2 sequences x 2 trajectories, one iteration")
    args = ap.parse_args(argv)
    out = out_dir(args)
    if args.quick:
        args.iterations = 1
    args.sequences = args.sequences or (2 if args.quick else PAPER_BUDGET[1])
    args.trajectories = args.trajectories or (2 if args.quick else PAPER_BUDGET[2])
    paper = (args.sequences, args.trajectories) == tuple(PAPER_BUDGET[1:3])
    paper_size = f"{PAPER_BUDGET[1]} x {PAPER_BUDGET[2]}"
    size = "the paper's size" if paper else f"scaled; the paper's size is {paper_size}"
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    tc = TrainConfig(iterations=args.iterations, sequences=args.sequences,
                     trajectories=args.trajectories, checkpoint_every=10**6)
    res = train(ClusterConfig(), tc, progress=False)
    last = res.history[-1]
    doc = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
           "sequences": args.sequences, "trajectories": args.trajectories,
           "iterations": res.history, "wall_s": time.perf_counter() - t0,
           "load_average": [load0, os.getloadavg()[0]]}
    grad = last["seconds"] - last["rollout_seconds"]
    md = "\n".join([
        "# Deep-EAS training speed", "",
        f"Regenerate: `python benchmarks/deep_eas_speed.py` ({doc['machine']}, "
        f"{doc['cpus']} CPUs, {doc['wall_s']:.0f} s). One REINFORCE iteration at "
        f"{args.sequences} sequences x {args.trajectories} trajectories ({size}), "
        "lambda 0.7, beta 0.5; the last of "
        f"{args.iterations} iterations (the first compiles). Load average (1 min) "
        f"{doc['load_average'][0]:.1f} at the start and {doc['load_average'][1]:.1f} at the "
        "end: other work on the machine slows the figures down.", "",
        "| seconds per iteration | episodes (lockstep rollouts) | gradient and update | "
        f"decisions | µs per decision | the paper's (at {paper_size}) |",
        "|---|---|---|---|---|---|",
        f"| {last['seconds']:.1f} | {last['rollout_seconds']:.1f} | {grad:.1f} | "
        f"{last['samples']:,} | {1e6 * last['seconds'] / max(last['samples'], 1):.0f} | "
        f"{PAPER_SECONDS:.0f} |", ""])
    atomic_write(out / "deep_eas_speed.json", json.dumps(doc, indent=2) + "\n")
    atomic_write(out / "deep_eas_speed.md", md)
    print(md)


if __name__ == "__main__":
    main()
