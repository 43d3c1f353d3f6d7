"""Smallest area first with an EASY-style reservation: an online policy for moga.sim."""

import numpy as np

from moga.sim import OnlinePolicy


class SmallestAreaFirst(OnlinePolicy):
    """Start queued jobs by increasing area (tasks x estimate); the first that does not fit
    gets a reservation, and later jobs start only if they cannot delay it."""

    name = "saf-easy"
    backfill = "easy"  # the schedule's record: a reservation for the blocked head

    def decide(self, session):
        js, now = session.jobset, session.now
        queued = session.queued()
        area = js.tasks[queued] * session.estimate[queued]
        ranked = queued[np.lexsort((queued, area))]  # ties: the earlier arrival first
        blocked = next((i for i, j in enumerate(ranked) if not session.start([j]).size), None)
        if blocked is None:
            return  # every waiting job started
        need = js.tasks[ranked[blocked]]
        # The reservation: replay the running jobs' planned ends until the head's nodes are free.
        running, ends = session.running()
        nodes = session.allocation[running].sum(axis=1)
        free, shadow = int(session.free.sum()), now
        for i in np.argsort(ends, kind="stable"):
            if free >= need:
                break
            free, shadow = free + nodes[i], ends[i]
        extra = free - need  # nodes the head leaves free at its reservation
        slowest = session.federation.speed.min()
        for j in ranked[blocked + 1:]:
            short = now + session.estimate[j] / slowest <= shadow
            if (short or js.tasks[j] <= extra) and session.start([j]).size and not short:
                extra -= js.tasks[j]
