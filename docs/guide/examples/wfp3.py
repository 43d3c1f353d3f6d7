"""WFP3 as a priority rule at kernel speed, and the same rule as a Python policy.

Run the rule with ``moga simulate --policy docs/guide/examples/wfp3.py:score``,
or from Python with ``moga.simulate(js, fed, score)``; the Python policy, with
``--policy docs/guide/examples/wfp3.py:WFP3Policy``, gives the same schedule,
slower.
"""

import numba
import numpy as np

from moga.sim import OnlinePolicy


@numba.njit
def score(now, submit, tasks, estimate):
    """WFP3: the jobs that waited longest for their length, and the wider ones, first."""
    return -((now - submit) / estimate) ** 3 * tasks


class WFP3Policy(OnlinePolicy):
    """The same rule through a Session: rank by the score, then EASY over that order."""

    name = "wfp3-python"
    backfill = "easy"

    def decide(self, session):
        js, queued = session.jobset, session.queued()
        wait = session.now - js.release[queued]
        key = -(wait / session.estimate[queued]) ** 3 * js.tasks[queued]
        # Lower first; ties by release, then position, as the rule's ranking.
        session.start_easy(queued[np.lexsort((queued, js.release[queued], key))])
