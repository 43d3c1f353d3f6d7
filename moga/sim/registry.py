"""The one registry of online policies: what each is, where its code and its twin live.

Two kinds of policy run on the simulation core:

``"kernel"``
    A start rule of the Numba event loop (:mod:`decoders.federated`), run
    in one kernel call. A new one is a ``_start_*`` function in
    ``decoders/federated.py`` with a rule code in ``_decode``'s ladder, a
    plain-Python twin in ``tests/naive.py``, an entry here and a test that
    checks the kernel against the twin on random instances. A policy with
    state of its own (plans, queues, checkpoints) is a Numba driver over
    the loop's steps instead (``_step_begin``, ``_step_map``,
    ``_step_preempt``, ``_step_drop``): the value heuristics
    (:mod:`decoders.online`) and the real-time schemes
    (:mod:`decoders.realtime`).
``"python"``
    A class with a ``decide(session)`` method that drives a
    :class:`~moga.sim.Session` event by event (:class:`OnlinePolicy`). A
    user's own policy is this kind too, loaded from ``path.py:Class``.

The table of docs/guide/policies.md lists the entries.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

__all__ = ["OnlinePolicy", "PolicyInfo", "POLICIES", "policy_info", "load_policy"]


class OnlinePolicy:
    """Base class of a policy written in Python.

    Subclasses set :attr:`name` and implement :meth:`decide`; :meth:`reset`
    is called once per simulation before the first event.
    """

    #: The policy's name in tables and file names.
    name = "policy"

    def reset(self, session) -> None:
        """Prepare for a new simulation on ``session`` (default: nothing)."""

    def decide(self, session) -> None:
        """At the event ``session.now``: start the chosen jobs with ``session.start``."""
        raise NotImplementedError


@dataclass(frozen=True)
class PolicyInfo:
    """An entry of :data:`POLICIES`.

    Attributes
    ----------
    name : str
    kind : {"kernel", "python"}
    summary : str
        One line for tables and ``--help``.
    code : str
        Where it is implemented (module and function or class).
    twin : str
        Its plain-Python reference in ``tests/naive.py`` that tests check it
        against.
    supports : frozenset of str
        Features: ``"power_cap"`` (honours the federation's caps),
        ``"queues"`` (weights jobs by their requested time's queue),
        ``"reservation"`` (EASY-style backfilling), ``"realtime"`` (ranks
        real-time jobs first), ``"preemption"`` (stops running jobs, with
        checkpoints), ``"values"`` (uses value functions), ``"one_machine"``
        (runs on a one-cluster federation only), ``"search"`` (evolves a
        Pareto front at its decisions; takes options).
    estimates : tuple of str
        What it can plan with (:data:`moga.sim.ESTIMATES`), the default first.
    extra : str or None
        The install extra it needs, if any.
    """

    name: str
    kind: str
    summary: str
    code: str
    twin: str
    supports: frozenset
    estimates: tuple
    extra: str | None = None


#: Every registered online policy by name.
POLICIES = {p.name: p for p in (
    PolicyInfo("fcfs", "kernel", "first come, first served: start in arrival order, never "
               "out of it", "decoders.federated._start_in_order", "naive_decode",
               frozenset({"power_cap"}), ("exact",)),
    PolicyInfo("easy", "kernel", "EASY backfilling in arrival order (one reservation for "
               "the head)", "decoders.easy.start_easy", "naive_easy_federated",
               frozenset({"power_cap", "reservation"}), ("exact", "requested")),
    PolicyInfo("prb", "kernel", "priority-rule-based: queue weight x (wait + 1), every "
               "ranked job that fits", "decoders.federated._start_prb", "naive_prb",
               frozenset({"power_cap", "queues"}), ("exact", "requested")),
    PolicyInfo("hybrid", "python", "CP-SAT schedules the waiting jobs at each event, PRB's "
               "mapper starts those it starts now", "moga.powercap.dispatchers._hybrid",
               "naive_serial_schedule", frozenset({"power_cap", "queues"}), ("exact", "requested"),
               "cp"),
    *(PolicyInfo(name, "kernel", f"value-function heuristic of the value paper ({what}), on "
                 "the core's event loop, planning on availability profiles (no power cap); the "
                 "schedule holds the jobs it ran", f"decoders.online.rules.{rule}", "naive_online",
                 frozenset({"values"}), ("exact",))
      for name, what, rule in (
          ("online-EASY", "EASY per cluster", "map_easy"),
          ("online-FCFS-multi", "FCFS with small, medium and large queues", "map_fcfs_multi"),
          ("Max-Max-Value", "the most value first", "map_max_max"),
          ("Max-Max-VPR", "the most value per resource first", "map_max_max"))),
    *(PolicyInfo(f"rt-{label}", "kernel", f"real-time scheme of the checkpointing paper: "
                 f"{what}; one machine (a one-cluster federation, no power cap), on the core's "
                 "event loop",
                 "decoders.realtime._simulate", "naive_realtime",
                 frozenset({"realtime", "reservation", "one_machine"}
                           | ({"preemption"} if "preempt" in label else set())), ("exact",))
      for label, what in (
          ("baseline", "one queue, EASY backfilling"),
          ("highpq", "real-time jobs in a queue ahead of the batch queue, EASY behind the head"),
          ("preempt-none", "highpq, and real-time jobs preempt batch jobs (restart from scratch)"),
          ("preempt-sys", "highpq, and real-time jobs preempt batch jobs (periodic system "
           "checkpoints)"),
          ("preempt-app", "highpq, and real-time jobs preempt batch jobs (application "
           "checkpoints)"),
          ("preempt-jit", "highpq, and real-time jobs preempt batch jobs (a checkpoint written "
           "at preemption)"),
          ("preempt-jit-improved", "preempt-jit limited by slowdown thresholds (the paper's "
           "improved heuristic, the project's reading)"),
          ("preempt-jit-qsim", "the improved heuristic as the authors' Qsim codes it: one "
           "queue, real-time jobs preempt after waiting 10% of their requested time, "
           "blocking, victims by score"))),
    PolicyInfo("realtime-first", "python", "real-time jobs first, then batch jobs, each in "
               "arrival order; every job that fits", "moga.sim.policies.RealtimeFirst",
               "naive_greedy", frozenset({"power_cap", "realtime"}), ("requested", "exact")),
    PolicyInfo("realtime-preempt", "python", "realtime-first, and a real-time job that does "
               "not fit preempts the most recently started batch jobs (checkpoint kept, or "
               "lost)", "moga.sim.policies.RealtimePreempt", "naive_realtime_preempt",
               frozenset({"power_cap", "realtime", "preemption"}), ("requested", "exact")),
    PolicyInfo("online-moga", "python", "the blacklist GA at each event: evolves the waiting "
               "jobs' order and blacklist, running jobs fixed, and starts what the preferred "
               "member starts now", "moga.evolution.online.OnlineMOGA", "naive_online_moga",
               frozenset({"power_cap", "search"}), ("requested", "exact")),
    PolicyInfo("value-density", "python", "highest value per node-second first (value "
               "functions); every job that fits", "moga.sim.policies.ValueDensity",
               "naive_greedy", frozenset({"power_cap", "values"}), ("requested", "exact")),
)}

#: Where the built-in Python policies that run on the Session directly live.
_SESSION_MODULES = ("moga.sim.policies", "moga.evolution.online")


def session_policy(name: str, options: dict | None = None) -> OnlinePolicy | None:
    """An instance of the built-in Session policy ``name`` (its class, named by its entry's
    ``code``, in one of :data:`_SESSION_MODULES`), made with ``options`` as keyword
    arguments; None for any other policy.

    Raises
    ------
    ValueError
        If ``options`` are given to a policy without any, or are not its own (the
        message names them).

    Notes
    -----
    The options are the class's keyword arguments (``OnlineMOGA``'s,
    ``RealtimePreempt``'s).
    """
    entry = POLICIES.get(name)
    module, _, cls_name = entry.code.rpartition(".") if entry is not None else ("", "", "")
    if module not in _SESSION_MODULES:
        return None
    cls = getattr(importlib.import_module(module), cls_name)
    if options and len(inspect.signature(cls).parameters) == 0:
        raise ValueError(f"policy {name!r} takes no options, got {sorted(options)}")
    try:
        return cls(**(options or {}))
    except TypeError as e:
        raise ValueError(f"policy {name!r}: {e}") from None


def policy_info(name: str) -> PolicyInfo:
    """The registry entry ``name``, or a ValueError listing the known ones."""
    try:
        return POLICIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown policy {name!r}; choose one of {list(POLICIES)} or give "
                         "path.py:Class (an OnlinePolicy)") from None


def load_policy(spec: str) -> OnlinePolicy:
    """A user's policy from ``"path/to/file.py:ClassName"``: the class, instantiated.

    The class needs a ``decide(session)`` method (subclass :class:`OnlinePolicy`).

    Raises
    ------
    InputError
        If the file is missing or fails to import, or the class is missing or
        has no ``decide``; the message names the file and the class.
    """
    path, sep, cls_name = str(spec).rpartition(":")
    if not sep or not path.endswith(".py") or not cls_name:
        raise InputError(f"a policy file is given as path.py:ClassName, got {spec!r}")
    file = Path(path)
    if not file.is_file():
        raise InputError(f"policy file {file} does not exist")
    mod_name = f"moga_user_policy_{abs(hash(file.resolve()))}"
    loader = importlib.util.spec_from_file_location(mod_name, file)
    module = importlib.util.module_from_spec(loader)
    sys.modules[mod_name] = module
    try:
        loader.loader.exec_module(module)
    except Exception as e:
        del sys.modules[mod_name]
        raise InputError(f"policy file {file} failed to import: {type(e).__name__}: {e}") from e
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise InputError(f"policy file {file} defines no {cls_name!r}")
    try:
        obj = cls()
    except Exception as e:
        raise InputError(f"{file}:{cls_name}() failed: {type(e).__name__}: {e}") from e
    if not callable(getattr(obj, "decide", None)):
        raise InputError(f"{file}:{cls_name} has no decide(session) method")
    return obj
