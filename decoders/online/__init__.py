"""Online heuristics for value-function workloads on the simulation core (docs/design.md §6).

Jobs arrive over time; a job runs inside one cluster for ``runtime / speed_k``,
without preemption, and earns its value function at completion. Mapping
events happen when a job arrives or a running job completes. At a mapping
event a heuristic maps waiting jobs: it starts those that can start now and
may hold reservations (place-holders) for later. Run times are exact, so
every start and place-holder, once made, is final: they are entered into
per-cluster availability profiles, and later decisions only use what the
profiles leave free, so they never delay a start or a place-holder. Counts of
free nodes are enough: nodes within a cluster are identical, and a count
profile that never exceeds a cluster's size always has a node assignment
(lowest free node first), so node packing costs nothing here.

A waiting job that cannot earn any value any more (even started at its
earliest possible slot) is dropped, by every heuristic.

The jobs run on the core's event loop (:mod:`decoders.federated`); the
heuristics plan on profiles of their own and tell it what to start.

Layout: the driver in :mod:`.loop` (with the wrapper :func:`simulate`), the
heuristics in :mod:`.rules`, the bundled state in :mod:`._state`.
"""

from .loop import RULE_CODES, OnlineResult, simulate

__all__ = ["RULE_CODES", "OnlineResult", "simulate"]
