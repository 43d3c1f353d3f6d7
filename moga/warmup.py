"""Compiling the Numba kernels ahead of use, and telling when a command will compile them.

Numba compiles each kernel the first time a process calls it and keeps the
machine code in its cache (``NUMBA_CACHE_DIR``, else ``__pycache__`` beside
the sources); later processes load it. :func:`warmup` compiles every kernel
group at once (``moga warmup``, for a cluster's shared install or a CI
image); :func:`cold_groups` says which groups a command would compile, so the
command can say so before a silent wait.
"""

from __future__ import annotations

import time

import numpy as np

from .policies import POLICIES, SESSION_KERNELS

__all__ = ["KERNEL_GROUPS", "COMMAND_GROUPS", "GROUP_ALIASES", "STILL_EVERY", "cold_groups",
           "command_groups", "expand_groups", "warmup"]

#: Kernel groups: name -> (what uses them, [(module, kernel) the cache must hold]). The
#: federated event loop is one group per rule: each rule's specialisation of the loop
#: compiles and is cached on its own, so a command compiles only the rules it runs.
KERNEL_GROUPS = {
    "decoder": ("the in-order decoder, one chromosome or a population: moga evaluate, run, "
                "compare, sweep, tune, simulate --policy fcfs", [("federated", "_decode_in_order")]),
    "EASY decoder": ("EASY backfilling: the default search of moga run, compare, sweep and tune, "
                     "--backfill easy, moga powercap, simulate --policy easy",
                     [("federated", "_decode_easy")]),
    "PRB dispatcher": ("moga powercap, simulate --policy prb", [("federated", "_decode_prb")]),
    "SAF dispatcher": ("simulate --policy saf", [("federated", "_decode_saf")]),
    "dispatch steps": ("moga powercap (the hybrid dispatcher), Python policies",
                       [("steps", "map"), ("steps", "end")]),
    "priority steps": ("users' priority rules: simulate --policy path.py:function, "
                       "Session.start_easy", [("priority", "drive"), ("priority", "easy_listed")]),
    "value decoders": ("moga value", [("value", "_decode_value"),
                                      ("value", "_decode_value_batch")]),
    "online value heuristics": ("moga value", [("loop", "_simulate")]),
    "real-time loop": ("moga realtime, moga simulate --policy rt-...",
                       [("realtime", "_simulate")]),
}

#: Group names of earlier releases, still accepted (with a DeprecationWarning): the one
#: "batch decoder" group is now the in-order and the EASY loop's groups.
GROUP_ALIASES = {"batch decoder": ("decoder", "EASY decoder")}

#: The kernel groups each command uses (the search's default decodes in order and with EASY).
COMMAND_GROUPS = {
    "evaluate": ("decoder",),
    "run": ("decoder", "EASY decoder"),
    "compare": ("decoder", "EASY decoder"),
    "tune": ("decoder", "EASY decoder"),
    "sweep": ("decoder", "EASY decoder"),
    "powercap": ("EASY decoder", "PRB dispatcher", "dispatch steps"),
    "simulate": ("decoder", "dispatch steps"),
    "value": ("value decoders", "online value heuristics"),
    "realtime": ("real-time loop",),
}


def expand_groups(groups) -> list[str]:
    """``groups`` with each old name of :data:`GROUP_ALIASES` replaced by the groups it
    became (a DeprecationWarning says so), each group once, in order."""
    import warnings

    out = []
    for g in groups:
        if g in GROUP_ALIASES:
            warnings.warn(f"kernel group {g!r} is now {' and '.join(map(repr, GROUP_ALIASES[g]))}"
                          f"; the old name will be removed in a later release",
                          DeprecationWarning, stacklevel=3)
            out.extend(GROUP_ALIASES[g])
        else:
            out.append(g)
    return list(dict.fromkeys(out))


def command_groups(command: str, policy: str | None = None) -> tuple[str, ...]:
    """The kernel groups ``command`` uses; for ``simulate``, those of its ``policy`` (its
    catalogue entry's ``kernels``; a user's policy runs on the Session's)."""
    if command != "simulate" or policy is None:
        return COMMAND_GROUPS.get(command, ())
    entry = POLICIES.get(policy)
    return SESSION_KERNELS if entry is None else entry.kernels


def cold_groups(groups=None) -> list[str]:
    """The kernel groups (of ``groups``, default all) whose kernels are not in the cache."""
    from decoders._cache import is_cached

    names = KERNEL_GROUPS if groups is None else groups
    return [g for g in names if not all(is_cached(m, k) for m, k in KERNEL_GROUPS[g][1])]


def _tiny():
    import moga

    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=12, federation=fed, batch=False, power="lognormal")
    return moga, fed, js


def _fifo_score(now, submit, tasks, estimate):
    """A priority rule's score (first come, first served) for the priority steps' compile."""
    return submit


def _compile(group: str) -> None:
    moga, fed, js = _tiny()
    J, K = len(js), fed.n_clusters
    if group == "decoder":
        moga.evaluate(js, fed)
        moga.evaluate_batch(js, fed, np.tile(np.arange(J), (2, 1)), np.zeros((2, J, K)))
    elif group == "EASY decoder":
        moga.evaluate(js, fed, backfill="easy")
    elif group in ("PRB dispatcher", "SAF dispatcher"):
        from moga.model.schedule import dispatch_schedule

        dispatch_schedule(js, fed, group.split()[0].lower())
    elif group == "real-time loop":
        from moga.realtime import Machine, simulate, tag_realtime

        rj = tag_realtime(js, Machine(int(fed.total_nodes)), 0.3, seed=0)
        simulate(rj, "preempt", "jit", improved=True)
    elif group == "priority steps":
        import numba

        from moga.sim import PriorityRule

        PriorityRule(numba.njit(_fifo_score)).run(js, fed)
    elif group == "dispatch steps":
        from moga.powercap import CPOptions, run_dispatcher

        run_dispatcher(js, fed.with_cap(fraction=0.9), "hybrid", cp=CPOptions(window=2))
    else:
        from moga.value import attach_values, evaluate_value, evaluate_value_batch, online

        vjs = attach_values(moga.load_default().jobset(
            n_jobs=12, federation=int(fed.nodes.max()), wide="drop", batch=False))
        if group == "value decoders":
            evaluate_value(vjs, fed)
            n = len(vjs)
            evaluate_value_batch(vjs, fed, np.tile(np.arange(n), (2, 1)), np.zeros((2, n, K)))
        else:
            online(vjs, fed)


#: Seconds between the lines that say a group is still compiling.
STILL_EVERY = 60.0


def warmup(groups=None, say=print, still_every: float | None = None) -> dict:
    """Compile (or load) the kernel groups ``groups`` (default all); returns seconds per group.

    ``say`` (default ``print``; None for silence) is called with a line as each
    group starts (``decoder: compiling (moga evaluate, ...)`` or ``decoder:
    loading from the cache``), a line every ``still_every`` seconds (default
    :data:`STILL_EVERY`) while it compiles, since a cold group can take minutes
    on a busy machine, and a line as it ends (``decoder: compiled in 52.0 s``
    or ``decoder: loaded from the cache in 0.4 s``).
    """
    import threading

    names = list(KERNEL_GROUPS if groups is None else expand_groups(groups))
    unknown = [g for g in names if g not in KERNEL_GROUPS]
    if unknown:
        raise ValueError(f"unknown kernel group(s) {unknown}; choose from {list(KERNEL_GROUPS)}")
    say = say or (lambda line: None)
    every = STILL_EVERY if still_every is None else still_every
    out = {}
    for g in names:
        cold = bool(cold_groups([g]))  # a group may share kernels with one compiled before it
        say(f"{g}: compiling ({KERNEL_GROUPS[g][0]})" if cold else f"{g}: loading from the cache")
        t0 = time.perf_counter()
        done = threading.Event()

        def still(g=g, t0=t0, done=done):
            while not done.wait(every):
                say(f"{g}: still compiling, {time.perf_counter() - t0:.0f} s so far")

        ticker = threading.Thread(target=still, daemon=True)
        if cold:
            ticker.start()
        try:
            _compile(g)
        finally:
            done.set()
            if cold:
                ticker.join()
        out[g] = time.perf_counter() - t0
        say(f"{g}: compiled in {out[g]:.1f} s" if cold
            else f"{g}: loaded from the cache in {out[g]:.1f} s")
    return out
