"""Machines for the real-time study: node count, partition sizes, memory and I/O (docs/design.md §12)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from decoders._kernels import exact_dot

from ..bounds import BOUNDS
from ..errors import InputError
from ..validation import check_int, check_number

__all__ = ["Machine", "MIRA_PARTITIONS"]

#: Mira's partition sizes (nodes), multiples of one 512-node midplane.
MIRA_PARTITIONS = (512, 1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768, 49152)


@dataclass(frozen=True)
class Machine:
    """A homogeneous machine whose jobs take whole partitions.

    Parameters
    ----------
    nodes : int
        Compute nodes.
    partitions : tuple of int, optional
        Allowed job sizes (nodes), increasing; a job takes the smallest that
        holds it. None: any size (partition size 1).
    memory_gb : float
        Memory per node, GB (checkpoint data is a fraction of it).
    pfs_gbps : float
        Parallel file system bandwidth, GB/s.
    pfs_usable : float
        Share of it usable for checkpoints, in (0, 1].
    io_nodes_per : int
        Compute nodes per I/O node.
    io_gbps : float
        Bandwidth of one I/O node, GB/s.
    min_io_nodes : float
        I/O nodes a job has at least, whatever its size (>= 0). With 1, a job
        of fewer than ``io_nodes_per`` nodes still has one I/O node, as every
        Mira partition (512 nodes and more) has whole ones; 0 gives each job
        its proportional, possibly fractional, share.
    name : str
    power_busy, power_idle : float
        Power of one node computing and idle, W (the default federation's base
        nodes unless taken from a cluster); they price the energy of
        :meth:`RealtimeResult.schedule`.

    Node placement is by count: no torus or midplane topology (a
    simplification: every partition of the right size is assumed free when
    enough nodes are).

    The defaults are Mira's memory and I/O system. For another machine,
    :meth:`scaled` keeps Mira's per-node memory and I/O-node ratio and gives
    the file system a bandwidth in proportion to the node count, so that a
    job checkpoints in the time a Mira job of the same share of the machine
    takes once it is file-system bound; or give the machine's own values.
    """

    nodes: int
    partitions: tuple | None = None
    memory_gb: float = 16.0
    pfs_gbps: float = 240.0
    pfs_usable: float = 0.9
    io_nodes_per: int = 128
    io_gbps: float = 4.0
    min_io_nodes: float = 1.0
    name: str = "machine"
    power_busy: float = 70.0
    power_idle: float = 10.0

    def __post_init__(self):
        BOUNDS["nodes"].check("nodes", self.nodes)
        for f in ("memory_gb", "pfs_gbps", "io_gbps"):
            BOUNDS["machine_rate"].check(f, getattr(self, f))
        BOUNDS["pfs_usable"].check("pfs_usable", self.pfs_usable)
        BOUNDS["io_nodes_per"].check("io_nodes_per", self.io_nodes_per)
        io_nodes = max(1, -(-self.nodes // self.io_nodes_per))
        # The machine's own bound first: it says more than the table's.
        if check_number("min_io_nodes", self.min_io_nodes, 0) > io_nodes:
            raise InputError(f"min_io_nodes must be at most the machine's {io_nodes} I/O "
                             f"node(s) ({self.nodes} nodes, one per {self.io_nodes_per}), got "
                             f"{self.min_io_nodes:g}")
        BOUNDS["min_io_nodes"].check("min_io_nodes", self.min_io_nodes)
        check_number("power_idle", self.power_idle, 0, low_open=True)
        check_number("power_busy", self.power_busy, self.power_idle)
        if self.partitions is not None:
            try:
                p = tuple(check_int("partitions", v, 1) for v in self.partitions)
            except TypeError:
                raise InputError(f"partitions must be a sequence of sizes, got "
                                 f"{self.partitions!r}") from None
            if not p or list(p) != sorted(set(p)) or p[0] < 1:
                raise InputError(f"partitions must be increasing positive sizes, got {p}")
            if p[-1] > self.nodes:
                raise InputError(f"partition {p[-1]} exceeds the machine's {self.nodes} nodes")
            object.__setattr__(self, "partitions", p)

    @classmethod
    def mira(cls) -> Machine:
        """Mira (IBM Blue Gene/Q): 49,152 nodes in 512-node midplanes, 16 GB per node, a
        240 GB/s file system (90% for checkpoints), one 4 GB/s I/O node per 128 nodes."""
        return cls(49152, MIRA_PARTITIONS, name="mira")

    @classmethod
    def scaled(cls, nodes: int, partitions=None, name: str | None = None, **io) -> Machine:
        """A machine of ``nodes`` nodes with Mira's I/O system scaled to it: 16 GB per node,
        one 4 GB/s I/O node per 128 nodes (at least one per job), and a file system of
        ``240 GB/s x nodes / 49,152`` (90% usable); ``io`` overrides any of these."""
        nodes = check_int("nodes", nodes, 1)
        io = {"pfs_gbps": 240.0 * nodes / 49152, **io}
        return cls(nodes, partitions, name=name or f"{nodes} nodes", **io)

    def io_summary(self) -> str:
        """The I/O model in words, for reports."""
        return (f"{self.memory_gb:g} GB per node; one {self.io_gbps:g} GB/s I/O node per "
                f"{self.io_nodes_per} nodes" + (f" (at least {self.min_io_nodes:g} per job)"
                                                 if self.min_io_nodes else "")
                + f"; a {self.pfs_gbps:.4g} GB/s file system, {self.pfs_usable:.0%} usable for "
                "checkpoints")

    @classmethod
    def from_cluster(cls, federation, cluster=None, **io) -> Machine:
        """One cluster of a :class:`moga.Federation` (or all its nodes when ``cluster`` is
        None, at their mean node powers), partition size 1; ``io`` overrides the memory
        and I/O defaults (Mira's)."""
        if cluster is None:
            n, name = federation.total_nodes, federation.name
            busy = exact_dot(federation.nodes, federation.power_busy) / n
            idle = exact_dot(federation.nodes, federation.power_idle) / n
        else:
            k = federation.names.index(cluster) if isinstance(cluster, str) else int(cluster)
            n, name = int(federation.nodes[k]), f"{federation.name}:{federation.names[k]}"
            busy, idle = float(federation.power_busy[k]), float(federation.power_idle[k])
        io = {"power_busy": busy, "power_idle": idle, **io}
        return cls(int(n), None, name=name, **io)

    def federation(self):
        """The machine as a one-cluster :class:`moga.Federation` (speed 1, its node powers)."""
        from ..model.platform import Federation

        return Federation((self.name,), [self.nodes], [1.0], [self.power_busy],
                          [self.power_idle], [1000.0], name=self.name)

    def scale_jobs(self, js, trace_nodes: int):
        """The job-set with every job's size scaled from a machine of ``trace_nodes`` nodes to
        this one: ``ceil(tasks * nodes / trace_nodes)``, at most :attr:`nodes` (a job that
        took a share of its machine takes the same share of this one, before rounding up to
        a partition); unchanged when ``trace_nodes`` is this machine's size."""
        trace_nodes = int(trace_nodes)
        if trace_nodes < 1:
            raise InputError(f"the trace's machine size must be at least 1, got {trace_nodes}")
        if trace_nodes == self.nodes:
            return js
        tasks = np.minimum(np.ceil(np.asarray(js.tasks, float) * self.nodes / trace_nodes),
                           self.nodes).astype(np.int64)
        return dataclasses.replace(js, tasks=tasks,
                                   name=f"{js.name} x{self.nodes / trace_nodes:.3g} nodes")

    def job_nodes(self, tasks) -> np.ndarray:
        """Nodes each job takes: its size rounded up to a partition (or as is)."""
        tasks = np.asarray(tasks, dtype=np.int64)
        if np.any(tasks > self.nodes):
            j = int(np.flatnonzero(tasks > self.nodes)[0])
            raise ValueError(f"job {j} needs {tasks[j]} nodes but the machine {self.name!r} has "
                             f"{self.nodes}; drop or clip wide jobs when extracting the job-set")
        if self.partitions is None:
            return tasks.copy()
        p = np.asarray(self.partitions)
        return p[np.searchsorted(p, tasks, side="left")]

    def io_time(self, nodes, data_per_node_gb) -> np.ndarray:
        """Seconds to write (or read) ``data_per_node_gb`` on each of ``nodes`` nodes:
        ``n d / min(max(n / io_nodes_per, min_io_nodes) * io_gbps, pfs_usable * pfs_gbps)``."""
        n = np.asarray(nodes, dtype=float)
        ions = np.maximum(n / self.io_nodes_per, self.min_io_nodes)
        bw = np.minimum(ions * self.io_gbps, self.pfs_usable * self.pfs_gbps)
        return n * float(data_per_node_gb) / bw
