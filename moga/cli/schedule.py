"""``moga schedule``: the schedule files and Gantt chart of a front member of a run."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from ..outputs import check_set, output_set
from .common import listed, plots, prepare_out, settings

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
    check_set(src.parent, src.name)
    res = _checked_result(src, load_result)
    i = _member(res, args.point, src)
    out = prepare_out(args.out or (src.parent / f"schedule-{args.point}"),
                      ["schedule.csv", "schedule.swf", "gantt.png"], command="schedule",
                      reads=[src.parent])
    s = _decode_checked(res, i, src)
    with output_set(out, "schedule", settings(args), reads=[src.parent]) as o:
        s.to_csv(o / "schedule.csv")
        s.to_swf(o / "schedule.swf")
        drawn = plots([("gantt.png", lambda: plot_gantt(s, path=o / "gantt.png"))])
    print(f"front member {i} of {len(res.F)} ({'knee' if i == res.knee() else 'index'}): "
          f"makespan {s.makespan / 3600:.2f} h, energy {s.energy / 3.6e9:.4f} MWh"
          + _others(res, i))
    print(f"wrote {out}/schedule.csv, schedule.swf" + listed(drawn))
    return 0


def _others(res, i) -> str:
    """The member's other objectives of the run (besides makespan and energy), as
    ``, bsld 3.210``; empty for a makespan-energy run."""
    from ..model.objectives import CATALOGUE

    names = tuple(getattr(res, "objectives", ()))
    return "".join(f", {n} {CATALOGUE[n].shown(v)}" if n in CATALOGUE else f", {n} {v:.6g}"
                   for n, v in zip(names, res.F[i], strict=False)
                   if n not in ("makespan", "energy"))


def _checked_result(src, load_result):
    """``load_result(src)``, its front checked: finite, one row per chromosome; any error of
    rebuilding it an InputError naming the file."""
    try:
        res = load_result(src)
    except (InputError, OSError):
        raise
    except Exception as e:  # noqa: BLE001 - a damaged file, whatever part of it
        raise InputError(f"{src}: not a usable moga result ({type(e).__name__}: {e})") from None
    F, X = np.asarray(res.F), np.asarray(res.X)
    if F.dtype.kind not in "iuf" or X.dtype.kind not in "iuf":
        raise InputError(f"{src}: the front F ({F.dtype}) and the chromosomes X ({X.dtype}) "
                         "must be numbers; the file is damaged")
    if F.ndim != 2 or F.shape[0] == 0 or F.shape[0] != X.shape[0]:
        raise InputError(f"{src}: the front F has shape {F.shape} for {X.shape[0]} "
                         "chromosome(s) X; the file is damaged")
    if not np.isfinite(F).all():
        raise InputError(f"{src}: the front F holds values that are not finite; the file is "
                         "damaged")
    return res


def _decode_checked(res, i, src):
    """Member ``i`` of ``res`` decoded, refused unless it gives the objectives the file
    records for it (a file edited, or written by a version whose decoder differs)."""
    try:
        with np.errstate(invalid="ignore", over="ignore"):  # a damaged X: refused below
            s = res.schedule(i)
    except (InputError, OSError):
        raise
    except Exception as e:  # noqa: BLE001 - a damaged file, whatever part of it
        raise InputError(f"{src}: front member {i} cannot be decoded ({type(e).__name__}: "
                         f"{e})") from None
    from ..model.objectives import CATALOGUE

    names = tuple(getattr(res, "objectives", ("makespan", "energy")))
    for k, name in enumerate(names[:res.F.shape[1]]):
        # Every catalogue entry is recomputed; a name this process's catalogue lacks (an
        # entry registered by the program that ran the search) is taken as recorded.
        if name in CATALOGUE:
            got, want = CATALOGUE[name].of_schedule(s), float(res.F[i, k])
            if not np.isclose(got, want, rtol=1e-6, atol=1e-6):
                raise InputError(f"{src}: front member {i} decodes to {name} {got:.6g}, but "
                                 f"the file records {want:.6g}: it was edited or written by "
                                 "another version of moga; run the search again")
    return s
