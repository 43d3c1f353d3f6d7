"""The simulation core's seam: online policies on the federated event loop.

* :class:`Session`: the event loop one event at a time, for a policy written
  in Python (begin, the queued and running jobs, start, advance);
* :class:`OnlinePolicy`: the base class of a user's policy, loaded by
  :func:`load_policy` from ``path.py:Class``;
* :func:`run_policy`: a Python policy on a Session, returning the one
  schedule record (:class:`moga.Schedule`);
* :class:`PolicyInfo`: what an entry of the catalogue holds;
* :class:`PriorityRule`: a user's ``@numba.njit`` score ranking the waiting jobs
  at each event, run with EASY backfilling (or in order) at kernel speed.

The catalogue of named policies, kernel and Python, and :func:`moga.simulate`,
which runs any of them, live above the seam in :mod:`moga.policies`: they name
the studies' policies, which the seam does not know. See docs/guide/policies.md
("Write your own online policy").
"""

from .registry import OnlinePolicy, PolicyInfo, load_policy
from .rules import RULE_SIGNATURE, PriorityRule
from .run import run_policy
from .session import ESTIMATES, PolicyStalled, Session

__all__ = ["ESTIMATES", "OnlinePolicy", "PolicyInfo", "PolicyStalled", "PriorityRule",
           "RULE_SIGNATURE", "Session", "load_policy", "run_policy"]

