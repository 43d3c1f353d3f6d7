"""Evolution: GA parameters, the pymoo problem over the decoders, the operators, ``run``."""
from .online import OnlineMOGA
from .operators import (
    ScheduleCrossover,
    ScheduleDuplicateElimination,
    ScheduleMutation,
    ScheduleSampling,
    fitted_blacklists,
    seed_blacklists,
)
from .params import GAParams
from .problem import OBJECTIVES, ScheduleRepair, SchedulingProblem
from .resequencing import Resequencer
from .runner import HV_FACTOR, RunResult, run
from .search import Search, StopRule

__all__ = ["GAParams", "HV_FACTOR", "OBJECTIVES", "OnlineMOGA", "RunResult", "ScheduleCrossover",
           "Resequencer", "ScheduleDuplicateElimination", "ScheduleMutation", "ScheduleRepair",
           "ScheduleSampling", "SchedulingProblem", "Search", "StopRule", "fitted_blacklists", "run",
           "seed_blacklists"]
