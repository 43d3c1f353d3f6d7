"""The size rule's cost model against measured runs, and both searches at equal CPU (not a test).

For each job-set above :data:`moga.evolution.sizing.SMALL_JOBS` (the coverage
months of ``benchmarks/quality.py``: CTC-SP2, METACENTRUM, LCG's day,
CEA-Curie, RICC; ``default@auto``, fluid model, seed 1) two runs of
:func:`moga.run`, each in its own process with one Numba thread, one after
the other: the EASY search and the in-order search, at the population and
archive the size rule would give each (:mod:`moga.evolution.sizing`), each
stopped once it has used ``--cap`` CPU seconds or ``--gens`` generations.
Each run's process first measures the submit order's decodes as the rule
does, and the rule's estimate of each search.

Two tables:

* the cost model: the CPU to the first generation (the seeding and the
  initial population) and the mean CPU of a later generation per member, in
  submit-order decodes of the search's decoder, beside what the rule's
  estimate assumes (:func:`moga.evolution.sizing.estimate`), and the
  estimate of the run's whole CPU beside the measured one (to the first
  generation, plus the mean per later generation times the rest);
* hypervolume at equal CPU: each search's front at a few CPU budgets (the
  last generation within each; a run's draws do not depend on its
  generation budget, so a run cut short at a budget is the run the rule
  would fit to it).

Each run's result goes to a part file in ``--out`` first, and a call finds
the part files an interrupted call left there and reuses them. Writes
``results/size_rule.md`` and ``.json``::

    python benchmarks/size_rule.py [--sets CEA-Curie,RICC] [--cap 300] [--gens 0]
    python benchmarks/size_rule.py --quick     # 60 bundled jobs in this process
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from _bench import add_options, out_dir

from moga.outputs import atomic_write

HERE = Path(__file__).resolve().parent
#: The job-sets: name -> (trace file, days, window, max_procs if headerless).
SETS = {
    "CTC-SP2": ("CTC-SP2-1996-3.1-cln.swf.gz", 30, 1, None),
    "METACENTRUM": ("METACENTRUM-2009-2.swf.gz", 30, 1, None),
    "LCG": ("LCG.swf.gz", 1, 1, None),
    "CEA-Curie": ("CEA-Curie-2011-2.1-cln.swf.gz", 30, 1, None),
    "RICC": ("RICC-2010-2.swf.gz", 30, 1, 8192),
}
SEARCHES = ("easy", "in-order")
#: CPU budgets at which the table sets the two searches' fronts side by side (those within
#: ``--cap``; the cap itself is added).
AT = (50, 100, 150, 200, 300, 450, 600, 900)


def _jobset(name: str):
    import moga

    if name == "quick":
        fed = moga.Federation.preset("default")
        return moga.load_default().jobset(start=0, n_jobs=60, federation=fed), fed
    trace, days, window, max_procs = SETS[name]
    tr = moga.load_swf(moga.resolve_trace(trace), max_procs=max_procs)
    fed = moga.Federation.load("default@auto", auto_nodes=tr.auto_nodes)
    return tr.jobset(start=tr.windows(days=days)[window], days=days, federation=fed), fed


def _warm():
    """Compile (or load from Numba's cache) both searches' kernels on a small set."""
    import moga

    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=30, federation=fed)
    moga.run(js, fed, pop_size=4, n_gen=2, seed=1, params={"easy_search": True})
    moga.run(js, fed, pop_size=4, n_gen=2, seed=1, params={"easy_search": False})


def one(name: str, search: str, cap: float, gens: int, budget: float) -> dict:
    """One run of ``search`` on the job-set ``name`` in this process, stopped after ``cap``
    CPU-s or ``gens`` generations (0: no limit but the cap): the rule's measurements and
    estimates, and each generation's ``[n, CPU-s, hv]``."""
    import moga
    from moga.evolution import sizing
    from moga.evolution.params import GAParams
    from moga.evolution.problem import SchedulingProblem
    from moga.evolution.search import _submit_individual

    js, fed = _jobset(name)
    _warm()
    problem = SchedulingProblem(js, fed)
    submit = _submit_individual(js, fed)
    t_easy, t_in = sizing.measure(problem, submit)
    easy = search == "easy"
    pop, archive = sizing.fitted_population(easy, GAParams().archive_size, submit.shape[1],
                                            len(problem.objectives))
    rows = []
    t0 = time.process_time()

    def hook(n, n_evals, hv):
        rows.append((int(n), time.process_time() - t0, float(hv)))

    res = moga.run(js, fed, seed=1, pop_size=pop, n_gen=10**6, on_generation=hook,
                   params={"easy_search": easy, "archive_size": archive},
                   interrupt=lambda: (time.process_time() - t0 >= cap
                                      or (gens > 0 and len(rows) >= gens)))
    del res
    return {"jobset": name, "n_jobs": len(js), "search": search, "pop_size": pop,
            "archive_size": archive, "easy_decode_s": t_easy, "in_order_decode_s": t_in,
            "per_generation": rows}


def _model(r: dict, budget: float) -> dict:
    """The measured run ``r`` set beside the size rule's cost model."""
    from moga.evolution import sizing

    rows = r["per_generation"]
    easy = r["search"] == "easy"
    t = r["easy_decode_s"] if easy else r["in_order_decode_s"]
    first = rows[0][1]
    per_gen = (rows[-1][1] - first) / (rows[-1][0] - 1) if len(rows) > 1 else float("nan")
    member = per_gen / r["pop_size"]
    assumed = sizing.member_cost(easy, r["easy_decode_s"], r["in_order_decode_s"])
    pairs = sizing.seed_pairs(None)
    gen = r["n_gen"] if "n_gen" in r else 240 if easy else 700
    est = sizing.estimate(easy, r["easy_decode_s"], r["in_order_decode_s"], r["pop_size"],
                          gen, None)
    return {"first_s": first, "per_gen_s": per_gen, "member_s": member,
            "member_in_submit": member / t, "assumed_member_in_submit": assumed / t,
            "first_in_members": first / member, "assumed_first_in_members":
            sizing.estimate(easy, r["easy_decode_s"], r["in_order_decode_s"], r["pop_size"], 1,
                            None) / assumed, "seed_pairs": pairs, "n_gen": gen,
            "estimated_s": est, "measured_s": first + per_gen * (gen - 1),
            "generations": rows[-1][0]}


def _at(rows, cpu):
    """``(generation, hv)`` of the last generation finished within ``cpu`` seconds."""
    within = [x for x in rows if x[1] <= cpu]
    return (within[-1][0], within[-1][2]) if within else (0, float("nan"))


def _table(runs, args) -> str:
    from moga.evolution import sizing

    lines = ["# The size rule's cost model, and the two searches at equal CPU", "",
             f"Generated by `python benchmarks/size_rule.py{' --quick' if args.quick else ''}"
             f" --sets {','.join(args.sets)} --cap {args.cap:g}"
             f"{f' --gens {args.gens}' if args.gens else ''}` on "
             f"{datetime.date.today().isoformat()} ({platform.machine()}, {platform.system()}, "
             f"Python {platform.python_version()}): one run of each search per job-set "
             "(`default@auto`, fluid model, seed 1), each in its own process with one Numba "
             "thread, at the population and archive the size rule gives it, stopped after "
             f"{args.cap:g} CPU-s{f' or {args.gens} generations' if args.gens else ''}; "
             "CPU seconds of the `moga.run` call (decoders compiled before).", "",
             "## The cost model", "",
             "A member: the mean CPU of a generation after the first, per member of the "
             "population, in submit-order decodes of the search's decoder (EASY for the "
             "EASY search, whose members are also decoded in order for the archive: "
             "the rule counts that as one in-order decode). First: the CPU to the first "
             "generation (the heuristics' schedules, the seeding's decodes and the initial "
             "population) in members. Whole run: at 50 x 240 (EASY) or the population x 700 "
             "(in order), the rule's estimate against the measured first generation plus "
             "the mean later one times the rest.", "",
             "| job-set | jobs | search | pop | submit-order decode s (EASY / in order) | "
             "generations run | a member, in submit-order decodes: measured (rule) | "
             "first generation s, in members: measured (rule) | whole run CPU-s: "
             "estimated / measured |", "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        m = r["model"]
        lines.append(
            f"| {r['jobset']} | {r['n_jobs']:,} | {r['search']} | {r['pop_size']} | "
            f"{r['easy_decode_s']:.4f} / {r['in_order_decode_s']:.4f} | {m['generations']} | "
            f"{m['member_in_submit']:.2f} ({m['assumed_member_in_submit']:.2f}) | "
            f"{m['first_s']:.1f}, {m['first_in_members']:.0f} "
            f"({m['assumed_first_in_members']:.0f}) | "
            f"{m['estimated_s']:.0f} / {m['measured_s']:.0f} |")
    at = sorted({c for c in AT if c < args.cap} | {args.cap})
    lines += ["", "## Hypervolume at equal CPU", "",
              "Normalised hypervolume of the archive's front (reference 1.1 x the submit "
              "order) at the last generation finished within each CPU budget (in brackets the "
              "generation); a run's draws do not depend on its generation budget, so each "
              "cell is the run the rule would fit to that budget (nan: not one generation "
              "within it).", "",
              "| job-set | search | " + " | ".join(f"{c:g} CPU-s" for c in at) + " |",
              "|---|---|" + "---|" * len(at)]
    for r in runs:
        cells = []
        for c in at:
            g, hv = _at(r["per_generation"], c)
            cells.append(f"{hv:.4f} ({g})")
        lines.append(f"| {r['jobset']} | {r['search']} | " + " | ".join(cells) + " |")
    lines += ["", f"The rule's constants the estimates use: EASY_FACTOR {sizing.EASY_FACTOR:g}, "
              f"IN_ORDER_FACTOR {sizing.IN_ORDER_FACTOR:g}, SEED_PAIRS {sizing.SEED_PAIRS}, "
              f"SEED_FACTOR {sizing.SEED_FACTOR:g}.", ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS),
                    help=f"comma-separated job-sets among {', '.join(SETS)} (default: all)")
    ap.add_argument("--cap", type=float, default=300.0,
                    help="CPU seconds after which each run stops (300)")
    ap.add_argument("--gens", type=int, default=0,
                    help="generations after which each run stops (0: only the cap)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--json", help=argparse.SUPPRESS)
    add_options(ap, "60 bundled jobs, two generations, in this process")
    args = ap.parse_args(argv)
    args.sets = ["quick"] if args.quick else [s for s in args.sets.split(",") if s]
    for s in args.sets:
        if s not in SETS and s != "quick":
            ap.error(f"--sets: unknown job-set {s!r} (known: {', '.join(SETS)})")
    if not args.cap > 0 or args.gens < 0:
        ap.error("--cap must be > 0 and --gens >= 0")
    if args.one:
        name, search = args.one.split(":")
        atomic_write(Path(args.json),
                     json.dumps(one(name, search, args.cap, args.gens, 0.0)) + "\n")
        return 0
    out = out_dir(args)
    if args.quick:
        args.gens = args.gens or 3
        runs = [one("quick", s, args.cap, args.gens, 0.0) for s in SEARCHES]
    else:
        env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
        runs = []
        for name in args.sets:  # one run at a time: their CPU seconds are comparable
            for s in SEARCHES:
                part = out / f"size_rule-{name}-{s}.part.json"
                if not part.exists():
                    subprocess.run([sys.executable, __file__, "--one", f"{name}:{s}",
                                    "--json", str(part), "--cap", str(args.cap),
                                    "--gens", str(args.gens)], env=env, check=True)
                runs.append(json.loads(part.read_text()))
    for r in runs:
        r["model"] = _model(r, 0.0)
    atomic_write(out / "size_rule.json", json.dumps(
        {"cap": args.cap, "gens": args.gens, "runs": runs}, indent=1) + "\n")
    atomic_write(out / "size_rule.md", _table(runs, args))
    if not args.quick:
        for name in args.sets:
            for s in SEARCHES:
                (out / f"size_rule-{name}-{s}.part.json").unlink(missing_ok=True)
    print(f"wrote {out}/size_rule.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
