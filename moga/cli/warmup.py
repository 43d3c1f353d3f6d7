"""``moga warmup`` and the notice before a command compiles kernels."""

from __future__ import annotations

import sys

HELP = "compile every Numba kernel ahead of use (for a shared install or a CI image)"

#: What the compile notice says a cold kernel group costs (``moga warmup`` prints each group's
#: time; ``benchmarks/cold_start.py`` measures the main job's first run).
COMPILE_NOTE = "about a minute per group on 2 cores"


def add_arguments(p) -> None:
    from ..warmup import GROUP_ALIASES, KERNEL_GROUPS

    p.add_argument("--groups", nargs="+", choices=list(KERNEL_GROUPS) + list(GROUP_ALIASES),
                   default=None, help="kernel groups to compile (default: all; 'batch decoder', "
                                      "deprecated, is 'decoder' and 'EASY decoder')")
    from .common import bounded

    p.add_argument("--jobs", type=bounded("--jobs", "compile_jobs"), default=None, metavar="N",
                   help="processes compiling cold groups at once (default: MOGA_COMPILE_JOBS, "
                        "else the CPUs, at most 4; each takes 0.3 to 0.5 GB)")


def run(args) -> int:
    import time

    from ..warmup import KERNEL_GROUPS, cold_groups, compile_jobs, expand_groups, warmup

    names = list(KERNEL_GROUPS) if args.groups is None else expand_groups(args.groups)
    jobs = compile_jobs() if args.jobs is None else args.jobs
    n_cold = len(cold_groups(names))
    print(f"compiling or loading {len(names)} kernel group{'s' * (len(names) != 1)} "
          f"({', '.join(names)}); {COMPILE_NOTE} when not in the cache"
          + (f", up to {min(jobs, n_cold)} at once" if min(jobs, n_cold) > 1 else ""),
          flush=True)
    t0 = time.perf_counter()
    warmup(names, say=lambda line: print(f"  {line}", flush=True), jobs=jobs)
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0


def compile_notice(command: str, policy: str | None = None) -> None:
    """Say so before a command compiles kernels that are not in the cache."""
    from ..warmup import cold_groups, command_groups, compile_ahead

    groups = command_groups(command, policy)
    if not groups:
        return
    cold = cold_groups(groups)
    if cold:
        away = compile_ahead(cold)
        print(f"moga: compiling the kernels once ({', '.join(cold)}): {COMPILE_NOTE}"
              + (f", {away} in a second process" if away else "") + "; later runs load them "
              "from the cache (moga warmup compiles every kernel ahead)",
              file=sys.stderr, flush=True)
