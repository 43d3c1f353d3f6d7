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


def run(args) -> int:
    from ..warmup import KERNEL_GROUPS, expand_groups, warmup

    names = list(KERNEL_GROUPS) if args.groups is None else expand_groups(args.groups)
    print(f"compiling or loading {len(names)} kernel group{'s' * (len(names) != 1)} "
          f"({', '.join(names)}); {COMPILE_NOTE} when not in the cache", flush=True)
    secs = warmup(names, say=lambda line: print(f"  {line}", flush=True))
    print(f"done in {sum(secs.values()):.1f} s")
    return 0


def compile_notice(command: str, policy: str | None = None) -> None:
    """Say so before a command compiles kernels that are not in the cache."""
    from ..warmup import cold_groups, command_groups

    groups = command_groups(command, policy)
    if not groups:
        return
    cold = cold_groups(groups)
    if cold:
        print(f"moga: compiling the kernels once ({', '.join(cold)}): {COMPILE_NOTE}; later "
              "runs load them from the cache (moga warmup compiles every kernel ahead)",
              file=sys.stderr, flush=True)
