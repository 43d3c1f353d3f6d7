"""Digests of a fixed set of schedules: every catalogue policy on two shared traces, in batch
and release mode, with and without a power cap.

The digests pin the schedules bit for bit across refactors of the simulation core: a change
that moves one start, finish, allocation or joule changes a digest. Regenerate them only for a
change that is meant to move schedules (and say so in CHANGELOG.md)::

    python tests/schedule_digests.py --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
STORE = HERE / "data" / "schedule_digests.json"
TRACES = HERE.parent.parent / "shared" / "traces"
#: (trace file, first job, jobs): two archive traces of different shape.
SETS = (("HPC2N-2002-2.2-cln.swf.gz", 2000, 120), ("CTC-SP2-1996-3.1-cln.swf.gz", 5000, 120))
#: Policies whose runs the digests leave out: they search (their schedule depends on a
#: population's random stream and is covered by their own tests) or need an extra.
SKIP = {"online-moga"}
#: What each policy plans with in the stored digests (passed explicitly, so that a change of
#: the catalogue's defaults does not move them): the exact run times where a policy offers
#: them, else the requested times.
PLANS_REQUESTED = {"realtime-first", "realtime-preempt", "value-density"}


def digest(s) -> str:
    """SHA-256 of a schedule's starts, finishes, allocations, reservations and objectives."""
    h = hashlib.sha256()
    for a in (s.start, s.finish, s.alloc, s.reservation):
        if a is not None:
            a = np.ascontiguousarray(a)
            h.update(str(a.dtype).encode() + str(a.shape).encode())
            h.update(a.tobytes())
    if s.segments is not None:  # preemptions: every execution of every job
        for f in ("job", "start", "end", "read", "compute", "lost", "write", "preempted"):
            h.update(np.ascontiguousarray(getattr(s.segments, f)).tobytes())
    h.update(np.array([s.makespan, s.energy, s.flowtime], dtype=np.float64).tobytes())
    return h.hexdigest()[:20]


def cases():
    """Yield ``(key, jobset, federation, policy, estimates)`` for every case of the table."""
    import moga
    from moga import POLICIES
    from moga.realtime import Machine, tag_realtime
    from moga.value import attach_values

    for fname, start, n in SETS:
        trace = moga.load_swf(TRACES / fname)
        tag = fname.split("-")[0]
        for batch in (True, False):
            base = moga.Federation.preset()
            js = trace.jobset(start=start, n_jobs=n, federation=base, wide="clip", batch=batch,
                              power="lognormal", seed=3)
            one = moga.Federation.load(f"machine@{int(base.total_nodes)}")
            for name, entry in POLICIES.items():
                if name in SKIP or (entry.extra and entry.extra != "cp"):
                    continue
                sup = entry.supports
                fed = one if "one_machine" in sup else base
                jset = js
                if "values" in sup:
                    jset = attach_values(js, seed=2)
                if "realtime" in sup:
                    jset = tag_realtime(jset, Machine(nodes=int(fed.total_nodes)), fraction=0.2,
                                        seed=1).jobset
                mode = "batch" if batch else "release"
                est = "requested" if name in PLANS_REQUESTED else "exact"
                yield f"{tag}/{mode}/{name}", jset, fed, name, est
                if "power_cap" in sup and "one_machine" not in sup:
                    yield (f"{tag}/{mode}/{name}/cap0.6", jset, fed.with_cap(fraction=0.6),
                           name, est)


def compute() -> dict:
    from moga import simulate

    return {key: digest(simulate(js, fed, name, estimates=est))
            for key, js, fed, name, est in cases()}


if __name__ == "__main__":
    got = compute()
    if "--write" in sys.argv:
        STORE.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    print(json.dumps(got, indent=1, sort_keys=True))
