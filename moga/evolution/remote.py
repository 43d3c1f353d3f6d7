"""Decoding one population's chromosomes on the workers of a Dask cluster.

``moga.run(..., evaluator=client)`` (and ``moga run --scheduler ADDR``
without ``--islands``) keeps one population in this process and sends each
generation's chromosomes to the client's workers in chunks, a few per
worker thread. A decode depends on its chromosome alone, so the front is the
one the run makes without the client, bit for bit; a chunk lost with its
worker is decoded again by Dask from the same inputs.

The problem (job-set, federation, decoder) travels once per worker, as the
result of a task rather than scattered data, so that Dask can recompute it
when the worker holding it is lost. Each chunk comes back with its objectives,
its decode seconds and, for the EASY search, the start times and allocations
that the in-order twins reuse (:meth:`~moga.evolution.resequencing.EasySearch.twins`).
"""

from __future__ import annotations

import time
import uuid

import numpy as np

__all__ = ["CHUNKS_PER_THREAD", "DaskEvaluator", "WORKER_WAIT_S"]

#: Seconds to wait for the first worker of a scheduler before giving up.
WORKER_WAIT_S = 60.0
#: Chunks of a generation's rows per worker thread.
CHUNKS_PER_THREAD = 8


def _identity(x):
    return x


def _decode_chunk(problem, X):
    """``(F, seconds, starts, alloc)`` of the rows ``X`` decoded by ``problem`` on a worker
    (``starts`` and ``alloc`` None unless the decoder keeps them)."""
    t0 = time.perf_counter()
    F = problem.decode(X)[0]
    last = getattr(problem, "_last", None)
    starts, alloc = (None, None) if last is None else (last[1], last[2])
    return F, time.perf_counter() - t0, starts, alloc


class DaskEvaluator:
    """Decodes rows of chromosomes on a Dask client's workers (see the module docstring).

    Parameters
    ----------
    client : dask.distributed.Client
        An open client whose scheduler has (or gets, within
        :data:`WORKER_WAIT_S` seconds) at least one worker.
    search : SchedulingProblem
        The decoder of the population (the run's problem, or its EASY search).

    Raises
    ------
    MissingExtraError
        Without the ``sweep`` extra.
    TypeError, ValueError
        For something other than a client, a closed client, or a scheduler
        without workers.
    """

    def __init__(self, client, search):
        from ..errors import require

        distributed = require("distributed", "evaluations on Dask (evaluator=)", "sweep")
        if not isinstance(client, distributed.Client):
            raise TypeError(f"evaluator must be a dask.distributed.Client, got "
                            f"{type(client).__name__}")
        if client.status != "running":
            raise ValueError("the Dask client is closed: pass an open client as evaluator")
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT_S)
        except (TimeoutError, OSError) as e:
            address = getattr(client.scheduler, "address", "the scheduler")
            raise ValueError(f"the Dask scheduler at {address} has 0 workers after "
                             f"{WORKER_WAIT_S:g} s: start one (dask worker ADDRESS)") \
                from e
        self.client, self.search = client, search
        self.token = uuid.uuid4().hex
        self.future = client.submit(_identity, search, key=f"moga-problem-{self.token}",
                                    pure=False)
        self.n_calls = 0

    @property
    def threads(self) -> int:
        """Worker threads of the cluster now (at least 1)."""
        return max(1, sum(self.client.nthreads().values()))

    def __call__(self, X) -> np.ndarray:
        """The objectives (n, m) of the rows of ``X``, decoded on the workers."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        self.n_calls += 1
        # A few chunks per worker thread: Dask hands the next chunk to the first thread
        # free, so rows of unequal cost even out across the workers.
        chunks = np.array_split(np.arange(len(X)), min(len(X), CHUNKS_PER_THREAD * self.threads))
        futures = [self.client.submit(_decode_chunk, self.future, X[rows],
                                      key=f"moga-decode-{self.token}-{self.n_calls}-{i}",
                                      pure=False)
                   for i, rows in enumerate(chunks)]
        try:
            parts = self.client.gather(futures)
        except KeyboardInterrupt:
            self.client.cancel(futures)
            raise
        F = np.vstack([p[0] for p in parts])
        search = self.search
        search.n_decoded += len(X)
        search.decode_seconds += sum(p[1] for p in parts)
        if parts[0][2] is not None and hasattr(search, "_last"):
            from .duplicates import _row_hashes

            search._last = (_row_hashes(X), np.concatenate([p[2] for p in parts]),
                            np.concatenate([p[3] for p in parts]))
        return F

    def close(self) -> None:
        """Let the workers drop the problem."""
        self.client.cancel([self.future])
