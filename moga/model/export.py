"""Schedules out: a per-job table that other tools read.

Three files, each written atomically (:mod:`moga.outputs`):

``schedule.csv``
    Batsim's ``out_jobs.csv`` columns, so that evalys
    (``evalys.jobset.JobSet.from_csv``) reads it and draws its Gantt chart,
    utilisation and queue plots. Nodes are numbered across the federation:
    cluster ``k``'s nodes follow those of clusters ``0 .. k-1``
    (:func:`node_offsets`); ``allocated_resources`` is the job's node set in
    Batsim's interval notation (``"0-3 40-41"``).
``schedule.swf``
    The 18 fields of the Standard Workload Format with the schedule's real
    wait and run times, which :func:`moga.load_swf` and other SWF tools read
    back: submit = release, wait = start - release, run time = finish - start,
    processors = tasks, requested time = the job's requested time, status 1,
    partition = the cluster (1-based) that holds most of the job's tasks. A
    job an online policy rejected (:attr:`moga.Schedule.rejected`) has status
    5 (cancelled) and -1 for its wait, run time, processors and partition; a
    job killed at its requested time (:attr:`moga.Schedule.killed`) has
    status 0 (failed: it did not complete its work; 5, cancelled, is a
    cancellation, which here is a rejection).
``segments.csv``
    For a schedule with preemptions (:attr:`moga.Schedule.segments`), one
    row per execution (:data:`SEGMENT_COLUMNS`): the job, its execution
    number, start and end, restart read, computation kept and lost,
    checkpoint writes, whether it was preempted, its nodes and its energy. In
    ``schedule.csv`` a preempted job's ``execution_time`` is then
    ``finish - start`` over all its executions, its ``allocated_resources``
    the nodes of its last one.

One rule for the numbers of every file (docs/outputs.md, "One rule for exported
numbers"): every time written (``schedule.csv``, ``segments.csv``, ``schedule.swf``)
is :func:`export_times` of the exact time, the nearest multiple of :data:`CSV_TICK`
(1/64 s), so one instant is one number in every file and every duration written is
the difference of two written times; every energy is computed from the exact times
(:meth:`moga.Schedule.execution_energy`) and written with all its digits, so the
energies add up to ``metrics.json``'s to rounding error. Numbers on the tick
have at most six decimals and add exactly in binary, so evalys,
which writes every column to six decimals and recomputes each start as
``submission_time + waiting_time`` and each finish as ``starting_time +
execution_time``, finds a job's start at the very instant its predecessor on
the same nodes finishes, and its utilisation never exceeds the machine. The
rounding is monotone, so no job overlaps another on a node after it;
:meth:`moga.Schedule.to_dataframe` keeps the exact times.

A rejected job's row in ``schedule.csv`` has ``success`` 0, ``final_state``
``REJECTED`` (Batsim's name), NaN times and no nodes; a job killed at its
requested time has ``success`` 0 and ``final_state``
``COMPLETED_WALLTIME_REACHED``, what Batsim writes for a job it killed at its
walltime.

Per-job energy (``consumed_energy``) is what the job's nodes draw while it
runs: ``sum_k alloc[j, k] * max(power[j] * power_busy[k], power_idle[k]) *
(finish - start)`` (the sum of its executions' lengths when it was
preempted); idle power outside the jobs is the federation's, not any job's.
"""

from __future__ import annotations

import numpy as np

from ..errors import MissingExtraError
from ..outputs import atomic_write

__all__ = ["BATSIM_COLUMNS", "CSV_TICK", "SEGMENT_COLUMNS", "export_times", "format_number",
           "jobs_table", "node_offsets", "to_dataframe", "write_csv", "write_segments_csv",
           "write_swf"]

#: Columns of ``schedule.csv``: Batsim's ``out_jobs.csv``, in its order.
BATSIM_COLUMNS = ("job_id", "workload_name", "profile", "submission_time",
                  "requested_number_of_resources", "requested_time", "success", "final_state",
                  "starting_time", "execution_time", "finish_time", "waiting_time",
                  "turnaround_time", "stretch", "allocated_resources", "consumed_energy",
                  "metadata")

#: Resolution of every exported time (``schedule.csv``, ``segments.csv``, ``schedule.swf``),
#: in seconds: a power of two with six decimals (1/64 = 0.015625), so that sums of such
#: times are exact and evalys's six-decimal rounding leaves them unchanged.
CSV_TICK = 1.0 / 64.0

#: Columns of ``segments.csv``: one row per execution of a job.
SEGMENT_COLUMNS = ("job_id", "execution", "starting_time", "finish_time", "read_time",
                   "compute_kept", "compute_lost", "checkpoint_write", "preempted",
                   "allocated_resources", "consumed_energy")


def export_times(t) -> np.ndarray:
    """Times as every export writes them: each the nearest multiple of :data:`CSV_TICK`.

    The one rounding of every exporter, so that an instant is the same number in
    ``schedule.csv``, ``segments.csv`` and ``schedule.swf``. Each moves by at most
    half a tick; the rounding is monotone, so no order of events changes (two
    events may land on one tick). NaN and infinities stay as they are.

    Parameters
    ----------
    t : array_like of float
        Times in s.

    Returns
    -------
    ndarray of float64
    """
    return np.round(np.asarray(t, dtype=np.float64) / CSV_TICK) * CSV_TICK


def node_offsets(federation) -> np.ndarray:
    """Federation-wide number of each cluster's first node, shape (K,)."""
    return np.concatenate([[0], np.cumsum(federation.nodes)[:-1]]).astype(np.int64)


def _interval_string(nodes) -> str:
    """Sorted node numbers as Batsim's interval set: ``"0-3 7 9-10"``."""
    nodes = np.sort(np.asarray(nodes, dtype=np.int64))
    if nodes.size == 0:
        return ""
    cut = np.flatnonzero(np.diff(nodes) != 1) + 1
    parts = []
    for run in np.split(nodes, cut):
        parts.append(str(run[0]) if run.size == 1 else f"{run[0]}-{run[-1]}")
    return " ".join(parts)


def jobs_table(schedule) -> dict:
    """The schedule per job, as columns (:data:`BATSIM_COLUMNS`), in job-set order."""
    js, fed = schedule.jobset, schedule.federation
    start, finish, alloc = schedule.start, schedule.finish, schedule.alloc
    run = finish - start
    turnaround = finish - js.release
    offsets = node_offsets(fed)
    nodes = schedule.node_assignment()
    rejected, killed = schedule.rejected, schedule.killed
    energy = schedule.execution_energy()
    if schedule.segments is not None:  # preempted jobs draw busy power only while they run
        energy = np.bincount(schedule.segments.job, weights=energy, minlength=len(js))
        # A rejected row has no nodes and no energy, even when the job ran before a
        # preemption: its executions are in segments.csv (and in the total energy).
        energy[rejected] = 0.0
    names = fed.names
    return {
        "job_id": js.id.astype(np.int64),
        "workload_name": [js.name] * len(js),
        "profile": ["delay"] * len(js),
        "submission_time": js.release.copy(),
        "requested_number_of_resources": js.tasks.astype(np.int64),
        "requested_time": js.requested.copy(),
        "success": (~rejected & ~killed).astype(np.int64),
        "final_state": np.where(rejected, "REJECTED", np.where(
            killed, "COMPLETED_WALLTIME_REACHED", "COMPLETED_SUCCESSFULLY")).tolist(),
        "starting_time": start.copy(),
        "execution_time": run,
        "finish_time": finish.copy(),
        "waiting_time": start - js.release,
        "turnaround_time": turnaround,
        "stretch": np.divide(turnaround, run, out=np.where(rejected, np.nan, 1.0),
                             where=run > 0),
        "allocated_resources": [
            "" if rejected[j] else
            _interval_string(np.concatenate([offsets[k] + nodes[j][k]
                                             for k in range(len(names))]))
            for j in range(len(js))],
        "consumed_energy": energy,
        "metadata": [" ".join(f"{names[k]}:{int(alloc[j, k])}" for k in range(len(names))
                              if alloc[j, k]) for j in range(len(js))],
    }


def format_number(v) -> str:
    """A number as every exporter writes it: a float with all its digits (``repr``, the
    shortest text that reads back to the same float; ``nan`` and ``inf`` as such), anything
    else as ``str``.

    The one formatting of the numbers of ``schedule.csv``, ``segments.csv``,
    ``schedule.swf`` and the comparison tables (``compare.csv``, ``value.csv``), so that a
    number read back from one agrees with the same number in another and in
    ``metrics.json``.
    """
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return str(v)


def _cell(v) -> str:
    """One CSV or SWF field: a number by :func:`format_number`, text quoted as CSV."""
    if isinstance(v, (float, np.floating)):
        return format_number(v)
    s = str(v)
    if any(c in s for c in ',"\n'):
        return '"' + s.replace('"', '""') + '"'
    return s


def _on_ticks(table) -> dict:
    """The table with its times as exported (:func:`export_times`) and the durations between
    them recomputed, so that start = submission + wait and finish = start + execution exactly."""
    q = {c: export_times(table[c]) for c in ("submission_time", "starting_time", "finish_time")}
    run = q["finish_time"] - q["starting_time"]
    turnaround = q["finish_time"] - q["submission_time"]
    out = dict(table)
    out.update(q)
    out["execution_time"] = run
    out["waiting_time"] = q["starting_time"] - q["submission_time"]
    out["turnaround_time"] = turnaround
    out["stretch"] = np.divide(turnaround, run, out=np.where(np.isnan(run), np.nan, 1.0),
                                where=run > 0)
    return out


def write_csv(schedule, path) -> None:
    """Write ``schedule.csv`` (:data:`BATSIM_COLUMNS`) to ``path``, atomically; times on
    :data:`CSV_TICK` (module docstring)."""
    table = _on_ticks(jobs_table(schedule))
    lines = [",".join(BATSIM_COLUMNS)]
    cols = [table[c] for c in BATSIM_COLUMNS]
    for i in range(len(schedule.jobset)):
        lines.append(",".join(_cell(c[i]) for c in cols))
    atomic_write(path, "\n".join(lines) + "\n")


def write_segments_csv(schedule, path) -> None:
    """Write ``segments.csv`` (:data:`SEGMENT_COLUMNS`) of a schedule with preemptions to
    ``path``, atomically; times by :func:`export_times`, each execution's energy from
    :meth:`moga.Schedule.execution_energy`; a ValueError for a schedule without segments."""
    seg = schedule.segments
    if seg is None:
        raise ValueError("this schedule has no preemptions: each job ran once, on "
                         "[start, finish) of schedule.csv")
    fed = schedule.federation
    offsets = node_offsets(fed)
    nodes = schedule.execution_nodes()
    ids = schedule.jobset.id.astype(np.int64)
    start, end = export_times(seg.start), export_times(seg.end)
    energy = schedule.execution_energy()
    seen = np.zeros(len(schedule.jobset), dtype=np.int64)
    lines = [",".join(SEGMENT_COLUMNS)]
    for i in np.lexsort((seg.job, seg.start)):
        j = int(seg.job[i])
        seen[j] += 1
        where = _interval_string(np.concatenate([offsets[k] + nodes[i][k]
                                                 for k in range(fed.n_clusters)]))
        lines.append(",".join(_cell(v) for v in (
            int(ids[j]), int(seen[j]), start[i], end[i], seg.read[i], seg.compute[i],
            seg.lost[i], seg.write[i], int(bool(seg.preempted[i])), where, energy[i])))
    atomic_write(path, "\n".join(lines) + "\n")


def write_swf(schedule, path) -> None:
    """Write the schedule as an SWF file (18 fields, real wait and run times), atomically;
    submit, start and finish by :func:`export_times`, as in ``schedule.csv``."""
    js, fed = schedule.jobset, schedule.federation
    alloc = schedule.alloc
    release, start, finish = (export_times(t) for t in (js.release, schedule.start,
                                                        schedule.finish))
    main = np.argmax(alloc, axis=1) + 1
    head = ["; Version: 2.2",
            f"; Computer: moga federation {fed.name} ({', '.join(fed.names)})",
            f"; MaxProcs: {fed.total_nodes}",
            f"; MaxNodes: {fed.total_nodes}",
            f"; Note: schedule of {js.name} ({len(js)} jobs) by moga, model {schedule.model}, "
            f"backfill {schedule.backfill}; times in s from the first release, on a 1/64 s tick; partition = "
            "the cluster holding most of the job's tasks (1-based)"]
    rejected, killed = schedule.rejected, schedule.killed
    rows = []
    for j in np.argsort(js.release, kind="stable"):
        if rejected[j]:  # cancelled: it never completed
            wait, run, procs, status, part = -1, -1, -1, 5, -1
        else:
            wait = _cell(start[j] - release[j])
            run = _cell(finish[j] - start[j])
            # 0, failed: the system ended a job killed at its requested time
            procs, status, part = int(js.tasks[j]), 0 if killed[j] else 1, int(main[j])
        f = [int(js.id[j]), _cell(release[j]), wait, run, procs, -1, -1,
             int(js.tasks[j]), _cell(js.requested[j]), -1, status, -1, -1, -1, -1,
             part, -1, -1]
        rows.append(" ".join(str(x) for x in f))
    atomic_write(path, "\n".join(head + rows) + "\n")


def to_dataframe(schedule):
    """The per-job table (:func:`jobs_table`) as a pandas DataFrame (pandas needed)."""
    try:
        import pandas as pd
    except ImportError as e:
        raise MissingExtraError("Schedule.to_dataframe", "pandas", str(e),
                                package=True) from None
    return pd.DataFrame(jobs_table(schedule), columns=list(BATSIM_COLUMNS))
