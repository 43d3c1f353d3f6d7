"""Input validation and conversion shared by the decoder wrappers."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ._kernels import exact_dot


class Arrays(NamedTuple):
    """The validated job and platform arrays of a decode (:func:`prepare`)."""

    release: np.ndarray
    tasks: np.ndarray
    runtime: np.ndarray
    sigma: np.ndarray
    bw: np.ndarray
    nodes: np.ndarray
    speed: np.ndarray
    power_busy: np.ndarray
    power_idle: np.ndarray
    link: np.ndarray


#: The attributes :func:`decoders.federated.decode` reads from a job-set and from a federation.
JOB_FIELDS = ("release", "tasks", "runtime", "sigma", "bw")
CLUSTER_FIELDS = ("nodes", "speed", "power_busy", "power_idle", "link")

#: The bounds of the decoders' inputs, ``name -> (low, high, low_open, integer, inf, unit)``
#: (``moga.bounds`` reads them into its table, which documents them). Beyond these no
#: schedule means anything: a speed of 1e-300, a link of 1e-300 Mbit/s or a run time of
#: 1e300 s turn every time and energy into numbers of hundreds of digits or inf. The
#: cluster bounds are those of a ``moga.Federation``; ``inf`` for the power cap is no cap.
DECODE_BOUNDS = {
    "nodes": (1, 10**7, False, True, False, "nodes"),
    "speed": (1e-3, 1e3, False, False, False, ""),
    "power_busy": (1e-3, 1e7, False, False, False, "W"),
    "power_idle": (1e-3, 1e7, False, False, False, "W"),
    "link": (1e-3, 1e9, False, False, False, "Mbit/s"),
    "release": (0, 1e12, False, False, False, "s"),
    "tasks": (1, 10**7, False, True, False, "nodes"),
    "runtime": (0, 1e12, True, False, False, "s"),
    "sigma": (0, 1, False, False, False, ""),
    "bw": (0, 1e12, False, False, False, "Mbit"),
    "decode_power_cap": (0, None, True, False, True, "W"),
}


def check_bounds(name, arr, key=None):
    """Refuse an entry of the validated array ``arr`` outside ``DECODE_BOUNDS[key or name]``,
    naming ``name`` and the first entry."""
    low, high = DECODE_BOUNDS[key or name][:2]
    bad = (arr < low) | (arr > high)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] must be in [{low:g}, {high:g}], got {arr[i]}")
    return arr


def has_fields(obj, fields) -> bool:
    """True when ``obj`` has every attribute of ``fields``."""
    return all(hasattr(obj, f) for f in fields)


def check_population(orders, blacklists, J, K):
    """A validated population, read-only: ``orders`` (P, J) and ``blacklists`` (P, J, K)."""
    orders = check_orders(orders, J)
    if np.ndim(blacklists) != 3 or np.shape(blacklists)[0] != orders.shape[0]:
        raise ValueError(f"blacklists must have shape ({orders.shape[0]}, {J}, {K}), got "
                         f"{np.shape(blacklists)}")
    return readonly(orders), readonly(check_blacklists(blacklists, J, K))


def choice_code(kind: str, value, choices: dict) -> int:
    """The integer code of ``value`` among ``choices``, or a ValueError naming ``kind``."""
    try:
        return choices[value]
    except (KeyError, TypeError):
        raise ValueError(f"unknown {kind} {value!r}; choose one of {list(choices)}") from None


def check_vector(name, a, n, dtype, *, lo=None, lo_strict=False, hi=None):
    arr = np.asarray(a)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {arr.shape}")
    if dtype is np.int64:
        if arr.dtype.kind == "f":
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
            if bad.any():
                raise ValueError(f"{name}[{int(np.flatnonzero(bad)[0])}] is not an integer")
        elif arr.dtype.kind not in "iub":
            raise ValueError(f"{name} must be integer, got dtype {arr.dtype}")
    elif arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    out = np.ascontiguousarray(arr, dtype=dtype)
    if dtype is np.float64 and not np.all(np.isfinite(out)):
        raise ValueError(f"{name}[{int(np.flatnonzero(~np.isfinite(out))[0])}] is not finite")
    if lo is not None:
        bad = out <= lo if lo_strict else out < lo
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            op = ">" if lo_strict else ">="
            raise ValueError(f"{name}[{i}] must be {op} {lo}, got {out[i]}")
    if hi is not None and np.any(out > hi):
        i = int(np.flatnonzero(out > hi)[0])
        raise ValueError(f"{name}[{i}] must be <= {hi}, got {out[i]}")
    return out


def prepare(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
             check=True):
    """Validate and convert the job and platform arrays.

    With ``check=False`` (arrays from an already validated ``JobSet`` and
    ``Federation``) only the dtype conversion, the width check and a finiteness
    guard run: a NaN or infinite time would make the event loop wait forever
    (NaN never compares as due), so it is refused even then, at O(J) cost.
    """
    if check and _valid_as_given((release, tasks, runtime, sigma, bw, nodes, speed, power_busy,
                                  power_idle, link)):
        return Arrays(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle,
                      link)
    if not check:
        f64, i64 = np.float64, np.int64
        out = Arrays(np.ascontiguousarray(release, f64), np.ascontiguousarray(tasks, i64),
                     np.ascontiguousarray(runtime, f64), np.ascontiguousarray(sigma, f64),
                     np.ascontiguousarray(bw, f64), np.ascontiguousarray(nodes, i64),
                     np.ascontiguousarray(speed, f64), np.ascontiguousarray(power_busy, f64),
                     np.ascontiguousarray(power_idle, f64), np.ascontiguousarray(link, f64))
        check_width(out.tasks, out.nodes)
        for name in ("release", "runtime", "sigma", "bw", "speed", "link"):
            a = getattr(out, name)
            if not np.isfinite(a).all():
                i = int(np.flatnonzero(~np.isfinite(a))[0])
                raise ValueError(f"{name}[{i}] must be finite, got {a[i]}")
        return out
    nodes, speed = check_clusters(nodes, speed)
    K = nodes.shape[0]
    power_idle = check_bounds("power_idle", check_vector("power_idle", power_idle, K,
                                                         np.float64, lo=0, lo_strict=True))
    power_busy = check_bounds("power_busy", check_vector("power_busy", power_busy, K,
                                                         np.float64, lo=0, lo_strict=True))
    if np.any(power_busy < power_idle):
        k = int(np.flatnonzero(power_busy < power_idle)[0])
        raise ValueError(f"cluster {k}: power_busy ({power_busy[k]}) < power_idle ({power_idle[k]})")
    link = check_bounds("link", check_vector("link", link, K, np.float64, lo=0, lo_strict=True))
    rel = np.asarray(release)
    if rel.ndim != 1:
        raise ValueError(f"release must be 1-D, got shape {rel.shape}")
    J = rel.shape[0]
    release = check_bounds("release", check_vector("release", release, J, np.float64, lo=0))
    tasks = check_bounds("tasks", check_vector("tasks", tasks, J, np.int64, lo=1))
    runtime = check_bounds("runtime", check_vector("runtime", runtime, J, np.float64, lo=0,
                                                   lo_strict=True))
    sigma = check_vector("sigma", sigma, J, np.float64, lo=0, hi=DECODE_BOUNDS["sigma"][1])
    bw = check_bounds("bw", check_vector("bw", bw, J, np.float64, lo=0))
    check_width(tasks, nodes)
    return Arrays(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link)


#: The kernel dtype of each field of :class:`Arrays`, in order.
_F64, _I64 = np.dtype(np.float64), np.dtype(np.int64)
_DTYPES = (_F64, _I64, _F64, _F64, _F64, _I64, _F64, _F64, _F64, _F64)
#: ``(low, high, low_open)`` of each field of :class:`Arrays`, in order (:data:`DECODE_BOUNDS`;
#: :func:`prepare` asks ``> 0`` of the cluster fields and of ``runtime``, which these imply).
_BOUNDS = tuple((float(DECODE_BOUNDS[f][0]), float(DECODE_BOUNDS[f][1]), DECODE_BOUNDS[f][2])
                for f in Arrays._fields)


def _valid_as_given(arrs) -> bool:
    """True when :func:`prepare` would return the ten arrays ``arrs`` themselves: each is
    already a C-contiguous 1-D ndarray of its kernel dtype (:data:`_DTYPES`), of one
    length J for the jobs and K >= 1 for the clusters, and every check passes.

    One jitted pass instead of some forty NumPy calls; False sends :func:`prepare`
    through its checks one by one, which name what is wrong (or convert).
    """
    J, K = -1, -1
    writable = 0
    for i, a in enumerate(arrs):
        if type(a) is not np.ndarray or a.dtype is not _DTYPES[i] or a.ndim != 1 \
                or not a.flags.c_contiguous:
            return False
        n = a.shape[0]
        if i < 5:
            if J < 0:
                J = n
            if n != J:
                return False
        else:
            if K < 0:
                K = n
            if n != K:
                return False
        writable += a.flags.writeable
    if K < 1:
        return False
    if 0 < writable < 10:  # one of the two signatures: all read-only, or all writable
        arrs = [readonly(a) for a in arrs]
    return _in_bounds(*arrs)


@njit(cache=True)
def _within(a, bound) -> bool:
    """True when every entry of ``a`` is within ``bound``, ``(low, high, low_open)`` (NaN is not)."""
    lo, hi, lo_open = bound
    for i in range(a.shape[0]):
        v = a[i]
        if not ((v > lo if lo_open else v >= lo) and v <= hi):
            return False
    return True


@njit(cache=True)
def _in_bounds(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link):
    """True when every entry is within :data:`_BOUNDS`, ``power_busy >= power_idle`` and no
    job needs more tasks than the federation has nodes."""
    b = _BOUNDS
    if not (_within(nodes, b[5]) and _within(speed, b[6]) and _within(power_busy, b[7])
            and _within(power_idle, b[8]) and _within(link, b[9])):
        return False
    total = 0
    for k in range(nodes.shape[0]):
        total += nodes[k]
        if not power_busy[k] >= power_idle[k]:
            return False
    for j in range(tasks.shape[0]):
        if tasks[j] > total:
            return False
    return (_within(release, b[0]) and _within(tasks, b[1]) and _within(runtime, b[2])
            and _within(sigma, b[3]) and _within(bw, b[4]))


def check_clusters(nodes, speed):
    """Validated ``(nodes, speed)`` of a platform: non-empty, positive, one value per cluster."""
    nodes_a = np.asarray(nodes)
    K = nodes_a.shape[0] if nodes_a.ndim == 1 else -1
    if K <= 0:
        raise ValueError(f"nodes must be a non-empty 1-D array, got shape {nodes_a.shape}")
    return (check_bounds("nodes", check_vector("nodes", nodes, K, np.int64, lo=0,
                                               lo_strict=True)),
            check_bounds("speed", check_vector("speed", speed, K, np.float64, lo=0,
                                               lo_strict=True)))


def readonly(a):
    """A read-only view of ``a``, so that every caller hits the same compiled kernel signature."""
    v = a.view()
    v.flags.writeable = False
    return v


def check_width(tasks, nodes):
    total = int(nodes.sum())
    if tasks.size and tasks.max() > total:
        i = int(np.flatnonzero(tasks > total)[0])
        raise ValueError(
            f"job {i} needs {tasks[i]} tasks but the federation has only {total} nodes; "
            "drop or clip wide jobs when extracting the job-set"
        )


@njit(cache=True)
def _to_permutations(orders, out):
    """Copy ``orders`` (P, J) into the int64 ``out``; ``(row, problem)`` of the first bad row.

    ``problem`` is 0 when every row is a permutation of ``range(J)`` (row -1),
    1 for a value that is not an integer, 2 for a row that is not a permutation.
    """
    P, J = orders.shape
    seen = np.zeros(J, dtype=np.int64)
    for p in range(P):
        for i in range(J):
            v = orders[p, i]
            if not abs(v) < 2.0**62:  # NaN, inf and huge values are no positions
                return p, 1
            k = np.int64(v)
            if k != v:
                return p, 1
            if k < 0 or k >= J or seen[k] == p + 1:
                return p, 2
            seen[k] = p + 1
            out[p, i] = k
    return -1, 0


def check_orders(orders, J):
    orders = np.asarray(orders)
    if orders.ndim != 2 or orders.shape[1] != J:
        raise ValueError(f"order must have length {J} (one entry per job), got shape {orders.shape[1:]}")
    if orders.dtype.kind not in "iuf":
        raise ValueError(f"order must be integer, got dtype {orders.dtype}")
    # One jitted pass checks and converts (the GA decodes a population per generation).
    source = np.ascontiguousarray(orders, dtype=np.float64 if orders.dtype.kind == "f" else np.int64)
    out = np.empty(orders.shape, dtype=np.int64)
    p, problem = _to_permutations(source, out)
    if problem == 1:
        raise ValueError("order must hold integer job positions")
    if problem == 2:
        raise ValueError(
            f"order{'' if orders.shape[0] == 1 else f' #{p}'} is not a permutation of range({J})"
        )
    return out


def check_blacklists(blacklists, J, K):
    b = np.asarray(blacklists)
    if b.shape[1:] != (J, K):
        raise ValueError(f"blacklist must have shape ({J}, {K}), got {b.shape[1:]}")
    if b.dtype.kind not in "iuf":
        raise ValueError(f"blacklist must be numeric, got dtype {b.dtype}")
    b = np.ascontiguousarray(b, dtype=np.float64)
    first = _first_outside_unit(b.reshape(-1))
    if first >= 0:
        idx = np.unravel_index(first, b.shape)
        which = f" #{idx[0]}" if b.ndim == 3 and b.shape[0] > 1 else ""
        raise ValueError(f"blacklist{which} entry (job {idx[-2]}, cluster {idx[-1]}) = {b[idx]} "
                         "is not in [0, 1]")
    return b


@njit(cache=True)
def _first_outside_unit(values) -> int:
    """Index of the first entry of ``values`` not in [0, 1] (NaN included), -1 if none.

    One pass without temporaries: the GA checks a population's blacklists
    (P x J x K values) at every decode.
    """
    for i in range(values.shape[0]):
        v = values[i]
        if not (v >= 0.0 and v <= 1.0):
            return i
    return -1


# The power inputs of a decode: factors, budgets and the jobs no cap can run.

class CapInfeasibleError(ValueError):
    """Jobs that no schedule can run under the power caps; ``job`` is the first one's
    position, ``count`` how many there are."""

    def __init__(self, job: int, count: int, message: str):
        super().__init__(message)
        self.job = job
        self.count = count


def _budgets(nodes, power_idle, power_cap, cluster_caps):
    """The power the running jobs may add to idle power: per cluster, then overall (K + 1;
    ``inf`` where uncapped)."""
    K = nodes.shape[0]
    budget = np.full(K + 1, np.inf)
    if cluster_caps is not None:
        try:
            caps = np.asarray(cluster_caps, dtype=np.float64)
        except (TypeError, ValueError):
            caps = None
        if caps is None or caps.shape != (K,) or np.isnan(caps).any():
            raise ValueError(f"cluster_caps must hold one number (or inf) per cluster ({K}), "
                             f"got {cluster_caps!r}")
        budget[:K] = caps - nodes * power_idle
    if power_cap is not None:
        # A NaN would pass every comparison below and leave the decode uncapped; inf (like
        # None) is no cap, as it has always been.
        raw = np.asarray(power_cap) if not isinstance(power_cap, bool) else np.asarray("")
        cap = float(raw) if raw.ndim == 0 and raw.dtype.kind in "iuf" else None
        if cap is None or np.isnan(cap):
            got = repr(power_cap) if cap is None else cap
            raise ValueError(f"power_cap must be a finite number of W, got {got} (None or inf "
                             "for no cap)")
        if not cap > DECODE_BOUNDS["decode_power_cap"][0]:
            raise ValueError(f"power_cap must be > 0 W, got {cap} (None or inf for no cap)")
        budget[K] = cap - exact_dot(nodes, power_idle)
    return budget


def power_inputs(tasks, power, nodes, power_busy, power_idle, power_cap=None, cluster_caps=None):
    """Validated power factors (J,) and budgets (K + 1,) of a decode, or ``(None, None)``.

    The budgets are the caps less idle power (per cluster, then overall;
    ``inf`` for none). Under a cap every job must fit an idle federation on
    its least-power allocation (its tasks on the nodes with the smallest
    increment), or it could never start: the error names the first that
    does not.
    """
    J, K = tasks.shape[0], nodes.shape[0]
    if power is None and power_cap is None and cluster_caps is None:
        return None, None
    power = np.ones(J) if power is None else check_vector("power", power, J, np.float64, lo=0,
                                                          lo_strict=True)
    budget = _budgets(nodes, power_idle, power_cap, cluster_caps)
    if (budget <= 0).any():
        where = "the federation" if budget[K] <= 0 else f"cluster {int(np.flatnonzero(budget <= 0)[0])}"
        raise ValueError(f"the power cap of {where} does not exceed its idle power: no job "
                         "could ever run")
    if np.isfinite(budget).any():
        need = _idle_least_power(tasks, power, nodes, power_busy, power_idle, budget)
        bad = ~np.isfinite(need)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise CapInfeasibleError(
                j, int(bad.sum()),
                f"job {j} ({tasks[j]} tasks, power factor {power[j]:g}) cannot run under the power "
                f"cap even on an idle federation (its least-power allocation needs more than the "
                f"budgets left by idle power: {budget.tolist()} W); raise the cap or drop the job")
    return power, budget


def runnable_under_cap(tasks, power, nodes, power_busy, power_idle, power_cap=None,
                       cluster_caps=None) -> np.ndarray:
    """Which jobs can run under the caps at all: on an idle federation, their least-power
    allocation fits the budgets the caps leave above idle power (bool, shape (J,))."""
    tasks = np.asarray(tasks, dtype=np.int64)
    budget = _budgets(np.asarray(nodes), np.asarray(power_idle, dtype=np.float64), power_cap,
                      cluster_caps)
    if not np.isfinite(budget).any():
        return np.ones(tasks.shape[0], dtype=bool)
    power = np.ones(tasks.shape[0]) if power is None else np.asarray(power, dtype=np.float64)
    return np.isfinite(_idle_least_power(tasks, power, np.asarray(nodes),
                                         np.asarray(power_busy, dtype=np.float64),
                                         np.asarray(power_idle, dtype=np.float64), budget))


def _idle_least_power(tasks, power, nodes, power_busy, power_idle, budget):
    """Each job's least-power increment on an idle federation (inf where it does not fit)."""
    inc = np.maximum(power[:, None] * power_busy[None, :] - power_idle[None, :], 0.0)
    J, K = inc.shape
    order = np.lexsort((np.broadcast_to(np.arange(K), (J, K)), inc), axis=1)
    rem = tasks.astype(np.int64).copy()
    total = np.zeros(J)
    rows = np.arange(J)
    for i in range(K):
        k = order[:, i]
        ik = inc[rows, k]
        n = np.minimum(nodes[k], rem)
        lim = np.where((ik > 0) & np.isfinite(budget[k]),
                       np.floor(np.divide(budget[k], ik, out=np.full(J, np.inf), where=ik > 0)),
                       np.inf)
        n = np.minimum(n, np.maximum(lim, 0)).astype(np.int64)
        rem -= n
        total += n * ik
    return np.where((rem == 0) & (total <= budget[K]), total, np.inf)
