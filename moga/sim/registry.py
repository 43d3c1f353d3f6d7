"""What an online policy is: the base class of a Python policy, an entry of the catalogue,
and a user's policy loaded from its file.

The catalogue itself, :data:`moga.policies.POLICIES`, lives above the seam
(it names the studies' policies too). Two kinds of policy run on the
simulation core:

``"kernel"``
    A start rule of the Numba event loop (:mod:`decoders.federated`), run
    in one kernel call. A new one is a ``_start_*`` function in
    ``decoders/federated.py`` with its branch in the loop and its row in
    ``KERNEL_RULES``, a
    plain-Python twin in ``tests/naive.py``, an entry in ``moga/policies.py`` and a
    test that checks the kernel against the twin on random instances. A policy with
    state of its own (plans, queues, checkpoints) is a Numba driver over
    the loop's steps instead (``decoders.steps.begin``, ``map``,
    ``preempt``, ``drop``): the value heuristics
    (:mod:`decoders.online`) and the real-time schemes
    (:mod:`decoders.realtime`).
``"python"``
    A class with a ``decide(session)`` method that drives a
    :class:`~moga.sim.Session` event by event (:class:`OnlinePolicy`). A
    user's own policy is this kind too, loaded from ``path.py:Class``.
``"rule"``
    A user's priority rule, ``path.py:function``: a ``@numba.njit`` score
    that ranks the waiting jobs at each event, run with EASY backfilling (or
    in order) inside the kernel loop (:class:`~moga.sim.PriorityRule`,
    :func:`moga.policies.rule_info`).

The table of docs/guide/policies.md lists the entries.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

__all__ = ["OnlinePolicy", "PolicyInfo", "load_policy"]


class OnlinePolicy:
    """Base class of a policy written in Python.

    Subclasses set :attr:`name` and implement :meth:`decide`; :meth:`reset`
    is called once per simulation before the first event.
    """

    #: The policy's name in tables and file names.
    name = "policy"

    #: How it starts jobs, as its schedules record it (:attr:`moga.Schedule.backfill`,
    #: ``metrics.json``): ``"none"`` (in order, or every job that fits, with no
    #: reservation), ``"easy"`` (a reservation for the blocked head), or ``"n/a"``
    #: (default: an order of its own, which neither word describes).
    backfill = "n/a"

    def reset(self, session) -> None:
        """Prepare for a new simulation on ``session`` (default: nothing)."""

    def decide(self, session) -> None:
        """At the event ``session.now``: start the chosen jobs with ``session.start``."""
        raise NotImplementedError


@dataclass(frozen=True)
class PolicyInfo:
    """An entry of the catalogue (:data:`moga.policies.POLICIES`): what a policy is, and
    how to run it.

    Attributes
    ----------
    name : str
    kind : {"kernel", "python", "rule"}
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
        The default is the requested times wherever a policy can plan on them
        (as Slurm, AccaSim and Batsim do); a policy that plans on exact run
        times only says ``("exact",)``.
    run : callable
        ``run(jobset, federation, *, model, rule, estimates, **options) ->
        Schedule``: simulates the policy.
    kernels : tuple of str
        The compile groups of :data:`moga.warmup.KERNEL_GROUPS` it runs.
    options : tuple of str
        The keyword options ``run`` takes beyond the common ones (for
        :func:`moga.simulate`'s ``options``).
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
    run: Callable
    kernels: tuple
    options: tuple = ()
    extra: str | None = None


def load_policy(spec: str):
    """A user's policy from ``"path/to/file.py:Name"``: an instance of the class ``Name``, or
    the priority rule ``Name``.

    A class needs a ``decide(session)`` method (subclass :class:`OnlinePolicy`) and is
    instantiated; a function (``@numba.njit``, or plain Python, which is then compiled
    with a UserWarning) is a priority rule, ``score(now, submit, tasks, estimate)``,
    returned as a :class:`~moga.sim.PriorityRule` with EASY backfilling.

    Raises
    ------
    InputError
        If the file is missing or fails to import, or the name is missing, is neither a
        class nor a function, or is a class without ``decide``; the message names the
        file and the name.
    """
    path, sep, cls_name = str(spec).rpartition(":")
    if not sep or not path.endswith(".py") or not cls_name:
        raise InputError(f"a policy file is given as path.py:ClassName (or path.py:function, "
                         f"a priority rule), got {spec!r}")
    file = Path(path)
    if not file.is_file():
        raise InputError(f"policy file {file} does not exist")
    mod_name = f"moga_user_policy_{abs(hash(file.resolve()))}"
    loader = importlib.util.spec_from_file_location(mod_name, file)
    module = importlib.util.module_from_spec(loader)
    sys.modules[mod_name] = module
    try:
        # From the text, not a bytecode cache (checked on the mtime's second and the size).
        source = file.read_bytes()
        exec(compile(source, str(file), "exec"), module.__dict__)
    except Exception as e:
        del sys.modules[mod_name]
        raise InputError(f"policy file {file} failed to import: {type(e).__name__}: {e}") from e
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise InputError(f"policy file {file} defines no {cls_name!r}")
    from .rules import PriorityRule, is_rule

    if not isinstance(cls, type):
        if is_rule(cls):
            return PriorityRule.from_file(file, cls_name, cls, source=source)
        raise InputError(f"{file}:{cls_name} is a {type(cls).__name__}, neither a class (an "
                         "OnlinePolicy) nor a function (a priority rule)")
    try:
        obj = cls()
    except Exception as e:
        raise InputError(f"{file}:{cls_name}() failed: {type(e).__name__}: {e}") from e
    if not callable(getattr(obj, "decide", None)):
        raise InputError(f"{file}:{cls_name} has no decide(session) method")
    return obj
