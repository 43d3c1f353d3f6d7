"""Value-function workloads (docs/design.md §6): generator, offline decoder, best known value,
upper bound, online heuristics and their comparison."""
from decoders.value import value_at

from .best_known import BestKnown, ValueProblem, best_known, upper_bound
from .compare import ValueComparison, compare_value
from .generator import DEFAULT_CLASSES, PriorityClass, attach_values
from .online import ONLINE_HEURISTICS, online
from .schedule import ValueSchedule, evaluate_value, evaluate_value_batch, heuristic_order

__all__ = ["BestKnown", "DEFAULT_CLASSES", "ONLINE_HEURISTICS", "PriorityClass", "ValueComparison",
           "ValueProblem", "ValueSchedule", "attach_values", "best_known", "compare_value",
           "evaluate_value", "evaluate_value_batch", "heuristic_order", "online", "upper_bound",
           "value_at"]
