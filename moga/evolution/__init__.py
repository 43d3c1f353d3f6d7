"""Evolution: GA parameters, the pymoo problem over the decoders, the operators, ``run``."""
from pathlib import Path

from decoders._cache import drop_stale_cache

# This package's kernels call the decoders' helpers, which Numba inlines into them and
# whose edits its cache does not see (numba/numba#1833): drop them when either changed.
drop_stale_cache(Path(__file__).parent)

from .online import OnlineMOGA  # noqa: E402
from .operators import (  # noqa: E402
    ScheduleCrossover,
    ScheduleDuplicateElimination,
    ScheduleMutation,
    ScheduleSampling,
    fitted_blacklists,
    seed_blacklists,
)
from .params import GAParams  # noqa: E402
from .problem import OBJECTIVES, ScheduleRepair, SchedulingProblem  # noqa: E402
from .resequencing import Resequencer  # noqa: E402
from .runner import HV_FACTOR, RunResult, run  # noqa: E402
from .search import Search, StopRule  # noqa: E402

__all__ = ["GAParams", "HV_FACTOR", "OBJECTIVES", "OnlineMOGA", "RunResult", "ScheduleCrossover",
           "Resequencer", "ScheduleDuplicateElimination", "ScheduleMutation", "ScheduleRepair",
           "ScheduleSampling", "SchedulingProblem", "Search", "StopRule", "fitted_blacklists", "run",
           "seed_blacklists"]
