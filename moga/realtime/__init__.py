"""Real-time jobs on batch systems (docs/design.md §12): tagged workloads, a high-priority
queue, preemption with NO/SYS/APP/JIT checkpointing, metrics, an exact integer program."""

from .machine import MIRA_PARTITIONS, Machine
from .metrics import BSLD_BOUND, realtime_metrics
from .milp import MilpSolution, min_threshold, solve_milp
from .simulator import (
    CHECKPOINTS,
    SCHEMES,
    Checkpointing,
    RealtimeResult,
    Thresholds,
    run_scheme,
    simulate,
)
from .workload import CLASS_NAMES, JobClasses, RealtimeJobs, tag_realtime

__all__ = ["MIRA_PARTITIONS", "Machine", "BSLD_BOUND", "realtime_metrics", "MilpSolution",
           "min_threshold", "solve_milp", "CHECKPOINTS", "SCHEMES", "Checkpointing",
           "RealtimeResult", "Thresholds", "run_scheme", "simulate", "CLASS_NAMES", "JobClasses",
           "RealtimeJobs", "tag_realtime"]
