"""What the commands share: option types, the workload and GA options, loading the job-set,
the output folder, plots, progress and Ctrl-C."""

from __future__ import annotations

import argparse
import re
import sys
import time

from ..bounds import BOUNDS
from ..model.platform import PRESETS, Federation
from ..model.traces import resolve_trace
from ..model.workload import default_trace_path, load_swf
from ..outputs import check_out, check_writable

# -- option types: each error names its option --------------------------------------------


def int_arg(name, low, high=None):
    """An argparse type: an integer >= ``low`` (and <= ``high`` when given); errors name the
    option."""
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"{name} must be >= {low}, got {v}")
        if high is not None and v > high:
            raise argparse.ArgumentTypeError(f"{name} must be at most {high:,}, got {v:,}")
        return v
    return parse


def nonneg_int(name):
    return int_arg(name, 0)


def pos_int(name):
    return int_arg(name, 1)


def float_arg(name, ok, what):
    """An argparse type: a number for which ``ok(v)`` holds; errors name the option."""
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {text}")
        return v
    return parse


def pos_float(name):
    return float_arg(name, lambda v: 0 < v < float("inf"), "a finite number > 0")


def nonneg_float(name):
    return float_arg(name, lambda v: 0 <= v < float("inf"), "a finite number >= 0")


def fraction(name):
    return float_arg(name, lambda v: 0 <= v <= 1, "in [0, 1]")


def bounded(name, key):
    """An argparse type for option ``name``, a number within ``moga.bounds.BOUNDS[key]``;
    errors name the option and the bound. The type carries ``key`` as its ``bound``."""
    b = BOUNDS[key]
    if b.integer:
        parse = int_arg(name, b.low, b.high)
    elif b.ratio or b.high is None:
        parse = float_arg(name, b.contains, b.phrase())
    else:
        low = float_arg(name, lambda v: b.contains(v) or b.above_high(v), b.phrase())

        def parse(text):
            v = low(text)
            if b.above_high(v):
                raise argparse.ArgumentTypeError(f"{name} must be at most {b.high:g}, got {text}")
            return v
    parse.bound = key
    return parse


def seed(text):
    """An argparse type: a seed in [0, 2**32) (argparse names the option)."""
    v = nonneg_int("a seed")(text)
    if v > BOUNDS["seed"].high:
        raise argparse.ArgumentTypeError(f"a seed must be < 2**32, got {v}")
    return v


seed.bound = "seed"


#: What argparse takes for a value rather than an option: a negative number, also with a
#: unit (``-5%``, ``-2kW``), so that a negative cap is refused for what it is.
#: What argparse takes as a value, not an option, after an option: a negative number in any
#: form that ``float`` reads (``-5``, ``-.5``, ``-1e400``, ``-inf``, ``-Infinity``, ``-nan``)
#: and the units after it (``-5%``, ``-2kW``). No option of moga starts with ``-i`` or ``-n``.
NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)


def values_may_be_negative(parser) -> None:
    """Let ``parser`` and its subparsers take ``-5%``, ``-2kW`` or ``-inf`` as a value (to
    refuse it with the option's own message) rather than as an unknown option."""
    parser._negative_number_matcher = NEGATIVE_VALUE
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                values_may_be_negative(sub)


def cap_parser(option: str, bare: str):
    """An argparse type for a power cap, the same syntax in every command.

    ``60%`` (a percentage of the federation's peak power), ``0.6x`` (a
    fraction of peak), ``2700W`` or ``2.7kW`` (watts); a bare number keeps the
    option's own meaning, ``bare`` (``"W"`` for watts, ``"x"`` for a fraction of
    peak). Returns ``("W", watts)`` or ``("x", fraction of peak)``.
    """
    def parse(text):
        t = text.strip().lower().replace(" ", "")
        units = (("kw", "W", 1e3), ("w", "W", 1.0), ("%", "x", 0.01), ("x", "x", 1.0))
        kind, scale = bare, 1.0
        for suffix, k, f in units:
            if t.endswith(suffix):
                t, kind, scale = t[: -len(suffix)], k, f
                break
        try:
            v = float(t) * scale
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{option} takes a cap as 60% or 0.6x (of peak power) or 2700W / 2.7kW, got "
                f"{text!r}") from None
        if not (BOUNDS["power_cap"].contains(v) and v != float("inf")):
            raise argparse.ArgumentTypeError(f"{option} must be a finite cap > 0, got {text!r}")
        return kind, v
    parse.bound = "power_cap"
    return parse


def power_cap(text: str):
    """``--power-cap`` of moga run and simulate: a bare number is watts."""
    return cap_parser("--power-cap", "W")(text)


power_cap.bound = "power_cap"


def cap_fraction(cap, fed) -> float:
    """A parsed cap as a fraction of ``fed``'s peak power."""
    kind, v = cap
    return v if kind == "x" else v / fed.peak_power


# -- the workload options and the job-set they describe ------------------------------------


def add_workload_args(p: argparse.ArgumentParser, power: str | None = "none",
                      federation: bool = True, online: bool = False, kill: bool = True) -> None:
    """The workload options; ``power=None``, ``federation=False`` and ``kill=False`` leave out
    the options a command does not use (so that they are refused rather than ignored).
    ``online`` commands release jobs at their submit times unless ``--batch`` is given;
    ``--kill-at-request`` is honoured by :func:`jobset_of`."""
    g = p.add_argument_group("workload")
    g.add_argument("--trace", default=None,
                   help="SWF trace, plain or .gz (default: the bundled month of HPC2N)")
    g.add_argument("--start", type=bounded("--start", "start"), default=0,
                   help="index of the first job (default 0)")
    w = g.add_mutually_exclusive_group()
    w.add_argument("--n-jobs", type=bounded("--n-jobs", "n_jobs"), default=None,
                   help="job-set window by count")
    w.add_argument("--days", type=bounded("--days", "days"), default=None,
                   help="job-set window by days (30: a month)")
    if online:
        g.add_argument("--batch", dest="release", action="store_false",
                       help="release every job at 0 instead of at its (shifted) submit time")
    else:
        g.add_argument("--release", action="store_true",
                       help="release jobs at their (shifted) submit times instead of all at 0")
    g.add_argument("--wide", choices=["error", "drop", "clip"], default="error",
                   help="jobs wider than the federation (default: error)")
    g.add_argument("--attr-seed", type=seed, default=0,
                   help="seed of the drawn job attributes sigma, bw and power (default 0)")
    if power is not None:
        g.add_argument("--power", choices=["none", "lognormal"], default=power,
                       help="per-job power factors: none (all 1) or drawn lognormal around 1 "
                            f"(default: {power})")
    g.add_argument("--max-procs", type=bounded("--max-procs", "max_procs"), default=None,
                   help="machine size for traces without a MaxProcs header")
    g.add_argument("--skip-malformed", action="store_true",
                   help="skip and count malformed trace lines instead of failing")
    if kill:
        g.add_argument("--kill-at-request", action="store_true",
                       help="kill each job when it has run for its requested time (SWF field "
                            "9, scaled like its run time), as Slurm does; counted as n_killed "
                            "(default: off, as in the papers' model: jobs run to completion)")
    if federation:
        g.add_argument("--federation", default="default",
                       help=f"preset ({', '.join(PRESETS)}) or a TOML file, optionally "
                            "resized: NAME@N (N nodes in all) or NAME@auto (sized to the "
                            "trace's MaxProcs) (default: default)")


#: A job-set of more jobs than this, taken without --n-jobs or --days, gets a warning.
WHOLE_TRACE_WARNING = 5000


def trace_path(args):
    return resolve_trace(args.trace) if args.trace else default_trace_path()


def read_trace(args):
    """The trace of the workload options, read, with the whole-trace warning when no window
    is given."""
    trace = load_swf(trace_path(args), skip_malformed=args.skip_malformed,
                     max_procs=args.max_procs)
    check_window(trace, args)
    return trace


def check_window(trace, args) -> None:
    """Warn before a command works on a whole long trace because no window was given."""
    if args.n_jobs is not None or args.days is not None:
        return
    n = len(trace) - args.start
    if n > WHOLE_TRACE_WARNING:
        print(f"moga: warning: no --n-jobs or --days: the job-set is every job of {trace.name} "
              f"from --start {args.start} on, {n:,} jobs, which can take hours; pick a window "
              f"with --days 30 or --n-jobs N (moga trace --trace FILE lists the 30-day "
              "windows)", file=sys.stderr, flush=True)


def jobset_of(trace, args, width, start=None):
    """The job-set of the workload options on ``trace``; ``width`` is what bounds a job's
    width (a federation or a node count)."""
    power = getattr(args, "power", "none")
    js = trace.jobset(start=args.start if start is None else start, n_jobs=args.n_jobs,
                      days=args.days, federation=width, wide=args.wide, seed=args.attr_seed,
                      batch=not args.release, power=None if power == "none" else power)
    return js.kill_at_request() if getattr(args, "kill_at_request", False) else js


def load_workload(args, one_cluster: bool = False):
    """``(trace, federation, job-set)`` of the workload options; ``one_cluster``: jobs must fit
    the largest cluster (the value heuristics run each job inside one)."""
    trace = read_trace(args)
    fed = Federation.load(args.federation, auto_nodes=trace.auto_nodes)
    js = jobset_of(trace, args, int(fed.nodes.max()) if one_cluster else fed)
    cap = getattr(args, "power_cap", None)
    if cap is not None:
        fed = fed.with_cap(fraction=cap[1]) if cap[0] == "x" else fed.with_cap(cap[1])
    return trace, fed, js


# -- the GA options --------------------------------------------------------------------------


def add_ga_args(p: argparse.ArgumentParser, out_default: str) -> None:
    """The options of the commands that run MOGA (run, compare)."""
    from ..evolution.params import BUDGET, EASY_BUDGET

    p.add_argument("--model", choices=["fluid", "at_start"], default="fluid",
                   help="execution model (default: fluid)")
    easy, plain = EASY_BUDGET, BUDGET
    p.add_argument("--pop", type=bounded("--pop", "pop_size"), default=None,
                   help=f"population size (default {easy[0]} when MOGA decodes with EASY, "
                        f"as by default, {plain[0]} with easy_search = false)")
    p.add_argument("--gen", type=bounded("--gen", "n_gen"), default=None,
                   help=f"generations (default {easy[1]} when MOGA decodes with EASY, "
                        f"as by default, {plain[1]} with easy_search = false)")
    p.add_argument("--seed", type=seed, default=1, help="seed of the GA (default 1)")
    p.add_argument("--params", default=None, help="GA parameters as TOML (e.g. from moga tune)")
    p.add_argument("--out", default=out_default, help=f"output folder (default: {out_default})")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def load_ga(args, outputs):
    """``(trace, federation, jobset, GAParams, output folder)`` of a GA command."""
    from ..evolution.params import GAParams

    out = prepare_out(args.out, outputs, args.command)
    trace, fed, js = load_workload(args)
    params = GAParams.from_toml(args.params) if args.params else GAParams()
    if args.params and args.gen is None and params.n_gen is not None:
        print(f"moga: note: {params.n_gen} generations from {args.params} (not the default); "
              "pass --gen to change", file=sys.stderr, flush=True)
    params = params.replace(pop_size=args.pop, n_gen=args.gen)
    return trace, fed, js, params, out


# -- outputs -------------------------------------------------------------------------------


def prepare_out(out, names, command=None, reads=()):
    """Create the output folder and check that every output file can be written, before work.

    A search must not run for results that could not be kept: the probe writes
    real bytes, so a full disk is found here. Given ``command`` (its name in
    the manifest), a folder holding another command's outputs, or one of the
    folders ``reads`` the command reads from, is refused here too
    (:func:`moga.outputs.check_out`), before the work rather than after it.
    """
    if command is not None:
        check_out(out, command, reads)
    out = check_writable(out, "--out")
    for n in names:
        if (out / n).is_dir():
            raise ValueError(f"--out {out}: {n} is a folder, so the result file cannot be written")
    return out


def settings(args) -> dict:
    """A command's options, for the manifest of its output set."""
    return {k: v for k, v in vars(args).items() if not callable(v)}


def write_schedules(oset, schedules: dict) -> str:
    """Write ``schedules/NAME/schedule.csv`` and ``schedule.swf`` (and ``segments.csv`` for a
    schedule with preemptions) for each named schedule through the output set ``oset``;
    returns the folder's name. A space in a name becomes ``_`` (``MOGA_without_blacklist``),
    a fixed spelling that docs/outputs.md gives, so that a script can name the folder."""
    for name, s in schedules.items():
        name = name.replace(" ", "_")
        s.to_csv(oset.path("schedules", name, "schedule.csv"))
        s.to_swf(oset.path("schedules", name, "schedule.swf"))
        if s.segments is not None:
            s.segments_to_csv(oset.path("schedules", name, "segments.csv"))
    return "schedules/"


def plots(jobs):
    """Run plot jobs ``(name, callable)``; a failing plot is reported, never fatal.

    Returns the names written. Data files are written before the plots, so a
    plot that fails loses nothing.
    """
    written = []
    for name, fn in jobs:
        try:
            fn()
            written.append(name)
        except Exception as e:  # noqa: BLE001 - a plot must not lose the run's data
            print(f"moga: warning: plot {name} failed ({type(e).__name__}: {e}); the data "
                  "files are complete", file=sys.stderr)
    return written


def listed(names) -> str:
    """``", a, b"`` for the files in ``names`` (the tail of a "wrote ..." line)."""
    return "".join(f", {n}" for n in names)


# -- progress and Ctrl-C -------------------------------------------------------------------


def step_lines(enabled: bool, what: str):
    """A ``say(label)`` that prints one progress line per step of a study, with the seconds
    since the study began: ``  [   12.3 s] {what}{label} ...``; silent unless ``enabled``."""
    t0 = time.perf_counter()

    def say(label):
        if enabled:
            print(f"  [{time.perf_counter() - t0:7.1f} s] {what}{label} ...", flush=True)
    return say


class Interrupt:
    """A context in which the first Ctrl-C asks a search to stop after its generation.

    Calling the object tells whether Ctrl-C came; a second Ctrl-C interrupts at
    once. While :attr:`armed` is False (a search with no generation finished yet:
    nothing to write, and its first generation may be compiling the kernels for
    a minute) the first Ctrl-C interrupts at once too. Outside the main thread
    (or where signals cannot be set) it does nothing.
    """

    def __init__(self, armed: bool = True):
        self.hit = False
        self.armed = armed
        self._old = None

    def __call__(self) -> bool:
        return self.hit

    def _handle(self, signum, frame):
        import signal

        if self.hit or not self.armed:
            raise KeyboardInterrupt
        self.hit = True
        signal.signal(signal.SIGINT, signal.default_int_handler)
        print("\nmoga: interrupted: finishing this generation and writing the front reached so "
              "far (Ctrl-C again to abort)", file=sys.stderr, flush=True)

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc):
        import signal

        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
        return False
