"""The simulation core's seams: online policies on the federated event loop.

* :class:`Session`: the event loop one event at a time, for a policy written
  in Python (begin, the queued and running jobs, start, advance);
* :data:`POLICIES`: the one registry of online policies, kernel and Python,
  with where each one's code and twin live (:class:`PolicyInfo`);
* :class:`OnlinePolicy`: the base class of a user's policy, loaded by
  :func:`simulate` or ``moga simulate --policy path.py:Class``;
* :func:`simulate`: any policy on a job-set, returning the one schedule
  record (:class:`moga.Schedule`).

See docs/guide/policies.md ("Write your own online policy").
"""

from .registry import POLICIES, OnlinePolicy, PolicyInfo, load_policy, policy_info
from .session import ESTIMATES, PolicyStalled, Session
from .simulate import run_policy, simulate

__all__ = ["ESTIMATES", "POLICIES", "OnlinePolicy", "PolicyInfo", "PolicyStalled", "Session",
           "load_policy", "policy_info", "run_policy", "simulate"]
