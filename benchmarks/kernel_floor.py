"""Benchmark: the decoder's loop against a bare list scheduler, its floor (a benchmark, not a test).

Measures, on one Numba thread, on the bundled HPC2N month's first 1,000 jobs
(``--n-jobs``) and the default federation, nanoseconds per job per
chromosome (CPU time of the measuring thread, best of a few calls) of:

* the in-order decode of a population (``decoders.federated.BatchDecoder``, no
  backfilling), in submit order and in random orders;
* the EASY decode of the same population;
* one ``decoders.decode`` call per chromosome (the wrapper's own cost
  included);
* the floor: a bare Numba list scheduler of the same jobs in the same orders
  on one pool of the federation's nodes (a binary heap of finishes, strict
  order, no co-allocation, no slowdown), timed in the same process.

With ``--base DIR`` every round also runs the same measurement on another
checkout of the project (``DIR`` first on ``PYTHONPATH``, in a child
process), alternating with this tree, also measured in a child process then,
so that both see the same machine load and start alike; the table gives each
figure's range over the rounds.

Writes ``results/kernel_floor.json`` and ``results/kernel_floor.md``::

    python benchmarks/kernel_floor.py                       # this tree
    python benchmarks/kernel_floor.py --base /tmp/base      # against a checkout
    python benchmarks/kernel_floor.py --quick               # seconds, temporary folder
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
from _bench import add_options, out_dir
from numba import njit

ROOT = Path(__file__).resolve().parents[1]

#: What each row of the table measures, in order.
FIGURES = {
    "floor_submit": "bare list scheduler, submit order",
    "floor_random": "bare list scheduler, random orders",
    "inorder_submit": "in-order decode of a population, submit order",
    "inorder_random": "in-order decode of a population, random orders",
    "easy_submit": "EASY decode of a population, submit order",
    "easy_random": "EASY decode of a population, random orders",
    "decode_call": "one `decoders.decode` call per chromosome, random orders",
}


@njit(cache=True, nogil=True)
def _list_schedule(release, tasks, runtime, n_nodes, orders, heap_t, heap_n, out):
    """Makespan of each row of ``orders`` scheduled strictly in order on one pool of
    ``n_nodes`` nodes: a job starts at the latest of its release, the previous job's
    start and the time enough running jobs have finished (a binary heap of finishes)."""
    P, J = orders.shape
    for p in range(P):
        free = n_nodes
        n = 0
        t = 0.0
        end = 0.0
        for i in range(J):
            j = orders[p, i]
            if release[j] > t:
                t = release[j]
            while free < tasks[j]:
                t = max(t, heap_t[0])
                free += heap_n[0]
                n -= 1
                # sift the last entry down from the root
                x_t, x_n = heap_t[n], heap_n[n]
                c = 0
                while True:
                    a = 2 * c + 1
                    if a >= n:
                        break
                    if a + 1 < n and heap_t[a + 1] < heap_t[a]:
                        a += 1
                    if heap_t[a] >= x_t:
                        break
                    heap_t[c], heap_n[c] = heap_t[a], heap_n[a]
                    c = a
                heap_t[c], heap_n[c] = x_t, x_n
            free -= tasks[j]
            fin = t + runtime[j]
            end = max(end, fin)
            c = n
            n += 1
            while c > 0 and heap_t[(c - 1) // 2] > fin:
                heap_t[c], heap_n[c] = heap_t[(c - 1) // 2], heap_n[(c - 1) // 2]
                c = (c - 1) // 2
            heap_t[c], heap_n[c] = fin, tasks[j]
        out[p] = end


def _naive_list_schedule(release, tasks, runtime, n_nodes, order):
    """The floor's makespan of one order, plainly (a check of :func:`_list_schedule`)."""
    running, free, t, end = [], n_nodes, 0.0, 0.0
    for j in order:
        t = max(t, release[j])
        while free < tasks[j]:
            running.sort()
            fin, n = running.pop(0)
            t, free = max(t, fin), free + n
        free -= tasks[j]
        running.append((t + runtime[j], tasks[j]))
        end = max(end, t + runtime[j])
    return end


def _best(fn, reps):
    """Best time of ``reps`` calls of ``fn``, in CPU seconds of the calling thread.

    Every figure runs on this one thread, so its CPU time is its wall time on
    an idle machine; on a shared one it leaves out the time other processes
    hold the core, which a wall clock counts and the kernels' short runs
    suffer from unevenly.
    """
    best = np.inf
    for _ in range(reps):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


def measure(n_jobs, pop, reps, seed=0) -> dict:
    """Nanoseconds per job per chromosome of every figure of :data:`FIGURES` in this process."""
    import decoders
    import moga
    from decoders.federated import BatchDecoder

    numba.set_num_threads(1)
    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=n_jobs, federation=fed, seed=seed)
    J, K = len(js), fed.n_clusters
    rng = np.random.default_rng(seed)
    rows = {"submit": np.tile(np.arange(J, dtype=np.int64), (pop, 1)),
            "random": np.array([rng.permutation(J) for _ in range(pop)], dtype=np.int64)}
    zeros = np.zeros((pop, J, K))
    arrs = (*js.arrays(), fed.nodes, fed.speed, fed.power_busy, fed.power_idle, fed.link)
    release, tasks, runtime = (np.ascontiguousarray(a) for a in js.arrays()[:3])
    tasks = tasks.astype(np.int64)
    n_nodes = int(np.sum(fed.nodes))
    heap_t, heap_n, mk = np.empty(J), np.empty(J, dtype=np.int64), np.empty(pop)
    _list_schedule(release, tasks, runtime, n_nodes, rows["random"][:1], heap_t, heap_n, mk)
    check = _naive_list_schedule(release, tasks, runtime, n_nodes, rows["random"][0])
    if mk[0] != check:
        raise AssertionError(f"the floor's kernel gives {mk[0]}, its twin {check}")
    res = {}
    for name, orders in rows.items():
        res[f"floor_{name}"] = _best(lambda o=orders: _list_schedule(
            release, tasks, runtime, n_nodes, o, heap_t, heap_n, mk), reps)
        for backfill in ("none", "easy"):
            dec = BatchDecoder(*arrs, backfill=backfill)
            dec(orders[:1], zeros[:1])  # compile or load, and make the work arrays
            key = ("inorder" if backfill == "none" else "easy") + f"_{name}"
            res[key] = _best(lambda d=dec, o=orders: d(o, zeros), reps)
    order_rows, bl = rows["random"], np.zeros((J, K))
    decoders.decode(*arrs, order_rows[0], bl)

    def calls():
        for p in range(pop):
            decoders.decode(*arrs, order_rows[p], bl)

    res["decode_call"] = _best(calls, reps)
    return {k: v / (pop * J) * 1e9 for k, v in res.items()}


def _child(base, n_jobs, pop, reps) -> dict:
    """:func:`measure` in a child process with ``base`` first on ``PYTHONPATH``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(base), str(Path(__file__).parent)] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    code = (f"import json, kernel_floor as k, decoders; print(json.dumps([decoders.__file__, "
            f"k.measure({n_jobs}, {pop}, {reps})]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(base),
                         capture_output=True, text=True, check=True).stdout.splitlines()[-1]
    where, figures = json.loads(out)
    if not where.startswith(str(Path(base).resolve())):
        raise SystemExit(f"--base {base}: the child imported decoders from {where}")
    return figures


def _span(values):
    lo, hi = min(values), max(values)
    return f"{lo:.0f}" if round(lo) == round(hi) else f"{lo:.0f}-{hi:.0f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-jobs", type=int, default=None, help="jobs (default 1000)")
    ap.add_argument("--pop", type=int, default=None, help="chromosomes (default 100)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds (default 3)")
    ap.add_argument("--base", default=None,
                    help="another checkout of the project to measure in alternation")
    args = add_options(ap).parse_args(argv)
    out = out_dir(args)
    n_jobs = args.n_jobs or (100 if args.quick else 1000)
    pop = args.pop or (4 if args.quick else 100)
    rounds = args.rounds or (1 if args.quick else 3)
    reps = 1 if args.quick else 5

    threads = numba.get_num_threads()
    runs = {"this": [], "base": []}
    try:
        for _ in range(rounds):
            if args.base:
                runs["base"].append(_child(args.base, n_jobs, pop, reps))
            runs["this"].append(_child(ROOT, n_jobs, pop, reps) if args.base
                                else measure(n_jobs, pop, reps))
    finally:
        numba.set_num_threads(threads)

    res = {"n_jobs": n_jobs, "pop": pop, "rounds": rounds, "base": args.base,
           "machine": platform.machine(), "python": platform.python_version(),
           "numba": numba.__version__, "numpy": np.__version__, "cpus": os.cpu_count(),
           "runs": runs}
    (out / "kernel_floor.json").write_text(json.dumps(res, indent=1) + "\n")
    cols = ["this tree"] + (["base"] if args.base else [])
    lines = [
        "# The decoder's loop against its floor (`benchmarks/kernel_floor.py`)",
        "",
        f"{n_jobs} jobs of the bundled HPC2N month on the default federation, a population of "
        f"{pop} chromosomes (zero blacklists), one Numba thread, fluid model; nanoseconds per "
        f"job per chromosome (CPU time of the thread), best of {reps} calls, range over {rounds} rounds"
        + (f" alternating with the checkout `{args.base}`" if args.base else "")
        + f". numba {res['numba']}, numpy {res['numpy']}, Python {res['python']}, "
        f"{res['cpus']} CPUs (shared: figures are noisy).",
        "",
        "| figure | " + " | ".join(cols) + " | x floor (this tree, same order) |",
        "|---|" + "---|" * len(cols) + "---|",
    ]
    for key, label in FIGURES.items():
        this = [r[key] for r in runs["this"]]
        cells = [_span(this)] + ([_span([r[key] for r in runs["base"]])] if args.base else [])
        floor = "floor_submit" if key.endswith("submit") else "floor_random"
        ratio = [r[key] / r[floor] for r in runs["this"]]
        lines.append(f"| {label} | " + " | ".join(cells)
                     + f" | {min(ratio):.1f}-{max(ratio):.1f} |")
    (out / "kernel_floor.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return res


if __name__ == "__main__":
    main()
