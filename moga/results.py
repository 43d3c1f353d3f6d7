"""The shared result vocabulary of every search (docs/design.md §7).

MOGA (:func:`moga.run`), its ablation, random search and GA-MF all return a
:class:`SearchResult` (MOGA a :class:`~moga.evolution.runner.RunResult`, which
adds its history): the same names with the same meanings everywhere.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .metrics import knee_index
from .model.chromosome import split
from .model.jobset import JobSet
from .model.platform import Federation
from .model.schedule import Schedule, evaluate

__all__ = ["RESULT_CLASSES", "SearchResult", "load_result"]

#: Format stamp of the files written by :meth:`SearchResult.save`.
_RESULT_FORMAT = "moga-result-1"
#: JobSet arrays a result file holds (``None`` ones are left out, and ``killed`` when no job
#: was killed at its request, so that a file of the default model is unchanged).
_JOBSET_ARRAYS = ("id", "release", "tasks", "runtime", "sigma", "bw", "power", "requested",
                  "v_start", "v_final", "soft", "hard", "priority", "killed")


@dataclass(kw_only=True)
class SearchResult:
    """Non-dominated schedules found by a search.

    Attributes
    ----------
    name : str
        The algorithm ("MOGA", "MOGA without blacklist", "random search", "GA-MF").
    F : ndarray (n, m)
        Objectives of the distinct non-dominated points, sorted by the first.
    X : ndarray (n, J + J*K), or (n, J) without a blacklist
        Their chromosomes (:func:`moga.model.chromosome.split`).
    jobset, federation, model
        What was scheduled, on what, under which execution model.
    seed : int
        The seed of every random draw of the search.
    n_evals : int
        Chromosomes decoded.
    wall_time : float
        Seconds the search took.
    use_blacklist : bool
        Whether ``X`` carries a blacklist (False: every job may use every node).
    backfill, rule : str
        Decoder options the members are decoded with (a heuristic's EASY
        backfilling and allocation rule; ``"none"`` and ``"fastest"`` for MOGA).
    info : dict
        Anything else the algorithm reports (JSON-ready).
    """

    name: str
    F: np.ndarray
    X: np.ndarray
    jobset: JobSet
    federation: Federation
    model: str
    seed: int
    n_evals: int
    wall_time: float
    use_blacklist: bool = True
    backfill: str = "none"
    rule: str = "fastest"
    info: dict = field(default_factory=dict)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        RESULT_CLASSES[cls.__name__] = cls  # load_result rebuilds it from its file

    @classmethod
    def _from_state(cls, common: dict, meta: dict, arrays: dict) -> SearchResult:
        """The result of a file: ``common`` holds the fields :meth:`save` writes for every
        result, ``meta`` and ``arrays`` what a subclass's :meth:`_state` adds."""
        return cls(**common)

    def __len__(self) -> int:
        return len(self.F)

    def knee(self) -> int:
        """Index of the knee of the front (see :func:`moga.metrics.knee_index`)."""
        return knee_index(self.F)

    def chromosome(self, i: int):
        """``(order, blacklist)`` of member ``i`` (a zero blacklist without one)."""
        J, K = len(self.jobset), self.federation.n_clusters
        if not -len(self.F) <= i < len(self.F):
            raise IndexError(f"the front has {len(self.F)} members, got index {i}")
        if self.use_blacklist:
            return split(self.X[i], J, K)
        order, _ = split(self.X[i], J, 0)
        return order, np.zeros((J, K))

    def _state(self) -> tuple[dict, dict]:
        """``(json_fields, arrays)`` that :meth:`save` stores beside the common ones."""
        return {}, {}

    def save(self, path) -> Path:
        """Write the result to ``path`` (one ``.npz`` file), atomically.

        The file holds the front's objectives and chromosomes, the job-set, the
        federation and the settings, so that :func:`load_result` gives back a
        result whose every member can be decoded again (:meth:`schedule`).
        """
        from .outputs import atomic_path

        path = Path(path)
        js = self.jobset
        meta = {"format": _RESULT_FORMAT, "class": type(self).__name__, "name": self.name,
                "model": self.model, "seed": int(self.seed), "n_evals": int(self.n_evals),
                "wall_time": float(self.wall_time), "use_blacklist": bool(self.use_blacklist),
                "backfill": self.backfill, "rule": self.rule, "info": self.info,
                "jobset_name": js.name, "jobset_report": js.report,
                "federation": self.federation.to_dict()}
        extra_meta, extra_arrays = self._state()
        meta.update(extra_meta)
        arrays = {"F": np.asarray(self.F, dtype=float), "X": np.asarray(self.X, dtype=float),
                  **{f"js_{f}": getattr(js, f) for f in _JOBSET_ARRAYS
                     if getattr(js, f) is not None and (f != "killed" or js.killed.any())},
                  **extra_arrays}
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.savez_compressed(fh, meta=np.asarray(json.dumps(meta, default=_json_default)),
                                **arrays)
        return path

    def schedule(self, i: int) -> Schedule:
        """Decode member ``i`` into a :class:`~moga.model.schedule.Schedule`."""
        order, bl = self.chromosome(i)
        return evaluate(self.jobset, self.federation, order, bl, model=self.model,
                        backfill=self.backfill, rule=self.rule)


#: Result classes by the name a file records: :class:`SearchResult` and each subclass
#: (:class:`moga.RunResult` adds itself when defined), so :func:`load_result` rebuilds a
#: result of any of them without knowing the runners.
RESULT_CLASSES: dict[str, type] = {"SearchResult": SearchResult}


def _json_default(v):
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return str(v)


def load_result(path):
    """A result written by :meth:`SearchResult.save`, of the class it was saved from
    (:data:`RESULT_CLASSES`: a :class:`~moga.RunResult` for ``moga.run``'s).

    Raises
    ------
    InputError
        Naming the file, if it is missing, damaged or not a result file.
    """
    from .errors import InputError
    from .validation import read_npz

    path = Path(path)
    arrays = read_npz(path, "moga result")
    try:
        meta = json.loads(str(arrays.pop("meta").item()))  # KeyError: not a result file
        if meta.get("format") != _RESULT_FORMAT:
            raise KeyError("format")
        js_fields = {f: arrays.pop(f"js_{f}") for f in _JOBSET_ARRAYS if f"js_{f}" in arrays}
        jobset = JobSet(name=meta["jobset_name"], report=meta["jobset_report"], **js_fields)
        federation = Federation.from_dict(meta["federation"], source=str(path))
        common = {"name": meta["name"], "F": arrays.pop("F"), "X": arrays.pop("X"),
                  "jobset": jobset, "federation": federation, "model": meta["model"],
                  "seed": meta["seed"], "n_evals": meta["n_evals"],
                  "wall_time": meta["wall_time"], "use_blacklist": meta["use_blacklist"],
                  "backfill": meta["backfill"], "rule": meta["rule"], "info": meta["info"]}
        cls = RESULT_CLASSES.get(meta["class"], SearchResult)
        return cls._from_state(common, meta, arrays)
    except InputError:
        raise
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"{path}: not a moga result file of this version (missing or bad "
                         f"{e})") from None
