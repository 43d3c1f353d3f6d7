"""The catalogue of schedule objectives: one entry per objective a search can minimise.

An :class:`Objective` names a quantity of a schedule, its unit and direction,
what of a decode it reads, and how it is computed from that; the search
(:class:`moga.evolution.SchedulingProblem`, :func:`moga.run`), the online
window (:data:`moga.evolution.online.WINDOW_OBJECTIVES`), the output files,
plots and the check of ``moga schedule`` all read their objectives from
:data:`CATALOGUE` (docs/guide/objectives.md).

Every entry computes its values from a :class:`Decoded`: the per-row
makespan, energy and flowtime of a decode and, when the entry ``needs``
them, each job's start, finish and allocation. A population decode is asked
for those per-job arrays only when an objective of the run reads them, so
that the default run (makespan and energy) decodes exactly as without the
catalogue. The same function computes an entry of one
:class:`~moga.model.schedule.Schedule` (:meth:`Objective.of_schedule`).

An entry's submit-order reference, which normalises the hypervolume, is its
value on the submit-order schedule with an empty blacklist
(:func:`submit_reference`); it must be > 0 there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from .jobset import JobSet
from .platform import Federation
from .schedule import BSLD_BOUND

__all__ = ["CATALOGUE", "DEFAULT", "NEEDS", "Decoded", "Objective", "Units", "check_objectives",
           "columns", "needs_of", "register", "submit_reference", "values_of_schedule", "view"]

#: The per-job outputs of a decode an objective may read.
NEEDS = ("start", "finish", "alloc")
#: The objectives of a run that names none.
DEFAULT = ("makespan", "energy")


@dataclass(frozen=True, eq=False)
class Decoded:
    """What a decode of ``P`` schedules gives the catalogue.

    Attributes
    ----------
    jobset : JobSet
    federation : Federation
    makespan, energy, flowtime : ndarray (P,)
        In s, J and s (docs/design.md §5).
    start, finish : ndarray (P, J) or None
        Each job's start and finish, s, indexed like the job-set; None when
        the decode was not asked for them.
    alloc : ndarray (P, J, K) or None
        Each job's nodes per cluster; None when not asked for.
    """

    jobset: JobSet
    federation: Federation
    makespan: np.ndarray
    energy: np.ndarray
    flowtime: np.ndarray
    start: np.ndarray | None = None
    finish: np.ndarray | None = None
    alloc: np.ndarray | None = None

    @classmethod
    def of_batch(cls, b, jobset: JobSet, federation: Federation) -> Decoded:
        """The :class:`decoders.federated.BatchDecode` ``b`` of ``jobset`` on ``federation``."""
        return cls(jobset, federation, b.makespan, b.energy, b.flowtime, b.starts, b.finishes,
                   b.alloc)

    @classmethod
    def of_schedule(cls, s) -> Decoded:
        """One :class:`~moga.model.schedule.Schedule` as a decode of one row.

        A schedule with rejected jobs or preemptions (an online policy's) is
        refused: the catalogue's per-job means and power are those of jobs
        that each ran once.
        """
        if s.segments is not None or bool(np.isnan(s.finish).any()):
            raise ValueError(f"the catalogue's objectives are defined for schedules whose jobs "
                             f"each ran once; this one ({s.policy or 'a schedule'}) has "
                             "preemptions or rejected jobs")
        return cls(s.jobset, s.federation, np.array([s.makespan]), np.array([s.energy]),
                   np.array([s.flowtime]), np.asarray(s.start)[None], np.asarray(s.finish)[None],
                   np.asarray(s.alloc)[None])

    def need(self, name: str) -> np.ndarray:
        """The per-job output ``name`` (one of :data:`NEEDS`); a ValueError when absent."""
        v = getattr(self, name)
        if v is None:
            raise ValueError(f"this decode has no {name!r} per job: declare it in the "
                             "objective's needs")
        return v


@dataclass(frozen=True)
class Objective:
    """One catalogue entry.

    Parameters
    ----------
    name : str
        What runs, files and the command line call it (``--objectives``).
    unit : str
        Unit of the values: ``"s"``, ``"J"``, ``"W"``, ``"J s"``, or ``""`` for
        a ratio.
    compute : callable
        ``compute(d)`` gives the values (float ndarray (P,)) of the ``P`` rows
        of the :class:`Decoded` ``d``.
    description : str
        One line for the guide, ``--help`` and errors.
    needs : tuple of str
        The per-job outputs of :data:`NEEDS` that ``compute`` reads; the
        decode is asked for these only.
    direction : {"min"}
        The search minimises every objective; a quantity to maximise enters
        as a cost (e.g. value lost, not value earned).
    display : (str, float)
        Unit and factor of the values shown in plots, tables and messages
        (e.g. ``("h", 1 / 3600)`` for seconds shown as hours).
    digits : int
        Decimals shown in messages.
    floor : float
        The least reference a front is normalised by: a submit-order value
        below it (the mean wait of a queue where no job waits is 0) is raised to
        it, so that the hypervolume stays defined (0: no floor, the value must be
        > 0).
    """

    name: str
    unit: str
    compute: Callable[[Decoded], np.ndarray]
    description: str = ""
    needs: tuple = ()
    direction: str = "min"
    display: tuple = field(default=None)
    digits: int = 4
    floor: float = 0.0

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name or "," in self.name:
            raise ValueError(f"an objective's name must be a non-empty string without commas, "
                             f"got {self.name!r}")
        if self.direction != "min":
            raise ValueError(f"objective {self.name!r}: direction must be 'min' (the search "
                             f"minimises; enter a quantity to maximise as a cost), got "
                             f"{self.direction!r}")
        bad = [n for n in self.needs if n not in NEEDS]
        if bad:
            raise ValueError(f"objective {self.name!r}: needs must be among {list(NEEDS)}, "
                             f"got {bad}")
        if not callable(self.compute):
            raise ValueError(f"objective {self.name!r}: compute must be callable, got "
                             f"{self.compute!r}")
        object.__setattr__(self, "needs", tuple(self.needs))
        if self.display is None:
            object.__setattr__(self, "display", (self.unit, 1.0))
        if isinstance(self.floor, bool) or not isinstance(self.floor, (int, float)) \
                or not 0 <= self.floor < float("inf"):
            raise ValueError(f"objective {self.name!r}: floor must be a finite number >= 0, "
                             f"got {self.floor!r}")

    @property
    def column(self) -> str:
        """Its column in ``front.csv``: the name and the unit (``makespan_s``, ``bsld``)."""
        return f"{self.name}_{self.unit.replace(' ', '')}" if self.unit else self.name

    @property
    def label(self) -> str:
        """An axis label: the name and the display unit (``makespan (h)``)."""
        unit = self.display[0]
        return f"{self.name} ({unit})" if unit else self.name

    def shown(self, value: float) -> str:
        """``value`` in the display unit, with :attr:`digits` decimals (``12.34 h``)."""
        unit, factor = self.display
        return f"{value * factor:.{self.digits}f}" + (f" {unit}" if unit else "")

    def of_schedule(self, s) -> float:
        """The value of one :class:`~moga.model.schedule.Schedule`."""
        return float(self.compute(Decoded.of_schedule(s))[0])


def _per_job_mean(v) -> np.ndarray:
    """The mean over the jobs of each row of ``v`` (P, J), as numpy's mean computes it."""
    return v.mean(axis=1) if v.shape[1] else np.zeros(v.shape[0])


def _bsld(d: Decoded) -> np.ndarray:
    start, finish = d.need("start"), d.need("finish")
    dur = np.maximum(finish - start, BSLD_BOUND)
    return _per_job_mean(np.maximum(1.0, (finish - d.jobset.release) / dur))


def _wait(d: Decoded) -> np.ndarray:
    return _per_job_mean(d.need("start") - d.jobset.release)


def _peak_power(d: Decoded) -> np.ndarray:
    """The highest level of each row's power step function (:func:`moga.model.schedule.
    power_profile`): idle power plus the running jobs' increments, after every change at
    one instant."""
    start, finish, alloc = d.need("start"), d.need("finish"), d.need("alloc")
    fed = d.federation
    idle = fed.idle_power
    if start.shape[1] == 0:
        return np.full(start.shape[0], idle)
    inc = np.maximum(np.asarray(d.jobset.power)[:, None] * fed.power_busy[None, :]
                     - fed.power_idle[None, :], 0.0)
    per_job = (alloc * inc[None]).sum(axis=2)  # not einsum: its sums follow the CPU's SIMD
    times = np.concatenate([start, finish], axis=1)
    delta = np.concatenate([per_job, -per_job], axis=1)
    # The level after the last change at each instant is the same whatever the order of
    # the changes at that instant, up to rounding: a stable sort fixes that order.
    o = np.argsort(times, axis=1, kind="stable")
    t = np.take_along_axis(times, o, axis=1)
    level = np.cumsum(np.take_along_axis(delta, o, axis=1), axis=1)
    last = np.ones(t.shape, dtype=bool)
    last[:, :-1] = t[:, 1:] != t[:, :-1]
    return idle + np.where(last, level, -np.inf).max(axis=1)


_HOURS = ("h", 1 / 3600)

#: Every objective a run can name, by name (:func:`register` adds one).
CATALOGUE: dict[str, Objective] = {o.name: o for o in (
    Objective("makespan", "s", lambda d: d.makespan, "last finish less first release",
              display=_HOURS, digits=2),
    Objective("energy", "J", lambda d: d.energy,
              "busy and idle energy of every node over the makespan",
              display=("MWh", 1 / 3.6e9), digits=4),
    Objective("flowtime", "s", lambda d: d.flowtime, "sum over jobs of finish less release",
              display=_HOURS, digits=1),
    Objective("makespan+flowtime", "s", lambda d: d.makespan + d.flowtime,
              "makespan plus flowtime, GA-MF's single objective (Gabaldon et al. 2015)",
              display=_HOURS, digits=1),
    Objective("bsld", "", _bsld,
              f"mean bounded slowdown max(1, (F - r) / max(F - S, {BSLD_BOUND:g} s))",
              needs=("start", "finish"), digits=3),
    Objective("wait", "s", _wait, "mean wait, start less release", needs=("start",),
              display=_HOURS, digits=3, floor=1.0),
    Objective("edp", "J s", lambda d: d.energy * d.makespan,
              "energy-delay product of the schedule, energy x makespan",
              display=("MWh h", 1 / 3.6e9 / 3600), digits=4),
    Objective("peak_power", "W", _peak_power,
              "highest power the federation draws at any instant (idle power included)",
              needs=("start", "finish", "alloc"), display=("kW", 1e-3), digits=2),
)}


def register(objective: Objective, replace: bool = False) -> Objective:
    """Add ``objective`` to :data:`CATALOGUE` (a name already there only with ``replace``).

    Returns the entry. The catalogue is this process's: island runs on Dask
    workers see the entries registered where the workers import moga.
    """
    if not isinstance(objective, Objective):
        raise TypeError(f"register takes an Objective, got {type(objective).__name__}")
    if objective.name in CATALOGUE and not replace:
        raise ValueError(f"objective {objective.name!r} is in the catalogue already (pass "
                         "replace=True to replace it)")
    CATALOGUE[objective.name] = objective
    return objective


def check_objectives(objectives, counts=None) -> tuple:
    """``objectives`` (names, or one comma-separated string) as a tuple of catalogue names.

    Refused, with a ValueError naming the known objectives, when a name is not
    in :data:`CATALOGUE`, a name repeats, none is given, or (with ``counts``, a
    collection of sizes) their number is not allowed.
    """
    if isinstance(objectives, str):
        objectives = [o.strip() for o in objectives.split(",") if o.strip()]
    try:
        objectives = tuple(objectives)
    except TypeError:
        raise ValueError(f"objectives must be names from {list(CATALOGUE)}, got "
                         f"{objectives!r}") from None
    unknown = [o for o in objectives if o not in CATALOGUE]
    if unknown:
        raise ValueError(f"unknown objectives {unknown}; the catalogue has "
                         f"{', '.join(CATALOGUE)}")
    if not objectives:
        raise ValueError(f"objectives must name at least one of {', '.join(CATALOGUE)}")
    if len(set(objectives)) != len(objectives):
        raise ValueError(f"objectives must be distinct, got {list(objectives)}")
    if counts is not None and len(objectives) not in counts:
        raise ValueError(f"give {' or '.join(str(c) for c in sorted(counts))} objectives, got "
                         f"{len(objectives)} ({','.join(objectives)})")
    return objectives


def view(*names: str) -> tuple:
    """``names`` as a tuple, each checked to be in :data:`CATALOGUE`: the catalogue's
    entries a part of moga supports (the online window's, for one)."""
    return check_objectives(names)


def needs_of(objectives) -> frozenset:
    """The per-job outputs (:data:`NEEDS`) the named objectives read."""
    return frozenset(n for o in objectives for n in CATALOGUE[o].needs)


def columns(objectives, d: Decoded) -> np.ndarray:
    """The objective matrix (P, len(objectives)) of the decode ``d``, float64."""
    return np.column_stack([np.asarray(CATALOGUE[o].compute(d), dtype=np.float64)
                            for o in objectives])


def values_of_schedule(s, objectives=DEFAULT) -> np.ndarray:
    """The named objectives (m,) of one :class:`~moga.model.schedule.Schedule`."""
    objectives = check_objectives(objectives)
    return columns(objectives, Decoded.of_schedule(s))[0]


def submit_reference(jobset: JobSet, federation: Federation, objectives=DEFAULT, *,
                     model: str = "fluid", backfill: str = "none") -> np.ndarray:
    """The submit-order reference (m,) of the named objectives: their values on the
    submit-order schedule with an empty blacklist (with ``backfill="easy"``, EASY itself),
    which :func:`moga.run` divides a front by to normalise its hypervolume."""
    from .schedule import evaluate

    s = evaluate(jobset, federation, order=jobset.submit_order, model=model, backfill=backfill)
    return values_of_schedule(s, objectives)


class Units(Mapping):
    """A live view of :data:`CATALOGUE` as ``{name: unit}``."""

    def __getitem__(self, name: str) -> str:
        return CATALOGUE[name].unit

    def __iter__(self) -> Iterator[str]:
        return iter(CATALOGUE)

    def __len__(self) -> int:
        return len(CATALOGUE)

    def __repr__(self) -> str:
        return repr(dict(self))
