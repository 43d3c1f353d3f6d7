"""The results store of a sweep: one row file and one front file per finished run.

Layout of a store folder::

    config.json          the configuration the store was made with (its fingerprint)
    runs/<run_id>.csv    one header line and one row: ids, parameters, objectives, hv, time
    fronts/<run_id>.csv  the run's front (makespan_s, energy_J; or the sweep's objectives)

A sweep of other objectives than makespan and energy (``objectives`` in its
configuration) adds two columns to each row, ``objectives`` (their names) and
``ref`` (the FCFS schedule's values, which normalise the hypervolume), and its
fronts have a column per objective (:func:`front_columns`).

Guarantees:

* **No loss.** Each file is written to a temporary name, flushed to disk and
  renamed; the front goes first, so a run counts as finished only once its
  row exists, and a crash at any instant leaves finished runs whole.
* **No collisions.** A run id is a readable prefix plus a hash of everything
  that changes the run's result (:meth:`RunSpec.key`), so distinct runs never
  share a file.
* **No silent mixing.** A store records its configuration; running a different
  configuration into it stops with an error that says what differs.
* **Damage is reported.** A row that cannot be read raises an error naming
  its file.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np

from ...outputs import OutputError, atomic_create, atomic_write, check_writable

__all__ = ["OBJECTIVE_FIELDS", "ROW_FIELDS", "StoreError", "front_columns", "open_store",
           "write_run", "finished_runs", "load_results", "foreign_runs", "read_config",
           "atomic_write"]

#: Columns of a run's row, in order.
ROW_FIELDS = ("run_id", "sweep", "trace", "window", "start", "n_jobs", "jobset", "algorithm",
              "seed", "model", "federation", "params", "makespan_s", "energy_J", "flowtime_s",
              "ref_makespan_s", "ref_energy_J", "hv", "front_size", "n_evals", "wall_time_s")

#: The columns a row of a sweep of other objectives adds.
OBJECTIVE_FIELDS = ("objectives", "ref")

_NUMERIC_INT = {"window", "start", "n_jobs", "seed", "front_size", "n_evals"}


def front_columns(objectives) -> tuple:
    """The column names of a front file: each objective's name and unit
    (``makespan_s``, ``energy_J``, ``bsld``, ``edp_J_s``)."""
    from ...model.objectives import CATALOGUE

    return tuple(o + ("_" + CATALOGUE[o].unit.replace(" ", "_") if CATALOGUE[o].unit else "")
                 for o in objectives)


class StoreError(ValueError):
    """A results store that cannot be used as asked (mismatch, damage, not writable)."""


def _diff(old: dict, new: dict, prefix=""):
    keys = sorted(set(old) | set(new))
    out = []
    for k in keys:
        a, b = old.get(k), new.get(k)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _diff(a, b, f"{prefix}{k}.")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and a != b:
            out += _diff({str(i): x for i, x in enumerate(a)}, {str(i): x for i, x in enumerate(b)},
                         f"{prefix}{k}")
        elif a != b:
            out.append(f"{prefix}{k}: {a!r} in the store, {b!r} now")
    return out


def open_store(out, fingerprint: dict, run_ids=None) -> Path:
    """Create or reopen a store for a configuration; refuse a store made with another.

    Checks first that the folder can be written, so that nothing runs for
    results that could not be kept. ``config.json`` is created exclusively and
    read back, so two sweeps started together into one store cannot both pass
    the check. ``run_ids`` (the configuration's runs) are recorded with it, so
    that :func:`load_results` can tell rows that do not belong.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise StoreError(f"{out}: the results store must be a folder, and this is a file")
    try:
        for sub in ("runs", "fronts"):
            check_writable(out / sub, "the results store")
    except OutputError as e:
        raise StoreError(str(e)) from None
    cfg = out / "config.json"
    fp = json.loads(json.dumps(fingerprint, default=str))
    doc = {"fingerprint": fp}
    if run_ids is not None:
        doc["run_ids"] = sorted(run_ids)
    if not cfg.exists():
        _create_exclusive(cfg, json.dumps(doc, indent=2) + "\n")
    # Re-read whatever is there now: when two sweeps start together, only one creates the
    # file, and the other must compare with it.
    old = read_config(out)
    old_fp = old.get("fingerprint", old)
    if old_fp != fp:
        diffs = _diff(old_fp, fp) if isinstance(old_fp, dict) else ["(old format)"]
        raise StoreError(
            f"{out} holds runs of a different sweep configuration; use another --out, or "
            f"move this store away. Differences: " + "; ".join(diffs[:6])
            + (f" (and {len(diffs) - 6} more)" if len(diffs) > 6 else ""))
    if run_ids is not None and "run_ids" not in old:
        atomic_write(cfg, json.dumps({**old, "run_ids": sorted(run_ids)}, indent=2) + "\n")
    return out


def _create_exclusive(path: Path, text: str) -> bool:
    """:func:`moga.outputs.atomic_create`, its failure a :class:`StoreError`."""
    try:
        return atomic_create(path, text)
    except OutputError as e:
        raise StoreError(str(e)) from None


def read_config(out) -> dict:
    """The store's ``config.json``: ``fingerprint`` and, when recorded, ``run_ids``."""
    cfg = Path(out) / "config.json"
    try:
        old = json.loads(cfg.read_text())
    except (OSError, ValueError) as e:
        raise StoreError(f"{cfg}: unreadable store configuration ({e}); move the store "
                         "away or repair the file") from None
    if not isinstance(old, dict):
        raise StoreError(f"{cfg}: unreadable store configuration (not a JSON object)")
    return old


def write_run(out: Path, result: dict) -> None:
    """Store one finished run (``{"row": dict, "front": ndarray}``): front first, then row."""
    row = result["row"]
    buf = io.StringIO()
    fields = ROW_FIELDS + (OBJECTIVE_FIELDS if "objectives" in row else ())
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerow({k: _cell(v) for k, v in row.items()})
    columns = result.get("columns", ("makespan_s", "energy_J"))
    front = ",".join(columns) + "\n" + "".join(
        ",".join(repr(float(v)) for v in f) + "\n" for f in result["front"])
    atomic_write(Path(out) / "fronts" / f"{row['run_id']}.csv", front)
    atomic_write(Path(out) / "runs" / f"{row['run_id']}.csv", buf.getvalue())


def _cell(v):
    """Floats written exactly (repr round-trips), numpy scalars as plain numbers."""
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, np.integer):
        return int(v)
    return v


def finished_runs(out) -> set:
    """Run ids with a row in the store."""
    d = Path(out) / "runs"
    return {p.stem for p in d.glob("*.csv")} if d.exists() else set()


def _read_row(p: Path) -> dict:
    try:
        with p.open() as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise StoreError(f"{p}: damaged run row ({e}); delete it to rerun that run") from None
    if len(rows) != 1 or set(rows[0]) not in (set(ROW_FIELDS),
                                              set(ROW_FIELDS + OBJECTIVE_FIELDS)) \
            or None in rows[0].values():
        raise StoreError(f"{p}: damaged run row (expected one row with the columns "
                         f"{', '.join(ROW_FIELDS)}); delete it to rerun that run")
    r = rows[0]
    try:
        for k, v in r.items():
            if k == "ref":
                r[k] = [float(x) for x in json.loads(v)]
                if not r[k] or not all(np.isfinite(x) and x > 0 for x in r[k]):
                    raise ValueError(f"{v!r} is not a list of finite numbers > 0")
            elif k in _NUMERIC_INT:
                r[k] = int(v)
            elif k.endswith(("_s", "_J")) or k == "hv":
                r[k] = float(v)
                if not (np.isfinite(r[k]) and r[k] >= 0):
                    raise ValueError(f"{v!r} is not a finite number >= 0")
    except ValueError as e:
        raise StoreError(f"{p}: damaged run row, column {k}: {e}; delete it to rerun that "
                         "run") from None
    if r["run_id"] != p.stem:
        raise StoreError(f"{p}: damaged run row: its run_id is {r['run_id']!r}")
    return r


def load_results(out, foreign: str = "keep"):
    """``(rows, fronts)``: every run's row (dicts, numbers converted) and front (n, 2), by run id.

    Parameters
    ----------
    out : path
        The store.
    foreign : {"keep", "drop", "error"}
        What to do with rows whose run is not one of the runs recorded in
        ``config.json`` (rows of another configuration): keep them, leave them
        out (:func:`foreign_runs` lists them), or raise. Stores that record no
        run ids keep every row.

    Raises
    ------
    StoreError
        Naming the file of a damaged row or front, or the foreign rows with
        ``foreign="error"``.
    """
    if foreign not in ("keep", "drop", "error"):
        raise ValueError(f"foreign must be 'keep', 'drop' or 'error', got {foreign!r}")
    out = Path(out)
    other = set(foreign_runs(out)) if foreign != "keep" else set()
    if other and foreign == "error":
        raise StoreError(f"{out}: {len(other)} run row(s) do not belong to the recorded "
                         f"configuration (e.g. runs/{sorted(other)[0]}.csv)")
    rows, fronts = [], {}
    for p in sorted((out / "runs").glob("*.csv")):
        if p.stem in other:
            continue
        r = _read_row(p)
        fp = out / "fronts" / f"{p.stem}.csv"
        try:
            front = np.loadtxt(fp, delimiter=",", skiprows=1, ndmin=2)
        except (OSError, ValueError) as e:
            raise StoreError(f"{fp}: damaged or missing front of run {p.stem} ({e}); delete "
                             f"{p} to rerun that run") from None
        m = len(r["ref"]) if "ref" in r else 2
        if front.shape[1:] != (m,) or len(front) != r["front_size"]:
            raise StoreError(f"{fp}: damaged front of run {p.stem} (expected {r['front_size']} "
                             f"rows of {m} values); delete {p} to rerun that run")
        if not np.all(np.isfinite(front)) or np.any(front < 0):
            raise StoreError(f"{fp}: impossible front of run {p.stem} (non-finite or negative "
                             f"objectives); delete {p} to rerun that run")
        rows.append(r)
        fronts[p.stem] = front
    return rows, fronts


def foreign_runs(out) -> list:
    """Run ids with a row in the store that the recorded configuration does not name.

    Empty when ``config.json`` records no run ids (stores of older versions).
    """
    out = Path(out)
    if not (out / "config.json").exists():
        return []
    ids = read_config(out).get("run_ids")
    if ids is None:
        return []
    return sorted(finished_runs(out) - set(ids))
