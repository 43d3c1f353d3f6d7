"""moga: multi-objective evolutionary scheduling on heterogeneous federated clusters."""
from .jobset import JobSet
from .platform import Federation
from .run import GAParams, RunResult, run
from .schedule import Schedule, evaluate, evaluate_batch
from .tune import TuneResult, tune
from .workload import CleaningReport, SWFFormatError, Trace, load_default, load_swf

__all__ = [
    "CleaningReport", "Federation", "GAParams", "JobSet", "RunResult", "SWFFormatError", "Schedule",
    "TuneResult",
    "Trace", "evaluate", "evaluate_batch", "load_default", "load_swf", "run", "tune",
]
__version__ = "0.1.0"
