"""Plots: Pareto fronts, hypervolume convergence and Gantt charts (PNG via matplotlib)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .model.objectives import check_objectives
from .outputs import atomic_path

__all__ = ["plot_front", "plot_front_matrix", "plot_convergence", "plot_gantt", "plot_box",
           "plot_value_over_time", "plot_value_by_class"]


def _axis(name: str) -> tuple[str, float]:
    """``(label, factor)`` of an objective's axis: its name and display unit from the
    catalogue (:data:`moga.model.objectives.CATALOGUE`), and the factor to that unit."""
    from .model.objectives import CATALOGUE

    o = CATALOGUE[check_objectives((name,))[0]]
    return o.label, o.display[1]


def _save(fig, path, dpi=120):
    """Write ``fig`` to ``path`` atomically (whole or absent) and close it; the format
    follows the file's suffix (PNG by default)."""
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with atomic_path(path) as tmp:
                fig.savefig(tmp, dpi=dpi, bbox_inches="tight", format=path.suffix[1:] or "png")
        finally:
            plt.close(fig)
    return fig


_MODES = {"batch": "batch mode: every job released at 0",
          "release": "release mode: jobs arrive at their submit times"}


def plot_front(F, objectives=("makespan", "energy"), baselines=None, knee=None, path=None,
               title=None, fronts=None, mode=None):
    """Scatter a two-objective front, with optional baseline points and other fronts.

    The knee of every other front is marked with a star in that front's colour
    (:func:`moga.metrics.knee_index`), so that each front's representative point,
    the one a comparison table prints, shows. The legend stands outside the axes,
    off the data.

    Parameters
    ----------
    F : array_like (n, 2)
        The front, in the catalogue's units (s, J, ...).
    objectives : (str, str)
        Names of the two objectives (catalogue names: axis labels and units; for
        three, see :func:`plot_front_matrix`).
    baselines : dict of str -> (float, float), optional
        Named single schedules to mark, e.g. ``{"submit order": (M, E)}``.
    knee : int, optional
        Index of a front member to highlight; when other ``fronts`` are drawn,
        the front's knee (:func:`moga.metrics.knee_index`) unless given.
    path : str or Path, optional
        Write a PNG there (and close the figure).
    title : str, optional
        The plot's title.
    fronts : dict of str -> array_like, optional
        More fronts to draw for comparison, each with its knee marked.
    mode : {"batch", "release"}, optional
        Adds to the title whether every job was released at 0 (batch) or at its
        submit time (release): the two settings rank schedulers differently.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .metrics import knee_index

    (xl, xs), (yl, ys) = _axis(objectives[0]), _axis(objectives[1])
    F = np.atleast_2d(np.asarray(F, dtype=float))
    if mode is not None and mode not in _MODES:
        raise ValueError(f"mode must be 'batch' or 'release', got {mode!r}")
    fig, ax = plt.subplots(figsize=(7.6, 4.8))
    front_colors = ("C9", "C7", "C8", "C6")  # apart from the front's C0 and the markers' C1-C5
    knees = False
    for i, (name, G) in enumerate((fronts or {}).items()):
        G = np.atleast_2d(np.asarray(G, dtype=float))
        G = G[np.argsort(G[:, 0])]
        color = front_colors[i % len(front_colors)]
        ax.plot(G[:, 0] * xs, G[:, 1] * ys, "o-", ms=3, lw=0.8, alpha=0.8, label=name,
                color=color)
        if len(G) > 1:
            g = knee_index(G)
            ax.plot(G[g, 0] * xs, G[g, 1] * ys, "*", color=color, ms=13, mec="k", mew=0.6,
                    zorder=4)
            knees = True
    if knee is None and fronts and len(F) > 1:
        knee = knee_index(F)
    order = np.argsort(F[:, 0])
    ax.plot(F[order, 0] * xs, F[order, 1] * ys, "o-", color="C0", ms=4, lw=1, label="MOGA front")
    if knee is not None:
        ax.plot(F[knee, 0] * xs, F[knee, 1] * ys, "*", color="C3", ms=15, mec="k", mew=0.6,
                label="knee" if not fronts else "MOGA's knee", zorder=5)
    markers = "sD^vP<>X"
    for i, (name, (x, y)) in enumerate((baselines or {}).items()):
        ax.plot(x * xs, y * ys, markers[i % len(markers)], color=f"C{i % 5 + 1}", ms=8,
                mec="k", alpha=0.9, label=name)
    ax.set_xlabel(xl)
    ax.set_ylabel(yl)
    ax.grid(alpha=0.3)
    handles, _ = ax.get_legend_handles_labels()
    if knees:
        handles.append(Line2D([], [], ls="none", marker="*", ms=11, mfc="w", mec="k",
                              label="each other front's knee"))
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0),
              borderaxespad=0.0)
    heading = "\n".join(t for t in (title, _MODES.get(mode)) if t)
    if heading:
        ax.set_title(heading, fontsize=10)
    return _save(fig, path)


def plot_front_matrix(F, objectives, baselines=None, knee=None, path=None, title=None):
    """A front of three (or more) objectives as a scatter matrix: one panel per pair.

    Panel (row i, column j) plots objective j against objective i, in the
    catalogue's display units; the diagonal holds each objective's histogram
    over the front. Every member is coloured alike; the knee is a star and each
    baseline a marker in every panel.

    Parameters
    ----------
    F : array_like (n, m)
        The front, in the catalogue's units.
    objectives : sequence of str
        Its ``m`` catalogue names.
    baselines : dict of str -> array_like (m,), optional
        Named single schedules to mark, e.g. ``{"submit order": reference}``.
    knee : int, optional
        Index of a front member to highlight.
    path : str or Path, optional
        Write a PNG there (and close the figure).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    F = np.atleast_2d(np.asarray(F, dtype=float))
    objectives = check_objectives(objectives)
    m = len(objectives)
    if F.shape[1] != m:
        raise ValueError(f"F has {F.shape[1]} objective columns for {m} names {list(objectives)}")
    axes_ = [_axis(o) for o in objectives]
    G = F * np.array([f for _, f in axes_])
    fig, axes = plt.subplots(m, m, figsize=(2.6 * m + 1.6, 2.4 * m), squeeze=False)
    markers = "sD^vP<>X"
    for i in range(m):
        for j in range(m):
            ax = axes[i, j]
            if i == j:
                ax.hist(G[:, i], bins=min(20, max(3, len(G))), color="C0", alpha=0.7)
            else:
                ax.plot(G[:, j], G[:, i], "o", color="C0", ms=3, alpha=0.8,
                        label="MOGA front")
                if knee is not None:
                    ax.plot(G[knee, j], G[knee, i], "*", color="C3", ms=12, mec="k", mew=0.6,
                            label="knee", zorder=5)
                for b, (name, point) in enumerate((baselines or {}).items()):
                    P = np.asarray(point, dtype=float) * np.array([f for _, f in axes_])
                    ax.plot(P[j], P[i], markers[b % len(markers)], color=f"C{b % 5 + 1}",
                            ms=7, mec="k", alpha=0.9, label=name)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
            if i == m - 1:
                ax.set_xlabel(axes_[j][0], fontsize=8)
            if j == 0:
                ax.set_ylabel(axes_[i][0], fontsize=8)
    handles, labels = axes[0, 1 if m > 1 else 0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 0.95))
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


#: What the hypervolume of ``run.json`` and the plots is normalised by
#: (:func:`moga.metrics.normalized_hypervolume` with the submit order as the base).
HV_NORMALISATION = ("objectives / the submit order's, reference point 1.1 each: "
                    "the submit order alone scores 0.01 with two objectives")


def plot_convergence(history, path=None, title=None):
    """Normalised hypervolume per generation (``RunResult.history``), the normalisation
    (:data:`HV_NORMALISATION`) under the axis."""
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.plot(history["n_gen"], history["hv"], color="C0")
    ax.set_xlabel(f"generation\nhypervolume of {HV_NORMALISATION}", fontsize=8)
    ax.set_ylabel("hypervolume (normalised)")
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title, fontsize=10)
    return _save(fig, path)


def _nodes_in_use(schedule):
    """Event times (h) and nodes in use per cluster from each time on, shape (T, K); a
    job's nodes are freed at its finish, before a job starting at that instant takes them."""
    alloc = schedule.execution_alloc()
    segs = schedule.segments
    start, end = (schedule.start, schedule.finish) if segs is None else (segs.start, segs.end)
    ran = np.isfinite(start) & np.isfinite(end)
    start, end, alloc = start[ran], end[ran], alloc[ran].astype(np.float64)
    times = np.unique(np.concatenate([[0.0], start, end]))
    delta = np.zeros((len(times), alloc.shape[1]))
    np.add.at(delta, np.searchsorted(times, start), alloc)
    np.add.at(delta, np.searchsorted(times, end), -alloc)
    return times / 3600, np.cumsum(delta, axis=0)


def plot_gantt(schedule, path=None, title=None, max_jobs_labelled=0):
    """Gantt chart of a schedule: one band per cluster, nodes on y, time (h) on x, and
    below it a strip of the nodes in use per cluster over time.

    A job's tasks are bars on the nodes they ran on (nodes as assigned by
    :meth:`moga.schedule.Schedule.node_assignment`), one bar per run of
    consecutive nodes in a cluster (not one per task, which a month's schedule
    has millions of). Co-allocated jobs are drawn in red tones, the others in
    blue tones; a preempted job has bars for each execution
    (:attr:`moga.Schedule.segments`). The strip stacks the
    clusters' nodes in use in the bands' order (the first cluster on top, as in
    the chart above) under the federation's size; a job's nodes count as free from its
    finish, so the strip never exceeds the federation.
    """
    fed = schedule.federation
    nodes_of = schedule.execution_nodes()
    segs = schedule.segments
    offsets = np.concatenate([[0], np.cumsum(fed.nodes)])
    J = len(schedule.jobset)
    coalloc = (schedule.alloc > 0).sum(axis=1) >= 2
    rng = np.random.default_rng(0)  # fixed shades so that neighbouring jobs differ
    shade = rng.uniform(0.35, 0.9, J)
    if segs is None:
        rows, s_h, f_h = np.arange(J), schedule.start / 3600, schedule.finish / 3600
    else:
        rows, s_h, f_h = segs.job, segs.start / 3600, segs.end / 3600
    ex, y0, y1 = _node_runs(nodes_of, offsets)
    polys = np.stack([np.column_stack([s_h[ex], y0]), np.column_stack([f_h[ex], y0]),
                      np.column_stack([f_h[ex], y1]), np.column_stack([s_h[ex], y1])], axis=1)
    job = np.asarray(rows, dtype=np.int64)[ex]
    colors = np.where(coalloc[job][:, None], plt.cm.Reds(shade[job]), plt.cm.Blues(shade[job]))
    height = min(12.0, 3.0 + fed.total_nodes / 40)
    fig, (ax, ux) = plt.subplots(2, 1, figsize=(10, height + 2.0), sharex=True,
                                 gridspec_kw={"height_ratios": [height, 2.0], "hspace": 0.08})
    ax.add_collection(PolyCollection(polys, facecolors=colors, edgecolors="none"))
    for k in range(1, fed.n_clusters):
        ax.axhline(offsets[k], color="k", lw=0.8)
    ax.set_yticks((offsets[:-1] + offsets[1:]) / 2)
    ax.set_yticklabels([f"{n}\n({int(c)} x {s:g})" for n, c, s in
                        zip(fed.names, fed.nodes, fed.speed, strict=True)], fontsize=8)
    ax.set_ylim(offsets[-1], 0)
    ended = f_h[np.isfinite(f_h)]  # a rejected job has no finish and no bar
    ax.set_xlim(0, max(ended.max() if ended.size else 0.0, 1e-9) * 1.01)
    ax.legend(handles=[Patch(color=plt.cm.Blues(0.7), label="in one cluster"),
                       Patch(color=plt.cm.Reds(0.7), label="co-allocated")],
              loc="upper right", fontsize=8)
    ax.set_title(title or (f"{schedule.jobset.name}: makespan {schedule.makespan / 3600:.1f} h, "
                           f"energy {schedule.energy / 3.6e9:.3f} MWh ({schedule.model})"),
                 fontsize=10)
    times, used = _nodes_in_use(schedule)
    below = np.zeros(len(times))
    for k in reversed(range(fed.n_clusters)):  # the first cluster on top, as in the bands
        ux.fill_between(times, below, below + used[:, k], step="post", lw=0,
                        color=plt.cm.viridis(k / max(fed.n_clusters - 1, 1)), alpha=0.85,
                        label=fed.names[k])
        below = below + used[:, k]
    ux.axhline(fed.total_nodes, color="k", lw=0.8, ls="--")
    ux.set_ylim(0, fed.total_nodes * 1.05)
    ux.set_ylabel("nodes in use", fontsize=8)
    ux.set_xlabel("time (h)")
    ux.grid(alpha=0.3)
    handles, labels = ux.get_legend_handles_labels()  # bottom to top, as stacked
    ux.legend(handles[::-1], labels[::-1], loc="upper left", bbox_to_anchor=(1.005, 1.0),
              borderaxespad=0.0, fontsize=7, title=f"of {fed.total_nodes}", title_fontsize=7)
    return _save(fig, path)


def _node_runs(nodes_of, offsets):
    """The Gantt chart's bars as ``(execution, y0, y1)`` arrays: one per run of consecutive
    nodes that an execution held in a cluster (``nodes_of[i][k]``, increasing indices), from
    the run's first node to 0.9 past its last, on the chart's y axis (cluster ``k`` from
    ``offsets[k]``)."""
    ex, y0, y1 = [np.empty(0, dtype=np.int64)], [np.empty(0)], [np.empty(0)]
    for k in range(len(offsets) - 1):
        held = [nodes[k] for nodes in nodes_of]
        counts = np.fromiter((n.size for n in held), dtype=np.int64, count=len(held))
        if counts.sum() == 0:
            continue
        node = np.concatenate(held)
        row = np.repeat(np.arange(len(held)), counts)
        # A run starts where the execution changes or a node does not follow the last.
        first = np.ones(node.size, dtype=bool)
        first[1:] = (row[1:] != row[:-1]) | (node[1:] != node[:-1] + 1)
        head = np.flatnonzero(first)
        tail = np.append(head[1:], node.size) - 1
        ex.append(row[head])
        y0.append(offsets[k] + node[head].astype(float))
        y1.append(offsets[k] + node[tail] + 0.9)
    return np.concatenate(ex), np.concatenate(y0), np.concatenate(y1)


def plot_box(data, ylabel="", title=None, path=None):
    """Box plot of several samples: ``data`` maps a label to a list of values."""
    labels = list(data)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(labels) + 1), 4))
    ax.boxplot([data[k] for k in labels])
    ax.set_xticks(range(1, len(labels) + 1), labels, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, axis="y")
    if title:
        ax.set_title(title, fontsize=10)
    return _save(fig, path)


def plot_value_over_time(schedules, path=None, title=None):
    """Cumulative value earned against completion time (h), one line per schedule.

    ``schedules`` maps a name to a :class:`moga.value.ValueSchedule`.
    """
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for name, s in schedules.items():
        done = ~np.isnan(s.finish)
        order = np.argsort(s.finish[done])
        t = s.finish[done][order] / 3600
        ax.step(t, np.cumsum(s.value[done][order]), where="post", label=name)
    ax.set_xlabel("completion time (h)")
    ax.set_ylabel("value earned")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    return _save(fig, path)


def plot_value_by_class(schedules, class_names=None, path=None, title=None):
    """Share of each priority class's jobs completed, one bar group per class."""
    names = list(schedules)
    first = schedules[names[0]]
    classes = np.unique(first.jobset.priority)
    fig, ax = plt.subplots(figsize=(6.4, 4))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        by = schedules[name].value_by_class()
        share = [100 * by[int(c)]["completed"] / by[int(c)]["jobs"] for c in classes]
        ax.bar(np.arange(len(classes)) + i * width, share, width, label=name)
    labels = [class_names[int(c)] if class_names else str(int(c)) for c in classes]
    ax.set_xticks(np.arange(len(classes)) + 0.4 - width / 2, labels)
    ax.set_ylabel("jobs completed (%)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    return _save(fig, path)
