"""moga: multi-objective evolutionary scheduling on heterogeneous federated clusters.

Sub-packages: :mod:`moga.model` (workloads, job-sets, federations, schedules),
:mod:`moga.sim` (the simulation core's seam: ``Session``, ``OnlinePolicy``),
:mod:`moga.evolution` (GA parameters, problem, operators, ``run`` and the steppable
``Search``),
:mod:`moga.baselines`, :mod:`moga.value`, :mod:`moga.experiments` (sweeps,
report, tuning), :mod:`moga.powercap` (power-capped dispatching),
:mod:`moga.realtime` (real-time jobs, preemption, checkpointing), :mod:`moga.rl` (Deep-EAS,
imported on use: it needs the ``gym`` extra). :mod:`moga.policies` is the catalogue of
online policies (``POLICIES``) and ``simulate``, which runs any of them. The names below are
the stable public API.
"""
from . import baselines, evolution, model, powercap, realtime, sim, value
from .evolution.params import GAParams
from .evolution.runner import RunResult, run
from .evolution.search import Search, load_state, save_state
from .experiments.tuning import DEFAULT_SPACE as TUNE_SPACE
from .experiments.tuning import TuneResult, tune
from .model.jobset import JobSet
from .model.platform import Federation
from .model.schedule import Schedule, evaluate, evaluate_batch
from .model.traces import TraceNotFoundError, resolve_trace
from .model.workload import CleaningReport, SWFFormatError, Trace, load_default, load_swf
from .policies import POLICIES, simulate
from .results import SearchResult, load_result
from .version import __version__  # noqa: F401 (moga.__version__)

__all__ = [
    "CleaningReport", "Federation", "GAParams", "JobSet", "POLICIES", "RunResult",
    "SWFFormatError", "Schedule", "SearchResult", "TUNE_SPACE", "Trace", "TraceNotFoundError",
    "TuneResult", "baselines", "evaluate", "evaluate_batch", "evolution", "load_default",
    "load_result", "load_state", "load_swf", "model", "powercap", "realtime", "resolve_trace",
    "run", "save_state", "Search", "sim", "simulate", "tune", "value",
]
