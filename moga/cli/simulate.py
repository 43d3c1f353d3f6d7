"""``moga simulate``: run an online policy, registered or a user's, on a trace."""

from __future__ import annotations

import json
import math
import sys
import traceback
from pathlib import Path

from ..errors import InputError
from ..outputs import atomic_write, output_set
from .common import (
    add_workload_args,
    bounded,
    listed,
    load_workload,
    plots,
    power_cap,
    prepare_out,
    seed,
    settings,
)

HELP = "run an online policy (registered, or yours as path.py:Class) on a trace (release mode)"

OUTPUTS = ["schedule.csv", "schedule.swf", "segments.csv", "metrics.json", "gantt.png"]


def add_arguments(p) -> None:
    add_workload_args(p, power="none", online=True)
    from ..policies import POLICIES

    # The list comes from the catalogue itself, so a new entry is listed without an edit here.
    p.add_argument("--policy", default="easy",
                   help=f"a registered policy (moga.POLICIES: {', '.join(POLICIES)}), "
                        "path/to/file.py:Class (an OnlinePolicy) or path/to/file.py:function "
                        "(a priority rule, @numba.njit score(now, submit, tasks, estimate), "
                        "lower first; docs/guide/policies.md; the file is imported, so its "
                        "module-level code runs with your rights) (default: easy)")
    p.add_argument("--backfill", choices=["easy", "none"], default=None,
                   help="how a priority rule (--policy path.py:function) starts the jobs it "
                        "ranks: easy (EASY backfilling, one reservation for the first that "
                        "does not fit) or none (in ranked order while they fit) (default: easy)")
    p.add_argument("--estimates", choices=["requested", "exact"], default=None,
                   help="what the policy plans with: requested (walltime) or exact run times "
                        "(default: requested for Python policies, exact for the kernels)")
    p.add_argument("--power-cap", type=power_cap, default=None,
                   help="federation power cap: 60%% or 0.6x (of peak) or 2700W / 2.7kW "
                        "(default: none)")
    p.add_argument("--model", choices=["fluid", "at_start"], default="fluid",
                   help="execution model (default: fluid)")
    p.add_argument("--rule", choices=["fastest", "greenest", "consolidate"], default="fastest",
                   help="allocation rule (default: fastest)")
    p.add_argument("--value-seed", type=seed, default=None,
                   help="attach seeded value functions (default: seed 0 for the policies that "
                        "use values, none otherwise)")
    p.add_argument("--rtj-fraction", type=bounded("--rtj-fraction", "rtj_fraction"), default=None,
                   help="tag this share of jobs as real-time, in [0, 1] (default: 0.1 for "
                        "realtime-first, realtime-preempt and the rt- schemes, none "
                        "otherwise)")
    p.add_argument("--tag-seed", type=seed, default=None, help="seed of the real-time tags "
                                                                "(default 0)")
    _add_search_arguments(p)
    p.add_argument("--no-gantt", action="store_true", help="do not draw gantt.png")
    p.add_argument("--out", default="moga-simulate", help="output folder (default: moga-simulate)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress lines (a policy driven through a Session reports the "
                        "jobs started so far; a kernel policy, its start and end)")


def _add_search_arguments(p) -> None:
    g = p.add_argument_group("online-moga options (docs/guide/online-moga.md)")
    g.add_argument("--preference", default=None,
                   help="how a decision picks a front member: knee, weight:W, slowdown:X, "
                        "energy:X or bsld:B (default: slowdown:0)")
    g.add_argument("--objectives", default=None,
                   help="comma-separated window objectives from makespan, energy, flowtime, "
                        "bsld (default: energy,bsld)")
    g.add_argument("--pop", type=bounded("--pop", "online_pop"), default=None,
                   help="population of a decision's GA (default 20)")
    g.add_argument("--gen", type=bounded("--gen", "online_gen"), default=None,
                   help="generations per decision (default 10)")
    g.add_argument("--time-budget", type=bounded("--time-budget", "time_limit"), default=None,
                   help="wall-clock seconds a decision may take (default: none)")
    g.add_argument("--window", type=bounded("--window", "online_window"), default=None,
                   help="waiting jobs planned per decision, in arrival order (default 32)")
    g.add_argument("--interval", type=bounded("--interval", "interval"), default=None,
                   help="simulated seconds between decisions unless 4 jobs joined or left the "
                        "window (default 0: every event where a job could start)")
    g.add_argument("--seed", type=seed, default=None, help="seed of the GA (default 1)")


#: ``moga simulate``'s online-moga options: option, keyword of OnlineMOGA.
SEARCH_OPTIONS = (("preference", "preference"), ("objectives", "objectives"),
                  ("pop", "pop_size"), ("gen", "generations"), ("time_budget", "time_budget"),
                  ("window", "window"), ("interval", "interval"), ("seed", "seed"))


def search_options(args, entry) -> dict | None:
    """The online-moga options given on the command line, checked before any work."""
    given = {kw: getattr(args, opt) for opt, kw in SEARCH_OPTIONS
             if getattr(args, opt) is not None}
    if not given:
        return None
    if entry is None or "search" not in entry.supports:
        flags = ", ".join("--" + opt.replace("_", "-") for opt, kw in SEARCH_OPTIONS
                          if kw in given)
        raise InputError(f"{flags}: for --policy online-moga only, not {args.policy}")
    if "objectives" in given:
        given["objectives"] = tuple(o.strip() for o in given["objectives"].split(",") if o.strip())
    try:  # the same checks as the run will make, now
        from ..evolution.online import OnlineMOGA

        OnlineMOGA(**given)
    except ValueError as e:
        raise InputError(str(e)) from None
    return given


def _tag_jobs(args, entry, fed, js):
    """The job-set with the value functions and real-time tags the policy uses (or the
    options ask for)."""
    features = entry.supports if entry is not None else frozenset()
    if "values" in features or args.value_seed is not None:
        from ..value import attach_values

        js = attach_values(js, seed=0 if args.value_seed is None else args.value_seed)
    if "realtime" in features or args.rtj_fraction is not None:
        from ..realtime import Machine, tag_realtime

        js = tag_realtime(js, Machine(nodes=int(fed.total_nodes)),
                          0.1 if args.rtj_fraction is None else args.rtj_fraction,
                          seed=args.tag_seed or 0).jobset
    return js


def _prepare(args):
    """``(registry entry or None, online-moga options, output folder, federation, job-set)``,
    every option checked before the simulation."""
    from ..policies import POLICIES, policy_info

    entry = policy_info(args.policy) if args.policy in POLICIES else None
    if entry is not None and entry.extra == "cp":  # before any work
        from ..errors import require

        require("ortools.sat.python.cp_model", f"the {entry.name} policy", "cp")
    options = search_options(args, entry)
    if args.backfill is not None and ".py:" not in args.policy:
        raise InputError(f"--backfill is for a priority rule (--policy path.py:function), not "
                         f"{args.policy}")
    tags = [o for o, v in (("--rtj-fraction", args.rtj_fraction), ("--tag-seed", args.tag_seed))
            if v is not None]
    if tags and entry is not None and "realtime" not in entry.supports:
        raise InputError(f"{', '.join(tags)}: real-time tags change nothing under "
                         f"{args.policy}; they are for the real-time policies")
    out = prepare_out(args.out, OUTPUTS, command="simulate")
    features = entry.supports if entry is not None else frozenset()
    if "one_machine" in features and args.federation == "default":
        args.federation = "machine@auto"
        print(f"moga: note: {args.policy} runs on one machine; --federation machine@auto "
              "(the trace's machine size)", file=sys.stderr, flush=True)
    trace, fed, js = load_workload(args, one_cluster=entry is not None
                                   and entry.kind == "kernel" and "values" in features)
    return entry, options, out, fed, _tag_jobs(args, entry, fed, js)


def run(args) -> int:
    entry, options, out, fed, js = _prepare(args)
    print(f"{js.name}: {len(js)} jobs ({'release' if args.release else 'batch'} mode) on "
          f"{fed!r}; policy {args.policy}", flush=True)
    s = _simulate(args, js, fed, options)
    with output_set(out, "simulate", settings(args)) as o:
        info, drawn = _write(args, o, s, js, fed)
    summary = s.summary()
    print(f"makespan {s.makespan / 3600:.2f} h, energy {s.energy / 3.6e9:.4f} MWh, mean wait "
          f"{summary['mean_wait_s'] / 3600:.2f} h, mean bounded slowdown "
          f"{summary['mean_bounded_slowdown']:.2f}"
          + (f", {summary['n_rejected']} rejected" if summary["n_rejected"] else "")
          + (f", {summary['n_killed']} killed at their requested time" if summary["n_killed"]
             else "")
          + f"; planned on {info['estimates']} times; "
          f"{info['wall_s']:.2f} s" + (f" ({info['decision_s']:.2f} s deciding)"
                                       if "decision_s" in info else ""))
    print(f"wrote {out}/schedule.csv, schedule.swf, "
          + ("segments.csv, " if s.segments is not None else "") + "metrics.json"
          + listed(drawn))
    return 0


def _simulate(args, js, fed, options):
    """The schedule, with progress on stderr and a user's policy guarded.

    The progress is ``moga run``'s bar, redrawn on a terminal and a line per tenth of
    the jobs otherwise: a start line, the jobs started so far for a policy driven
    through a Session, and an end line (all a kernel policy, run in one call, shows).
    """
    from ..policies import simulate
    from ..progress import Progress
    from ..sim import PolicyStalled, PriorityRule

    policy = args.policy
    if ".py:" in policy:  # no registered name has one
        policy = GuardedPolicy.load(policy)
        if isinstance(policy, PriorityRule):
            policy = policy.with_backfill(args.backfill or "easy")
    if args.backfill is not None and not (".py:" in args.policy
                                          and isinstance(policy, PriorityRule)):
        raise InputError(f"--backfill is for a priority rule (--policy path.py:function), not "
                         f"{args.policy}")
    bar = Progress(len(js), enabled=not args.no_progress, every=max(1, len(js) // 10))
    if not args.no_progress:
        print(f"moga: simulating {len(js)} jobs with {args.policy}", file=sys.stderr,
              flush=True)
    try:
        s = simulate(js, fed, policy, model=args.model, rule=args.rule,
                     estimates=args.estimates, options=options,
                     progress=lambda done, total: bar.update(done, "jobs started"))
        bar.update(len(js), f"done in {s.info.get('wall_s', 0.0):.1f} s")
    except PolicyStalled as e:
        raise InputError(f"policy {args.policy} stalled: {e}") from None
    finally:
        bar.close()  # on a terminal, an error starts a line of its own
    return s


class GuardedPolicy:
    """A user's policy whose failures end the command in one line naming its file.

    An exception or ``sys.exit`` in ``reset``, ``decide`` or ``summary`` becomes an
    :class:`~moga.errors.InputError` that names the policy, the method, the event
    time, the exception and the line of the policy's file it came through;
    Ctrl-C passes unchanged.
    """

    def __init__(self, policy, spec: str):
        self._policy, self.spec = policy, spec
        self._file = Path(spec.rpartition(":")[0]).resolve()
        self.name = getattr(policy, "name", type(policy).__name__)
        self.backfill = getattr(policy, "backfill", "n/a")  # for the schedule's record
        if callable(getattr(policy, "summary", None)):
            self.summary = lambda: self._call("summary", None)

    @classmethod
    def load(cls, spec: str):
        """The policy of ``path.py:Class``, loaded (``sys.exit`` at import is refused too), or
        the priority rule of ``path.py:function`` (:class:`~moga.sim.PriorityRule`, whose
        errors name it already; a plain function's compile note goes to stderr)."""
        import warnings

        from ..sim import PriorityRule, load_policy

        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", UserWarning)
                obj = load_policy(spec)
        except SystemExit as e:
            raise InputError(f"policy {spec}: the file called sys.exit({e.code!r}) while it was "
                             "loaded") from None
        for w in caught:
            if issubclass(w.category, UserWarning):
                print(f"moga: note: {w.message}", file=sys.stderr, flush=True)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return obj if isinstance(obj, PriorityRule) else cls(obj, spec)

    def reset(self, session) -> None:
        if callable(getattr(self._policy, "reset", None)):
            self._call("reset", session)

    def decide(self, session) -> None:
        self._call("decide", session)

    def _call(self, method: str, session):
        try:
            return getattr(self._policy, method)(*(() if session is None else (session,)))
        except (Exception, SystemExit) as e:
            raise InputError(self._message(method, session, e)) from None

    def _message(self, method: str, session, e: BaseException) -> str:
        at = "" if session is None else f" at t={session.now:g}"
        if isinstance(e, SystemExit):
            what = f"called sys.exit({e.code!r})"
        else:
            text = str(e).strip().splitlines()
            what = f"raised {type(e).__name__}" + (f": {text[0]}" if text else "")
        line = None
        for frame, lineno in traceback.walk_tb(e.__traceback__):
            if Path(frame.f_code.co_filename).resolve() == self._file:
                line = lineno
        where = "" if line is None else f" ({self._file.name}, line {line})"
        return f"policy {self.spec}: {method}(){at} {what}{where}"


def _write(args, out, s, js, fed):
    """Write the schedule, metrics and chart through the output set ``out``; returns
    ``(info, plots written)``."""
    from ..plot import plot_gantt

    s.to_csv(out / "schedule.csv")
    s.to_swf(out / "schedule.swf")
    if s.segments is not None:
        s.segments_to_csv(out / "segments.csv")
    summary = s.summary()
    info = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in s.info.items()}
    # A mean over no completed job (every job rejected) is null, not NaN: strict JSON.
    metrics = {k: (None if isinstance(v, float) and math.isnan(v) else v)
               for k, v in summary.items()}
    atomic_write(out / "metrics.json", json.dumps(
        {"policy": s.policy, "jobset": js.name, "jobset_report": js.report,
         "federation": fed.to_dict(), "metrics": metrics, "info": info}, indent=2,
        default=str) + "\n")
    drawn = [] if args.no_gantt else plots(
        [("gantt.png", lambda: plot_gantt(s, path=out / "gantt.png"))])
    return info, drawn
