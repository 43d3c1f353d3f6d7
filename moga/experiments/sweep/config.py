"""Sweep configurations: the TOML form, its validation, and the runs it describes.

A sweep is described by a TOML file (see ``benchmarks/sweeps/``)::

    name = "small"
    seeds = [1, 2, 3]
    model = "fluid"                 # or "at_start"
    federation = "default"          # preset or TOML path (relative to this file)

    [[trace]]
    name = "HPC2N"
    path = "HPC2N-2002-2.2-cln.swf.gz"   # a path, a file name found by moga.model.traces, or "bundled"
    days = 30                       # windows of 30 days ...
    windows = [1, 2, 3]             # ... these ones (indices of Trace.windows(days))
    # n_jobs = 500 and starts = [0, 500] instead: windows by count, from these job indices
    # max_procs = 8192, federation = "ricc", wide = "drop", release = true: optional

    [algorithms.MOGA]               # GA parameters (GAParams fields), or params = "tuned.toml"
    pop_size = 100
    n_gen = 200
    [algorithms.FCFS]
    [algorithms.EASY]
    [algorithms.GA-MF]

Every value is checked for its type and range when the file is read; errors
name the file and the key.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ...baselines.registry import ALGORITHMS
from ...bounds import BOUNDS
from ...evolution.params import GAParams
from ...model.objectives import DEFAULT as DEFAULT_OBJECTIVES
from ...model.objectives import check_objectives
from ...model.tomlfile import read_toml
from ...model.traces import TraceNotFoundError, resolve_trace

__all__ = ["SweepConfig", "TraceSpec", "RunSpec", "load_config", "config_from_dict"]

_PRESETS = ("default", "ricc", "curie")


@dataclass(frozen=True)
class TraceSpec:
    """One trace of a sweep and its job-set windows."""

    name: str
    path: str
    windows: tuple
    days: float | None
    n_jobs: int | None
    federation: str
    max_procs: int | None = None
    wide: str = "error"
    release: bool = False


@dataclass(frozen=True)
class RunSpec:
    """One task: a job-set, an algorithm with its parameters, a seed."""

    sweep: str
    trace: TraceSpec
    window: int
    algorithm: str
    params: dict
    seed: int
    model: str
    numba_threads: int = 0
    federation_spec: dict = field(default_factory=dict, compare=False, hash=False)
    objectives: tuple = DEFAULT_OBJECTIVES

    def key(self) -> dict:
        """Everything that changes the run's result (what its id hashes); the objectives
        only when they are not the default, so that a makespan-energy run keeps its id."""
        t = asdict(self.trace)
        t.pop("windows")
        t.pop("name")  # the id's readable prefix holds it; the file and window decide the jobs
        t["path"] = trace_identity(self.trace.path)
        return {"trace": t, "trace_name": self.trace.name, "window": self.window,
                "algorithm": self.algorithm, "params": self.params, "seed": self.seed,
                "model": self.model, "federation": self.federation_spec,
                **({} if self.objectives == DEFAULT_OBJECTIVES
                   else {"objectives": list(self.objectives)})}

    @property
    def run_id(self) -> str:
        """A readable prefix and a hash of :meth:`key`: distinct runs never share an id."""
        raw = f"{self.trace.name}-w{self.window}-{self.algorithm}-s{self.seed}"
        prefix = re.sub(r"^\.", "_", re.sub(r"[^A-Za-z0-9_.-]+", "_", raw))[:80]
        digest = hashlib.sha256(json.dumps(self.key(), sort_keys=True, default=str)
                                .encode()).hexdigest()[:12]
        return f"{prefix}-{digest}"


@dataclass
class SweepConfig:
    """A validated sweep configuration."""

    name: str
    seeds: tuple
    model: str
    traces: tuple
    algorithms: dict
    source: str = ""
    federations: dict = field(default_factory=dict)
    objectives: tuple = DEFAULT_OBJECTIVES

    def runs(self, numba_threads: int = 0) -> list[RunSpec]:
        """Every (job-set, algorithm, seed) of the sweep, in a fixed order."""
        return [RunSpec(self.name, t, w, a, p, s, self.model, numba_threads,
                        self.federations.get(t.federation, {}), self.objectives)
                for t in self.traces for w in t.windows
                for a, p in self.algorithms.items() for s in self.seeds]

    def fingerprint(self) -> dict:
        """What the store records and compares on resume (the source path left out; the
        objectives only when they are not the default)."""
        return {"name": self.name, "seeds": list(self.seeds), "model": self.model,
                "algorithms": self.algorithms,
                "traces": [asdict(t) | {"windows": list(t.windows),
                                        "path": trace_identity(t.path)} for t in self.traces],
                "federations": self.federations,
                **({} if self.objectives == DEFAULT_OBJECTIVES
                   else {"objectives": list(self.objectives)})}


def trace_identity(path) -> str:
    """A trace file's identity for run ids and store fingerprints: its name and size.

    Not its folder, so that a store made on one machine resumes on another
    that keeps the same file elsewhere (``MOGA_TRACES``).
    """
    if path == "bundled":
        return "bundled"
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError:
        size = -1
    return f"{p.name}:{size}"


def _err(source, key, msg):
    return ValueError(f"{source}: {key}: {msg}")


def load_config(path) -> SweepConfig:
    """Read and validate a sweep TOML file; errors name the file and the key."""
    path = Path(path)
    doc = read_toml(path, "sweep configuration")
    return config_from_dict(doc, str(path), base=path.parent)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _str(source, key, v):
    if not isinstance(v, str) or not v:
        raise _err(source, key, f"must be a non-empty string, got {v!r}")
    return v


def _bool(source, key, v):
    if not isinstance(v, bool):
        raise _err(source, key, f"must be true or false (a TOML boolean), got {v!r}")
    return v


def _resolve_file(base, p):
    q = Path(p)
    return str(q if q.is_absolute() else (base / q).resolve())


def config_from_dict(doc: dict, source: str = "sweep", base=Path(".")) -> SweepConfig:
    """Validate a sweep configuration given as a dict (the TOML form)."""
    from ...model.platform import Federation

    if not isinstance(doc, dict):
        raise ValueError(f"{source}: a sweep configuration is a table, got {doc!r}")
    base = Path(base)
    known = {"name", "seeds", "model", "federation", "trace", "algorithms", "objectives"}
    unknown = sorted(set(doc) - known)
    if unknown:
        raise _err(source, ", ".join(unknown), f"unknown key(s); known: {sorted(known)}")
    name = _str(source, "name", doc.get("name", Path(source).stem or "sweep"))
    seeds = doc.get("seeds", [1])
    if (not isinstance(seeds, list) or not seeds
            or not all(_is_int(s) and BOUNDS["seed"].contains(s) for s in seeds)):
        raise _err(source, "seeds", f"must be a non-empty list of integers in [0, 2**32), "
                                    f"got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise _err(source, "seeds", "must not repeat")
    model = doc.get("model", "fluid")
    if model not in ("fluid", "at_start"):
        raise _err(source, "model", f"must be 'fluid' or 'at_start', got {model!r}")
    try:
        objectives = check_objectives(doc.get("objectives", list(DEFAULT_OBJECTIVES)),
                                      counts=(2, 3))
    except ValueError as e:
        raise _err(source, "objectives", str(e)) from None
    federations = {}

    def check_fed(key, spec):
        _str(source, key, spec)
        name, sep, size = spec.rpartition("@")
        if not (sep and name):
            name, size = spec, ""
        resolved = name if name in _PRESETS else _resolve_file(base, name)
        if size:
            resolved = f"{resolved}@{size}"
        try:
            # NAME@auto is sized per trace at run time; its base is checked here.
            fed = Federation.load(resolved, auto_nodes=1000 if size == "auto" else None)
        except (ValueError, OSError) as e:
            raise _err(source, key, str(e)) from None
        federations[resolved] = fed.to_dict() if size != "auto" else \
            {"auto": Federation.load(resolved.rpartition("@")[0]).to_dict()}
        return resolved

    default_fed = check_fed("federation", doc.get("federation", "default"))
    traces = doc.get("trace")
    if not isinstance(traces, list) or not traces:
        raise _err(source, "trace", "give at least one [[trace]] table")
    tspecs = []
    tkeys = {"name", "path", "days", "windows", "n_jobs", "starts", "max_procs", "federation",
             "wide", "release"}
    for i, t in enumerate(traces):
        key = f"trace[{i}]"
        if not isinstance(t, dict):
            raise _err(source, key, "must be a table")
        unknown = sorted(set(t) - tkeys)
        if unknown:
            raise _err(source, f"{key}.{unknown[0]}", f"unknown key; known: {sorted(tkeys)}")
        if "path" not in t:
            raise _err(source, f"{key}.path", "missing (a file, relative to the config, a file "
                                               "name found by MOGA_TRACES, or 'bundled')")
        _str(source, f"{key}.path", t["path"])
        try:
            tpath = str(resolve_trace(t["path"], base=base))
        except TraceNotFoundError as e:
            raise _err(source, f"{key}.path", f"no such file: {e}") from None
        by_days = "days" in t
        by_count = "n_jobs" in t
        if by_days == by_count:
            raise _err(source, key, "give either days (with windows) or n_jobs (with starts)")
        if by_days:
            days = t["days"]
            if not _is_number(days) or not BOUNDS["days"].contains(days):
                raise _err(source, f"{key}.days", f"must be a finite number of days in "
                                                  f"{BOUNDS['days'].interval()}, got {days!r}")
            wins = t.get("windows")
            wkey = "windows"
        else:
            n = t["n_jobs"]
            if not _is_int(n) or not BOUNDS["n_jobs"].contains(n):
                raise _err(source, f"{key}.n_jobs", f"must be a positive integer (in "
                                                    f"{BOUNDS['n_jobs'].interval()}), got {n!r}")
            wins = t.get("starts")
            wkey = "starts"
        if (not isinstance(wins, list) or not wins
                or not all(_is_int(w) and BOUNDS["start"].contains(w) for w in wins)):
            raise _err(source, f"{key}.{wkey}", f"must be a non-empty list of integers in "
                                                 f"{BOUNDS['start'].interval()}, got {wins!r}")
        if len(set(wins)) != len(wins):
            raise _err(source, f"{key}.{wkey}", "must not repeat")
        wide = t.get("wide", "error")
        if wide not in ("error", "drop", "clip"):
            raise _err(source, f"{key}.wide", f"must be error, drop or clip, got {wide!r}")
        mp = t.get("max_procs")
        if mp is not None and (not _is_int(mp) or not BOUNDS["max_procs"].contains(mp)):
            raise _err(source, f"{key}.max_procs", f"must be a positive integer (in "
                                                   f"{BOUNDS['max_procs'].interval()}), got {mp!r}")
        release = _bool(source, f"{key}.release", t.get("release", False))
        fed = check_fed(f"{key}.federation", t["federation"]) if "federation" in t else default_fed
        tname = _str(source, f"{key}.name", t.get("name", Path(tpath).name.split(".swf")[0]))
        tspecs.append(TraceSpec(tname, tpath, tuple(wins), float(t["days"]) if by_days else None,
                                t.get("n_jobs"), fed, mp, wide, release))
    if len({t.name for t in tspecs}) != len(tspecs):
        raise _err(source, "trace", "trace names must be unique")
    algos = doc.get("algorithms")
    if not isinstance(algos, dict) or not algos:
        raise _err(source, "algorithms", f"give at least one [algorithms.NAME] table, NAME in "
                                         f"{list(ALGORITHMS)}")
    checked = {}
    for a, p in algos.items():
        key = f"algorithms.{a}"
        if a not in ALGORITHMS:
            raise _err(source, key, f"unknown algorithm; choose from {list(ALGORITHMS)}")
        if not isinstance(p, dict):
            raise _err(source, key, f"must be a table (write [algorithms.{a}]), got {p!r}")
        p = dict(p)
        kind = ALGORITHMS[a].params
        if kind == "ga":
            if "params" in p:
                ppath = p.pop("params")
                _str(source, f"{key}.params", ppath)
                try:
                    p = {**GAParams.from_toml(_resolve_file(base, ppath)).to_dict(), **p}
                except (OSError, ValueError) as e:
                    raise _err(source, f"{key}.params", str(e)) from None
            p = GAParams.from_dict(p, source=f"{source}: {key}").to_dict()
        elif kind == "random":
            unknown = sorted(set(p) - {"n_evals"})
            if unknown:
                raise _err(source, f"{key}.{unknown[0]}", "unknown key; known: ['n_evals']")
            if "n_evals" in p and (not _is_int(p["n_evals"])
                                   or not BOUNDS["n_evals"].contains(p["n_evals"])):
                raise _err(source, f"{key}.n_evals", f"must be a positive integer (in "
                                                     f"{BOUNDS['n_evals'].interval()})")
            p.setdefault("n_evals", 20000)
        elif p:
            raise _err(source, f"{key}.{next(iter(p))}", "heuristics take no parameters")
        checked[a] = p
    return SweepConfig(name, tuple(seeds), model, tuple(tspecs), checked, source, federations,
                       objectives)
