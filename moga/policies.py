"""The catalogue of online policies: what each is, and the callable that runs it.

Every entry of :data:`POLICIES` is a :class:`~moga.sim.PolicyInfo` whose
``run(jobset, federation, *, model, rule, estimates, **options)`` returns the
one schedule record (:class:`moga.Schedule`), and whose ``kernels`` name the
compile groups it uses (:data:`moga.warmup.KERNEL_GROUPS`). :func:`simulate`
runs an entry by name, or a user's :class:`~moga.sim.OnlinePolicy` on a
:class:`~moga.sim.Session`; ``moga simulate``, ``moga warmup`` and the docs'
policy table read the entries.

The catalogue sits above the seam (:mod:`moga.sim`) and the studies whose
policies it lists (:mod:`moga.powercap`, :mod:`moga.realtime`,
:mod:`moga.value`, :mod:`moga.evolution`): a study's tables, such as
:data:`moga.realtime.study.SCHEME_SET`, become arguments bound in its entries.

What a policy plans with (``estimates``): by default the requested times
(``JobSet.requested``), as Slurm, AccaSim and Batsim plan, for every policy
that can; ``"exact"`` shows the real run times. The value heuristics and the
real-time schemes plan on exact run times only (their entries say
``estimates=("exact",)``); fcfs needs no plan and takes either.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import time

from .evolution.online import OnlineMOGA
from .model.jobset import JobSet, apply_kill_option
from .model.platform import Federation
from .model.schedule import Schedule, dispatch_schedule, evaluate
from .powercap.dispatchers import run_dispatcher
from .realtime.simulator import run_scheme
from .realtime.study import SCHEME_SET
from .sim.policies import RealtimeFirst, RealtimePreempt, ValueDensity
from .sim.registry import PolicyInfo, load_policy
from .sim.rules import PriorityRule, is_rule
from .sim.run import run_policy
from .sim.session import ESTIMATES
from .value.online import run_heuristic

__all__ = ["POLICIES", "RULE_KERNELS", "SESSION_KERNELS", "policy_info", "rule_info", "simulate"]

#: The compile groups a Python policy on a :class:`~moga.sim.Session` runs (a user's too).
SESSION_KERNELS = ("dispatch steps",)
#: The compile groups a user's priority rule runs (its own driver compiles apart, once per
#: process).
RULE_KERNELS = ("priority steps",)
#: Both ways of planning, the default first.
_BOTH = ("requested", "exact")


def _run_decoder(js: JobSet, fed: Federation, *, backfill: str, model: str = "fluid",
                 rule: str = "fastest", estimates: str = "requested") -> Schedule:
    """FCFS or EASY (``backfill``): the decoder on the submit order, empty blacklist."""
    return evaluate(js, fed, js.submit_order, None, model=model, backfill=backfill, rule=rule,
                    estimates=estimates)


def _run_kernel_dispatch(js: JobSet, fed: Federation, *, method: str, model: str = "fluid",
                         rule: str = "fastest", estimates: str = "requested") -> Schedule:
    """A whole-run rule of the federated loop (:func:`moga.model.schedule.dispatch_schedule`)."""
    return dispatch_schedule(js, fed, method, model=model, rule=rule, estimates=estimates)


def _run_dispatcher(js: JobSet, fed: Federation, *, dispatcher: str, model: str = "fluid",
                    rule: str = "fastest", estimates: str = "requested", **options) -> Schedule:
    """A power-capped dispatcher of :data:`moga.powercap.DISPATCHERS` (its metrics beside the
    schedule)."""
    return run_dispatcher(js, fed, dispatcher, model=model, rule=rule, estimates=estimates,
                          **options)


def _run_session(js: JobSet, fed: Federation, *, cls: type, name: str, model: str = "fluid",
                 rule: str = "fastest", estimates: str = "requested", progress=None,
                 **options) -> Schedule:
    """A built-in Python policy, made with ``options``, on a Session (``progress``: see
    :func:`moga.sim.run_policy`)."""
    return run_policy(cls(**options), js, fed, model=model, rule=rule, estimates=estimates,
                      name=name, progress=progress)


def _options(cls: type) -> tuple:
    """The keyword options of a Python policy's class."""
    return tuple(inspect.signature(cls).parameters)


def _python(name: str, cls: type, summary: str, twin: str, supports: set) -> PolicyInfo:
    kernels = SESSION_KERNELS + (("decoder",) if "search" in supports else ())
    return PolicyInfo(name, "python", summary, f"{cls.__module__}.{cls.__qualname__}", twin,
                      frozenset(supports), _BOTH,
                      functools.partial(_run_session, cls=cls, name=name), kernels,
                      _options(cls))


_VALUE = (("online-EASY", "EASY per cluster", "map_easy"),
          ("online-FCFS-multi", "FCFS with small, medium and large queues", "map_fcfs_multi"),
          ("Max-Max-Value", "the most value first", "map_max_max"),
          ("Max-Max-VPR", "the most value per resource first", "map_max_max"))

#: Every policy of the catalogue by name.
POLICIES = {p.name: p for p in (
    PolicyInfo("fcfs", "kernel", "first come, first served: start in arrival order, never "
               "out of it (plans nothing: either estimate gives the same schedule)",
               "decoders.federated._start_in_order", "naive_decode",
               frozenset({"power_cap"}), _BOTH,
               functools.partial(_run_decoder, backfill="none"), ("decoder",)),
    PolicyInfo("easy", "kernel", "EASY backfilling in arrival order (one reservation for "
               "the head)", "decoders.easy.start_easy", "naive_easy_federated",
               frozenset({"power_cap", "reservation"}), _BOTH,
               functools.partial(_run_decoder, backfill="easy"), ("EASY decoder",)),
    PolicyInfo("prb", "kernel", "priority-rule-based: queue weight x (wait + 1), every "
               "ranked job that fits", "decoders.federated._start_prb", "naive_prb",
               frozenset({"power_cap", "queues"}), _BOTH,
               functools.partial(_run_dispatcher, dispatcher="prb"), ("PRB dispatcher",),
               ("queues",)),
    PolicyInfo("saf", "kernel", "smallest area first: every queued job that fits starts, "
               "smallest tasks x planned run time first (ties by arrival); no reservation",
               "decoders.federated._start_saf", "naive_saf", frozenset({"power_cap"}), _BOTH,
               functools.partial(_run_kernel_dispatch, method="saf"), ("SAF dispatcher",)),
    PolicyInfo("hybrid", "python", "CP-SAT schedules the waiting jobs at each event, PRB's "
               "mapper starts those it starts now", "moga.powercap.dispatchers.HybridCP",
               "naive_serial_schedule", frozenset({"power_cap", "queues"}), _BOTH,
               functools.partial(_run_dispatcher, dispatcher="hybrid"), SESSION_KERNELS,
               ("queues", "cp"), "cp"),
    *(PolicyInfo(name, "kernel", f"value-function heuristic of the value paper ({what}), on "
                 "the core's event loop, planning on availability profiles of exact run times "
                 "(no power cap); the schedule holds the jobs it ran",
                 f"decoders.online.rules.{rule}", "naive_online", frozenset({"values"}),
                 ("exact",), functools.partial(run_heuristic, heuristic=name),
                 ("online value heuristics",))
      for name, what, rule in _VALUE),
    *(PolicyInfo(f"rt-{label}", "kernel", f"real-time scheme of the checkpointing paper: "
                 f"{s.summary}; one machine (a one-cluster federation, no power cap), on the "
                 "core's event loop, planning on exact run times",
                 "decoders.realtime._simulate", "naive_realtime",
                 frozenset({"realtime", "reservation", "one_machine"}
                           | ({"preemption"} if s.scheme == "preempt" else set())), ("exact",),
                 functools.partial(run_scheme, scheme=s.scheme, checkpointing=s.checkpointing,
                                   improved=s.improved, name=f"rt-{label}"),
                 ("real-time loop",))
      for label, s in SCHEME_SET.items()),
    _python("realtime-first", RealtimeFirst, "real-time jobs first, then batch jobs, each in "
            "arrival order; every job that fits", "naive_greedy", {"power_cap", "realtime"}),
    _python("realtime-preempt", RealtimePreempt, "realtime-first, and a real-time job that "
            "does not fit preempts the most recently started batch jobs (checkpoint kept, or "
            "lost)", "naive_realtime_preempt", {"power_cap", "realtime", "preemption"}),
    _python("online-moga", OnlineMOGA, "the blacklist GA at each event: evolves the waiting "
            "jobs' order and blacklist, running jobs fixed, and starts what the preferred "
            "member starts now", "naive_online_moga", {"power_cap", "search"}),
    _python("value-density", ValueDensity, "highest value per node-second first (value "
            "functions); every job that fits", "naive_greedy", {"power_cap", "values"}),
)}


def _run_rule(js: JobSet, fed: Federation, *, rule_obj: PriorityRule, model: str = "fluid",
              rule: str = "fastest", estimates: str = "requested") -> Schedule:
    """A user's priority rule (:meth:`moga.sim.PriorityRule.run`)."""
    return rule_obj.run(js, fed, model=model, rule=rule, estimates=estimates)


def rule_info(rule: PriorityRule) -> PolicyInfo:
    """The catalogue entry of a user's priority rule (kind ``"rule"``): what
    :func:`simulate` runs for ``path.py:function``, a ``@numba.njit`` function or a
    :class:`~moga.sim.PriorityRule`. Add it to :data:`POLICIES` to run it by name."""
    what = ("EASY backfilling" if rule.backfill == "easy" else "strict order, no backfilling")
    return PolicyInfo(rule.name, "rule", f"your priority rule {rule.where}: waiting jobs ranked "
                      f"by its score at each event, lowest first, {what}",
                      "decoders.priority.easy_listed", "naive_priority_easy",
                      frozenset({"power_cap"} | ({"reservation"} if rule.backfill == "easy"
                                                 else set())), _BOTH,
                      functools.partial(_run_rule, rule_obj=rule), RULE_KERNELS)


def policy_info(name: str) -> PolicyInfo:
    """The catalogue entry ``name``, or a ValueError listing the known ones.

    The entry is checked to be a :class:`PolicyInfo`: :data:`POLICIES` is a plain dict that
    users may add to, and an entry of another type would fail later with an error that
    names neither the entry nor the catalogue.
    """
    try:
        entry = POLICIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown policy {name!r}; choose one of {list(POLICIES)} or give "
                         "path.py:Class (an OnlinePolicy) or path.py:function (a priority "
                         "rule)") from None
    if not isinstance(entry, PolicyInfo):
        raise TypeError(f"moga.POLICIES[{name!r}] is a {type(entry).__name__}, not a "
                        "moga.sim.PolicyInfo; add an entry made from another, for example "
                        f"dataclasses.replace(moga.POLICIES['easy'], name={name!r})")
    return entry


def _resolve(policy):
    """``(name, PolicyInfo or None, OnlinePolicy or None)`` of a policy given by name,
    ``path.py:Class``, ``path.py:function``, instance, rule or function (a rule's entry is
    :func:`rule_info`)."""
    if isinstance(policy, str):
        if policy in POLICIES:
            return policy, policy_info(policy), None
        if ".py:" in policy:
            policy = load_policy(policy)
        else:
            policy_info(policy)  # the error listing the names
    if isinstance(policy, PriorityRule) or (is_rule(policy)
                                            and not callable(getattr(policy, "decide", None))):
        rule = policy if isinstance(policy, PriorityRule) else PriorityRule(policy)
        return rule.name, rule_info(rule), None
    if callable(getattr(policy, "decide", None)):
        return getattr(policy, "name", type(policy).__name__), None, policy
    raise TypeError(f"policy must be a registered name, 'path.py:Class', 'path.py:function', "
                    f"an object with decide(session) or a priority rule (a @numba.njit "
                    f"function), got {type(policy).__name__}")


def simulate(jobset: JobSet, federation: Federation, policy="easy", *, model: str = "fluid",
             rule: str = "fastest", estimates: str | None = None,
             options: dict | None = None, progress=None,
             kill_at_request: bool = False) -> Schedule:
    """Simulate an online policy on ``jobset`` (jobs arriving at their release) on ``federation``.

    Parameters
    ----------
    jobset : JobSet
    federation : Federation
        With its power caps, if any (every policy with ``"power_cap"`` in its
        entry's ``supports`` honours them).
    policy : str, OnlinePolicy, PriorityRule or function
        A name of :data:`POLICIES`, ``"path/to/file.py:ClassName"`` (a user's
        :class:`~moga.sim.OnlinePolicy`), or such an object; or a priority rule
        (:class:`~moga.sim.PriorityRule`): ``"path/to/file.py:function"``, a
        ``@numba.njit`` function ``score(now, submit, tasks, estimate)`` (EASY
        backfilling), or ``PriorityRule(score, backfill="none")``.
    model : {"fluid", "at_start"}
    rule : {"fastest", "greenest", "consolidate"}
        Allocation rule.
    estimates : {"requested", "exact"}, optional
        What the policy plans with. Default: the requested times, for every
        policy that can plan on them (a user's policy included); the value
        heuristics and the ``rt-`` schemes plan on exact run times only (their
        entries' ``estimates``; asking them for another is an error).
    options : dict, optional
        Keyword options of a registered policy that takes them (its entry's
        ``options``: ``online-moga``'s are :class:`moga.evolution.OnlineMOGA`'s,
        ``realtime-preempt``'s :class:`moga.sim.policies.RealtimePreempt`'s,
        ``prb``'s and ``hybrid``'s ``queues`` and ``cp`` those of
        :func:`moga.powercap.run_dispatcher`).
    progress : callable, optional
        ``progress(done, total)`` for a policy driven event by event through a
        :class:`~moga.sim.Session` (a user's policy and the built-in Python
        policies): see :func:`moga.sim.run_policy`. A kernel policy runs in one
        call and never calls it.
    kill_at_request : bool
        Kill every job when it has run for its requested time, as a production
        scheduler does (:meth:`JobSet.kill_at_request`, the schedule's job-set;
        its summary counts them in ``n_killed``); default False, the papers'
        model, in which jobs run to completion.

    Returns
    -------
    Schedule
        With ``policy`` set and ``info`` holding ``estimates``, ``wall_s`` (the
        whole simulation), for Python policies ``events`` and ``decision_s``
        (time spent in ``decide``), and what a policy's ``summary()`` adds.
    """
    jobset = apply_kill_option(jobset, kill_at_request)
    name, entry, obj = _resolve(policy)
    if options and entry is None:
        raise ValueError("options are for a registered policy given by name; configure your "
                         "own policy object instead")
    if estimates is not None and estimates not in ESTIMATES:
        raise ValueError(f"estimates must be one of {list(ESTIMATES)}, got {estimates!r}")
    if entry is None:  # a user's policy
        return run_policy(obj, jobset, federation, model=model, rule=rule,
                          estimates=estimates or "requested", name=name, progress=progress)
    est = estimates or entry.estimates[0]
    if est not in entry.estimates:
        raise ValueError(f"policy {name!r} plans on {' or '.join(entry.estimates)} run times "
                         f"only, not {est!r}")
    options = dict(options or {})
    if options and not entry.options:
        raise ValueError(f"policy {name!r} takes no options, got {sorted(options)}")
    unknown = sorted(set(options) - set(entry.options))
    if unknown:
        raise ValueError(f"policy {name!r}: unknown option(s) {unknown}; it takes "
                         f"{list(entry.options)}")
    t0 = time.perf_counter()
    if progress is not None and "progress" in inspect.signature(entry.run).parameters:
        options["progress"] = progress  # the entries that run event by event on a Session
    s = entry.run(jobset, federation, model=model, rule=rule, estimates=est, **options)
    info = {"estimates": est, "wall_s": time.perf_counter() - t0}
    return dataclasses.replace(s, policy=name, info={**s.info, **info})
