"""Compiling the Numba kernels ahead of use, and telling when a command will compile them.

Numba compiles each kernel the first time a process calls it and keeps the
machine code in its cache (``NUMBA_CACHE_DIR``, else ``__pycache__`` beside
the sources); later processes load it. :func:`warmup` compiles every kernel
group at once (``moga warmup``, for a cluster's shared install or a CI
image), sharing the cold groups among processes; :func:`cold_groups` says
which groups a command would compile, so the command can say so before a
silent wait, and :func:`compile_ahead` has another process compile the
costliest of them while the command goes on.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np

from .policies import POLICIES, SESSION_KERNELS

__all__ = ["KERNEL_GROUPS", "COMMAND_GROUPS", "COMPILE_COST", "GROUP_ALIASES", "STILL_EVERY",
           "cold_groups", "command_groups", "compile_ahead", "compile_jobs", "expand_groups",
           "warmup"]

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
    "search": ("the genetic search's operators, mating and survival: moga run, compare, sweep, "
               "tune", [("moga.evolution.survival", "_ranked_fronts"),
                        ("moga.evolution.survival", "_crowding_distance"),
                        ("moga.evolution.operators", "_mutate_into"),
                        ("moga.evolution.operators", "_order_crossover_into"),
                        ("moga.evolution.mating", "_tournament_neighbours"),
                        ("moga.evolution.duplicates", "_row_hashes")]),
}

#: Each group's compile time alone on an empty cache (``moga warmup --groups G --jobs 1``),
#: relative to the in-order decoder's and rounded: how :func:`warmup` shares cold groups
#: among processes and which group :func:`compile_ahead` hands to another process. A group
#: compiled after another that shares its helpers takes less.
COMPILE_COST = {"decoder": 1.0, "EASY decoder": 3.0, "PRB dispatcher": 1.0,
                "SAF dispatcher": 1.0, "dispatch steps": 1.0, "priority steps": 1.5,
                "value decoders": 0.2, "online value heuristics": 2.0, "real-time loop": 6.0,
                "search": 1.5}

#: Group names of earlier releases, still accepted (with a DeprecationWarning): the one
#: "batch decoder" group is now the in-order and the EASY loop's groups.
GROUP_ALIASES = {"batch decoder": ("decoder", "EASY decoder")}

#: The kernel groups each command uses, in the order it first calls them (the search's
#: default decodes in order, then with EASY).
COMMAND_GROUPS = {
    "evaluate": ("decoder",),
    "run": ("decoder", "EASY decoder", "search"),
    "compare": ("decoder", "EASY decoder", "search"),
    "tune": ("decoder", "EASY decoder", "search"),
    "sweep": ("decoder", "EASY decoder", "search"),
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
    elif group == "search":
        # An in-order search without EASY's seeds or resequencing (which plans with
        # EASY): the search's kernels, and no EASY loop.
        moga.run(js, fed, pop_size=8, n_gen=2, seed=0,
                 params=moga.GAParams(easy_search=False, seed_heuristics=False,
                                      resequence_rate=0.0))
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


#: How a process of :func:`_elsewhere` marks its group lines in its output.
_MARK = "moga-compile: "


def _cpus() -> int:
    """The CPUs this process may use: its affinity, capped by a cgroup v2 CPU quota
    (``/sys/fs/cgroup/cpu.max``) where a container sets one."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, -(-int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return cpus


def compile_jobs() -> int:
    """How many processes may compile kernels at once: the ``MOGA_COMPILE_JOBS``
    environment variable (1 keeps every compile in the command's own process), else
    the CPUs this process may use (:func:`os.sched_getaffinity`, a container's CPU
    quota), at most 4 (each compiling process takes 0.3 to 0.5 GB)."""
    value = os.environ.get("MOGA_COMPILE_JOBS", "").strip()
    if value:
        try:
            jobs = int(value)
        except ValueError:
            raise ValueError(f"MOGA_COMPILE_JOBS must be a whole number of processes, got "
                             f"{value!r}") from None
        return _within_bounds("MOGA_COMPILE_JOBS", jobs)
    return max(1, min(_cpus(), 4))


def _within_bounds(name: str, jobs: int) -> int:
    """``jobs``, or a ValueError naming ``name`` when it is outside ``compile_jobs``'s bound."""
    from .bounds import BOUNDS

    b = BOUNDS["compile_jobs"]
    if not b.low <= jobs <= b.high:
        raise ValueError(f"{name} must be in [{b.low}, {b.high}], got {jobs}")
    return jobs


def _share(groups, n: int) -> list[list[str]]:
    """``groups`` in ``n`` shares of about equal :data:`COMPILE_COST` (the costliest first,
    each to the lightest share so far), each in the order given; the first share is the
    costliest group's."""
    shares = [[] for _ in range(max(1, min(n, len(groups))))]
    load = [0.0] * len(shares)
    for g in sorted(groups, key=lambda g: -COMPILE_COST.get(g, 1.0)):
        i = load.index(min(load))
        shares[i].append(g)
        load[i] += COMPILE_COST.get(g, 1.0)
    return [sorted(sh, key=list(groups).index) for sh in shares if sh]


def _elsewhere(groups, lines=None) -> subprocess.Popen:
    """A process compiling ``groups`` (:func:`_compile_alone`) into the cache this process
    reads: the same environment variables (``NUMBA_CACHE_DIR``), and the folders this
    process imported ``moga`` and ``decoders`` from first on its ``PYTHONPATH`` and as
    its working folder, so that it compiles the same sources.

    Its group lines go to ``lines`` (a callable) as they come; ``proc.tail`` keeps its
    other last lines (an error's message), once ``proc.relay`` has been joined.
    """
    from pathlib import Path

    import decoders

    roots = list(dict.fromkeys(str(Path(m.__file__).resolve().parents[1])
                               for m in (sys.modules[__package__], decoders)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*roots, *filter(None, [env.get("PYTHONPATH")])])
    cmd = [sys.executable, "-c", "import sys; from moga.warmup import _compile_alone; "
                                 "sys.exit(_compile_alone(sys.argv[1:]))", *groups]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, env=env, cwd=roots[0])
    proc.tail = []

    def relay():
        for line in proc.stdout:
            if line.startswith(_MARK):
                if lines is not None:
                    lines(line[len(_MARK):].rstrip("\n"))
            elif line.strip():
                proc.tail = [*proc.tail[-4:], line.rstrip("\n")]

    proc.relay = threading.Thread(target=relay, daemon=True)
    proc.relay.start()
    return proc


def _compile_alone(groups) -> int:
    """Compile ``groups`` in a process of :func:`_elsewhere`, marking each group line.

    Ctrl-C is left to the process that started this one, which stops it (a command's
    first Ctrl-C may only ask its search to finish a generation, which may still need
    the kernels compiled here).
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for g in groups:
        _warm(g, lambda line: print(f"{_MARK}{line}", flush=True), STILL_EVERY)
    return 0


def _failure(proc) -> str:
    """Why an ended process of :func:`_elsewhere` left its groups out of the cache."""
    if proc.returncode:
        return f"exit {proc.returncode}" + (f": {proc.tail[-1].strip()}" if proc.tail else "")
    return "it ended with them not in the cache"


def _stop(proc) -> None:
    """Stop a process of :func:`_elsewhere` if it still runs."""
    if proc.poll() is None:
        proc.terminate()
        proc.wait()
    proc.relay.join()


def warmup(groups=None, say=print, still_every: float | None = None,
           jobs: int | None = 1) -> dict:
    """Compile (or load) the kernel groups ``groups`` (default all); returns seconds per group.

    ``say`` (default ``print``; None for silence) is called with a line as each
    group starts (``decoder: compiling (moga evaluate, ...)`` or ``decoder:
    loading from the cache``), a line every ``still_every`` seconds (default
    :data:`STILL_EVERY`) while it compiles, since a cold group can take minutes
    on a busy machine, and a line as it ends (``decoder: compiled in 52.0 s``
    or ``decoder: loaded from the cache in 0.4 s``).

    ``jobs`` (default 1; None for :func:`compile_jobs`) processes compile the cold
    groups at once, shared by :data:`COMPILE_COST`: this process compiles the first
    share, other processes the others (their lines are said as they come, and their
    groups' seconds are theirs). A group still not in the cache when its process has
    ended (it failed, or compiled elsewhere) is compiled here afterwards. The other
    processes are stopped if this call raises or is interrupted.
    """
    names = list(KERNEL_GROUPS if groups is None else expand_groups(groups))
    unknown = [g for g in names if g not in KERNEL_GROUPS]
    if unknown:
        raise ValueError(f"unknown kernel group(s) {unknown}; choose from {list(KERNEL_GROUPS)}")
    say = say or (lambda line: None)
    every = STILL_EVERY if still_every is None else still_every
    jobs = compile_jobs() if jobs is None else _within_bounds("jobs", int(jobs))
    shares = _share(cold_groups(names), jobs) if jobs > 1 else []
    say_lock = threading.Lock()
    took = {}

    def said(line):
        name, sep, rest = line.partition(": ")
        if sep and name in KERNEL_GROUPS and rest.startswith(("compiled in ",
                                                              "loaded from the cache in ")):
            took[name] = float(rest.rsplit(" ", 2)[-2])
        with say_lock:
            say(line)

    away = []
    try:
        for share in shares[1:]:
            away.append((share, _elsewhere(share, said)))
        elsewhere = {g for share, _ in away for g in share}
        out = {}
        for g in names:
            if g not in elsewhere:
                out[g] = _warm(g, said, every)
        for share, proc in away:
            proc.wait()
            proc.relay.join()
            for g in share:
                if g in took and not cold_groups([g]):
                    out[g] = took[g]
                    continue
                said(f"{g}: the process compiling it failed ({_failure(proc)}); compiling "
                     "it here")
                out[g] = _warm(g, said, every)
    finally:
        for _, proc in away:
            _stop(proc)
    return {g: out[g] for g in names}


def _warm(g: str, say, every: float) -> float:
    """Compile or load group ``g`` in this process, saying so; returns the seconds taken."""
    cold = bool(cold_groups([g]))  # a group may share kernels with one compiled before it
    say(f"{g}: compiling ({KERNEL_GROUPS[g][0]})" if cold else f"{g}: loading from the cache")
    t0 = time.perf_counter()
    done = threading.Event()

    def still():
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
    secs = time.perf_counter() - t0
    say(f"{g}: compiled in {secs:.1f} s" if cold else f"{g}: loaded from the cache in {secs:.1f} s")
    return secs


def _awaited() -> set:
    """Groups whose kernels wait at their call site for another process compiling them
    (``decoders._cache.await_elsewhere`` in ``run_rows``): the federated loop's rules,
    from its table of rules."""
    from decoders.federated import KERNEL_RULES

    return {r.group for r in KERNEL_RULES.values()}


def _compile_meanwhile(groups) -> None:
    """Compile the cold ones of ``groups`` here, leaving the random states of Python and of
    numpy's global generator as they were: the command that waits goes on as if this
    had not run."""
    import random
    import warnings

    # The legacy global generator: moga never draws from it, a library it runs might.
    py_state, np_state = random.getstate(), np.random.get_state()  # noqa: NPY002
    try:
        for h in cold_groups(groups):
            try:
                _compile(h)
            except Exception as e:  # noqa: BLE001 - the command compiles it when it uses it
                warnings.warn(f"compiling {h} ahead failed ({type(e).__name__}: {e}); it is "
                              "compiled when first used", stacklevel=3)
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)  # noqa: NPY002


def compile_ahead(groups) -> str | None:
    """Have another process compile the costliest cold group of ``groups`` while this one
    goes on; returns its name, or None when nothing was started.

    ``groups`` come in the order the command first uses them (:data:`COMMAND_GROUPS`).
    Only when :func:`compile_jobs` allows two processes and a cold group other than
    the first is a rule of the federated loop, whose call site waits for the other
    process and then loads the kernel from the cache: this process compiles the first
    group meanwhile, as it uses it, and its other cold groups before it waits (each
    group's warm-up uses no loop of another group). A warning says so when the other
    process could not start, failed, or left the kernel out of the cache (this process
    then compiles it). The other process is stopped when this one exits first, and
    ignores Ctrl-C (this process's exit stops it).
    """
    import atexit
    import warnings

    cold = cold_groups(groups)
    loops = _awaited()
    awaited = [g for g in cold[1:] if g in loops]
    if not awaited:
        return None
    try:
        if compile_jobs() < 2:
            return None
    except ValueError as e:
        warnings.warn(f"{e}; compiling in this process only", stacklevel=2)
        return None

    from decoders import _cache

    g = max(awaited, key=lambda g: COMPILE_COST.get(g, 1.0))
    try:
        proc = _elsewhere([g])
    except OSError as e:
        warnings.warn(f"could not start a second process to compile {g} ({e}); compiling it "
                      "in this process", stacklevel=2)
        return None
    atexit.register(_stop, proc)

    steps = ["meanwhile", "wait"]
    lock = threading.RLock()  # another thread's call waits for the first call's end

    def wait():
        # Once: this process's other cold groups first, while the other one compiles;
        # a call of the awaited loop made meanwhile (this thread) waits below.
        with lock:
            if steps and steps[0] == "meanwhile":
                steps.pop(0)
                _compile_meanwhile([h for h in groups if h != g])
            if not steps:
                return
            steps.pop(0)
            proc.wait()
            proc.relay.join()
            if proc.returncode or cold_groups([g]):
                warnings.warn(f"the second process compiling {g} failed ({_failure(proc)}); "
                              "compiling it in this process", stacklevel=2)

    _cache.compiling_elsewhere(KERNEL_GROUPS[g][1], wait)
    return g
