"""Slow, plain-Python reference implementations, written from docs/design.md.

They favour the obvious over the fast: link loads are recomputed from scratch
whenever they are needed, every running job is re-rated at every event of the
fluid model, and every shift is priced by a full slowdown evaluation. The
Numba kernels must agree with them on random inputs.
"""

from __future__ import annotations

import math
from fractions import Fraction

RTOL = 1e-9  # finish times within this relative distance finish together (docs/design.md §5)
SHIFT_RTOL = 1e-12  # a shift is kept while the slowdown grows by at most this relative amount


def _lists(floats=(), ints=()):
    """Plain Python lists of floats and of ints (the twins avoid numpy semantics)."""
    return [[float(v) for v in a] for a in floats], [[int(v) for v in a] for a in ints]


def _slowdown(sigma, x, load, speed, link):
    """SD = (1 - sigma) SP + sigma SC of a job with allocation ``x`` at link loads ``load``."""
    used = [k for k in range(len(x)) if x[k] > 0]
    sp = 1.0 / min(speed[k] for k in used)
    sc = max([1.0] + [load[k] / link[k] for k in used]) if len(used) >= 2 else 1.0
    return (1.0 - sigma) * sp + sigma * sc


def _traffic(bw, tasks, x):
    return bw * (x * (tasks - x)) / (tasks - 1.0) if tasks > 1 else 0.0


def _cluster_key_fast(k, speed, pbusy):
    return (-speed[k], pbusy[k] / speed[k], k)


def _cluster_key_slow(k, speed, pbusy):
    return (speed[k], pbusy[k] / speed[k], k)


def _predicted(j, x, base, sd_of, coallocated, bw, tasks):
    """SD of job j with allocation x at the loads ``base`` of the others plus its own traffic."""
    own = coallocated(x)
    load = [base[k] + (_traffic(bw[j], tasks[j], x[k]) if own and x[k] > 0 else 0.0)
            for k in range(len(x))]
    return sd_of(j, x, load)


def _consolidating(tie_order):
    """The consolidating pick order as a function of ``(need, cap)``: the cluster of least
    room that holds ``need`` alone, then the others; else every cluster by increasing room;
    ties in ``tie_order``."""
    def order(need, cap):
        fits = [k for k in tie_order if cap[k] >= need]
        if fits:
            best = min(fits, key=lambda k: cap[k])
            return [best] + [k for k in tie_order if k != best]
        return sorted(tie_order, key=lambda k: cap[k])
    return order


def _pick_order(rule, fast_first, speed, pbusy):
    """The greedy pick order of allocation rule ``rule`` (a list, or a function of
    ``(need, cap)`` for ``"consolidate"``)."""
    if rule == "fastest":
        return fast_first
    if rule == "greenest":
        return sorted(range(len(speed)), key=lambda k: (pbusy[k] / speed[k], -speed[k], k))
    assert rule == "consolidate"
    return _consolidating(fast_first)


def _pick_and_shift(need, cap, speed, pick_first, fast_first, slow_first, predict):
    """Greedy pick in ``pick_first`` order (or the order ``pick_first(need, cap)``) within
    ``cap``, then one-task shifts from the
    fastest used cluster faster than the slowest used speed to the slowest slower one with
    room, kept while ``predict(x)`` (the slowdown) does not grow. Returns ``(x, slowdown)``."""
    K = len(cap)
    x = [0] * K
    for k in (pick_first(need, cap) if callable(pick_first) else pick_first):
        x[k] = min(cap[k], need)
        need -= x[k]
    current = predict(x)
    while True:
        s = min(speed[k] for k in range(K) if x[k] > 0)
        sources = [k for k in fast_first if x[k] > 0 and speed[k] > s]
        if not sources:
            return x, current
        src = sources[0]
        dests = [k for k in slow_first if s <= speed[k] < speed[src] and x[k] < cap[k]]
        if not dests:
            return x, current
        trial = list(x)
        trial[src] -= 1
        trial[dests[0]] += 1
        sd_new = predict(trial)
        if sd_new > current * (1 + SHIFT_RTOL):
            return x, current
        x, current = trial, sd_new


class _Power:
    """The power model of docs/design.md §11 for the twins: budgets are the caps less idle
    power, per cluster and overall; increments are recomputed from the running jobs."""

    def __init__(self, power, nodes, pbusy, pidle, cap, cluster_caps, J):
        K = len(nodes)
        self.power = [1.0] * J if power is None else [float(v) for v in power]
        self.pbusy, self.pidle, self.K = pbusy, pidle, K
        inf = math.inf
        self.budget = [inf if cluster_caps is None else float(cluster_caps[k]) - nodes[k] * pidle[k]
                       for k in range(K)]
        self.total = inf if cap is None else float(cap) - sum(nodes[k] * pidle[k] for k in range(K))
        self.capped = cap is not None or cluster_caps is not None

    def inc(self, j, k):
        return max(self.power[j] * self.pbusy[k] - self.pidle[k], 0.0)

    def used(self, running, alloc):
        per = [sum(alloc[r][k] * self.inc(r, k) for r in running) for k in range(self.K)]
        return per, sum(per)

    def fits(self, j, x, used):
        per, tot = used
        add = [x[k] * self.inc(j, k) for k in range(self.K)]
        return (all(per[k] + add[k] <= self.budget[k] for k in range(self.K) if x[k] > 0)
                and tot + sum(add[k] for k in range(self.K) if x[k] > 0) <= self.total)

    def least(self, j, need, avail, used):
        """Least-power allocation: cheapest clusters first, each within its budget; None if
        the tasks or the overall budget do not fit."""
        per, tot = used
        x = [0] * self.K
        for k in sorted(range(self.K), key=lambda k: (self.inc(j, k), k)):
            n = min(avail[k], need)
            while n > 0 and self.inc(j, k) > 0 and per[k] + n * self.inc(j, k) > self.budget[k]:
                n -= 1
            x[k] = n
            need -= n
        add = sum(x[k] * self.inc(j, k) for k in range(self.K))
        return x if need == 0 and tot + add <= self.total else None


def naive_decode(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link,
                 order, blacklist, model="fluid", rule="fastest", power=None, cap=None,
                 cluster_caps=None):
    """Reference federated decoder (docs/design.md §5), jobs strictly in order.

    ``rule`` is the greedy pick order: ``"fastest"`` clusters first (ties: lower
    power_busy/speed, lower index) or ``"greenest"`` (lower power_busy/speed
    first; ties: faster, lower index).

    Under a power cap (docs/design.md §11) a job starts when its allocation
    (the rule's, else the least-power one) fits the budgets; on an idle
    federation a blacklist that keeps it out of them is void.

    Returns a dict with ``start``, ``finish``, ``alloc`` (lists) and
    ``makespan``, ``energy``, ``flowtime``, ``n_relaxed``, ``n_coalloc``.
    """
    assert model in ("fluid", "at_start")
    J, K = len(release), len(nodes)
    (release, runtime, sigma, bw, speed, pbusy, pidle, link), (tasks, nodes) = _lists(
        (release, runtime, sigma, bw, speed, pbusy, pidle, link), (tasks, nodes))
    fast_first = sorted(range(K), key=lambda k: _cluster_key_fast(k, speed, pbusy))
    pick_first = _pick_order(rule, fast_first, speed, pbusy)
    slow_first = sorted(range(K), key=lambda k: _cluster_key_slow(k, speed, pbusy))

    start = [0.0] * J
    finish = [0.0] * J
    alloc = [[0] * K for _ in range(J)]
    running = {}  # job -> {"fin": projected finish, "sd": current slowdown}
    free = list(nodes)
    n_relaxed = 0
    n_coalloc = 0

    def coallocated(x):
        return sum(1 for v in x if v > 0) >= 2

    def loads(extra_job=None, extra_x=None):
        load = [0.0] * K
        jobs = [(r, alloc[r]) for r in running]
        if extra_job is not None:
            jobs.append((extra_job, extra_x))
        for r, x in jobs:
            if coallocated(x):
                for k in range(K):
                    if x[k] > 0:
                        load[k] += _traffic(bw[r], tasks[r], x[k])
        return load

    def sd_of(j, x, load):
        return _slowdown(sigma[j], x, load, speed, link)

    pw = _Power(power, nodes, pbusy, pidle, cap, cluster_caps, J)

    def place(j, allow):
        avail = [min(free[k], allow[k]) for k in range(K)]
        base = loads()
        x, _ = _pick_and_shift(tasks[j], avail, speed, pick_first, fast_first, slow_first,
                               lambda y: _predicted(j, y, base, sd_of, coallocated, bw, tasks))
        if not pw.capped:
            return x
        used = pw.used(running, alloc)
        return x if pw.fits(j, x, used) else pw.least(j, tasks[j], avail, used)

    def rerate(t):
        load = loads()
        for r, st in running.items():
            new = sd_of(r, alloc[r], load)
            if new != st["sd"]:
                work_left = (st["fin"] - t) / st["sd"]
                st["fin"] = t + work_left * new
                st["sd"] = new

    def release_until(t, horizon):
        while running:
            f = min(st["fin"] for st in running.values())
            if f > horizon:
                break
            group = [r for r, st in running.items() if st["fin"] <= f + RTOL * abs(f)]
            for r in group:
                finish[r] = f
                for k in range(K):
                    free[k] += alloc[r][k]
                del running[r]
            t = max(t, f)
            if model == "fluid":
                rerate(t)
        return t

    t = 0.0
    for j in order:
        j = int(j)
        # Jobs finishing before j's release end (and re-rate the others) at their own finish.
        target = max(t, release[j])
        t = max(release_until(t, target + RTOL * abs(target)), target)
        allow = [nodes[k] - math.floor(blacklist[j][k] * nodes[k]) for k in range(K)]
        relaxed = sum(allow) < tasks[j]
        if relaxed:
            allow = list(nodes)
        while True:
            t = release_until(t, t + RTOL * abs(t))
            if sum(min(free[k], allow[k]) for k in range(K)) >= tasks[j]:
                break
            t = max(t, min(st["fin"] for st in running.values()))
        while True:
            x = place(j, allow)
            if x is not None:
                break
            if not running and not relaxed:
                allow, relaxed = list(nodes), True
                continue
            t = max(t, min(st["fin"] for st in running.values()))
            t = release_until(t, t + RTOL * abs(t))
            while sum(min(free[k], allow[k]) for k in range(K)) < tasks[j]:
                t = max(t, min(st["fin"] for st in running.values()))
                t = release_until(t, t + RTOL * abs(t))
        n_relaxed += relaxed
        alloc[j] = x
        for k in range(K):
            free[k] -= x[k]
        if coallocated(x):
            n_coalloc += 1
        start[j] = t
        running[j] = {"fin": None, "sd": None}
        sd = sd_of(j, x, loads())
        running[j].update(fin=t + runtime[j] * sd, sd=sd)
        if model == "fluid" and coallocated(x):
            rerate(t)
    release_until(t, math.inf)

    makespan = max(finish) - min(release) if J else 0.0
    energy = makespan * sum(nodes[k] * pidle[k] for k in range(K))
    for j in range(J):
        for k in range(K):
            energy += alloc[j][k] * pw.inc(j, k) * (finish[j] - start[j])
    flowtime = sum(finish[j] - release[j] for j in range(J))
    return {"start": start, "finish": finish, "alloc": alloc, "makespan": makespan,
            "energy": energy, "flowtime": flowtime, "n_relaxed": n_relaxed,
            "n_coalloc": n_coalloc}


def naive_order_crossover(p1, p2, a, b):
    """Order crossover (OX1) of two permutations, one child.

    The child keeps ``p1[a:b]`` in place; the other positions, taken from
    ``b`` on and wrapping around, receive the genes of ``p2`` not in that
    segment, in the order they appear in ``p2`` from position ``b`` on.
    """
    J = len(p1)
    child = [None] * J
    child[a:b] = p1[a:b]
    segment = set(p1[a:b])
    genes = [p2[(b + s) % J] for s in range(J) if p2[(b + s) % J] not in segment]
    positions = [(b + s) % J for s in range(J) if not a <= (b + s) % J < b]
    for pos, g in zip(positions, genes, strict=True):
        child[pos] = g
    return child


def naive_fifo(release, tasks, runtime, nodes):
    """First come, first served on one homogeneous cluster (speed 1, no communication).

    Jobs start in index order; each at the earliest instant, no earlier than
    its release and the previous job's start, at which enough nodes are free.
    Returns the start times.
    """
    starts, finishes = [], []
    t = 0.0
    for j in range(len(release)):
        t = max(t, float(release[j]))
        candidates = sorted({t} | {f for f in finishes if f > t})
        for c in candidates:
            busy = sum(tasks[i] for i in range(j) if starts[i] <= c < finishes[i])
            if nodes - busy >= tasks[j]:
                t = c
                break
        starts.append(t)
        finishes.append(t + float(runtime[j]))
    return starts


def naive_easy(release, tasks, runtime, nodes):
    """Textbook EASY backfilling on one homogeneous cluster (speed 1, no communication).

    The queue is in index (arrival) order. At every arrival and finish: start
    queued jobs from the front while they fit; then the blocked front job gets
    a reservation at the shadow time (when enough running jobs have finished
    for it), and the nodes free then beyond its need are the extra nodes; a
    later queued job that fits now starts if it ends by the shadow time or
    uses no more than the extra nodes left. Returns ``(starts, reservations)``
    (a reservation is the first shadow time of a job blocked at the front).
    """
    J = len(release)
    start = [None] * J
    reservation = [None] * J
    finish = {}
    queue = []
    arrivals = sorted(range(J), key=lambda j: (release[j], j))
    t = float(release[arrivals[0]]) if J else 0.0
    while any(s is None for s in start):
        for j in arrivals:
            if release[j] <= t and start[j] is None and j not in queue:
                queue.append(j)
        queue.sort()
        running = [j for j in finish if finish[j] > t]
        free = nodes - sum(tasks[j] for j in running)
        while queue and tasks[queue[0]] <= free:
            j = queue.pop(0)
            start[j], finish[j] = t, t + float(runtime[j])
            running.append(j)
            free -= tasks[j]
        if queue:
            head = queue[0]
            shadow, avail = t, free
            for j in sorted(running, key=lambda r: finish[r]):
                if avail >= tasks[head] and finish[j] > shadow:
                    break
                shadow, avail = finish[j], avail + tasks[j]
            extra = avail - tasks[head]
            if reservation[head] is None:
                reservation[head] = shadow
            for j in list(queue[1:]):
                if tasks[j] > free:
                    continue
                if t + float(runtime[j]) <= shadow:
                    pass
                elif tasks[j] <= extra:
                    extra -= tasks[j]
                else:
                    continue
                queue.remove(j)
                start[j], finish[j] = t, t + float(runtime[j])
                free -= tasks[j]
        upcoming = [f for f in finish.values() if f > t]
        upcoming += [float(release[j]) for j in range(J) if start[j] is None and release[j] > t]
        if not upcoming:
            break
        t = min(upcoming)
    return start, reservation


def naive_value(f, v_start, v_final, soft, hard):
    """Value of completing at ``f`` (docs/design.md §6)."""
    if f <= soft:
        return v_start
    if f <= hard:
        return v_final if hard == soft else v_start + (v_final - v_start) * (f - soft) / (hard - soft)
    return 0.0


def naive_value_decode(release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed,
                       order, blacklist):
    """Reference value decoder: placed jobs kept as plain intervals per cluster.

    A start ``s`` fits on cluster k when, at ``s`` and at every start of a
    placed job inside ``(s, s + d)``, the placed jobs running then leave
    enough nodes. Candidate starts: the release and every placed finish after it.
    """
    J, K = len(release), len(nodes)
    placed = [[] for _ in range(K)]  # (start, finish, tasks)
    start, finish, cluster, value = [None] * J, [None] * J, [-1] * J, [0.0] * J
    n_relaxed = 0

    def busy(k, t):
        return sum(x for (s, f, x) in placed[k] if s <= t < f)

    def fits(k, s, d, need):
        checks = [s] + [ps for (ps, _, _) in placed[k] if s < ps < s + d]
        return all(nodes[k] - busy(k, t) >= need for t in checks)

    for j in order:
        j = int(j)
        caps = [nodes[k] - math.floor(blacklist[j][k] * nodes[k]) for k in range(K)]
        if not any(c >= tasks[j] for c in caps):
            n_relaxed += 1
            caps = list(nodes)
        best = None  # (value, -finish, -k) maximised
        for k in range(K):
            if caps[k] < tasks[j]:
                continue
            d = runtime[j] / speed[k]
            cands = sorted({float(release[j])} | {f for (_, f, _) in placed[k] if f > release[j]})
            s = next(c for c in cands if fits(k, c, d, tasks[j]))
            f = s + d
            v = naive_value(f, v_start[j], v_final[j], soft[j], hard[j])
            if v > 0 and (best is None or (v, -f, -k) > best[0]):
                best = ((v, -f, -k), k, s, f, v)
        if best is None:
            continue
        _, k, s, f, v = best
        placed[k].append((s, f, tasks[j]))
        start[j], finish[j], cluster[j], value[j] = s, f, k, v
    return {"start": start, "finish": finish, "cluster": cluster, "value": value,
            "total": sum(value), "n_relaxed": n_relaxed}


def _release_projected(proj, t, finish, free, alloc):
    """Release every job of ``proj`` (job -> projected finish) finishing by ``t``, in groups
    of equal finishes (within RTOL); returns the new time."""
    while proj:
        f = min(proj.values())
        if f > t + RTOL * abs(t):
            break
        for r in [r for r, v in proj.items() if v <= f + RTOL * abs(f)]:
            finish[r] = f
            for k in range(len(free)):
                free[k] += alloc[r][k]
            del proj[r]
        t = max(t, f)
    return t


def naive_easy_federated(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, link, order,
                         blacklist, rule="fastest", pidle=None, power=None, cap=None,
                         cluster_caps=None, requested=None, rank=None, backfill=True):
    """Reference of the federated EASY decoder under the ``at_start`` model.

    The queue holds the arrived, unstarted jobs by their position in
    ``order``. At every arrival or finish: start queued jobs from the front
    while their allowed free nodes (and the power budgets) hold them; the
    first that does not fit (the head) gets a reservation at the earliest
    predicted finish of the running jobs after which its allowed nodes would
    hold it and its least-power allocation would fit the power left (every
    job finishing together with that one counted free); a later queued job
    that fits now starts if it is predicted to end by the reservation, or if
    the nodes left at the reservation, within the head's allowance and after
    the nodes held by earlier such jobs, still hold the head (and, under a
    cap, its least-power allocation still fits the power left by the jobs
    running then, those held and this one). Allocation (greedy pick, then
    shifts while the predicted slowdown does not grow; the least-power one
    where that exceeds a budget) as in :func:`naive_decode`. With
    ``requested`` (what EASY plans with), the reservation replays planned
    ends instead (a running job's predicted duration times ``requested /
    runtime``, never before now) and "ends by the reservation" uses the
    requested time; the jobs still run their run time. Returns ``(start,
    finish, alloc, reservation)`` (reservation: a job's first one as blocked
    head, None otherwise).

    ``rank(j, t)``, when given, orders the queue at each event instead of
    ``order`` (:func:`naive_priority_easy`); ``backfill=False`` starts the
    queue from the front only, with no reservation.
    """
    J, K = len(release), len(nodes)
    requested = list(runtime) if requested is None else [float(v) for v in requested]
    pidle = [1.0] * K if pidle is None else pidle
    (release, runtime, sigma, bw, speed, link, pbusy, pidle), (tasks, nodes) = _lists(
        (release, runtime, sigma, bw, speed, link, pbusy, pidle), (tasks, nodes))
    fast_first = sorted(range(K), key=lambda k: _cluster_key_fast(k, speed, pbusy))
    slow_first = sorted(range(K), key=lambda k: _cluster_key_slow(k, speed, pbusy))
    pick_first = _pick_order(rule, fast_first, speed, pbusy)
    pos = {int(j): i for i, j in enumerate(order)}
    start, finish = [None] * J, [None] * J
    alloc = [[0] * K for _ in range(J)]
    reservation = [None] * J
    free = list(nodes)
    pw = _Power(power, nodes, pbusy, pidle, cap, cluster_caps, J)

    def coallocated(x):
        return sum(1 for v in x if v > 0) >= 2

    def loads():
        load = [0.0] * K
        for r in range(J):
            if start[r] is not None and finish[r] is None and coallocated(alloc[r]):
                for k in range(K):
                    load[k] += _traffic(bw[r], tasks[r], alloc[r][k])
        return load

    def sd_of(j, x, load):
        return _slowdown(sigma[j], x, load, speed, link)

    def allowance(j):
        allow = [nodes[k] - math.floor(blacklist[j][k] * nodes[k]) for k in range(K)]
        return (list(nodes), True) if sum(allow) < tasks[j] else (allow, False)

    proj = {}  # running job -> projected finish (fixed at its start under at_start)

    def place(j, allow):
        """(x, predicted slowdown) within the budgets, or None."""
        avail = [min(free[k], allow[k]) for k in range(K)]
        base = loads()

        def predict(y):
            return _predicted(j, y, base, sd_of, coallocated, bw, tasks)

        x, sd = _pick_and_shift(tasks[j], avail, speed, pick_first, fast_first, slow_first,
                                predict)
        if not pw.capped:
            return x, sd
        used = pw.used(proj, alloc)
        if pw.fits(j, x, used):
            return x, sd
        y = pw.least(j, tasks[j], avail, used)
        return None if y is None else (y, predict(y))

    def begin(j, t, x, sd):
        alloc[j] = x
        for k in range(K):
            free[k] -= x[k]
        start[j] = t
        proj[j] = t + runtime[j] * sd

    def fits(n, allow, avail):
        return sum(min(avail[k], allow[k]) for k in range(K)) >= n

    queue = []
    t = min(release) if J else 0.0
    while any(s is None for s in start):
        t = _release_projected(proj, t, finish, free, alloc)
        queue += [j for j in range(J) if release[j] <= t and start[j] is None and j not in queue]
        queue.sort(key=(lambda j: pos[j]) if rank is None else (lambda j, t=t: rank(j, t)))
        allow_h = None
        while queue:
            allow, relaxed = allowance(queue[0])
            if not fits(tasks[queue[0]], allow, free):
                allow_h = allow
                break
            res = place(queue[0], allow)
            if res is None and not proj and not relaxed:
                allow = list(nodes)
                res = place(queue[0], allow)
            if res is None:
                allow_h = allow
                break
            begin(queue.pop(0), t, *res)
        if backfill and (queue and sum(free) > 0 or (queue and reservation[queue[0]] is None)):
            head = queue[0]
            shadow, free_s = t, list(free)

            def planned(r, f, t=t):
                if requested[r] == runtime[r]:
                    return f
                return max(t, start[r] + (f - start[r]) * (requested[r] / runtime[r]))

            replay = sorted(((r, planned(r, f)) for r, f in proj.items()),
                            key=lambda rv: (rv[1], rv[0]))
            i = 0

            def head_fits(avail, still, head=head, allow_h=allow_h):
                if not fits(tasks[head], allow_h, avail):
                    return False
                if not pw.capped:
                    return True
                lim = [min(avail[k], allow_h[k]) for k in range(K)]
                return pw.least(head, tasks[head], lim, pw.used(still, alloc)) is not None

            while i < len(replay) and (not head_fits(free_s, [r for r, _ in replay[i:]])
                                       or replay[i][1] <= shadow + RTOL * abs(shadow)):
                r, f = replay[i]
                shadow = max(shadow, f)
                for k in range(K):
                    free_s[k] += alloc[r][k]
                i += 1
            still = [r for r, _ in replay[i:]]
            if reservation[head] is None:
                reservation[head] = shadow
            hold = [0] * K
            held = []
            free_total = sum(free)
            for j in list(queue[1:]):
                if free_total <= 0:
                    break
                if tasks[j] > free_total:
                    continue
                allow, _ = allowance(j)
                if not fits(tasks[j], allow, free):
                    continue
                res = place(j, allow)
                if res is None:
                    continue
                x, sd = res
                ends_before = t + requested[j] * sd <= shadow
                room = sum(min(free_s[k] - hold[k] - x[k], allow_h[k]) for k in range(K))
                if not ends_before and room < tasks[head]:
                    continue
                if not ends_before and pw.capped:
                    alloc[j] = x
                    lim = [min(max(0, free_s[k] - hold[k] - x[k]), allow_h[k]) for k in range(K)]
                    ok = pw.least(head, tasks[head], lim, pw.used(still + held + [j], alloc))
                    alloc[j] = [0] * K
                    if ok is None:
                        continue
                if not ends_before:
                    hold = [hold[k] + x[k] for k in range(K)]
                    held.append(j)
                queue.remove(j)
                begin(j, t, x, sd)
                free_total -= tasks[j]
        upcoming = list(proj.values()) + [release[j] for j in range(J)
                                          if start[j] is None and release[j] > t]
        if not upcoming:
            break
        t = max(t, min(upcoming))
    while proj:  # the last ones
        f = min(proj.values())
        for r in [r for r, v in proj.items() if v <= f + RTOL * abs(f)]:
            finish[r] = f
            del proj[r]
    return start, finish, alloc, reservation


def naive_priority_easy(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link,
                        score, estimate=None, rule="fastest", power=None, cap=None,
                        cluster_caps=None, backfill=True):
    """Reference of a priority rule (``decoders.priority``) under the ``at_start`` model.

    At every arrival or finish the waiting jobs are ranked by
    ``score(t, release[j], tasks[j], estimate[j])`` (lower first), ties by
    release, then index, and EASY runs over that ranking as
    :func:`naive_easy_federated` runs over its order (``estimate``, default
    the run times, is what it plans with); ``backfill=False`` starts the
    ranked jobs while they fit, with no reservation. No blacklist. Returns
    ``(start, finish, alloc, reservation)``.
    """
    est = [float(e) for e in (runtime if estimate is None else estimate)]
    rel = [float(r) for r in release]

    def rank(j, t):
        return (float(score(t, rel[j], int(tasks[j]), est[j])), rel[j], j)

    J, K = len(release), len(nodes)
    return naive_easy_federated(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, link,
                                list(range(J)), [[0.0] * K for _ in range(J)], rule=rule,
                                pidle=pidle, power=power, cap=cap, cluster_caps=cluster_caps,
                                requested=estimate, rank=rank, backfill=backfill)


def naive_prb(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link, weight,
              power=None, cap=None, cluster_caps=None, rule="fastest"):
    """Reference of the PRB dispatcher (docs/design.md §11) under the ``at_start`` model.

    At every arrival or finish the waiting jobs are ranked by decreasing
    ``weight[j] * (t - release[j] + 1)``, ties by increasing
    ``tasks * runtime``, then index; each that fits now (nodes, power) starts
    with the ``rule``'s allocation (the least-power one where that exceeds
    a budget); the others wait. Returns ``(start, finish, alloc)``.
    """
    weight = [float(w) for w in weight]

    def rank(j, t):
        return (-weight[j] * (t - float(release[j]) + 1.0), int(tasks[j]) * float(runtime[j]), j)

    return _naive_list(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link,
                       rank, power=power, cap=cap, cluster_caps=cluster_caps, rule=rule)


def naive_saf(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link, power=None,
              cap=None, cluster_caps=None, rule="fastest", estimate=None):
    """Reference of smallest area first under the ``at_start`` model.

    At every arrival or finish the waiting jobs are ranked by increasing
    area, ``tasks * estimate`` (the planned run time, default ``runtime``),
    ties by release, then index; each that fits now (nodes, power) starts
    with the ``rule``'s allocation (the least-power one where that exceeds
    a budget); the others wait. Returns ``(start, finish, alloc)``.
    """
    est = [float(e) for e in (runtime if estimate is None else estimate)]

    def rank(j, t):
        return (int(tasks[j]) * est[j], float(release[j]), j)

    return _naive_list(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link,
                       rank, power=power, cap=cap, cluster_caps=cluster_caps, rule=rule)


def _naive_list(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link, rank,
                power=None, cap=None, cluster_caps=None, rule="fastest"):
    """A list scheduler under the ``at_start`` model: at every arrival or finish the waiting
    jobs, sorted by ``rank(j, t)``, each start now if they fit (nodes, power)."""
    J, K = len(release), len(nodes)
    (release, runtime, sigma, bw, speed, link, pbusy, pidle), (tasks, nodes) = _lists(
        (release, runtime, sigma, bw, speed, link, pbusy, pidle), (tasks, nodes))
    fast_first = sorted(range(K), key=lambda k: _cluster_key_fast(k, speed, pbusy))
    slow_first = sorted(range(K), key=lambda k: _cluster_key_slow(k, speed, pbusy))
    pick_first = _pick_order(rule, fast_first, speed, pbusy)
    start, finish = [None] * J, [None] * J
    alloc = [[0] * K for _ in range(J)]
    free = list(nodes)
    pw = _Power(power, nodes, pbusy, pidle, cap, cluster_caps, J)
    proj = {}

    def coallocated(x):
        return sum(1 for v in x if v > 0) >= 2

    def loads():
        load = [0.0] * K
        for r in proj:
            if coallocated(alloc[r]):
                for k in range(K):
                    load[k] += _traffic(bw[r], tasks[r], alloc[r][k])
        return load

    def predict(j, y, base):
        return _predicted(j, y, base, lambda j, x, ld: _slowdown(sigma[j], x, ld, speed, link),
                          coallocated, bw, tasks)

    t = min(release) if J else 0.0
    while any(s is None for s in start):
        t = _release_projected(proj, t, finish, free, alloc)
        queue = [j for j in range(J) if release[j] <= t and start[j] is None]
        queue.sort(key=lambda j: rank(j, t))
        for j in queue:
            if sum(free) < tasks[j]:
                continue
            base = loads()
            x, sd = _pick_and_shift(tasks[j], list(free), speed, pick_first, fast_first,
                                    slow_first, lambda y, j=j, base=base: predict(j, y, base))
            if pw.capped:
                used = pw.used(proj, alloc)
                if not pw.fits(j, x, used):
                    x = pw.least(j, tasks[j], list(free), used)
                    if x is None:
                        continue
                    sd = predict(j, x, base)
            alloc[j] = x
            for k in range(K):
                free[k] -= x[k]
            start[j] = t
            proj[j] = t + runtime[j] * sd
        upcoming = list(proj.values()) + [release[j] for j in range(J)
                                          if start[j] is None and release[j] > t]
        if not upcoming:
            break
        t = max(t, min(upcoming))
    while proj:
        f = min(proj.values())
        for r in [r for r, v in proj.items() if v <= f + RTOL * abs(f)]:
            finish[r] = f
            del proj[r]
    return start, finish, alloc


def naive_online(release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed,
                 heuristic="easy", small=16, medium=256):
    """Reference of the online simulator (``decoders.online``), from the rules' text.

    Placements (start, finish, cluster, tasks) are kept in a plain list; the
    free nodes of a cluster at time x are its nodes minus the tasks of the
    placements covering x; a job's earliest slot from t0 is the first of t0
    and the later finishes on that cluster where its tasks fit over its whole
    execution. Time moves as in the core loop (:func:`naive_decode`): at an
    event the running jobs whose finishes agree to ``RTOL`` end together at
    the earliest of them, the event moving there; a placement due within
    ``RTOL`` of the event starts at the event. Returns a dict with
    ``start``, ``finish`` (None if not run), ``cluster`` (-1), ``reserved``
    (None unless held for later), ``total``, ``n_run``, ``n_dropped`` and
    ``n_events``.
    """
    J, K = len(release), len(nodes)
    release = [float(v) for v in release]
    runtime = [float(v) for v in runtime]
    tasks = [int(v) for v in tasks]
    nodes = [int(v) for v in nodes]
    speed = [float(v) for v in speed]
    placed = []  # (start, finish, cluster, tasks, job)
    c_of, placed_end = {}, {}
    start, finish = [None] * J, [None] * J
    cluster, reserved, value = [-1] * J, [None] * J, [0.0] * J

    def used(k, x):
        return sum(n for s, f, c, n, _ in placed if c == k and s <= x < f)

    def earliest(k, t0, need, dur):
        for s in sorted({t0} | {f for _, f, c, _, _ in placed if c == k and f > t0}):
            points = [s] + [p for p, _, c, _, _ in placed if c == k and s < p < s + dur]
            if all(used(k, x) + need <= nodes[k] for x in points):
                return s

    def val(j, f):
        return naive_value(f, v_start[j], v_final[j], soft[j], hard[j])

    def choice(j, t, crit):
        """(cluster, start, finish, value, score) of the best slot, and the top value."""
        best, top = None, 0.0
        for k in range(K):
            if nodes[k] < tasks[j]:
                continue
            dur = runtime[j] * (1.0 / speed[k])
            s = earliest(k, max(t, release[j]), tasks[j], dur)
            f = s + dur
            v = val(j, f)
            top = max(top, v)
            score = -f if crit == 0 else (v if crit == 1 else v / (tasks[j] * dur))
            if best is None or score > best[4] or (score == best[4] and f < best[2]):
                best = (k, s, f, v, score)
        return best, top

    def now(j, t):
        best = None
        for k in range(K):
            dur = runtime[j] * (1.0 / speed[k])
            if nodes[k] >= tasks[j] and earliest(k, t, tasks[j], dur) == t:
                if best is None or t + dur < best[1]:
                    best = (k, t + dur)
        return None if best is None else best[0]

    def put(j, k, s):
        f = s + runtime[j] * (1.0 / speed[k])
        placed.append((s, f, k, tasks[j], j))
        c_of[j] = k
        start[j], finish[j], cluster[j], value[j] = s, f, k, val(j, f)

    arrivals = sorted(range(J), key=lambda j: (release[j], j))
    waiting, holders = [], []
    res_job = None
    n_events = n_dropped = n_arrived = 0
    t = release[arrivals[0]] if J else 0.0
    running, ended = set(), set()

    def move(r, s, f):
        """Job r runs over [s, f) after all."""
        placed[:] = [p for p in placed if p[4] != r] + [(s, f, c_of[r], tasks[r], r)]
        start[r], finish[r], value[r] = s, f, val(r, f)

    while True:
        n_events += 1
        horizon = t + RTOL * abs(t)
        while True:
            due = [placed_end[r] for r in running]
            if not due or min(due) > horizon:
                break
            fg = min(due)
            for r in [r for r in running if placed_end[r] <= fg + RTOL * abs(fg)]:
                move(r, start[r], fg)
                running.discard(r)
                ended.add(r)
            t = max(t, fg)
        while n_arrived < J and release[arrivals[n_arrived]] <= t:
            waiting.append(arrivals[n_arrived])
            n_arrived += 1
        holders = [j for j in holders if start[j] > t + RTOL * abs(t)]
        keep = [j for j in waiting if choice(j, t, 1)[1] > 0.0]
        n_dropped += len(waiting) - len(keep)
        waiting = keep
        if heuristic == "easy":
            if res_job is not None and start[res_job] <= t:
                res_job = None
            for j in list(waiting):
                k = now(j, t)
                if k is not None:
                    put(j, k, t)
                elif res_job is None:
                    (k, s, _, _, _), _ = choice(j, t, 0)
                    put(j, k, s)
                    reserved[j], res_job = s, j
        elif heuristic == "fcfs-multi":
            left = len(waiting)
            while left > 0:
                for level, quota in ((0, 1), (1, 4), (2, 8)):
                    for j in waiting:
                        if quota == 0:
                            break
                        if start[j] is not None:
                            continue
                        size = 2 if tasks[j] <= small else (1 if tasks[j] <= medium else 0)
                        if size != level:
                            continue
                        quota -= 1
                        left -= 1
                        k, s = now(j, t), t
                        if k is None:
                            (k, s, _, _, _), _ = choice(j, t, 0)
                            reserved[j] = s
                            holders.append(j)
                        put(j, k, s)
        else:
            crit = 1 if heuristic == "max-max-value" else 2
            while True:
                ph = min((start[j] for j in holders), default=math.inf)
                best = None
                for j in waiting:
                    if start[j] is not None:
                        continue
                    c, _ = choice(j, t, crit)
                    if c is None or c[3] <= 0.0 or c[1] > ph:
                        continue
                    if best is None or c[4] > best[1][4] or (c[4] == best[1][4]
                                                             and c[2] < best[1][2]):
                        best = (j, c)
                if best is None:
                    break
                j, (k, s, _, _, _) = best
                put(j, k, s)
                if s > t:
                    reserved[j] = s
                    holders.append(j)
        waiting = [j for j in waiting if start[j] is None]
        # Start what is due: a placement due within RTOL starts at the event.
        for j in range(J):
            if (start[j] is not None and j not in running and j not in ended
                    and start[j] <= t + RTOL * abs(t)):
                if start[j] > t:
                    move(j, t, t + runtime[j] * (1.0 / speed[cluster[j]]))
                placed_end[j] = finish[j]
                running.add(j)
        upcoming = [release[j] for j in arrivals[n_arrived:]]
        upcoming += [placed_end[r] for r in running]
        if not upcoming:
            break
        t = min(upcoming)
    run = [j for j in range(J) if start[j] is not None]
    return {"start": start, "finish": finish, "cluster": cluster, "reserved": reserved,
            "total": sum(value[j] for j in run), "n_run": len(run), "n_dropped": n_dropped,
            "n_events": n_events}


def naive_order_move(order, kind, i, j):
    """One order move on a list: 0 swap positions i and j; 1 move the job at i to position j;
    2 reverse the positions between i and j (both included)."""
    order = list(order)
    if kind == 0:
        order[i], order[j] = order[j], order[i]
    elif kind == 1:
        job = order.pop(i)
        order.insert(j, job)
    else:
        lo, hi = min(i, j), max(i, j)
        order[lo:hi + 1] = order[lo:hi + 1][::-1]
    return order


def naive_cluster_move(order, blacklist, cluster, lo, hi, level):
    """The jobs at order positions lo .. hi-1 get ``level`` on ``cluster`` (a copy)."""
    bl = [list(row) for row in blacklist]
    for p in range(lo, hi):
        bl[order[p]][cluster] = level
    return bl


def naive_prefix_crossover(p1, p2, b):
    """One-point order crossover: ``p1[:b]``, then the other jobs in ``p2``'s order."""
    head = list(p1[:b])
    return head + [g for g in p2 if g not in head]


def naive_power_profile(start, finish, alloc, power, pbusy, pidle, nodes):
    """Power of the federation and of each cluster just after every instant a job starts.

    Plain reading of docs/design.md §11: every node draws ``pidle`` while idle
    and ``max(power[j] * pbusy[k], pidle[k])`` while it runs job ``j`` on cluster ``k``; a job
    occupies its nodes on ``[start, finish)``. Power only rises when a job
    starts, so its maxima are at start instants. Returns a list of
    ``(time, total, per_cluster)``.
    """
    J, K = len(start), len(nodes)
    out = []
    for t in sorted({float(s) for s in start}):
        per = [nodes[k] * pidle[k] for k in range(K)]
        for j in range(J):
            if start[j] <= t < finish[j]:
                for k in range(K):
                    per[k] += alloc[j][k] * max(power[j] * pbusy[k] - pidle[k], 0.0)
        out.append((t, sum(per), per))
    return out


def naive_power_violations(profile, cap=None, cluster_caps=None, rtol=1e-9):
    """The instants of a :func:`naive_power_profile` above a cap (overall or per cluster)."""
    bad = []
    for t, total, per in profile:
        if cap is not None and total > cap * (1 + rtol):
            bad.append((t, "total", total))
        if cluster_caps is not None:
            for k, c in enumerate(cluster_caps):
                if per[k] > c * (1 + rtol):
                    bad.append((t, k, per[k]))
    return bad


def naive_check_realtime(result, interval=None, write=None, read=None, rtol=1e-9):
    """Independent checks of a real-time simulation (docs/design.md §12); returns a list of
    violations (empty when the schedule is sound).

    - no instant has more nodes in use than the machine has (segments occupy
      their nodes on ``[start, end)``);
    - real-time jobs run once, never preempted;
    - every job starts after its submission, its executions do not overlap;
    - each execution's time is its restart read, computation kept, computation
      lost and checkpoint writes;
    - each batch job's kept computation adds up to its run time;
    - overheads follow the formulas when ``interval``/``write``/``read`` (per
      job) are given: a completed execution writes ``ceil(rem / I) - 1``
      periodic checkpoints, a resumed one reads once.
    """
    rj = result.jobs
    bad = []
    segs = sorted(result.executions(), key=lambda s: (s.start, s.job))
    edges = sorted([(s.start, 1, int(rj.nodes[s.job])) for s in segs if s.end > s.start]
                   + [(s.end, 0, -int(rj.nodes[s.job])) for s in segs if s.end > s.start])
    used = 0
    for t, _, d in edges:
        used += d
        if used > rj.machine.nodes:
            bad.append(("over-subscribed", t, used))
    by_job = {}
    for s in segs:
        by_job.setdefault(s.job, []).append(s)
    for j in range(len(rj)):
        ss = by_job.get(j, [])
        if not ss or ss[-1].preempted:
            bad.append(("never completed", j))
            continue
        if rj.rtj[j] and (len(ss) != 1 or ss[0].preempted):
            bad.append(("real-time job preempted", j))
        if ss[0].start < rj.submit[j] - 1e-9:
            bad.append(("started before submission", j))
        for a, b in zip(ss, ss[1:], strict=False):
            if b.start < a.end - 1e-9:
                bad.append(("executions overlap", j))
        kept = 0.0
        for _i, s in enumerate(ss):
            total = s.read + s.compute + s.lost + s.write
            if abs((s.end - s.start) - total) > rtol * max(1.0, s.end - s.start):
                bad.append(("time not accounted", j, s))
            if read is not None:
                # A resumed execution reads its checkpoint first (a preemption during
                # the read cuts it short).
                expect = read[j] if kept > 0 else 0.0
                off = s.read - expect
                if off > rtol * max(1.0, expect) or (not s.preempted and
                                                     -off > rtol * max(1.0, expect)):
                    bad.append(("restart read", j, s.read, expect))
            if write is not None and interval is not None and not s.preempted:
                rem = rj.runtime[j] - kept
                n_w = max(0, math.ceil(rem / interval[j]) - 1) if math.isfinite(interval[j]) else 0
                if not rj.rtj[j] and abs(s.write - n_w * write[j]) > rtol * max(1.0, s.write):
                    bad.append(("periodic writes", j, s.write, n_w * write[j]))
            kept += s.compute
        if abs(kept - rj.runtime[j]) > rtol * max(1.0, rj.runtime[j]):
            bad.append(("work not conserved", j, kept, rj.runtime[j]))
    return bad


def naive_milp_brute_force(release, p, nodes, rtj, capacity, threshold=None):
    """The time-indexed optimum of :func:`moga.realtime.milp.solve_milp` by enumeration:
    every real-time job one stretch, every batch job one or two, all within the
    horizon. Returns the smallest sum over batch jobs of ``C / p`` times
    ``lcm(p)`` (the solver's objective) or None when nothing meets the threshold."""
    from functools import reduce
    from itertools import product

    J = len(p)
    H = max(release) + sum(p)
    L = reduce(math.lcm, p, 1)

    def options(j):
        out = []
        for a in range(release[j], H - p[j] + 1):  # one stretch
            out.append(tuple(range(a, a + p[j])))
        if not rtj[j]:
            for k in range(1, p[j]):  # two stretches of k and p - k slots
                for a in range(release[j], H):
                    for b in range(a + k + 1, H - (p[j] - k) + 1):
                        out.append(tuple(range(a, a + k)) + tuple(range(b, b + p[j] - k)))
        return out

    best = None
    for choice in product(*[options(j) for j in range(J)]):
        load = [0] * H
        ok = True
        for j, slots in enumerate(choice):
            for t in slots:
                load[t] += nodes[j]
                if load[t] > capacity:
                    ok = False
        if not ok:
            continue
        C = [max(s) + 1 for s in choice]
        rt = [j for j in range(J) if rtj[j]]
        if threshold is not None and rt:
            if sum((L // p[j]) * (C[j] - release[j]) for j in rt) > math.floor(
                    threshold * len(rt) * L + 1e-9):
                continue
        obj = sum((L // p[j]) * C[j] for j in range(J) if not rtj[j])
        best = obj if best is None else min(best, obj)
    return best


def naive_serial_schedule(order, duration, nodes, power, node_capacity, power_capacity,
                          running_end=(), running_nodes=(), running_power=()):
    """Each job in turn at the earliest start among 0 and the ends so far from which every
    integer instant of its duration has room for its nodes and power (integer time; durations
    and waiting jobs' power rounded up, running jobs' power down)."""
    dur = [max(1, math.ceil(v)) for v in duration]
    cap_p = math.floor(power_capacity) if math.isfinite(power_capacity) else math.inf
    # Whole watts, up; a job within the real capacity is clipped to the rounded one.
    pw = [min(math.ceil(max(v, 0.0)), cap_p) for v in power]
    busy = [(0, math.ceil(e), int(n), math.floor(max(p, 0.0)))
            for e, n, p in zip(running_end, running_nodes, running_power, strict=True)
            if math.ceil(e) > 0]
    start = [0] * len(dur)
    for i in order:
        for s in sorted({0} | {b[1] for b in busy}):
            if all(sum(b[2] for b in busy if b[0] <= u < b[1]) + nodes[i] <= node_capacity
                   and sum(b[3] for b in busy if b[0] <= u < b[1]) + pw[i] <= cap_p
                   for u in range(s, s + dur[i])):
                start[i] = s
                busy.append((s, s + dur[i], int(nodes[i]), pw[i]))
                break
    return start


def naive_deepeas_esjf(arrival, n, mu, d, N, K, energy, Q, B):
    """Deep-EAS's cluster under ESJF, simulated plainly (docs/design.md §13).

    Time steps t = 0, 1, ...: jobs with arrival <= t join the queue (at most Q + B waiting);
    then, while some job among the first Q fits a machine now, start the pair of least
    ``n e_k mu_k / mu* * (t - arrival + mu_k) / mu*`` in exact fractions (ties: lower queue
    position, lower machine); then the step passes and jobs whose ``start + d`` is reached leave. Returns
    per job ``(machine, start, finish, edp)`` lists.
    """
    J = len(arrival)
    mstar = [min(mu[j]) for j in range(J)]
    free = [N] * K
    queue, running = [], []
    machine, start, finish = [None] * J, [None] * J, [None] * J
    nxt, t = 0, 0
    while nxt < J or queue or running:
        while nxt < J and arrival[nxt] <= t:
            if len(queue) < Q + B:
                queue.append(nxt)
            nxt += 1
        while True:
            best = None
            for pos, j in enumerate(queue[:Q]):
                for k in range(K):
                    if n[j] <= free[k]:
                        m_, s_ = Fraction(mu[j][k]), Fraction(mstar[j])
                        v = n[j] * Fraction(energy[k]) * m_ / s_ * (t - arrival[j] + m_) / s_
                        if best is None or v < best[0]:
                            best = (v, pos, k)
            if best is None:
                break
            j = queue.pop(best[1])
            k = best[2]
            machine[j], start[j] = k, t
            free[k] -= n[j]
            running.append(j)
        t += 1
        for j in list(running):
            if start[j] + d[j][machine[j]] <= t:
                finish[j] = t
                free[machine[j]] += n[j]
                running.remove(j)
    edp = [n[j] * energy[machine[j]] * d[j][machine[j]] / mstar[j]
           * (finish[j] - arrival[j]) / mstar[j] for j in range(J)]
    return machine, start, finish, edp


def naive_realtime(submit, runtime, nodes, rtj, cls, N, scheme, kind, write, read, interval,
                   improved=False, rtj_threshold=1.5, batch_thresholds=(3.0, 1.3, 10.0, 2.0),
                   reading="project", requested=None, trigger=1.1):
    """Reference of the real-time simulator (docs/design.md §12), from scratch at each event.

    No heaps and no running counters: the next event is the least of the arrivals, planned
    ends, checkpoint-write ends, held starts and (qsim reading) trigger times still to come;
    free nodes are recounted from the jobs' states at every decision. Same policy as
    :func:`moga.realtime.simulate`. Returns ``(start, finish, n_preempted)`` lists.
    """
    J = len(submit)
    improved = bool(improved) and scheme == "preempt"
    qsim = improved and reading == "qsim"
    wall = list(runtime) if requested is None else list(requested)
    trig = [submit[j] + (trigger - 1.0) * wall[j] for j in range(J)]
    st = ["future"] * J          # future, waiting, running, writing, held, done
    saved = [0.0] * J
    seg_start, seg_read, end = [0.0] * J, [0.0] * J, [0.0] * J
    start, finish, npre = [None] * J, [None] * J, [0] * J
    write_end = [0.0] * J        # writing victim: when its JIT write ends
    hold_start = [0.0] * J       # held RTJ: when it starts
    claim = {}                   # writing victim -> held RTJ
    taken = {}                   # held RTJ -> nodes it holds (free ones, then its victims')

    def plan(j, s):
        if rtj[j]:
            return 0.0, s + runtime[j]
        rem = runtime[j] - saved[j]
        r = read[j] if saved[j] > 0 else 0.0
        nw = max(0, math.ceil(rem / interval[j]) - 1) if math.isfinite(interval[j]) else 0
        return r, s + r + rem + nw * write[j]

    def used():
        # Running jobs, victims writing their checkpoints, and what held RTJs hold.
        return sum(nodes[j] for j in range(J) if st[j] in ("running", "writing")) + \
            sum(taken.values())

    def begin(j, t):
        seg_read[j], d = plan(j, 0.0)
        end[j] = t + d
        seg_start[j] = t
        st[j] = "running"
        if start[j] is None:
            start[j] = t

    def cut(j, t):
        e, r = t - seg_start[j], seg_read[j]
        if e <= r:
            return e, 0.0, 0.0, (write[j] if kind == "jit" else 0.0)
        e2 = e - r
        if kind == "none" or (kind in ("sys", "app") and not math.isfinite(interval[j])):
            return r, 0.0, e2, 0.0
        if kind == "jit":
            return r, e2, 0.0, write[j]
        k = math.floor(e2 / (interval[j] + write[j]))
        o = e2 - k * (interval[j] + write[j])
        return r, k * interval[j], min(o, interval[j]), 0.0

    def reservation(need, t, free):
        # What comes back when: a running job's nodes at its planned end, a held real-time
        # job's at its planned end, and at its start what it holds beyond its need. A
        # victim's nodes pass to the held job when its checkpoint is written: they never
        # come back at the write's end.
        back = [(end[j], nodes[j]) for j in range(J) if st[j] == "running"]
        for h in range(J):
            if st[h] == "held":
                back.append((hold_start[h] + runtime[h], nodes[h]))
                holds = taken[h] + sum(nodes[b] for b, c in claim.items() if c == h)
                if holds > nodes[h]:
                    back.append((hold_start[h], holds - nodes[h]))
        avail, shadow = free, t
        for e, n in sorted(back):
            if avail >= need:
                break
            avail += n
            shadow = e
        return shadow, avail - need

    def easy_reservation(need, t, free):
        # The core's EASY: the planned ends of what runs, a held real-time job's nodes at
        # its planned end (the nodes its writers hold beyond its need, never); until the
        # head fits, then every end at that instant.
        ends = sorted([(end[j], j) for j in range(J) if st[j] == "running"]
                      + [(hold_start[j] + runtime[j], j) for j in range(J) if st[j] == "held"])
        avail, shadow = free, t
        for e, j in ends:
            if avail >= need and e > shadow + 1e-9 * abs(shadow):
                break
            shadow = max(shadow, e)
            avail += nodes[j]
        return shadow, avail - need

    def projected(b, t):
        r, kept, _, jit = cut(b, t)
        total = 0.0 if kind == "none" else saved[b] + kept
        back = read[b] if total > 0 else 0.0
        return (t + jit + back + runtime[b] - total - submit[b]) / runtime[b]

    def victims(j, t, free):
        need = nodes[j] - free
        c = []
        for b in range(J):
            if st[b] != "running" or rtj[b]:
                continue
            if improved and projected(b, t) > batch_thresholds[cls[b]]:
                continue
            c.append((nodes[b], cut(b, t)[2] * nodes[b], b))
        fit = [x for x in c if x[0] >= need]
        if fit:
            return [min(fit)[2]]
        chosen, got = [], 0
        for x in sorted(c, key=lambda x: (-x[0], x[1], x[2])):
            if got >= need:
                break
            chosen.append(x)
            got += x[0]
        if got < need:
            return []
        for x in sorted(chosen, key=lambda x: (x[0], -x[1], -x[2])):
            if got - x[0] >= need:
                chosen.remove(x)
                got -= x[0]
        return [x[2] for x in chosen]

    def victims_qsim(j, t, free):
        need = nodes[j] - free
        c = []   # (score per node, job) of the unprotected running batch jobs
        for b in range(J):
            if st[b] != "running" or rtj[b]:
                continue
            e = end[b] + wall[b] - runtime[b]
            sd = (e - submit[b]) / wall[b]
            if sd > batch_thresholds[cls[b]]:
                continue
            c.append(((5.0 if e - t <= min(0.25 * wall[b], 900.0) else 1.0)
                      * math.log2(2.0 + sd), b))
        c.sort()
        chosen, got = [], 0
        for x in c:
            if got >= need:
                break
            chosen.append(x)
            got += nodes[x[1]]
        if got < need:
            return []
        for x in reversed(list(chosen)):
            if got - nodes[x[1]] >= need:
                chosen.remove(x)
                got -= nodes[x[1]]
        cover = sum(x[0] * nodes[x[1]] for x in reversed(chosen))  # the kernel's order
        single = min(((x[0] * nodes[x[1]], x[1]) for x in c if nodes[x[1]] >= need),
                     default=None)
        if single is not None and single[0] <= cover:
            return [single[1]]
        return [x[1] for x in chosen]

    def preempt(j, t, free):
        if qsim:
            vs = victims_qsim(j, t, free)
        elif improved:
            shadow, _ = reservation(nodes[j], t, free)
            if (shadow + runtime[j] - submit[j]) / runtime[j] <= rtj_threshold:
                return False
        if not qsim:
            vs = victims(j, t, free)
        if not vs:
            return False
        wait = 0.0
        for b in vs:
            _, kept, _, jit = cut(b, t)
            saved[b] = 0.0 if kind == "none" else saved[b] + kept
            npre[b] += 1
            wait = max(wait, jit)
            if jit > 0:
                st[b], write_end[b], claim[b] = "writing", t + jit, j
            else:
                st[b] = "waiting"
        if wait > 0:
            st[j], hold_start[j] = "held", t + wait
            taken[j] = max(0, nodes[j] - sum(nodes[b] for b in vs if st[b] == "writing"))
        else:
            begin(j, t)
        return True

    def schedule(t):
        waiting = [j for j in range(J) if st[j] == "waiting"]
        key = (lambda j: (submit[j], j)) if scheme == "baseline" or qsim else \
            (lambda j: (not rtj[j], submit[j], j))
        order = sorted(waiting, key=key)
        if qsim:
            # The triggered real-time jobs alone, each preempting if it must; while one
            # still waits, nothing else starts. Then EASY over the one queue.
            blocked = False
            for j in [j for j in order if rtj[j] and trig[j] <= t]:
                free = N - used()
                if nodes[j] <= free:
                    begin(j, t)
                elif not preempt(j, t, free):
                    blocked = True
            if blocked:
                return
            order = [j for j in order if st[j] == "waiting"]
        head, i = None, 0
        while i < len(order):
            j = order[i]
            free = N - used()
            if nodes[j] <= free:
                begin(j, t)
            elif qsim or not (rtj[j] and scheme == "preempt" and preempt(j, t, free)):
                head = j
                break
            i += 1
        if head is None:
            return
        free = N - used()
        shadow, extra = easy_reservation(nodes[head], t, free)
        for j in order[i + 1:]:
            if free <= 0:
                break
            if nodes[j] > free:
                continue
            if t + plan(j, 0.0)[1] <= shadow:
                begin(j, t)
                free -= nodes[j]
            elif nodes[j] <= extra:
                begin(j, t)
                free -= nodes[j]
                extra -= nodes[j]

    t = None
    while any(s != "done" for s in st):
        times = [submit[j] for j in range(J) if st[j] == "future"]
        times += [end[j] for j in range(J) if st[j] == "running"]
        times += [write_end[j] for j in range(J) if st[j] == "writing"]
        times += [hold_start[j] for j in range(J) if st[j] == "held"]
        if qsim:
            times += [trig[j] for j in range(J) if rtj[j] and st[j] in ("future", "waiting")
                      and (t is None or trig[j] > t)]
        t = min(times)
        for j in range(J):
            if st[j] == "future" and submit[j] <= t:
                st[j] = "waiting"
            elif st[j] == "running" and end[j] <= t:
                st[j], finish[j] = "done", t
                saved[j] = runtime[j]
        for b in range(J):
            if st[b] == "writing" and write_end[b] <= t:
                st[b] = "waiting"  # back in the queue; its nodes go to the held RTJ
                taken[claim.pop(b)] += nodes[b]
        for j in range(J):
            if st[j] == "held" and hold_start[j] <= t:
                del taken[j]
                begin(j, t)
        schedule(t)
    return start, finish, npre


def naive_hypervolume_2d(points, ref):
    """Area dominated by ``points`` (minimisation) and bounded by ``ref``: sum of the
    vertical strips between consecutive first-objective values."""
    pts = sorted((float(a), float(b)) for a, b in points if a < ref[0] and b < ref[1])
    area = 0.0
    for i, (a, _) in enumerate(pts):
        right = pts[i + 1][0] if i + 1 < len(pts) else ref[0]
        best = min(b for x, b in pts if x <= a)
        area += (right - a) * (ref[1] - best)
    return area


def naive_archive(batches, capacity, scale, hv=None):
    """The archive after merging ``batches`` (a list of (F, X)) one by one.

    Keep the distinct, non-dominated vectors (the first chromosome seen for each);
    above ``capacity``, drop one at a time the point whose removal loses the least
    hypervolume (``hv(points, ref)``, by default the 2-D one above), never a point
    with the smallest value of an objective; ties go to the point with the smaller
    first objective. The reference point, fixed for one merge, lies 10% of the spread
    beyond the worst value of the merged points.
    """
    hv = hv or naive_hypervolume_2d
    kept = []
    for F, X in batches:
        for f, x in zip(F, X, strict=True):
            f = tuple(float(v) for v in f)
            if any(g == f for g, _ in kept):
                continue
            kept.append((f, x))
        kept = [(f, x) for f, x in kept
                if not any(all(a <= b for a, b in zip(g, f, strict=True)) and g != f
                           for g, _ in kept)]
        G = [tuple(v / s for v, s in zip(f, scale, strict=True)) for f, _ in kept]
        m = len(G[0])
        worst = [max(g[d] for g in G) for d in range(m)]
        spread = [max(worst[d] - min(g[d] for g in G), 1e-12) for d in range(m)]
        ref = [worst[d] + 0.1 * spread[d] for d in range(m)]
        while len(kept) > capacity:
            G = [tuple(v / s for v, s in zip(f, scale, strict=True)) for f, _ in kept]
            extremes = {min(range(len(G)), key=lambda i, d=d: G[i][d]) for d in range(m)}
            total = hv(G, ref)
            loss = [(total - hv(G[:i] + G[i + 1:], ref), G[i][0], i)
                    for i in range(len(G)) if i not in extremes]
            _, _, drop = min(loss)
            kept.pop(drop)
    return kept


def naive_nearest_neighbours(F, k):
    """Each row's ``k`` nearest other rows, objectives scaled to [0, 1] (ties: lower index)."""
    F = [list(map(float, f)) for f in F]
    n, m = len(F), len(F[0])
    k = max(1, min(k, n - 1))
    lo = [min(f[d] for f in F) for d in range(m)]
    hi = [max(f[d] for f in F) for d in range(m)]
    G = [[(f[d] - lo[d]) / (hi[d] - lo[d] if hi[d] > lo[d] else 1.0) for d in range(m)]
         for f in F]
    out = []
    for i in range(n):
        dist = sorted((sum((G[i][d] - G[j][d]) ** 2 for d in range(m)), j)
                      for j in range(n) if j != i)
        out.append([j for _, j in dist[:k]])
    return out


def naive_fitted_row(row, tasks, nodes, greenest):
    """One job's blacklist row fitted to its width: if void, open its barred clusters
    in ``greenest`` order, one node at a time, until the allowance holds the job.
    Returns the allowance per cluster (the nodes it may use), or None when the row
    was not void."""
    import math

    allow = [n - math.floor(b * n) for b, n in zip(row, nodes, strict=True)]
    if sum(allow) >= tasks:
        return None
    for k in greenest:
        while sum(allow) < tasks and allow[k] < nodes[k]:
            allow[k] += 1
    return allow


def naive_greedy(release, tasks, runtime, nodes, rank):
    """A greedy online list scheduler on one cluster of speed 1 without communication.

    At every arrival or finish (finishes first), the waiting jobs are ranked by
    ``rank(t, waiting)`` (a list of job indices in arrival order, returns them
    ranked) and every ranked job that fits the free nodes starts, in rank
    order. Returns the start times. Written for clarity, not speed.
    """
    J = len(release)
    start = [None] * J
    running = []  # (finish, job)
    free = nodes
    t = min(release)
    while any(s is None for s in start):
        for f, j in list(running):
            if f <= t:
                running.remove((f, j))
                free += tasks[j]
        waiting = sorted((j for j in range(J) if start[j] is None and release[j] <= t),
                         key=lambda j: (release[j], j))
        for j in rank(t, waiting):
            if tasks[j] <= free:
                start[j] = t
                free -= tasks[j]
                running.append((t + runtime[j], j))
        future = [release[j] for j in range(J) if start[j] is None and release[j] > t]
        t = min([f for f, _ in running] + future)
    return start


def naive_online_moga(release, tasks, runtime, requested, nodes, speed, pbusy, pidle, policy,
                      federation, model="fluid"):
    """The online MOGA dispatcher's loop in plain Python, on a federation without
    communication (every job's ``sigma`` is 0) and without power caps.

    At every arrival or finish (finishes first) the first ``policy.window``
    waiting jobs (arrival order) are planned, unless none of them fits the
    free nodes: the running jobs hold their nodes until ``start + (finish -
    start) * requested / runtime`` (at least 1 s from now), every waiting job
    lasts its requested time, and the window is decoded by :func:`naive_decode`.
    The GA and the pick are the policy's own (``policy.plan_window``, so the
    same seeds give the same draws); the jobs it starts now start in that
    order within their blacklist's allowance, the fastest clusters first (the
    decoders' pick and shift). If nothing runs and the plan starts nothing,
    the head of the queue starts. ``federation`` is the :class:`moga.Federation`
    of these arrays (the policy's operators read it).

    Returns ``(start, finish, alloc, log)``; ``log`` holds ``(t, jobs, rows)``
    of every decision that started jobs.
    """
    import numpy as np

    from moga.evolution.online import WindowProblem
    from moga.model.jobset import JobSet

    J, K = len(release), len(nodes)
    (release, runtime, requested, speed, pbusy, pidle), (tasks, nodes) = _lists(
        (release, runtime, requested, speed, pbusy, pidle), (tasks, nodes))
    fast_first = sorted(range(K), key=lambda k: _cluster_key_fast(k, speed, pbusy))
    slow_first = sorted(range(K), key=lambda k: _cluster_key_slow(k, speed, pbusy))
    start, finish = [None] * J, [None] * J
    alloc = [[0] * K for _ in range(J)]
    free = list(nodes)
    running = []
    log = []

    class NaiveWindow(WindowProblem):
        def evaluate_rows(self, X):
            orders, bls = self.full_rows(X)
            f = self.full
            rows = [naive_decode(f.release, f.tasks, f.runtime, f.sigma, f.bw, nodes, speed,
                                 pbusy, pidle, [1000.0] * K, o, b, model=model)
                    for o, b in zip(orders.tolist(), bls.tolist(), strict=True)]
            self.n_decoded += len(rows)
            r = self.n_pinned
            return self.objectives_of(np.array([d["makespan"] for d in rows]),
                                      np.array([d["energy"] for d in rows]),
                                      np.array([d["flowtime"] for d in rows]),
                                      np.array([d["start"][r:] for d in rows]))

    def try_start(j, row, t):
        allow = [nodes[k] - math.floor(row[k] * nodes[k]) for k in range(K)]
        if sum(allow) < tasks[j]:
            allow = list(nodes)
        avail = [min(free[k], allow[k]) for k in range(K)]
        if sum(avail) < tasks[j]:
            return False
        x, sd = _pick_and_shift(tasks[j], avail, speed, fast_first, fast_first, slow_first,
                                lambda y: 1.0 / min(speed[k] for k in range(K) if y[k] > 0))
        alloc[j] = x
        for k in range(K):
            free[k] -= x[k]
        start[j], finish[j] = t, t + runtime[j] * sd
        running.append(j)
        return True

    policy.reset(None)
    t = min(release)
    while any(s is None for s in start):
        for r in [r for r in running if finish[r] <= t]:
            running.remove(r)
            for k in range(K):
                free[k] += alloc[r][k]
        queue = sorted((j for j in range(J) if start[j] is None and release[j] <= t),
                       key=lambda j: (release[j], j))
        window = queue[:policy.window]
        if window and min(tasks[j] for j in window) <= sum(free):
            pinned = sorted(running)
            rem, smin, held = [], [], []
            for r in pinned:
                planned = start[r] + (finish[r] - start[r]) * (requested[r] / runtime[r])
                rem.append(max(max(planned, t) - t, 1.0))
                smin.append(min(speed[k] for k in range(K) if alloc[r][k] > 0))
                held.append([min(1.0, (nodes[k] - alloc[r][k] + 0.5) / nodes[k])
                             for k in range(K)])
            n = len(window)
            queue_js = JobSet(id=np.array(window), release=np.zeros(n),
                              tasks=np.array([tasks[j] for j in window]),
                              runtime=np.array([requested[j] for j in window]),
                              sigma=np.zeros(n), bw=np.zeros(n))
            m = len(pinned) + n
            full = JobSet(id=np.array(pinned + window), release=np.zeros(m),
                          tasks=np.array([sum(alloc[r]) for r in pinned]
                                         + [tasks[j] for j in window]),
                          runtime=np.array([a * b for a, b in zip(rem, smin, strict=True)]
                                           + [requested[j] for j in window]),
                          sigma=np.zeros(m), bw=np.zeros(m))
            problem = NaiveWindow(queue_js, full, federation, len(pinned),
                                  np.array(held).reshape(len(pinned), K),
                                  np.array([t - release[j] for j in window]),
                                  policy.objectives, model=model)
            jobs, rows = policy.plan_window(problem, np.array(window))
            started = [(int(j), list(row)) for j, row in zip(jobs.tolist(), rows.tolist(),
                                                              strict=True)
                       if try_start(int(j), row, t)]
            if not started and not running:
                try_start(window[0], [0.0] * K, t)
                started = [(window[0], [0.0] * K)]
            if started:
                log.append((t, [j for j, _ in started], [row for _, row in started]))
        future = [release[j] for j in range(J) if start[j] is None and release[j] > t]
        t = min([finish[r] for r in running] + future)
    return start, finish, alloc, log


def naive_realtime_preempt(release, tasks, runtime, realtime, nodes, keep=True, restart=0.0):
    """``realtime-preempt`` on one cluster of speed 1 without communication, in plain Python.

    At every arrival or finish (finishes first): each waiting real-time job
    (arrival order) starts if it fits; else, if the running batch jobs hold
    enough nodes, the most recently started of them (ties: the higher
    position first) are stopped, as few as free its nodes, and queued again
    with their work kept plus ``restart`` s (``keep``) or lost; then it
    starts. Then every waiting batch job that fits starts, in arrival order.
    Returns ``(first start, finish, executions)``, executions as ``(job,
    start, end)`` in the order they ended (ties by job).
    """
    J = len(release)
    left = [float(r) for r in runtime]  # work left at the next start
    read = [0.0] * J  # restart read at the start of the current execution
    first, finish = [None] * J, [None] * J
    run = {}  # job -> (start, end)
    execs = []
    free = nodes
    t = min(release)
    while any(f is None for f in finish):
        for j, (s, e) in sorted(run.items()):
            if e <= t:
                del run[j]
                free += tasks[j]
                finish[j] = e
                execs.append((j, s, e))
        waiting = sorted((j for j in range(J) if finish[j] is None and j not in run
                          and release[j] <= t), key=lambda j: (release[j], j))

        def begin(j, t=t):
            nonlocal free
            free -= tasks[j]
            run[j] = (t, t + left[j])
            if first[j] is None:
                first[j] = t

        for j in [j for j in waiting if realtime[j]]:
            if tasks[j] <= free:
                begin(j)
                continue
            batch = [b for b in run if not realtime[b]]
            if sum(tasks[b] for b in batch) < tasks[j] - free:
                continue
            for b in sorted(batch, key=lambda b: (-run[b][0], -b)):
                if tasks[j] <= free:
                    break
                s, e = run.pop(b)
                free += tasks[b]
                execs.append((b, s, t))
                # An unfinished restart read is not read again; the next one is added.
                left[b] = ((e - t) - max(read[b] - (t - s), 0.0) + restart if keep
                           else float(runtime[b]))
                read[b] = restart if keep else 0.0
            begin(j)
        for j in sorted((j for j in range(J) if finish[j] is None and j not in run
                         and release[j] <= t and not realtime[j]),
                        key=lambda j: (release[j], j)):
            if tasks[j] <= free:
                begin(j)
        future = [release[j] for j in range(J) if first[j] is None and release[j] > t]
        if not run and not future:
            break
        t = min([e for _, e in run.values()] + future)
    execs.sort(key=lambda x: (x[2], x[0]))
    return first, finish, execs


def naive_net(w1, b1, w2, b2, images, gz=None):
    """Deep-EAS's network, one image and one position at a time: the logits (B, A); with
    ``gz`` (B, A), the gradient of ``sum_s gz[s] . logits[s]`` by ``(w1, b1, w2, b2)``
    (ReLU's derivative 0 at 0)."""
    x = [[[1.0 if v else 0.0 for v in row] for row in img] for img in images]
    B, H, W = len(x), len(x[0]), len(x[0][0])
    ho, wo, F, A = (H - 3) // 2 + 1, (W - 3) // 2 + 1, len(b1), len(b2)
    z = [[0.0] * A for _ in range(B)]
    g_w1 = [[0.0] * F for _ in range(9)]
    g_b1, g_w2, g_b2 = [0.0] * F, [[0.0] * A for _ in range(ho * wo * F)], [0.0] * A
    for s in range(B):
        for a in range(A):
            z[s][a] = float(b2[a])
            if gz is not None:
                g_b2[a] += gz[s][a]
        for r in range(ho):
            for c in range(wo):
                patch = [x[s][2 * r + i][2 * c + j] for i in range(3) for j in range(3)]
                for f in range(F):
                    pre = float(b1[f]) + sum(patch[k] * float(w1[k][f]) for k in range(9))
                    h = max(pre, 0.0)
                    row = (r * wo + c) * F + f
                    for a in range(A):
                        z[s][a] += h * float(w2[row][a])
                    if gz is None:
                        continue
                    dh = 0.0
                    for a in range(A):
                        g_w2[row][a] += h * gz[s][a]
                        dh += gz[s][a] * float(w2[row][a])
                    if pre > 0.0:
                        g_b1[f] += dh
                        for k in range(9):
                            g_w1[k][f] += patch[k] * dh
    if gz is None:
        return z
    return z, (g_w1, g_b1, g_w2, g_b2)


def naive_mutation(X, J, K, codes, order_rate, bl_rate, seg, cluster_rate, rs):
    """:class:`moga.evolution.operators.ScheduleMutation` in plain Python, from the same draws
    in the same order (``codes``: the order moves' codes). Returns the rows as lists.

    Per row, a binomial ``(J, order_rate)`` number of order moves (kind, position ``i``,
    a far position for a swap, else ``i`` plus a shift within ``seg``, clipped); per row a
    binomial ``(J K, bl_rate)`` number of blacklist entries redrawn; then each row with
    probability ``cluster_rate`` gets one level of (0, 0.5, 1) on one cluster for the jobs
    at a run of order positions (all of them with probability 1/4).
    """
    n = len(X)
    n_moves = rs.binomial(J, order_rate, n)
    R = int(n_moves.sum())
    kinds = [codes[c] for c in rs.integers(0, len(codes), R)]
    i, far = rs.integers(0, J, R), rs.integers(0, J, R)
    shift = rs.integers(-seg, seg + 1, R)
    orders = [[int(round(v)) for v in row[:J]] for row in X]
    s = 0
    for r in range(n):
        for _ in range(n_moves[r]):
            j = far[s] if kinds[s] == 0 else min(max(i[s] + shift[s], 0), J - 1)
            orders[r] = naive_order_move(orders[r], kinds[s], i[s], j)
            s += 1
    if K == 0:
        return [[float(g) for g in o] for o in orders]
    bls = [[list(row[J + q * K:J + (q + 1) * K]) for q in range(J)] for row in X]
    n_reset = rs.binomial(J * K, bl_rate, n)
    cols = rs.integers(0, J * K, int(n_reset.sum()))
    values = rs.random(cols.size)
    t = 0
    for r in range(n):
        for _ in range(n_reset[r]):
            bls[r][cols[t] // K][cols[t] % K] = values[t]
            t += 1
    picked = [r for r, u in enumerate(rs.random(n)) if u < cluster_rate]
    m = len(picked)
    cluster, level = rs.integers(0, K, m), rs.integers(0, 3, m)
    a = rs.integers(0, J + 1, (m, 2))
    whole = rs.random(m) < 0.25
    for t, r in enumerate(picked):
        lo, hi = (0, J) if whole[t] else (min(a[t]), max(a[t]))
        bls[r] = naive_cluster_move(orders[r], bls[r], cluster[t], lo, hi,
                                    [0.0, 0.5, 1.0][level[t]])
    return [[float(g) for g in orders[r]] + [float(v) for row in bls[r] for v in row]
            for r in range(n)]


def naive_crowding_distance(F):
    """NSGA-II's crowding distance as pymoo defines it, in plain Python: per objective,
    the gaps to the neighbours in the (stable) sorted order over the objective's range
    (``inf`` at the ends; 0 where the range is 0 or a gap is undefined), summed over the
    objectives left to right and divided by their number; every row ``inf`` for n <= 2."""
    n, m = len(F), len(F[0])
    if n <= 2:
        return [math.inf] * n
    part = [[0.0] * m for _ in range(n)]
    for k in range(m):
        order = sorted(range(n), key=lambda i: F[i][k])
        s = [F[i][k] for i in order]
        norm = max(s) - min(s)
        for p, i in enumerate(order):
            gaps = (s[p] - s[p - 1] if p > 0 else math.inf,
                    s[p + 1] - s[p] if p < n - 1 else math.inf)
            d = [g / norm if norm != 0 and not math.isnan(g / norm) else 0.0 for g in gaps]
            part[i][k] = d[0] + d[1]
    out = []
    for i in range(n):
        t = part[i][0]
        for k in range(1, m):
            t += part[i][k]
        out.append(t / m)
    return out


def naive_pareto_ranks(F):
    """Pareto rank of each row (0: non-dominated; equal rows do not dominate each other)."""
    n = len(F)
    left, rank, r = set(range(n)), [None] * n, 0

    def dominates(a, b):
        pairs = list(zip(a, b, strict=True))
        return all(x <= y for x, y in pairs) and any(x < y for x, y in pairs)

    while left:
        front = [i for i in left if not any(dominates(F[j], F[i]) for j in left)]
        for i in front:
            rank[i] = r
        left -= set(front)
        r += 1
    return rank
