"""SWF reading, cleaning reports and job-set extraction."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from conftest import SHARED_TRACES

import moga
from moga.model.workload import SWFFormatError

HEADER = "; Version: 2.2\n; MaxProcs: 16\n; UnixStartTime: 1000\n; Note: a test trace\n"


def _line(job, submit, run, procs, req=-1, status=1):
    f = [job, submit, 0, run, procs, -1, -1, req, -1, -1, status, 1, 1, -1, 1, 1, -1, -1]
    return " ".join(str(v) for v in f)


def _write(tmp_path, body, name="t.swf", gz=False):
    p = tmp_path / (name + (".gz" if gz else ""))
    if gz:
        with gzip.open(p, "wt") as fh:
            fh.write(body)
    else:
        p.write_text(body)
    return p


def test_header_and_fields(tmp_path):
    p = _write(tmp_path, HEADER + _line(1, 0, 10, 4) + "\n" + _line(2, 5, 20, 8) + "\n")
    tr = moga.load_swf(p)
    assert tr.header["MaxProcs"] == "16"
    assert tr.unix_start_time == 1000
    assert tr.max_procs == 16 and tr.report.max_procs_source == "header"
    assert tr.records.shape == (2, 18)
    assert tr.header["Note"] == "a test trace" and "notes" not in tr.header
    np.testing.assert_array_equal(tr.jobs.tasks, [4, 8])
    np.testing.assert_array_equal(tr.jobs.runtime, [10, 20])
    np.testing.assert_array_equal(tr.jobs.release, [0, 5])


@pytest.mark.parametrize("gz", [False, True])
def test_plain_and_gzip_read_the_same(tmp_path, gz):
    body = HEADER + "\n".join(_line(i, i * 10, 5 + i, 1 + i % 4) for i in range(1, 30)) + "\n"
    tr = moga.load_swf(_write(tmp_path, body, gz=gz))
    assert len(tr) == 29
    assert tr.report.balanced


def test_malformed_line_names_file_and_line(tmp_path):
    body = HEADER + _line(1, 0, 10, 4) + "\n" + "2 5 0 20 8\n" + _line(3, 9, 1, 1) + "\n"
    p = _write(tmp_path, body)
    with pytest.raises(SWFFormatError, match=r"t\.swf, line 6: 5 fields, expected 18"):
        moga.load_swf(p)


def test_non_number_names_the_field(tmp_path):
    p = _write(tmp_path, HEADER + _line(1, 0, 10, 4).replace(" 4 ", " four ", 1) + "\n")
    with pytest.raises(SWFFormatError, match=r"line 5: field 5 \(alloc_procs\) is not a number"):
        moga.load_swf(p)


def test_skip_malformed_counts_them(tmp_path):
    body = (HEADER + _line(1, 0, 10, 4) + "\n2 5 0 20 8\n" + _line(3, 9, 1, 1) + "\n"
            + "x y z\n\n")
    tr = moga.load_swf(_write(tmp_path, body), skip_malformed=True)
    r = tr.report
    assert r.malformed == 2 and len(r.malformed_examples) == 2
    assert r.blank_lines == 1 and r.header_lines == 4 and r.kept == 2
    assert r.lines_read == 4 + 5 and r.balanced


def test_cleaning_drops_are_counted_by_reason(tmp_path):
    lines = [
        _line(1, 0, 10, 4),
        _line(2, 1, 0, 4),            # run time 0
        _line(3, 2, -1, 4),           # run time missing
        _line(4, 3, 10, -1, req=6),   # allocated missing: falls back to requested
        _line(5, 4, 10, -1, req=-1),  # no size at all
        _line(6, 5, 10, -4),          # negative size
        " ".join(["-1"] * 18),        # -1 everywhere
        _line(8, 7, 10, 2, status=0),
    ]
    tr = moga.load_swf(_write(tmp_path, HEADER + "\n".join(lines) + "\n"))
    r = tr.report
    assert r.dropped == {"submit<0": 1, "runtime<=0": 2, "size<=0": 2, "duplicate line": 0}
    assert r.kept == 3 and r.balanced
    np.testing.assert_array_equal(tr.jobs.id, [1, 4, 8])
    np.testing.assert_array_equal(tr.jobs.tasks, [4, 6, 2])
    tr2 = moga.load_swf(_write(tmp_path, HEADER + "\n".join(lines) + "\n"), status=[1])
    assert tr2.report.dropped["status"] == 1 and tr2.report.balanced


def test_out_of_order_submits_are_sorted_and_counted(tmp_path):
    lines = [_line(1, 50, 10, 1), _line(2, 10, 10, 2), _line(3, 10, 10, 3), _line(4, 60, 1, 1)]
    tr = moga.load_swf(_write(tmp_path, HEADER + "\n".join(lines) + "\n"))
    assert tr.report.out_of_order == 2
    np.testing.assert_array_equal(tr.jobs.id, [2, 3, 1, 4])  # stable for equal submits
    js = tr.jobset(batch=False)
    np.testing.assert_array_equal(js.release, [0, 0, 40, 50])


def test_no_header_machine_size_given_or_inferred(tmp_path):
    body = "\n".join(_line(i, i, 10, 2 * i) for i in range(1, 6)) + "\n"
    p = _write(tmp_path, body)
    tr = moga.load_swf(p)
    assert tr.header == {} and tr.max_procs == 10
    assert "inferred" in tr.report.max_procs_source
    assert moga.load_swf(p, max_procs=64).max_procs == 64
    with pytest.raises(ValueError, match="max_procs"):
        moga.load_swf(p, max_procs=0)


def test_empty_file(tmp_path):
    tr = moga.load_swf(_write(tmp_path, HEADER))
    assert len(tr) == 0 and tr.report.balanced


def test_jobset_by_count_days_and_modes(default_trace, default_fed):
    js = default_trace.jobset(start=10, n_jobs=100, federation=default_fed)
    assert len(js) == 100 and np.all(js.release == 0)
    js_r = default_trace.jobset(start=10, n_jobs=100, federation=default_fed, batch=False)
    assert js_r.release[0] == 0 and np.all(np.diff(js_r.release) >= 0)
    np.testing.assert_array_equal(js_r.id, default_trace.jobs.id[10:110])
    week = default_trace.jobset(start=0, days=7, federation=default_fed, batch=False)
    assert week.release.max() < 7 * 86400
    sub = default_trace.submit
    assert np.sum(sub < sub[0] + 7 * 86400) == len(week)
    starts = default_trace.windows(days=7)
    assert starts[0] == 0 and starts[1] == len(week)


def test_jobset_attributes_are_seeded(default_trace, default_fed):
    a = default_trace.jobset(n_jobs=200, federation=default_fed, seed=5)
    b = default_trace.jobset(n_jobs=200, federation=default_fed, seed=5)
    c = default_trace.jobset(n_jobs=200, federation=default_fed, seed=6)
    np.testing.assert_array_equal(a.sigma, b.sigma)
    np.testing.assert_array_equal(a.bw, b.bw)
    assert not np.array_equal(a.sigma, c.sigma)
    single = a.tasks == 1
    assert np.all(a.sigma[single] == 0) and np.all(a.bw[single] == 0)
    assert np.all((a.sigma >= 0) & (a.sigma <= 0.5)) and np.all(a.bw[~single] >= 10)


def test_wide_job_policies(default_trace):
    small = 32
    n = 400
    widths = default_trace.jobs.tasks[:n]
    n_wide = int((widths > small).sum())
    assert n_wide > 0
    with pytest.raises(ValueError, match=r"job \d+ \(line \d+\) needs \d+ nodes but the machine has 32"):
        default_trace.jobset(n_jobs=n, federation=small)
    d = default_trace.jobset(n_jobs=n, federation=small, wide="drop")
    assert len(d) == n - n_wide and d.report["wide_dropped"] == n_wide
    c = default_trace.jobset(n_jobs=n, federation=small, wide="clip")
    assert len(c) == n and c.tasks.max() == small and c.report["wide_clipped"] == n_wide
    with pytest.raises(ValueError, match="wide must be one of"):
        default_trace.jobset(n_jobs=n, federation=small, wide="shrink")


def test_jobset_argument_errors(default_trace):
    with pytest.raises(ValueError, match="start"):
        default_trace.jobset(start=len(default_trace))
    with pytest.raises(ValueError, match="either n_jobs or days"):
        default_trace.jobset(n_jobs=5, days=3)
    with pytest.raises(ValueError, match="do not fit"):
        default_trace.jobset(start=len(default_trace) - 2, n_jobs=5)
    with pytest.raises(ValueError, match="n_jobs"):
        default_trace.jobset(n_jobs=0)


def test_jobset_validation():
    with pytest.raises(ValueError, match=r"JobSet.runtime\[1\]"):
        moga.JobSet.from_arrays([0, 0], [1, 2], [5.0, 0.0])
    with pytest.raises(ValueError, match=r"JobSet.tasks\[0\]"):
        moga.JobSet.from_arrays([0], [0], [5.0])
    with pytest.raises(ValueError, match="shape"):
        moga.JobSet.from_arrays([0, 1], [1], [5.0])
    with pytest.raises(ValueError, match=r"JobSet.sigma\[0\]"):
        moga.JobSet.from_arrays([0], [2], [5.0], sigma=[1.5], bw=[1.0])
    js = moga.JobSet.from_arrays([0], [2], [5.0])
    with pytest.raises(ValueError):
        js.runtime[0] = 3.0  # read-only


def test_bundled_trace_is_one_month_of_hpc2n(default_trace):
    assert len(default_trace) == 3340 and default_trace.report.balanced
    assert default_trace.max_procs == 240
    assert default_trace.jobs.tasks.max() <= moga.Federation.preset().total_nodes


SHARED = sorted(SHARED_TRACES.glob("*.swf*")) if SHARED_TRACES.exists() else []


@pytest.mark.skipif(not SHARED, reason="../shared/traces not present")
@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.name)
def test_every_shared_trace_loads_with_a_balanced_report(path):
    tr = moga.load_swf(path)
    r = tr.report
    assert r.balanced, str(r)
    assert r.kept == len(tr) > 0
    assert tr.max_procs >= tr.jobs.tasks.max()
    expected_size = {"RICC-2010-2.swf.gz": None, "HPC2N-2002-2.2-cln.swf.gz": 240,
                     "CEA-Curie-2011-2.1-cln.swf.gz": 93312}
    if expected_size.get(path.name):
        assert tr.max_procs == expected_size[path.name]
    js = tr.jobset(n_jobs=min(200, len(tr)), federation=tr.max_procs)
    assert len(js) == min(200, len(tr))


@pytest.mark.skipif(not SHARED, reason="../shared/traces not present")
def test_ricc_without_header_uses_given_size():
    tr = moga.load_swf(SHARED_TRACES / "RICC-2010-2.swf.gz", max_procs=8192)
    assert tr.header == {} and tr.max_procs == 8192
    fed = moga.Federation.preset("ricc")
    js = tr.jobset(days=30, federation=fed)
    assert len(js) > 1000


def test_submit_order_is_first_come_first_served_ties_by_position():
    js = moga.JobSet.from_arrays(release=[5.0, 0.0, 5.0, 1.0], tasks=[1, 1, 1, 1],
                                 runtime=[1.0, 1.0, 1.0, 1.0])
    assert js.submit_order.tolist() == [1, 3, 0, 2] and js.submit_order.dtype == np.int64
