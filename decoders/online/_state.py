"""The online simulator's bundled state (named tuples of arrays; nothing is copied).

These bundles sit beside the simulation core's own (:mod:`decoders._federated_core`:
``Jobs``, ``Platform``, ``Out``), which the driver passes to the steps, and have
names of their own. The jobs, the clusters and the profiles are the value
decoders' bundles (:mod:`decoders._profiles`: ``ValueJobs``,
``ProfilePlatform``, ``Profiles``, with (K, 6J + 1) breakpoints here).

``out`` (:data:`ProfileOut`)
    What the simulation writes, per job: ``start``, ``finish`` (NaN if not
    run), ``cluster`` (-1), ``value`` earned, ``reserved`` (the reservation or
    place-holder start, NaN if the job started when first mapped), and
    ``status`` (0 not arrived, :data:`WAITING`, :data:`PLACED`, :data:`DROPPED`).
``q`` (:data:`ValueQueues`)
    ``by_release`` (the jobs by arrival, ties by index), ``waiting`` (the
    queue), ``phs`` (jobs holding a future place-holder), ``ht``/``hj`` (the
    heap of planned starts not yet made on the core, times and jobs),
    ``ft``/``fj`` (the heap of planned finishes of the jobs started, times
    and jobs), and ``evi`` (int64: the lengths and cursors, indices ``Q_*``).
"""

from __future__ import annotations

from collections import namedtuple

ProfileOut = namedtuple("ProfileOut", "start finish cluster value reserved status")
ValueQueues = namedtuple("ValueQueues", "by_release waiting phs ht hj ft fj evi")

#: Job status codes.
WAITING, PLACED, DROPPED = 1, 2, 3
#: Indices into ``ValueQueues.evi``: start-heap size, queue length, place-holders pending,
#: jobs arrived, EASY's pending reservation (a job, or -1), finish-heap size.
Q_NH, Q_NW, Q_NPH, Q_ARRIVED, Q_RES_JOB, Q_NF = range(6)
