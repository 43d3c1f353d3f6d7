"""Power-capped dispatching (docs/design.md §11): EASY, PRB and a hybrid CP dispatcher
under a federation power budget, their metrics, and the cap study."""

from .cp import CPOptions, solve_relaxed
from .dispatchers import DISPATCHERS, HybridCP, PowercapResult, predict_power, run_dispatcher
from .metrics import BSLD_BOUND, PowercapMetrics, powercap_metrics
from .queues import Queues
from .study import cap_study

__all__ = ["CPOptions", "solve_relaxed", "DISPATCHERS", "HybridCP", "PowercapResult",
           "predict_power", "run_dispatcher",
           "BSLD_BOUND", "PowercapMetrics", "powercap_metrics", "Queues", "cap_study"]
