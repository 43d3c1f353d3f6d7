"""``moga schedule``: the schedule files and Gantt chart of a front member of a run."""

from __future__ import annotations

from pathlib import Path

from .common import listed, plots, prepare_out

HELP = "write the schedule files and a Gantt chart of a front member of a moga run"


def add_arguments(p) -> None:
    p.add_argument("run_dir", help="output folder of moga run (or its result.npz)")
    p.add_argument("--point", default="knee",
                   help="knee, or the index of a front member in front.csv (default: knee)")
    p.add_argument("--out", default=None,
                   help="output folder (default: RUN_DIR/schedule-POINT)")


def _member(res, point: str, src) -> int:
    """The front index ``--point`` names."""
    if point == "knee":
        return res.knee()
    try:
        i = int(point)
    except ValueError:
        raise ValueError(f"--point takes knee or a front index, got {point!r}") from None
    if not 0 <= i < len(res.F):
        raise ValueError(f"--point {i}: the front of {src} has {len(res.F)} members "
                         f"(0 to {len(res.F) - 1})")
    return i


def run(args) -> int:
    from ..plot import plot_gantt
    from ..results import load_result

    run_dir = Path(args.run_dir)
    src = run_dir / "result.npz" if run_dir.is_dir() else run_dir
    res = load_result(src)
    i = _member(res, args.point, src)
    out = prepare_out(args.out or (src.parent / f"schedule-{args.point}"),
                      ["schedule.csv", "schedule.swf", "gantt.png"])
    s = res.schedule(i)
    s.to_csv(out / "schedule.csv")
    s.to_swf(out / "schedule.swf")
    drawn = plots([("gantt.png", lambda: plot_gantt(s, path=out / "gantt.png"))])
    print(f"front member {i} of {len(res.F)} ({'knee' if i == res.knee() else 'index'}): "
          f"makespan {s.makespan / 3600:.2f} h, energy {s.energy / 3.6e9:.4f} MWh")
    print(f"wrote {out}/schedule.csv, schedule.swf" + listed(drawn))
    return 0
