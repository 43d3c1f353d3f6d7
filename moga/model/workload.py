"""Workloads from Standard Workload Format (SWF) traces.

:func:`load_swf` reads a trace (plain or ``.gz``) into a :class:`Trace`: all 18
fields of every data line, the ``;`` header as metadata, the cleaned jobs as a
:class:`~moga.jobset.JobSet`, and a :class:`CleaningReport` that accounts for
every line read. :meth:`Trace.jobset` extracts a job-set (a window of the
trace by count or by days) ready for the decoders.

Cleaning (docs/design.md §3)
------------------------------
* size = allocated processors (field 5), or requested processors (field 8)
  where field 5 is missing (<= 0);
* base run time = field 4; release = submit time, field 2;
* dropped, and counted by reason, in this order of precedence: submit time
  < 0 (``"submit<0"``), run time <= 0 (``"runtime<=0"``), size <= 0
  (``"size<=0"``), status not in the ``status`` filter (``"status"``);
* jobs are ordered by submit time (stable, so equal submits keep file order);
  the number of lines out of order is reported, nothing is dropped for it.
"""

from __future__ import annotations

import gzip
import io
import numbers
import zlib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from ..bounds import BOUNDS
from .jobset import BW_RANGE, POWER_RANGE, POWER_SPREAD, SIGMA_RANGE, JobSet, draw_attributes

__all__ = ["SWF_FIELDS", "CleaningReport", "SWFFormatError", "Trace", "load_swf",
           "default_trace_path", "load_default"]

#: The 18 SWF fields, in file order.
SWF_FIELDS = (
    "job", "submit", "wait", "runtime", "alloc_procs", "avg_cpu", "used_mem", "req_procs",
    "req_time", "req_mem", "status", "user", "group", "executable", "queue", "partition",
    "preceding_job", "think_time",
)
_F = {name: i for i, name in enumerate(SWF_FIELDS)}
_WIDE_POLICIES = ("error", "drop", "clip")
DEFAULT_TRACE = "HPC2N-2002-2.2-cln-excerpt.swf.gz"


def _in_bounds(key: str, v) -> bool:
    """Whether ``v`` is a real number (not a bool) within ``moga.bounds.BOUNDS[key]``."""
    return not isinstance(v, bool) and isinstance(v, numbers.Real) and BOUNDS[key].contains(v)


class SWFFormatError(ValueError):
    """A malformed SWF line; the message names the file and the line number."""


@dataclass
class CleaningReport:
    """Accounts for every line of a trace file.

    ``lines_read == header_lines + blank_lines + malformed + sum(dropped.values()) + kept``.
    """

    source: str
    lines_read: int = 0
    header_lines: int = 0
    blank_lines: int = 0
    malformed: int = 0
    malformed_examples: list = field(default_factory=list)
    dropped: dict = field(default_factory=dict)
    kept: int = 0
    out_of_order: int = 0
    duplicate_ids: int = 0
    max_procs: int = 0
    max_procs_source: str = ""

    @property
    def balanced(self) -> bool:
        """True when the counts add up to the lines read."""
        return self.lines_read == (self.header_lines + self.blank_lines + self.malformed
                                   + sum(self.dropped.values()) + self.kept)

    def as_dict(self) -> dict:
        """A plain dict of the report (for JSON)."""
        return {
            "source": self.source, "lines_read": self.lines_read,
            "header_lines": self.header_lines, "blank_lines": self.blank_lines,
            "malformed": self.malformed, "malformed_examples": list(self.malformed_examples),
            "dropped": dict(self.dropped), "kept": self.kept, "out_of_order": self.out_of_order,
            "duplicate_ids": self.duplicate_ids,
            "max_procs": self.max_procs, "max_procs_source": self.max_procs_source,
        }

    def __str__(self) -> str:
        drops = ", ".join(f"{k}: {v}" for k, v in self.dropped.items() if v) or "none"
        return (
            f"{self.source}: {self.lines_read} lines read = {self.header_lines} header + "
            f"{self.blank_lines} blank + {self.malformed} malformed skipped + "
            f"{sum(self.dropped.values())} dropped ({drops}) + {self.kept} jobs kept; "
            f"{self.out_of_order} out of submit order (reordered); "
            + (f"{self.duplicate_ids} kept jobs repeat an earlier job id; "
               if self.duplicate_ids else "")
            + f"machine size {self.max_procs} ({self.max_procs_source})"
        )


def _open_text(path: Path) -> str:
    with path.open("rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as fh:
                raw = fh.read()
        except EOFError:
            raise SWFFormatError(f"{path}: the gzip stream is truncated (the file was cut "
                                 "short; download it again)") from None
        except (gzip.BadGzipFile, zlib.error, OSError) as e:
            raise SWFFormatError(f"{path}: not a readable gzip file ({e}); a damaged "
                                 "download or data appended after the compressed stream") from None
    else:
        raw = path.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    # A byte-order mark (some editors write one) is no part of the first line.
    return text[1:] if text.startswith("\ufeff") else text


def _parse_data_line(line: str, lineno: int, source: str):
    parts = line.split()
    if len(parts) != 18:
        raise SWFFormatError(f"{source}, line {lineno}: {len(parts)} fields, expected 18")
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        bad = next(i for i, p in enumerate(parts) if not _is_float(p))
        raise SWFFormatError(
            f"{source}, line {lineno}: field {bad + 1} ({SWF_FIELDS[bad]}) is not a number: "
            f"{parts[bad]!r}"
        ) from None
    if not all(np.isfinite(vals)):
        bad = next(i for i, v in enumerate(vals) if not np.isfinite(v))
        raise SWFFormatError(
            f"{source}, line {lineno}: field {bad + 1} ({SWF_FIELDS[bad]}) is not finite"
        )
    return vals


def _is_float(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _parse_header(lines) -> dict:
    header: dict = {}
    notes = []
    for line in lines:
        body = line.lstrip(";").strip()
        if not body:
            continue
        key, sep, value = body.partition(":")
        key = key.strip()
        if sep and key and " " not in key:
            value = value.strip()
            if key in header:
                prev = header[key]
                values = prev if isinstance(prev, list) else [prev]
                # The same line twice (concatenated files or gzip members) is one value.
                if value not in values:
                    header[key] = values + [value]
            else:
                header[key] = value
        else:
            notes.append(body)
    if notes:
        header["notes"] = notes
    return header


def _header_int(header: dict, key: str):
    v = header.get(key)
    if isinstance(v, list):
        v = v[0]
    try:
        x = float(str(v).split()[0])
    except (TypeError, ValueError, IndexError):
        return None
    return int(x) if np.isfinite(x) and x > 0 and x == int(x) and x < _INT_LIMIT else None


def _header_size(header: dict):
    """``(size, note)``: the machine size of the ``MaxProcs`` (else ``MaxNodes``) header, and a
    note on a header value that is not a positive integer (then ignored)."""
    notes = []
    for key in ("MaxProcs", "MaxNodes"):
        if key not in header:
            continue
        v = _header_int(header, key)
        raw = header[key]
        if isinstance(raw, list) and len(raw) > 1:
            notes.append(f"the header gives {key} {len(raw)} different values {raw}; the first "
                         "is used")
        if v is not None:
            return v, "; ".join(notes)
        notes.append(f"the header's {key} {raw!r} is not a positive integer, ignored")
    return None, "; ".join(notes)


def load_swf(path, *, skip_malformed: bool = False, max_procs: int | None = None,
             status=None, name: str | None = None) -> Trace:
    """Read an SWF trace, plain or gzip-compressed.

    Parameters
    ----------
    path : str or Path
        The trace file.
    skip_malformed : bool
        Skip (and count) malformed lines instead of raising.
    max_procs : int, optional
        The machine size, for traces without a ``MaxProcs`` header (RICC's
        shipped copy has none). Without either, the widest job is used and
        the report says it was inferred.
    status : iterable of int, optional
        Keep only jobs with these status codes (field 11); others are dropped
        and counted. Default: keep every status.
    name : str, optional
        A name for the trace (default: the file name).

    Returns
    -------
    Trace

    Raises
    ------
    SWFFormatError
        On a malformed line (wrong field count, a non-number), naming the file
        and line, unless ``skip_malformed``.
    """
    path = Path(path)
    source = str(path)
    text = _open_text(path)
    lines = text.splitlines()
    report = CleaningReport(source=path.name, lines_read=len(lines))
    header_lines, data, data_lineno = [], [], []
    for i, line in enumerate(lines):
        s = line.strip()
        if not s:
            report.blank_lines += 1
        elif s.startswith(";"):
            header_lines.append(s)
        else:
            data.append(s)
            data_lineno.append(i + 1)
    report.header_lines = len(header_lines)
    header = _parse_header(header_lines)

    records = None
    if data:
        try:
            records = np.loadtxt(io.StringIO("\n".join(data)), dtype=np.float64, ndmin=2,
                                 comments=None)
            if records.shape[1] != 18 or not np.all(np.isfinite(records)):
                records = None
        except ValueError:
            records = None
    if records is None:
        rows, keep_lineno = [], []
        for line, ln in zip(data, data_lineno, strict=True):
            try:
                rows.append(_parse_data_line(line, ln, source))
                keep_lineno.append(ln)
            except SWFFormatError as e:
                if not skip_malformed:
                    raise
                report.malformed += 1
                if len(report.malformed_examples) < 10:
                    report.malformed_examples.append(str(e))
        records = np.asarray(rows, dtype=np.float64).reshape(-1, 18)
        lineno = np.asarray(keep_lineno, dtype=np.int64)
    else:
        lineno = np.asarray(data_lineno, dtype=np.int64)

    records, lineno = _check_integer_fields(records, lineno, source, skip_malformed, report)
    submit = records[:, _F["submit"]]
    runtime = records[:, _F["runtime"]]
    size = records[:, _F["alloc_procs"]].copy()
    missing = size <= 0
    size[missing] = records[missing, _F["req_procs"]]
    keep = np.ones(records.shape[0], dtype=bool)
    reasons = [("submit<0", submit < 0), ("runtime<=0", runtime <= 0), ("size<=0", size <= 0)]
    if status is not None:
        allowed = np.asarray(sorted({int(s) for s in status}), dtype=np.float64)
        reasons.append(("status", ~np.isin(records[:, _F["status"]], allowed)))
    # A line identical to an earlier one in every field is a copy (two concatenated files,
    # a repeated export), never a second job.
    _, first = np.unique(records, axis=0, return_index=True)
    copy = np.ones(records.shape[0], dtype=bool)
    copy[first] = False
    reasons.append(("duplicate line", copy))
    for reason, bad in reasons:
        hit = keep & bad
        report.dropped[reason] = int(hit.sum())
        keep &= ~bad
    report.kept = int(keep.sum())
    ids = records[keep, _F["job"]]
    report.duplicate_ids = int(ids.size - np.unique(ids).size)

    sub_k = submit[keep]
    report.out_of_order = int(np.sum(sub_k[1:] < np.maximum.accumulate(sub_k)[:-1])) if sub_k.size else 0
    idx = np.flatnonzero(keep)
    idx = idx[np.argsort(sub_k, kind="stable")]

    size_all = np.round(size).astype(np.int64)
    widest = int(size_all[idx].max()) if idx.size else 0
    header_size, header_note = _header_size(header)
    if max_procs is not None:
        if not _in_bounds("max_procs", max_procs):
            raise ValueError(f"max_procs must be an integer in "
                             f"{BOUNDS['max_procs'].interval()}, got {max_procs}")
        report.max_procs, report.max_procs_source = int(max_procs), "argument"
    elif header_size:
        report.max_procs, report.max_procs_source = header_size, "header"
    else:
        report.max_procs, report.max_procs_source = widest, "inferred from the widest job"
    if header_note:
        report.max_procs_source += f"; {header_note}"

    return Trace(
        name=name or path.name.split(".swf")[0],
        header=header,
        records=records,
        lineno=lineno,
        index=idx,
        size=size_all,
        report=report,
    )


#: SWF fields that must hold integers (sizes are node counts; ids identify jobs).
_INTEGER_FIELDS = ("job", "alloc_procs", "req_procs")
_INT_LIMIT = 2.0**31
#: SWF fields in seconds, and the largest value taken as a time (about 317 years); larger
#: values are data errors (a makespan of 1e300 s is no result).
_TIME_FIELDS = ("submit", "wait", "runtime", "req_time", "think_time")
TIME_LIMIT_S = 1e10


def _check_integer_fields(records, lineno, source, skip_malformed, report):
    """Refuse (or skip and count) lines whose id or sizes are not integers below 2**31, or
    whose times exceed :data:`TIME_LIMIT_S`."""
    cols = [_F[n] for n in _INTEGER_FIELDS]
    tcols = [_F[n] for n in _TIME_FIELDS]
    vals = records[:, cols]
    bad_int = (vals != np.round(vals)) | (np.abs(vals) >= _INT_LIMIT)
    bad_time = np.abs(records[:, tcols]) > TIME_LIMIT_S
    bad_rows = np.flatnonzero(np.any(bad_int, axis=1) | np.any(bad_time, axis=1))
    if bad_rows.size == 0:
        return records, lineno
    msgs = []
    for r in bad_rows[:10]:
        if bad_int[r].any():
            c = int(np.flatnonzero(bad_int[r])[0])
            v = vals[r, c]
            what = "not an integer" if abs(v) < _INT_LIMIT else "too large (>= 2**31)"
            col = cols[c]
        else:
            c = int(np.flatnonzero(bad_time[r])[0])
            col = tcols[c]
            v = records[r, col]
            what = f"not a plausible time in s (beyond {TIME_LIMIT_S:g} s, about 317 years)"
        msgs.append(f"{source}, line {lineno[r]}: field {col + 1} ({SWF_FIELDS[col]}) "
                    f"is {what}: {v:g}")
    if not skip_malformed:
        raise SWFFormatError(msgs[0])
    report.malformed += int(bad_rows.size)
    room = 10 - len(report.malformed_examples)
    report.malformed_examples.extend(msgs[:max(room, 0)])
    keep = np.ones(records.shape[0], dtype=bool)
    keep[bad_rows] = False
    return records[keep], lineno[keep]


def default_trace_path() -> Path:
    """Path of the bundled trace excerpt (one month of HPC2N, see ``moga/data/README.md``)."""
    return Path(str(resources.files("moga.data").joinpath(DEFAULT_TRACE)))


def load_default(**kwargs) -> Trace:
    """Load the bundled trace excerpt (:func:`default_trace_path`) with :func:`load_swf`."""
    return load_swf(default_trace_path(), **kwargs)


class Trace:
    """A parsed SWF trace.

    Attributes
    ----------
    name : str
    header : dict
        ``;`` header metadata (``MaxProcs``, ``UnixStartTime``, ...) as strings;
        lines without a ``Key:`` go to ``header["notes"]``.
    records : ndarray, shape (n, 18)
        Every well-formed data line, all 18 fields, in file order.
    report : CleaningReport
    jobs : JobSet
        The cleaned jobs in submit order, release = submit time, attributes
        drawn with seed 0 (use :meth:`jobset` for windows and other seeds).
    """

    def __init__(self, name, header, records, lineno, index, size, report):
        self.name = name
        self.header = header
        self.records = records
        self.lineno = lineno
        self.report = report
        self._index = index
        self._size = size
        self._jobs = None

    # ----------------------------------------------------------------- views
    @property
    def max_procs(self) -> int:
        """Machine size: header ``MaxProcs``/``MaxNodes``, the argument, or inferred."""
        return self.report.max_procs

    @property
    def widest_job(self) -> int:
        """Tasks of the widest cleaned job (0 for an empty trace)."""
        return int(self._size[self._index].max()) if len(self) else 0

    @property
    def auto_nodes(self) -> int:
        """The node count a federation sized to this trace gets (``NAME@auto``):
        its machine size, or its widest job if wider."""
        return max(int(self.max_procs), self.widest_job, 1)

    @property
    def unix_start_time(self):
        """``UnixStartTime`` from the header, or None."""
        return _header_int(self.header, "UnixStartTime")

    @property
    def submit(self) -> np.ndarray:
        """Submit times of the cleaned jobs, in submit order."""
        return self.records[self._index, _F["submit"]]

    def __len__(self) -> int:
        return int(self._index.size)

    def __repr__(self) -> str:
        return f"Trace({self.name!r}, {len(self)} jobs, machine size {self.max_procs})"

    def field(self, name: str) -> np.ndarray:
        """One SWF field of the cleaned jobs, in submit order (``SWF_FIELDS`` names)."""
        if name not in _F:
            raise KeyError(f"unknown SWF field {name!r}; choose one of {list(SWF_FIELDS)}")
        return self.records[self._index, _F[name]]

    def _require_jobs(self):
        if len(self) == 0:
            raise ValueError(f"trace {self.name!r} holds no jobs: {self.report}")

    @property
    def jobs(self) -> JobSet:
        """All cleaned jobs as a JobSet (release = submit time, attributes from seed 0)."""
        self._require_jobs()
        if self._jobs is None:
            self._jobs = self._make(np.arange(len(self)), seed=0, batch=False, shift=False,
                                    name=self.name, report={"window": (0, len(self))})
        return self._jobs

    # ------------------------------------------------------------ extraction
    def windows(self, days: float = 30.0, min_jobs: int = 1) -> list[int]:
        """Start indices of consecutive, non-overlapping windows of ``days`` days.

        Windows with fewer than ``min_jobs`` jobs are left out. Pass an index to
        :meth:`jobset` as ``start`` with the same ``days``.
        """
        if not _in_bounds("days", days):
            raise ValueError(f"days must be a finite number in {BOUNDS['days'].interval()}, "
                             f"got {days!r}")
        sub = self.submit
        starts = []
        i = 0
        n = sub.size
        while i < n:
            end = int(np.searchsorted(sub, sub[i] + days * 86400.0, side="left"))
            # A window shorter than the float spacing of the submit times still holds its
            # first job: without this, tiny ``days`` would never advance.
            end = max(end, i + 1)
            if end - i >= min_jobs:
                starts.append(i)
            i = end
        return starts

    def jobset(self, start: int = 0, n_jobs: int | None = None, days: float | None = None, *,
               federation=None, wide: str = "error", seed: int = 0, batch: bool = True,
               sigma_range=SIGMA_RANGE, bw_range=BW_RANGE, power=None) -> JobSet:
        """Extract a job-set: a window of the cleaned trace.

        Parameters
        ----------
        start : int
            Index of the first job (in submit order).
        n_jobs : int, optional
            Window by count: jobs ``start .. start + n_jobs - 1``.
        days : float, optional
            Window by time: jobs submitted less than ``days`` days after job
            ``start`` (``days=30`` for the MOGA study's monthly job-sets). With
            neither ``n_jobs`` nor ``days``, every job from ``start`` on.
        federation : Federation or int, optional
            The platform (or its node count) that wide jobs are checked against.
        wide : {"error", "drop", "clip"}
            Jobs wider than the federation: raise (default), drop them or clip
            them to the federation size; drops and clips are counted in the
            job-set's ``report``. The window is taken first, so ``"drop"`` can
            leave fewer than ``n_jobs`` jobs.
        seed : int
            Seed of the per-job ``sigma`` and ``bw`` draws.
        batch : bool
            True (default, as in the MOGA study): every job is released at 0,
            the queue at time 0. False: release = submit time shifted so that
            the first job of the window is released at 0.
        sigma_range, bw_range : (float, float)
            Ranges of the attribute draws (see :func:`moga.jobset.draw_attributes`).
        power : None, "lognormal" or array_like, optional
            Per-job power factors (docs/design.md §11): None gives every job
            1.0 (the MOGA study's model); ``"lognormal"`` draws them with
            :func:`moga.model.jobset.draw_power` from ``seed``; an array gives
            one factor per job of the window (after wide jobs are dropped).

        Returns
        -------
        JobSet
            Its ``requested`` times are the trace's requested times (field 9),
            the run time where a job has none.
        """
        n = len(self)
        self._require_jobs()
        if not _in_bounds("start", start) or int(start) >= n:
            raise ValueError(f"start must be an index in [0, {n}), got {start}")
        start = int(start)
        if n_jobs is not None and days is not None:
            raise ValueError("give either n_jobs or days, not both")
        if n_jobs is not None:
            if not _in_bounds("n_jobs", n_jobs):
                raise ValueError(f"n_jobs must be an integer in {BOUNDS['n_jobs'].interval()}, "
                                 f"got {n_jobs}")
            stop = start + int(n_jobs)
            if stop > n:
                raise ValueError(f"the trace has {n} jobs; {n_jobs} from index {start} do not fit")
        elif days is not None:
            if not _in_bounds("days", days):
                raise ValueError(f"days must be in {BOUNDS['days'].interval()}, got {days}")
            sub = self.submit
            stop = int(np.searchsorted(sub, sub[start] + float(days) * 86400.0, side="left"))
        else:
            stop = n
        if wide not in _WIDE_POLICIES:
            raise ValueError(f"wide must be one of {list(_WIDE_POLICIES)}, got {wide!r}")
        pos = np.arange(start, stop)
        report = {"window": (start, stop), "n_window": int(stop - start), "wide_policy": wide,
                  "wide_dropped": 0, "wide_clipped": 0, "capacity": None}
        tasks = self._size[self._index[pos]]
        clip_to = None
        if federation is not None:
            cap = int(federation) if isinstance(federation, (int, np.integer)) else \
                int(federation.total_nodes)
            report["capacity"] = cap
            too_wide = tasks > cap
            if too_wide.any():
                if wide == "error":
                    i = int(np.flatnonzero(too_wide)[0])
                    rec = self._index[pos[i]]
                    size = max(int(self.max_procs), int(tasks.max()))
                    sizing = (f"size the federation to the trace (Federation.preset(name)"
                              f".scaled({size}), or --federation NAME@auto on the command "
                              "line), or " if not isinstance(federation, (int, np.integer))
                              else "use a larger machine, or ")
                    raise ValueError(
                        f"{self.name}: job {int(self.records[rec, 0])} (line {int(self.lineno[rec])})"
                        f" needs {int(tasks[i])} nodes but the "
                        f"{'machine' if isinstance(federation, (int, np.integer)) else 'federation'}"
                        f" has {cap}; {int(too_wide.sum())} job(s) of the window are too wide: "
                        f"{sizing}pass wide='drop' or wide='clip' (--wide drop or --wide clip)"
                    )
                if wide == "drop":
                    report["wide_dropped"] = int(too_wide.sum())
                    pos = pos[~too_wide]
                else:
                    report["wide_clipped"] = int(too_wide.sum())
                    clip_to = cap
        if pos.size == 0:
            raise ValueError(f"{self.name}: the window [{start}, {stop}) holds no jobs")
        name = f"{self.name}[{start}:{stop}]"
        js = self._make(pos, seed=seed, batch=batch, shift=True, name=name, report=report,
                        clip_to=clip_to, sigma_range=sigma_range, bw_range=bw_range)
        if power is None:
            return js
        if isinstance(power, str):
            if power != "lognormal":
                raise ValueError(f"power must be None, 'lognormal' or an array, got {power!r}")
            return js.with_power(seed=seed, spread=POWER_SPREAD, clip=POWER_RANGE)
        power = np.asarray(power, dtype=np.float64)
        if power.shape != (len(js),):
            raise ValueError(f"power must give one factor per job of the window ({len(js)}), "
                             f"got shape {power.shape}")
        return js.with_power(power)

    def _make(self, pos, *, seed, batch, shift, name, report, clip_to=None,
              sigma_range=SIGMA_RANGE, bw_range=BW_RANGE) -> JobSet:
        rec = self._index[pos]
        tasks = self._size[rec].copy()
        if clip_to is not None:
            np.minimum(tasks, clip_to, out=tasks)
        submit = self.records[rec, _F["submit"]]
        if batch:
            release = np.zeros(pos.size)
        elif shift:
            release = submit - submit.min()
        else:
            release = submit.copy()
        sigma, bw = draw_attributes(tasks, seed, sigma_range, bw_range)
        report = dict(report, seed=seed, batch=batch, release_offset=float(submit.min()))
        runtime = self.records[rec, _F["runtime"]]
        requested = self.records[rec, _F["req_time"]]
        requested = np.where(requested > 0, requested, runtime)
        return JobSet(id=self.records[rec, 0].astype(np.int64), release=release, tasks=tasks,
                      runtime=runtime, sigma=sigma, bw=bw, name=name, report=report,
                      requested=requested)
