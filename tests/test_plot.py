"""The plots show what they say: each front's knee, the mode, a legend off the data, and the
Gantt chart's strip of nodes in use."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import moga  # noqa: E402
from moga.metrics import knee_index  # noqa: E402
from moga.plot import _nodes_in_use, plot_front, plot_gantt  # noqa: E402


def _front(n, shift):
    x = np.linspace(1.0, 2.0, n)
    return np.column_stack([x * 3600 * 10, (shift + 1.0 / x) * 3.6e9])


def test_compare_plot_marks_every_knee_says_the_mode_and_keeps_the_legend_off_the_axes():
    main, other = _front(20, 0.0), _front(7, 0.5)
    fig = plot_front(main, baselines={"EASY": (15 * 3600, 1.4 * 3.6e9)},
                     fronts={"random search": other}, title="w", mode="batch")
    ax = fig.axes[0]
    stars = [ln for ln in ax.get_lines() if ln.get_marker() == "*"]
    at = {(round(float(s.get_xdata()[0]), 6), round(float(s.get_ydata()[0]), 6)) for s in stars}
    for F in (main, other):
        k = knee_index(F)
        assert (round(F[k, 0] / 3600, 6), round(F[k, 1] / 3.6e9, 6)) in at
    assert "batch mode" in ax.get_title()
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1  # beside the axes, not over the data
    with pytest.raises(ValueError, match="batch"):
        plot_front(main, mode="online")


def test_gantt_strip_counts_the_nodes_in_use_per_cluster(tmp_path):
    fed = moga.Federation.preset("default").scaled(64)
    js = moga.load_default().jobset(start=400, n_jobs=120, federation=fed, batch=False)
    s = moga.evaluate(js, fed, backfill="easy")
    t_h, used = _nodes_in_use(s)
    assert (used >= -1e-9).all() and (used <= fed.nodes[None, :] + 1e-9).all()
    assert np.allclose(used[-1], 0)
    # at the middle of each interval, the jobs running there, counted one by one
    mid = (t_h[:-1] + t_h[1:]) / 2 * 3600
    for i in np.linspace(0, len(mid) - 1, 25).astype(int):
        on = (s.start <= mid[i]) & (mid[i] < s.finish)
        np.testing.assert_allclose(used[i], s.alloc[on].sum(axis=0))
    fig = plot_gantt(s, path=tmp_path / "gantt.png")
    assert len(fig.axes) == 2 and fig.axes[1].get_ylabel() == "nodes in use"
    assert (tmp_path / "gantt.png").stat().st_size > 0


def test_gantt_bars_cover_each_execution_s_nodes_in_maximal_runs():
    """Twin of the bars' merge: every (execution, node) pair of a random assignment is
    covered by exactly one bar of its execution, and no two bars of one execution and
    cluster touch (each run is as long as it can be)."""
    from moga.plot import _node_runs

    rng = np.random.default_rng(7)
    for _ in range(30):
        sizes = rng.integers(1, 40, size=rng.integers(1, 5))
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        nodes_of = []
        for _ in range(rng.integers(0, 25)):
            nodes_of.append([np.sort(rng.choice(n, size=rng.integers(0, n + 1), replace=False))
                             .astype(np.int64) for n in sizes])
        ex, y0, y1 = _node_runs(nodes_of, offsets)
        want = {(i, int(offsets[k] + v)) for i, per in enumerate(nodes_of)
                for k, nodes in enumerate(per) for v in nodes}
        got = []
        for i, a, b in zip(ex, y0, y1, strict=True):
            assert float(a).is_integer() and np.isclose(b - 0.9, round(b - 0.9))
            got += [(int(i), v) for v in range(int(a), int(round(b - 0.9)) + 1)]
        assert len(got) == len(set(got)) and set(got) == want
        ends = {(int(i), int(round(b - 0.9))) for i, b in zip(ex, y1, strict=True)}
        for i, a in zip(ex, y0, strict=True):
            k = np.searchsorted(offsets, a, side="right") - 1
            if a > offsets[k]:  # a run that could have gone on from the node before
                assert (int(i), int(a) - 1) not in ends
