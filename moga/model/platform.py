"""Federations of heterogeneous clusters: construction, validation, TOML and presets.

A :class:`Federation` is an immutable set of per-cluster arrays (docs/design.md
section 4). Cluster ``k`` has ``nodes[k]`` identical nodes (one task per node at
a time) of relative ``speed[k]`` (1.0 is the trace machine), drawing
``power_busy[k]`` W while computing and ``power_idle[k]`` W otherwise, and a
link of ``link[k]`` Mbit/s to the federation's central switch (a star).

Sizing a federation for a trace
-------------------------------
A trace "processor" is one node here. The federation must hold the widest job
of the job-sets it runs (see the ``wide`` policy of
:meth:`moga.workload.Trace.jobset`), so its total node count should be at least
the trace's ``MaxProcs``:

* HPC2N (MaxProcs 240, widest job 200): the ``"default"`` preset, 256 nodes.
* RICC (8,192 cores, no header in the shipped file): the ``"ricc"`` preset,
  8,192 nodes in the same 1:2:2:3 ratio.
* CEA-Curie (MaxProcs 93,312, widest job 79,808): the ``"curie"`` preset,
  93,312 nodes in the same ratio.

Scale the links with the nodes: a co-allocated job's traffic on a link grows
with the tasks it puts there, so the larger presets keep the default's
bandwidth per node (32,000 Mbit/s links for ``"ricc"``, 364,500 for
``"curie"``); with 1000 Mbit/s links, jobs of thousands of tasks would
saturate them a thousandfold and run for years.

Keep idle power small against the dynamic part of busy power: every node draws
idle power for the whole makespan, so with a large static share energy simply
follows makespan and the makespan-energy front collapses to one point.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from decoders._kernels import cluster_ranks, exact_dot

from ..bounds import BOUNDS
from .tomlfile import read_toml, tomllib

__all__ = ["Federation", "PRESETS"]

#: Names of the presets shipped in ``moga/data/``.
PRESETS = ("default", "ricc", "curie", "machine")

_FIELDS = ("nodes", "speed", "power_busy", "power_idle", "link")
#: Plausible ranges of the cluster fields: a speed of 1e-300, a node of 1e300 W or a link of
#: 1e-300 Mbit/s passes the positivity checks and turns every time or energy into a number
#: without meaning. Links go up to 1e9 Mbit/s, above what a preset resized to 1e7 nodes per
#: cluster reaches (about 3e8).
_PLAUSIBLE = {f: (BOUNDS[f].low, BOUNDS[f].high) for f in _FIELDS}


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Federation:
    """A federation of heterogeneous clusters joined by a star network.

    Parameters
    ----------
    names : sequence of str
        Cluster names, unique.
    nodes : array_like of int
        Nodes per cluster, each > 0.
    speed : array_like of float
        Relative node speed per cluster, each > 0 (1.0 = the trace machine).
    power_busy, power_idle : array_like of float
        Power of one node computing and idle, in W; ``power_busy >= power_idle > 0``.
    link : array_like of float
        Bandwidth of each cluster's link to the central switch, Mbit/s, in
        [1e-3, 1e9].
    name : str
        A name for the federation.
    power_cap : float, optional
        Power budget of the whole federation in W (docs/design.md §11): idle
        power of every node plus the busy increment of the running jobs never
        exceeds it. It must exceed the idle power of the federation.
    cluster_caps : array_like of float, optional
        Power budget of each cluster in W (``inf`` or NaN for none), each
        above that cluster's idle power.

    Raises
    ------
    ValueError
        If any value is out of range, the arrays differ in length or a name repeats;
        the message names the cluster and the field.
    """

    names: tuple[str, ...]
    nodes: np.ndarray
    speed: np.ndarray
    power_busy: np.ndarray
    power_idle: np.ndarray
    link: np.ndarray
    name: str = "federation"
    power_cap: float | None = None
    cluster_caps: np.ndarray | None = None
    _rank: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        names = tuple(str(n) for n in self.names)
        k = len(names)
        if k == 0:
            raise ValueError("a federation needs at least one cluster")
        if len(set(names)) != k:
            raise ValueError(f"cluster names must be unique, got {list(names)}")
        object.__setattr__(self, "names", names)
        for f in _FIELDS:
            raw = np.asarray(getattr(self, f))
            if raw.shape != (k,):
                raise ValueError(f"{f} must have one value per cluster ({k}), got shape {raw.shape}")
            if f == "nodes":
                if not np.all(np.isfinite(raw)) or np.any(raw != np.round(raw)):
                    bad = int(np.flatnonzero(~np.isfinite(raw) | (raw != np.round(raw)))[0])
                    raise ValueError(f"cluster {names[bad]!r}: nodes must be an integer, got {raw[bad]}")
                arr = raw.astype(np.int64)
            else:
                arr = raw.astype(np.float64)
            if not np.all(np.isfinite(arr)):
                bad = int(np.flatnonzero(~np.isfinite(arr))[0])
                raise ValueError(f"cluster {names[bad]!r}: {f} must be finite, got {arr[bad]}")
            object.__setattr__(self, f, _readonly(arr))
        for f in ("nodes", "speed", "link", "power_idle"):
            arr = getattr(self, f)
            if np.any(arr <= 0):
                bad = int(np.flatnonzero(arr <= 0)[0])
                raise ValueError(f"cluster {names[bad]!r}: {f} must be > 0, got {arr[bad]}")
        for f, (lo, hi) in _PLAUSIBLE.items():  # beyond these no study means anything
            arr = getattr(self, f)
            out = (arr < lo) | (arr > hi)
            if np.any(out):
                bad = int(np.flatnonzero(out)[0])
                raise ValueError(f"cluster {names[bad]!r}: {f} must be in [{lo:g}, {hi:g}], got "
                                 f"{arr[bad]:g}")
        if any(not n.strip() for n in names):
            raise ValueError(f"cluster names must not be empty, got {list(names)}")
        if np.any(self.power_busy < self.power_idle):
            bad = int(np.flatnonzero(self.power_busy < self.power_idle)[0])
            raise ValueError(
                f"cluster {names[bad]!r}: power_busy ({self.power_busy[bad]}) must be >= "
                f"power_idle ({self.power_idle[bad]})"
            )
        object.__setattr__(self, "_rank", _readonly(cluster_ranks(self.speed, self.power_busy)[0]))
        self._check_caps(names)

    def _check_caps(self, names):
        if self.power_cap is not None:
            cap = self.power_cap
            if isinstance(cap, bool) or not isinstance(cap, (int, float, np.integer, np.floating)):
                raise ValueError(f"power_cap must be a number of W, got {cap!r}")
            cap = float(cap)
            if not np.isfinite(cap):
                raise ValueError(f"power_cap must be a finite number of W, got {cap}; for no "
                                 "cap leave it out (Federation.without_cap())")
            if not cap > self.idle_power:
                raise ValueError(
                    f"power_cap ({cap:g} W) must exceed the federation's idle power "
                    f"({self.idle_power:g} W: every node idle), or no job could ever run")
            object.__setattr__(self, "power_cap", cap)
        if self.cluster_caps is not None:
            caps = np.asarray(self.cluster_caps, dtype=np.float64)
            if caps.shape != (len(names),):
                raise ValueError(f"cluster_caps must have one value per cluster ({len(names)}), "
                                 f"got shape {caps.shape}")
            caps = np.where(np.isnan(caps), np.inf, caps)
            idle = self.nodes * self.power_idle
            if np.any(caps <= idle):
                k = int(np.flatnonzero(caps <= idle)[0])
                raise ValueError(f"cluster {names[k]!r}: power_cap ({caps[k]:g} W) must exceed "
                                 f"its idle power ({idle[k]:g} W)")
            object.__setattr__(self, "cluster_caps", None if np.isinf(caps).all() else _readonly(caps))
        if (self.power_cap is not None and self.cluster_caps is not None
                and np.isfinite(self.cluster_caps).all()
                and self.cluster_caps.sum() <= self.power_cap):
            import warnings

            warnings.warn(f"federation {self.name!r}: the cluster caps sum to "
                          f"{self.cluster_caps.sum():g} W, at most the federation cap "
                          f"({self.power_cap:g} W), which can therefore never bind",
                          UserWarning, stacklevel=3)

    # ------------------------------------------------------------------ power
    @property
    def idle_power(self) -> float:
        """Power of the federation with every node idle, W."""
        return exact_dot(self.nodes, self.power_idle)

    @property
    def peak_power(self) -> float:
        """Power with every node busy at ``power_busy`` (a power factor of 1), W."""
        return exact_dot(self.nodes, self.power_busy)

    @property
    def capped(self) -> bool:
        """True when the federation or one of its clusters has a power budget."""
        return self.power_cap is not None or self.cluster_caps is not None

    def with_cap(self, power_cap: float | None = None, cluster_caps=None,
                 fraction: float | None = None) -> Federation:
        """The same federation under a power budget, composed with the caps it has.

        A cap that is given replaces the cap of its kind; the other kind is
        kept: ``with_cap(fraction=0.6)`` on a federation with per-cluster caps
        keeps them and adds a federation cap, ``with_cap(cluster_caps=...)``
        keeps the federation cap. :meth:`without_cap` removes both.

        Parameters
        ----------
        power_cap : float, optional
            Budget of the whole federation, W (finite).
        cluster_caps : array_like of float, optional
            Budget of each cluster, W (``inf`` for none).
        fraction : float, optional
            Instead of ``power_cap``: the budget as a fraction of
            :attr:`peak_power` (``0.6`` is 60% of peak), finite and > 0.

        Warns
        -----
        UserWarning
            When every cluster has a cap and their sum does not exceed the
            federation cap, which then can never bind.
        """
        if fraction is not None:
            if power_cap is not None:
                raise ValueError("give power_cap or fraction, not both")
            from ..validation import check_number

            power_cap = check_number("fraction", fraction, 0, low_open=True) * self.peak_power
        power_cap = self.power_cap if power_cap is None else power_cap
        cluster_caps = self.cluster_caps if cluster_caps is None else cluster_caps
        return Federation(names=self.names, nodes=self.nodes, speed=self.speed,
                          power_busy=self.power_busy, power_idle=self.power_idle, link=self.link,
                          name=self.name, power_cap=power_cap, cluster_caps=cluster_caps)

    def without_cap(self) -> Federation:
        """The same federation with no power budget at all."""
        return Federation(names=self.names, nodes=self.nodes, speed=self.speed,
                          power_busy=self.power_busy, power_idle=self.power_idle, link=self.link,
                          name=self.name)

    def power_budgets(self) -> np.ndarray:
        """Budgets of the running jobs' busy increment, shape (K + 1,): per cluster, then overall.

        Cluster ``k``'s entry is its cap less its idle power; the last is the
        federation's cap less the federation's idle power; ``inf`` where there
        is no cap. The decoders take these.
        """
        out = np.full(self.n_clusters + 1, np.inf)
        if self.cluster_caps is not None:
            out[:-1] = self.cluster_caps - self.nodes * self.power_idle
        if self.power_cap is not None:
            out[-1] = self.power_cap - self.idle_power
        return out

    # ------------------------------------------------------------------ views
    @property
    def n_clusters(self) -> int:
        """Number of clusters ``K``."""
        return len(self.names)

    @property
    def total_nodes(self) -> int:
        """Total node count of the federation."""
        return int(self.nodes.sum())

    @property
    def rank_fastest(self) -> np.ndarray:
        """Cluster indices, fastest first (ties: lower power_busy/speed, then lower index)."""
        return self._rank

    def __len__(self) -> int:
        return self.n_clusters

    def __repr__(self) -> str:
        parts = ", ".join(
            f"{n}: {int(c)}x{s:g}" for n, c, s in zip(self.names, self.nodes, self.speed, strict=True)
        )
        return f"Federation({self.name!r}, {parts})"

    def to_dict(self) -> dict:
        """The federation as a dict of the TOML form (``name`` and a ``cluster`` list)."""
        clusters = []
        for k, n in enumerate(self.names):
            c = {"name": n, "nodes": int(self.nodes[k])}
            for f in _FIELDS[1:]:
                c[f] = float(getattr(self, f)[k])
            if self.cluster_caps is not None and np.isfinite(self.cluster_caps[k]):
                c["power_cap"] = float(self.cluster_caps[k])
            clusters.append(c)
        doc = {"name": self.name, "cluster": clusters}
        if self.power_cap is not None:
            doc["power_cap"] = self.power_cap
        return doc

    def to_toml(self) -> str:
        """The federation in the TOML form that :meth:`from_toml` reads."""
        lines = [f"name = {_toml_str(self.name)}"]
        if self.power_cap is not None:
            lines.append(f"power_cap = {self.power_cap!r}")
        lines.append("")
        for c in self.to_dict()["cluster"]:
            lines.append("[[cluster]]")
            lines.append(f"name = {_toml_str(c['name'])}")
            lines.append(f"nodes = {c['nodes']}")
            for f in _FIELDS[1:] + ("power_cap",):
                if f in c:
                    lines.append(f"{f} = {c[f]!r}")
            lines.append("")
        return "\n".join(lines)

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_clusters(cls, clusters, name: str = "federation", source: str = "clusters",
                      power_cap: float | None = None):
        """Build from a list of dicts with keys ``name`` and the fields of section 4.

        A cluster may also carry ``power_cap`` (W); ``power_cap`` is the
        federation's budget.

        Raises
        ------
        ValueError
            If a cluster misses a key or has an unknown one (the message names
            the cluster's position and ``source``).
        """
        if not isinstance(clusters, (list, tuple)) or not clusters:
            raise ValueError(f"{source}: expected a non-empty list of [[cluster]] tables")
        required = ("name",) + _FIELDS
        cols: dict[str, list] = {f: [] for f in required}
        caps = []
        for i, c in enumerate(clusters):
            if not isinstance(c, dict):
                raise ValueError(f"{source}: cluster #{i + 1} is not a table")
            missing = [f for f in required if f not in c]
            if missing:
                raise ValueError(f"{source}: cluster #{i + 1} misses key(s) {missing}")
            unknown = sorted(set(c) - set(required) - {"power_cap"})
            if unknown:
                raise ValueError(f"{source}: cluster #{i + 1} has unknown key(s) {unknown}")
            cap = c.get("power_cap", np.inf)
            if isinstance(cap, bool) or not isinstance(cap, (int, float)) or cap != cap:
                # NaN (TOML's nan) would read as no cap; a missing key is the way to say that
                raise ValueError(f"{source}: cluster #{i + 1} key 'power_cap' must be a number "
                                 f"of W (leave it out for no cap), got {cap!r}")
            caps.append(float(cap))
            for f in required:
                v = c[f]
                if f != "name" and (isinstance(v, bool) or not isinstance(v, (int, float))):
                    raise ValueError(f"{source}: cluster #{i + 1} key {f!r} must be a number, got {v!r}")
                cols[f].append(v)
        try:
            return cls(names=tuple(cols["name"]), name=name, power_cap=power_cap,
                       cluster_caps=None if np.isinf(caps).all() else np.asarray(caps),
                       **{f: np.asarray(cols[f]) for f in _FIELDS})
        except ValueError as e:
            raise ValueError(f"{source}: {e}") from None

    @classmethod
    def from_toml(cls, path) -> Federation:
        """Read a federation from a TOML file (docs/design.md §4 form).

        Parameters
        ----------
        path : str or Path
            The TOML file: an optional top-level ``name`` and one ``[[cluster]]``
            table per cluster with ``name``, ``nodes``, ``speed``, ``power_busy``,
            ``power_idle`` and ``link``.
        """
        path = Path(path)
        doc = read_toml(path, "federation")
        return cls._from_doc(doc, str(path), default_name=path.stem)

    @classmethod
    def from_dict(cls, doc: dict, source: str = "federation") -> Federation:
        """A federation from a dict of the TOML form (``name`` and a ``cluster`` list)."""
        return cls._from_doc(doc, source, default_name="federation")

    @classmethod
    def _from_doc(cls, doc: dict, source: str, default_name: str) -> Federation:
        if not isinstance(doc, dict):
            raise ValueError(f"{source}: a federation is a table with [[cluster]] tables, "
                             f"got {doc!r}")
        unknown = sorted(set(doc) - {"name", "cluster", "power_cap"})
        if unknown:
            raise ValueError(f"{source}: unknown top-level key(s) {unknown}")
        if "cluster" not in doc:
            raise ValueError(f"{source}: no [[cluster]] tables")
        cap = doc.get("power_cap")
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, (int, float))):
            raise ValueError(f"{source}: power_cap must be a number of W, got {cap!r}")
        return cls.from_clusters(doc["cluster"], name=str(doc.get("name", default_name)),
                                 source=source, power_cap=cap)

    @classmethod
    def preset(cls, name: str = "default") -> Federation:
        """A preset shipped with moga: one of :data:`PRESETS`."""
        if name not in PRESETS:
            raise ValueError(f"unknown federation preset {name!r}; choose one of {list(PRESETS)}")
        text = resources.files("moga.data").joinpath(f"{name}.toml").read_text()
        return cls._from_doc(tomllib.loads(text), f"preset {name!r}", default_name=name)

    def scaled(self, total_nodes: int, name: str | None = None) -> Federation:
        """The same clusters resized to ``total_nodes`` nodes in all.

        Each cluster keeps its share of the nodes (largest remainders round,
        every cluster keeps at least one node), its speed and powers; power
        caps keep their fraction of peak power; links scale with the node
        count, so that every node keeps its share of link bandwidth (as the
        ``ricc`` and ``curie`` presets do against ``default``).

        Parameters
        ----------
        total_nodes : int
            At least the number of clusters.
        name : str, optional
            Default ``"<name>@<total_nodes>"``.
        """
        if isinstance(total_nodes, bool) or not isinstance(total_nodes, (int, np.integer)):
            raise ValueError(f"total_nodes must be an integer, got {total_nodes!r}")
        K = self.n_clusters
        if total_nodes < K:
            raise ValueError(f"total_nodes must be at least the {K} clusters, got {total_nodes}")
        share = self.nodes / self.nodes.sum() * total_nodes
        nodes = np.floor(share).astype(np.int64)
        left = int(total_nodes - nodes.sum())
        # Largest remainders first, ties to the lower index.
        for k in np.lexsort((np.arange(K), -(share - nodes)))[:left]:
            nodes[k] += 1
        while np.any(nodes < 1):  # a tiny cluster keeps one node, taken from the largest
            nodes[int(np.argmax(nodes))] -= 1
            nodes[int(np.flatnonzero(nodes < 1)[0])] += 1
        factor = total_nodes / self.total_nodes
        # Power budgets keep their share of peak power (per cluster: of that cluster's).
        cap = None if self.power_cap is None else self.power_cap / self.peak_power * exact_dot(
            nodes, self.power_busy)
        ccaps = None if self.cluster_caps is None else \
            self.cluster_caps / self.nodes * nodes
        return Federation(names=self.names, nodes=nodes, speed=self.speed,
                          power_busy=self.power_busy, power_idle=self.power_idle,
                          link=self.link * factor, name=name or f"{self.name}@{total_nodes}",
                          power_cap=cap, cluster_caps=ccaps)

    @classmethod
    def load(cls, spec, auto_nodes: int | None = None) -> Federation:
        """A preset name or a TOML file, optionally resized: what the CLI accepts.

        ``"NAME@N"`` is ``load("NAME").scaled(N)``; ``"NAME@auto"`` sizes it to
        ``auto_nodes`` (the CLI passes the trace's machine size, ``MaxProcs``).
        """
        if isinstance(spec, Federation):
            return spec
        if not isinstance(spec, (str, Path)):
            raise ValueError(f"a federation is a preset name or a TOML path, got {spec!r}")
        spec = str(spec)
        base, sep, size = spec.rpartition("@")
        if sep and base and not Path(spec).exists():
            fed = cls.load(base)
            if size == "auto":
                if auto_nodes is None:
                    raise ValueError(f"federation {spec!r}: '@auto' sizes the federation to a "
                                     "trace's machine size, and no trace was given")
                return fed.scaled(int(auto_nodes), name=f"{fed.name}@{int(auto_nodes)}")
            try:
                n = int(size)
            except ValueError:
                raise ValueError(f"federation {spec!r}: after '@' give a node count or 'auto', "
                                 f"got {size!r}") from None
            return fed.scaled(n)
        if spec in PRESETS:
            return cls.preset(spec)
        p = Path(spec)
        if not p.exists():
            raise ValueError(f"federation {spec!r} is neither a preset {list(PRESETS)} nor a file "
                             "(NAME@N or NAME@auto resize one)")
        return cls.from_toml(p)


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
