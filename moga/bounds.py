"""The bounds of every number a user gives, in one table.

Each entry of :data:`BOUNDS` is one quantity (a population size, a power cap,
a link speed, ...) with the interval it may take, its unit and the places it is
read: command-line options, keys of TOML files, keywords of the Python API
and the duck-typed inputs of :func:`decoders.decode`. The checks of those entry
points read their limits from here (:meth:`Bound.check`, the option types of
:mod:`moga.cli.common`), so one quantity has one interval wherever it comes in.
``docs/bounds.md`` is generated from this table (``python -m moga.bounds``).

Upper bounds are generous: they are where a value stops meaning anything or
starts costing hours or gigabytes before the first result (10^7 islands, a
link of 1e-300 Mbit/s, a population of 10^9), never where a study could
plausibly go. The decoders' inputs keep their table in
:data:`decoders._validate.DECODE_BOUNDS` (the kernels layer imports nothing of
``moga``); it is read into this one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from decoders._validate import DECODE_BOUNDS

from .validation import check_int, check_number

__all__ = ["BOUNDS", "Bound", "bound", "markdown"]


@dataclass(frozen=True)
class Bound:
    """The interval of one user-given quantity.

    Parameters
    ----------
    low, high : float or None
        The bounds (None: unbounded on that side).
    low_open, high_open : bool
        Whether ``low`` / ``high`` themselves are refused.
    integer : bool
        Whether the quantity is a whole number.
    inf : bool
        Whether ``+inf`` is accepted (it then means "no limit" or "never").
    unit : str
        The unit (``"s"``, ``"W"``, ``"Mbit/s"``, ...), empty for a count or a ratio.
    what : str
        What the quantity is, a short phrase.
    read : tuple of str
        Where it is read: CLI options, TOML keys, Python keywords.
    """

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    inf: bool = False
    unit: str = ""
    what: str = ""
    read: tuple = ()

    def contains(self, v) -> bool:
        """Whether the number ``v`` lies in the interval (NaN never does)."""
        x = float(v)
        if math.isnan(x) or (math.isinf(x) and not (self.inf and x > 0)):
            return False
        if self.integer and not (math.isfinite(x) and x == int(x)):
            return False
        if self.low is not None and (x < self.low or (self.low_open and x == self.low)):
            return False
        if self.high is not None and math.isfinite(x) and \
                (x > self.high or (self.high_open and x == self.high)):
            return False
        return True

    def check(self, name: str, v):
        """``v`` as an int or float, or an :class:`~moga.errors.InputError` naming ``name``
        (which says where the value was read) and the bound it breaks."""
        if self.integer:
            return check_int(name, v, self.low, self.high)
        x = check_number(name, v, self.low, None, low_open=self.low_open, allow_inf=self.inf)
        if math.isinf(x):  # +inf where the table allows it ("no limit"); -inf fails low
            return x
        return check_number(name, v, self.low, self.high, low_open=self.low_open,
                            high_open=self.high_open)

    def interval(self) -> str:
        """The interval in the usual notation: ``[1, 100,000]``, ``(0, inf)``."""
        def num(x):
            if x is None:
                return "inf"
            if self.integer or float(x).is_integer() and abs(x) < 1e7:
                return f"{int(x):,}"
            return f"{x:g}"
        lo = "-inf" if self.low is None else num(self.low)
        left = "(" if self.low is None or self.low_open else "["
        right = "]" if (self.high is not None and not self.high_open) or \
            (self.high is None and self.inf) else ")"
        tail = " or inf" if self.inf and self.high is not None else ""
        return f"{left}{lo}, {num(self.high)}{right}{tail}"

    @property
    def ratio(self) -> bool:
        """Whether the high bound belongs to the quantity's meaning (a share, a probability:
        at most 1) rather than guarding against runaway values."""
        return self.high is not None and self.high <= 1

    def above_high(self, v) -> bool:
        """Whether the number ``v`` is finite and above the high bound (or on an open one)."""
        x = float(v)
        return self.high is not None and math.isfinite(x) and \
            (x > self.high or (self.high_open and x == self.high))

    def phrase(self) -> str:
        """The bound as the option types word it: ``a finite number > 0``, ``in [0, 1]``;
        a guarding high bound is left to its own message (``at most 1e+09``)."""
        if self.low is not None and self.ratio:
            return f"in {self.interval()}"
        if self.low is not None:
            op = ">" if self.low_open else ">="
            num = f"{self.low:g}" if not float(self.low).is_integer() else f"{int(self.low)}"
            return f"a {'number' if self.inf else 'finite number'} {op} {num}" + \
                (" (or inf)" if self.inf else "")
        return "a finite number"

    def edges(self) -> tuple[list, list]:
        """``(inside, outside)``: values just inside and just outside each bound, for tests."""
        inside, outside = [], []
        step = 1 if self.integer else None
        for b, is_low, opened in ((self.low, True, self.low_open),
                                  (self.high, False, self.high_open)):
            if b is None:
                continue
            toward = (math.inf if is_low else -math.inf)
            away = -toward
            if step:
                inside.append(int(b) + (step if opened else 0) * (1 if is_low else -1))
                outside.append(int(b) + (0 if opened else step) * (-1 if is_low else 1))
            else:
                inside.append(math.nextafter(b, toward) if opened else float(b))
                outside.append(float(b) if opened else math.nextafter(b, away))
        return inside, outside


def _b(low=None, high=None, *, lo_open=False, hi_open=False, integer=False, inf=False,
       unit="", what="", read=()):
    return Bound(low, high, lo_open, hi_open, integer, inf, unit, what, tuple(read))


#: Seeds, as NumPy's generators take them.
SEED_HIGH = 2**32 - 1
#: Seconds any time limit may be: about 31 years; beyond it a limit is no limit.
TIME_HIGH = 1e9
#: Generations: 10^7 generations of the smallest population are days of work.
GEN_HIGH = 10**7
#: Members of a population: 10^5 members of a 1,000-job order are 0.4 GB per generation.
POP_HIGH = 10**5

#: Every user-given number: key -> :class:`Bound`. The keys name quantities, not options:
#: ``seed`` is read by ``--seed``, ``--attr-seed``, ``seed=`` and a sweep's ``seeds``.
BOUNDS: dict[str, Bound] = {
    # -- workload --------------------------------------------------------------------
    "start": _b(0, 10**9, integer=True, what="index of a job-set's first job in its trace",
                read=("--start (every workload command)", "--starts (tune)",
                      "sweep TOML [[trace]] starts", "Trace.jobset(start=)")),
    "n_jobs": _b(1, 10**8, integer=True, what="jobs of a job-set window",
                 read=("--n-jobs (every workload command)", "sweep TOML [[trace]] n_jobs",
                       "Trace.jobset(n_jobs=)")),
    "days": _b(0, 1e5, lo_open=True, unit="days", what="length of a job-set window",
               read=("--days (every workload command)", "sweep TOML [[trace]] days",
                     "Trace.jobset(days=)")),
    "max_procs": _b(1, 10**9, integer=True, unit="processors",
                    what="machine size of a trace without a MaxProcs header",
                    read=("--max-procs (every workload command, trace)",
                          "sweep TOML [[trace]] max_procs", "load_swf(max_procs=)")),
    "seed": _b(0, SEED_HIGH, integer=True, what="seed of a random stream",
               read=("--seed", "--attr-seed", "--tag-seed", "--value-seed", "--power-seed",
                     "--sampler-seed", "sweep TOML seeds", "seed= of moga.run, moga.Search, "
                     "Trace.jobset and the studies")),
    # -- the GA ----------------------------------------------------------------------
    "pop_size": _b(2, POP_HIGH, integer=True, what="population of a MOGA run",
                   read=("--pop (run, compare, value)", "GA TOML pop_size (--params, sweep)",
                         "GAParams(pop_size=)", "moga.run / moga.Search(pop_size=)")),
    "n_gen": _b(1, GEN_HIGH, integer=True, unit="generations",
                what="generations of a MOGA run",
                read=("--gen (run, compare, value)", "GA TOML n_gen (--params, sweep)",
                      "GAParams(n_gen=)", "moga.run / moga.Search(n_gen=)")),
    "archive_size": _b(0, 10**6, integer=True, what="points of a run's Pareto archive",
                       read=("GA TOML archive_size", "GAParams(archive_size=)")),
    "mating_neighbours": _b(0, 10**6, integer=True, what="neighbours a mate is drawn from",
                            read=("GA TOML mating_neighbours", "GAParams(mating_neighbours=)")),
    "fast_end": _b(0, 10**6, integer=True, what="fast-end neighbours added per generation",
                   read=("GA TOML fast_end", "GAParams(fast_end=)")),
    "seed_candidates": _b(1, 10**6, integer=True, what="seed chromosomes tried",
                          read=("GA TOML seed_candidates", "GAParams(seed_candidates=)")),
    "resequence_rate": _b(0, 1, what="probability of re-sequencing a child",
                          read=("GA TOML resequence_rate", "GAParams(resequence_rate=)")),
    "islands": _b(1, 10_000, integer=True,
                  what="islands of an island run (each holds a population and an archive)",
                  read=("--islands (run)", "moga.run / moga.Search(islands=)")),
    "stagnation": _b(1, GEN_HIGH, integer=True, unit="generations",
                     what="generations without improvement before a run stops",
                     read=("--stagnation (run)", "moga.run(stagnation=)")),
    "checkpoint": _b(1, GEN_HIGH, integer=True, unit="generations",
                     what="generations between checkpoints",
                     read=("--checkpoint (run)",)),
    "compile_jobs": _b(1, 64, integer=True, unit="processes",
                       what="processes compiling kernel groups at once",
                       read=("--jobs (warmup)", "MOGA_COMPILE_JOBS",
                             "moga.warmup.warmup(jobs=)")),
    "time_limit": _b(0, TIME_HIGH, lo_open=True, unit="s", what="wall-clock limit of a study",
                     read=("--time-limit (run)", "--timeout (tune)", "--cp-time (powercap)",
                           "--time-budget (simulate)", "moga.run(time_limit=)",
                           "OnlineMOGA(time_budget=)", "CPConfig(time_limit=)")),
    "cpu_budget": _b(0, TIME_HIGH, lo_open=True, unit="CPU s",
                     what="CPU seconds the size rule may spend",
                     read=("--cpu-budget (run)", "moga.run(cpu_budget=)")),
    "n_evals": _b(1, 10**9, integer=True, unit="evaluations",
                  what="evaluations of a tuning trial or a random search",
                  read=("--budget (tune)", "sweep TOML [algorithms.random] n_evals")),
    "trials": _b(1, 10**6, integer=True, what="trials of a tuning study",
                 read=("--trials (tune)", "tune(n_trials=)")),
    "tune_seeds": _b(1, 10**4, integer=True, what="seeds each tuning trial is run on",
                     read=("--seeds (tune)", "tune(n_seeds=)")),
    # -- power -----------------------------------------------------------------------
    "power_cap": _b(0, None, lo_open=True, unit="W or a fraction of peak",
                    what="a power cap (60%, 0.6x, 2700W, 2.7kW)",
                    read=("--power-cap (run, simulate)", "--caps (powercap)",
                          "Federation.with_cap(power_cap=, fraction=)",
                          "federation TOML power_cap")),
    "cp_window": _b(2, 10**6, integer=True, unit="jobs",
                    what="waiting jobs in the hybrid's CP model",
                    read=("--window (powercap)", "CPConfig(window=)")),
    "cp_passes": _b(1, 10**6, integer=True, what="CP solves per event",
                    read=("--cp-passes (powercap)", "CPConfig(passes=)")),
    "power_error": _b(0, 10, what="log-space standard deviation of predicted power",
                      read=("--power-error (powercap)", "predict_power(error=)",
                            "powercap dispatchers(power_error=)")),
    "power_margin": _b(0, 1, hi_open=True, what="share of each cap kept free",
                       read=("--power-margin (powercap)", "dispatchers(power_margin=)")),
    # -- online scheduling -----------------------------------------------------------
    "online_pop": _b(4, POP_HIGH, integer=True, what="population of a decision's GA",
                     read=("--pop (simulate)", "OnlineMOGA(pop_size=)")),
    "online_gen": _b(1, GEN_HIGH, integer=True, unit="generations",
                     what="generations per decision",
                     read=("--gen (simulate)", "OnlineMOGA(generations=)")),
    "online_window": _b(1, 10**6, integer=True, unit="jobs",
                        what="waiting jobs planned per decision",
                        read=("--window (simulate)", "OnlineMOGA(window=)")),
    "interval": _b(0, TIME_HIGH, unit="s", what="simulated seconds between decisions",
                   read=("--interval (simulate)", "OnlineMOGA(interval=)")),
    # -- real-time jobs --------------------------------------------------------------
    "rtj_fraction": _b(0, 1, what="share of jobs tagged real-time",
                       read=("--rtj-fraction (realtime, simulate)",
                             "tag_realtime(fraction=)")),
    "sys_interval": _b(0, TIME_HIGH, lo_open=True, inf=True, unit="s",
                       what="seconds between system checkpoints",
                       read=("--sys-interval (realtime)", "Checkpointing(sys_interval=)")),
    "ckpt_fraction": _b(0, 1, lo_open=True, what="share of a job's memory a checkpoint writes",
                        read=("--ckpt-data, --app-data (realtime)",
                              "Checkpointing(data_fraction=, app_fraction=)")),
    "app_overhead": _b(0, 1, lo_open=True, hi_open=True,
                       what="share of run time spent on application checkpoints",
                       read=("--app-overhead (realtime)", "Checkpointing(app_overhead=)")),
    "slowdown_threshold": _b(1, 1e6, inf=True, what="a slowdown threshold",
                             read=("--rtj-threshold, --batch-thresholds (realtime)",
                                   "Thresholds(rtj=, batch=)")),
    "trigger": _b(1, 1e6, what="slowdown at which a real-time job turns preemptive (qsim)",
                  read=("--trigger (realtime)", "Thresholds(trigger=)")),
    "machine_rate": _b(0, 1e9, lo_open=True, unit="GB or GB/s",
                       what="a machine's memory per node or I/O bandwidth",
                       read=("--memory-gb, --pfs-gbps, --io-gbps (realtime)",
                             "realtime machine TOML / Machine(memory_gb=, pfs_gbps=, io_gbps=)")),
    "pfs_usable": _b(0, 1, lo_open=True, what="usable share of the file system's bandwidth",
                     read=("--pfs-usable (realtime)", "Machine(pfs_usable=)")),
    "io_nodes_per": _b(1, 10**7, integer=True, unit="nodes",
                       what="compute nodes per I/O node",
                       read=("--io-nodes-per (realtime)", "Machine(io_nodes_per=)")),
    "min_io_nodes": _b(0, 10**7, unit="nodes", what="I/O nodes any job gets at least",
                       read=("--min-io-nodes (realtime)", "Machine(min_io_nodes=)")),
    # -- the RL cluster --------------------------------------------------------------
    "lam": _b(0, 1, lo_open=True, what="job arrival probability per step",
              read=("--lam (rl train, rl eval)", "--across-lams (rl train)",
                    "ClusterConfig(lam=)")),
    "beta": _b(0, 1, what="share of short jobs", read=("--beta (rl train, rl eval)",
                                                      "ClusterConfig(beta=)")),
    "estimate_c": _b(0, 1e6, lo_open=True, inf=True, what="estimator accuracy",
                     read=("--c (rl train, rl eval)", "ClusterConfig(c=)")),
    "rl_count": _b(1, 10**6, integer=True,
                   what="iterations, sequences or trajectories of policy training",
                   read=("--iterations, --sequences, --trajectories (rl)",
                         "train(iterations=, sequences=, trajectories=)")),
    "learning_rate": _b(0, 1e3, lo_open=True, what="learning rate of policy training",
                        read=("--lr (rl train)", "train(lr=)")),
    # -- sweeps ----------------------------------------------------------------------
    "workers": _b(1, 4096, integer=True, what="workers of the embedded Dask cluster",
                  read=("--workers (sweep)", "run_sweep(workers=)")),
    "max_runs": _b(0, 10**9, integer=True, what="runs of a sweep done in one call",
                   read=("--max-runs (sweep)", "run_sweep(max_runs=)")),
    # -- the federation and the decoders' inputs (decoders._validate.DECODE_BOUNDS) ---
}
_DECODE_WHAT = {
    "nodes": ("nodes of a cluster", ("federation TOML [[cluster]] nodes",
                                     "decoders.decode(federation.nodes)")),
    "speed": ("relative speed of a cluster's nodes", ("federation TOML [[cluster]] speed",
                                                      "decoders.decode(federation.speed)")),
    "power_busy": ("power of a busy node", ("federation TOML [[cluster]] power_busy",
                                            "decoders.decode(federation.power_busy)")),
    "power_idle": ("power of an idle node", ("federation TOML [[cluster]] power_idle",
                                             "decoders.decode(federation.power_idle)")),
    "link": ("bandwidth of a cluster's link to the federation",
             ("federation TOML [[cluster]] link", "decoders.decode(federation.link)")),
    "release": ("release time of a job", ("decoders.decode(jobset.release)",)),
    "tasks": ("nodes a job needs", ("decoders.decode(jobset.tasks)",)),
    "runtime": ("run time of a job at speed 1", ("decoders.decode(jobset.runtime)",)),
    "sigma": ("communication share of a job", ("decoders.decode(jobset.sigma)",)),
    "bw": ("data a co-allocated job exchanges", ("decoders.decode(jobset.bw)",)),
    "decode_power_cap": ("federation power cap of a decode (None or inf: no cap)",
                         ("decoders.decode(federation.power_cap)",
                          "decode_arrays(power_cap=)")),
}
for _key, (_what, _read) in _DECODE_WHAT.items():
    _low, _high, _low_open, _integer, _inf, _unit = DECODE_BOUNDS[_key]
    BOUNDS[_key] = Bound(_low, _high, _low_open, False, _integer, _inf, _unit, _what, _read)


def bound(key: str) -> Bound:
    """The :class:`Bound` of quantity ``key``."""
    return BOUNDS[key]


def markdown() -> str:
    """The page ``docs/bounds.md``: the table of :data:`BOUNDS`, generated."""
    lines = [
        "# Bounds of the numbers you give",
        "",
        "Every number moga reads from you (a command-line option, a key of a TOML file, a",
        "keyword of the Python API, an input of `decoders.decode`) is checked against one",
        "interval, the same wherever it comes in. A value outside is refused before any work,",
        "with one line naming the option, key or keyword and the bound: the command exits",
        "with status 2, Python raises `moga.errors.InputError` (a `ValueError`). NaN is always",
        "refused; `inf` only where the table says so. Upper bounds are generous: they stop",
        "values that would run for days or fill the memory before a first result, not studies.",
        "",
        "This page is generated from `moga/bounds.py` (`python -m moga.bounds > docs/bounds.md`);",
        "a test keeps the two in agreement.",
        "",
        "| quantity | interval | kind | unit | what | read from |",
        "|---|---|---|---|---|---|",
    ]
    for key, b in BOUNDS.items():
        kind = "integer" if b.integer else ("number or inf" if b.inf else "number")
        lines.append(f"| `{key}` | `{b.interval()}` | {kind} | {b.unit or '-'} | {b.what} | "
                     f"{'; '.join(b.read)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
