"""The problem's data: workloads, job-sets, federations, schedules, the chromosome encoding."""
from .chromosome import join, repair, split
from .jobset import JobSet
from .platform import PRESETS, Federation
from .schedule import Schedule, evaluate, evaluate_batch
from .traces import TraceNotFoundError, resolve_trace
from .workload import CleaningReport, SWFFormatError, Trace, load_default, load_swf

__all__ = ["CleaningReport", "Federation", "JobSet", "PRESETS", "SWFFormatError", "Schedule",
           "Trace", "TraceNotFoundError", "evaluate", "evaluate_batch", "join", "load_default",
           "load_swf", "repair", "resolve_trace", "split"]
