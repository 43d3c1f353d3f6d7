"""A user's priority rule: a Numba function that scores a waiting job, run at kernel speed.

A rule is ``score(now, submit, tasks, estimate) -> float``, written with
``@numba.njit``: at every event (an arrival or a finish) each waiting job is
scored at the event's clock ``now``; lower scores run first, ties by arrival
(release, then position). With EASY backfilling (default) the first ranked job
that does not fit gets a reservation and later ones start only if they fit now
and cannot delay it; without (``backfill="none"``) the ranked jobs start while
they fit and the rest wait. The loop is :mod:`decoders.priority`: its steps are
cached kernels, the loop over them too, and only the scoring pass (a loop over the
queue with the score inlined) compiles per rule, once per process, as a C function the
loop calls through its address.

docs/guide/policies.md ("Priority rules at kernel speed") documents it.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..model.jobset import JobSet
from ..model.platform import Federation
from ..model.schedule import Schedule, cap_error, start_order

__all__ = ["PriorityRule", "RULE_SIGNATURE", "is_rule"]

#: What a rule takes and returns (docs/guide/policies.md).
RULE_SIGNATURE = ("score(now: float, submit: float, tasks: int, estimate: float) -> float")

#: How a rule starts the jobs it ranks.
BACKFILLS = ("easy", "none")

#: The scores compiled in this process, by the rule's key: (score, C function).
_DRIVERS: dict = {}


def _is_dispatcher(obj) -> bool:
    from numba.core.registry import CPUDispatcher

    return isinstance(obj, CPUDispatcher)


def is_rule(obj) -> bool:
    """True for what :class:`PriorityRule` takes as a score: a Numba ``@njit`` function, or a
    plain Python function (not a class, not an object with ``decide``)."""
    if isinstance(obj, PriorityRule) or _is_dispatcher(obj):
        return True
    import inspect

    return inspect.isfunction(obj)


class PriorityRule:
    """A priority rule: ``score`` ranks the waiting jobs at each event, EASY starts them.

    Parameters
    ----------
    score : numba dispatcher or function
        ``score(now, submit, tasks, estimate) -> float`` (:data:`RULE_SIGNATURE`):
        ``now`` the event's time (s), ``submit`` the job's arrival (its
        ``JobSet.release``, s), ``tasks`` its node count (int), ``estimate`` what
        the policy plans with (s on a speed-1.0 node: the requested time, or the
        run time under ``estimates="exact"``). Lower runs first; ties by release,
        then position. A plain Python function is compiled with ``numba.njit``
        (a UserWarning says so).
    backfill : {"easy", "none"}
        EASY backfilling over the ranking (default), or strict order: ranked
        jobs start while they fit, the rest wait.
    name : str, optional
        The name in the schedule's record (default: the function's name).
    where : str, optional
        Where the rule comes from, for error messages (default: its module and
        name; ``path.py:function`` when loaded from a file).

    Raises
    ------
    InputError
        If ``score`` is not a function, or does not type as the signature.
    """

    def __init__(self, score, backfill: str = "easy", name: str | None = None,
                 where: str | None = None):
        if isinstance(score, PriorityRule):
            score = score.score
        if backfill not in BACKFILLS:
            raise InputError(f"a priority rule's backfill must be one of {list(BACKFILLS)}, "
                             f"got {backfill!r}")
        fn = getattr(score, "py_func", score)
        import inspect

        if not (_is_dispatcher(score) or inspect.isfunction(fn)):  # numba.njit takes no other
            raise InputError(f"a priority rule is a function {RULE_SIGNATURE}, got "
                             f"{type(score).__name__}")
        self.where = where or f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', fn)}"
        if not _is_dispatcher(score):
            import numba

            warnings.warn(f"{self.where} is a plain Python function; moga compiles it with "
                          "numba.njit (decorate it with @numba.njit to say so)", UserWarning,
                          stacklevel=2)
            score = numba.njit(score)
        self.score = score
        self.backfill = backfill
        self.name = name or getattr(fn, "__name__", "rule")
        self._key = None  # set by from_file: the file's identity, for the driver cache

    @classmethod
    def from_file(cls, file: Path, fn_name: str, fn, backfill: str = "easy",
                  source: bytes | None = None) -> PriorityRule:
        """The rule ``fn`` defined as ``fn_name`` in ``file`` (by :func:`moga.sim.load_policy`),
        whose text was ``source`` (default: the file's text now)."""
        spec = f"{file}:{fn_name}"
        rule = cls(fn, backfill=backfill, name=spec, where=spec)
        # By content: an edit may keep the size and the mtime (coarse clocks, copies).
        text = file.read_bytes() if source is None else source
        rule._key = (str(file.resolve()), fn_name, hashlib.sha256(text).hexdigest())
        return rule

    def with_backfill(self, backfill: str) -> PriorityRule:
        """The same rule (and compiled driver) with ``backfill``."""
        if backfill not in BACKFILLS:
            raise InputError(f"a priority rule's backfill must be one of {list(BACKFILLS)}, "
                             f"got {backfill!r}")
        other = object.__new__(PriorityRule)
        other.__dict__.update(self.__dict__, backfill=backfill)
        return other

    def __repr__(self) -> str:
        return f"PriorityRule({self.where}, backfill={self.backfill!r})"

    def address(self) -> int:
        """The address of the rule's scoring pass compiled as a C function
        (:func:`decoders.priority.score_cfunc`), checked and compiled on first use in this
        process."""
        # By the Python function: a plain one is wrapped in a new dispatcher at every rule.
        key = self._key or ("id", id(self.score.py_func))
        hit = _DRIVERS.get(key)
        if hit is not None:
            return hit[1].address
        self._check()
        from decoders import priority

        compiled = priority.score_cfunc(self.score)
        _DRIVERS[key] = (self.score, compiled)  # keeps both alive while the address is used
        return compiled.address

    def _check(self) -> None:
        """Type the score at the rule's signature: a clear error naming it, and its return
        type a real number."""
        from numba import types
        from numba.core.errors import NumbaError

        args = (types.float64, types.float64, types.int64, types.float64)
        score = self.score
        if not score._can_compile:  # explicit signatures: the pass compiles py_func at args
            import numba

            score = numba.njit(score.py_func)
        try:
            score.compile(args)
            ret = score.overloads[args].signature.return_type
        except NumbaError as e:
            first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), "")
            raise InputError(f"priority rule {self.where} does not compile as {RULE_SIGNATURE} "
                             f"(four scalars in, one number out); Numba: {first}") from None
        except TypeError as e:  # wrong arity, before Numba types anything
            raise InputError(f"priority rule {self.where} must be {RULE_SIGNATURE}: "
                             f"{e}") from None
        if not isinstance(ret, (types.Float, types.Integer)) or isinstance(ret, types.Boolean):
            raise InputError(f"priority rule {self.where} returns {ret}, not a number; it must "
                             f"be {RULE_SIGNATURE}")

    def run(self, jobset: JobSet, federation: Federation, *, model: str = "fluid",
            rule: str = "fastest", estimates: str = "requested") -> Schedule:
        """Simulate the rule on ``jobset`` (jobs arriving at their release) on ``federation``
        (its power caps honoured); returns the schedule.

        ``info`` holds ``estimates``, ``wall_s`` (the simulation, compile included) and
        ``compile_s`` (the score's check and compile, 0 when this process had it).

        Raises
        ------
        InputError
            If the score is NaN for a job (the message names it and the event's time).
        """
        from decoders import priority
        from decoders.federated import inputs

        if estimates not in ("requested", "exact"):
            raise ValueError(f"estimates must be 'requested' or 'exact', got {estimates!r}")
        t0 = time.perf_counter()
        addr = self.address()
        t1 = time.perf_counter()
        js, fed = jobset, federation
        try:
            bundle = inputs(js, fed, rule=rule, estimates=estimates, check=False)
            r = priority.run_rule(addr, bundle, backfill=self.backfill, model=model)
        except priority.CapInfeasibleError as e:
            raise cap_error(e, js, fed) from None
        if r.nan_job >= len(js):
            raise InputError(f"priority rule {self.where} failed at t={r.nan_t:g} s (its "
                             "compiled score raised an error); run it on one job in Python "
                             "to see it")
        if r.nan_job >= 0:
            j = r.nan_job
            raise InputError(f"priority rule {self.where} scored job id {int(js.id[j])} "
                             f"(position {j} of {js.name}: submit {js.release[j]:g} s, "
                             f"{int(js.tasks[j])} tasks, estimate "
                             f"{bundle.jobs.est[j]:g} s) "
                             f"NaN at t={r.nan_t:g} s; a score must be a number (lower runs "
                             "first)")
        info = {"estimates": estimates, "wall_s": time.perf_counter() - t0,
                "compile_s": t1 - t0}
        arrays = {"order": start_order(r.start), "blacklist": np.zeros(r.alloc.shape),
                  "start": r.start, "finish": r.finish, "alloc": r.alloc,
                  "reservation": r.reservation if self.backfill == "easy" else None}
        for a in arrays.values():
            if a is not None:
                a.setflags(write=False)
        return Schedule(jobset=js, federation=fed, model=model, **arrays, makespan=r.makespan,
                        energy=r.energy, flowtime=r.flowtime, n_relaxed=0,
                        n_coalloc=r.n_coalloc, backfill=self.backfill, rule=rule,
                        policy=self.name, info=info)
