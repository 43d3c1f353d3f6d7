"""Fuzzing of the seams added since the third hostile pass (issue 54): a Hypothesis state
machine drives :class:`moga.sim.Session` with random, legal and illegal, start, preempt,
reject and advance calls; damaged ``result.npz`` and policy files go through ``moga
schedule`` and ``moga simulate``. Every illegal call must be refused with the documented
error and every state must keep the machine's invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import moga
from moga.sim import PolicyStalled, Session

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

NODES = (4, 4)
POWER_BUSY, POWER_IDLE = 100.0, 10.0


def _federation(cap):
    fed = moga.Federation.from_clusters([
        {"name": f"c{k}", "nodes": n, "speed": 1.0, "power_busy": POWER_BUSY,
         "power_idle": POWER_IDLE, "link": 1e9} for k, n in enumerate(NODES)])
    return fed if cap is None else fed.with_cap(fraction=cap)


jobs_strategy = st.lists(st.tuples(st.integers(0, 3).map(lambda x: 10.0 * x),  # release
                                   st.integers(1, 4),                          # tasks
                                   st.integers(1, 6).map(lambda x: 10.0 * x)),  # runtime
                         min_size=1, max_size=6)
#: Positions as a policy might pass them: real jobs, repeats, and some out of the set.
positions = st.lists(st.integers(-1, 7), min_size=0, max_size=3)


class SessionMachine(RuleBasedStateMachine):
    """Random verbs against a session on two clusters of four nodes at speed 1 (so that a
    job's work is its run time), with or without a power cap."""

    @initialize(jobs=jobs_strategy, cap=st.sampled_from([None, 0.8, 0.6]))
    def setup(self, jobs, cap):
        release, tasks, runtime = (list(x) for x in zip(*jobs, strict=True))
        self.js = moga.JobSet.from_arrays(release, tasks, runtime, sigma=[0.0] * len(jobs),
                                          bw=[0.0] * len(jobs))
        self.fed = _federation(cap)
        self.s = Session(self.js, self.fed, estimates="exact")
        self.J = len(jobs)
        self.rejected = set()

    # ------------------------------------------------------------------ the verbs
    def _legal(self, listed, allowed):
        return (len(set(listed)) == len(listed)
                and all(0 <= j < self.J and j in allowed for j in listed))

    @rule(listed=positions)
    def start(self, listed):
        queued = set(self.s.queued().tolist())
        if self._legal(listed, queued):
            started = self.s.start(listed)
            assert set(started.tolist()) <= set(listed)
            assert set(started.tolist()) <= set(self.s.running()[0].tolist())
        else:
            with pytest.raises(ValueError):
                self.s.start(listed)

    @rule(listed=positions, keep=st.sampled_from([1.0, 0.5, 0.0, -0.1, 1.5, math.nan]),
          restart=st.sampled_from([0.0, 5.0, -1.0, 1e300, math.inf]))
    def preempt(self, listed, keep, restart):
        running = set(self.s.running()[0].tolist())
        ok_args = 0 <= keep <= 1 and 0 <= restart <= 1e10
        before = self.s.running()[0].size
        if ok_args and listed and self._legal(listed, running):
            assert self.s.preempt(listed, keep, restart).tolist() == listed
            assert self.s.running()[0].size == before - len(listed)
        elif ok_args and not listed:
            assert self.s.preempt(listed, keep, restart).size == 0
        else:
            with pytest.raises(ValueError):
                self.s.preempt(listed, keep, restart)
            assert self.s.running()[0].size == before  # nothing stopped

    @rule(listed=positions)
    def reject(self, listed):
        queued = set(self.s.queued().tolist())
        if self._legal(listed, queued):
            assert self.s.reject(listed).tolist() == listed
            self.rejected |= set(listed)
        else:
            with pytest.raises(ValueError):
                self.s.reject(listed)

    @rule()
    def advance(self):
        if self.s.done:
            assert self.s.advance() == math.inf
            return
        now = self.s.now
        future = [j for j in range(self.J) if self.js.release[j] > now]
        if not self.s.running()[0].size and self.s.queued().size and not future:
            with pytest.raises(PolicyStalled):
                self.s.advance()
        else:
            assert self.s.advance() >= now

    @precondition(lambda self: not self.s.done)
    @rule()
    def result_too_early(self):
        with pytest.raises(RuntimeError):
            self.s.result()

    # ------------------------------------------------------------------ invariants
    @invariant()
    def capacity(self):
        free = self.s.free
        alloc = self.s.allocation
        running = self.s.running()[0]
        assert (free >= 0).all() and (free <= np.array(NODES)).all()
        assert (alloc[running].sum(axis=0) + free == np.array(NODES)).all()
        assert (alloc[running].sum(axis=1) == self.js.tasks[running]).all()

    @invariant()
    def caps(self):
        if self.fed.power_cap is not None:
            draw = self.fed.idle_power + self.s.power_used[-1]
            assert draw <= self.fed.power_cap * (1 + 1e-9)

    def teardown(self):
        """Run to the end (every waiting job started as soon as it fits) and check that each
        completed job did exactly its work: what the executions kept and the last one's
        computation add up to the run time."""
        s = self.s
        for _ in range(20 * self.J + 20):
            if s.done:
                break
            s.start(s.queued())
            if not s.done:
                s.advance()
        assert s.done
        r = s.result()
        assert set(np.flatnonzero(r.rejected).tolist()) == self.rejected
        if r.segments is not None:
            work = np.bincount(r.segments.job, weights=r.segments.compute, minlength=self.J)
        else:
            work = r.finish - r.start
        done = ~r.rejected
        assert np.allclose(work[done], self.js.runtime[done], rtol=1e-9, atol=1e-6)
        assert np.isfinite(r.energy) and r.energy >= 0


TestSessionMachine = SessionMachine.TestCase
TestSessionMachine.settings = settings(max_examples=40, stateful_step_count=20, deadline=None,
                                       suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
def test_session_machine_longer():
    from hypothesis.stateful import run_state_machine_as_test

    run_state_machine_as_test(SessionMachine, settings=settings(
        max_examples=400, stateful_step_count=40, deadline=None,
        suppress_health_check=[HealthCheck.too_slow]))


# ------------------------------------------------------------- damaged result files
@pytest.fixture(scope="module")
def result_bytes(tmp_path_factory):
    from moga.cli import main

    out = tmp_path_factory.mktemp("fz") / "R"
    assert main(["run", "--n-jobs", "20", "--pop", "8", "--gen", "2", "--no-progress",
                 "--out", str(out)]) == 0
    return (out / "result.npz").read_bytes()


def _array_damage():
    """A change to one array of the archive: a new shape, dtype or values."""
    return st.sampled_from([
        lambda a: a[:0], lambda a: a[:1], lambda a: np.concatenate([a, a]),
        lambda a: a.astype(str), lambda a: np.full(a.shape, np.nan)
        if a.dtype.kind == "f" else a, lambda a: -a if a.dtype.kind in "if" else a,
        lambda a: a * 1e300 if a.dtype.kind == "f" else a, lambda a: a.reshape(-1),
        lambda a: a.T, lambda a: np.zeros((2, 2, 2))])


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_damaged_result_files_are_refused_or_decode_to_their_front(result_bytes, tmp_path_factory,
                                                                    data, capsys):
    import io

    from moga.cli import main

    d = tmp_path_factory.mktemp("dmg")
    how = data.draw(st.sampled_from(["bytes", "cut", "array", "drop"]))
    raw = result_bytes
    if how == "bytes":
        i = data.draw(st.integers(0, len(raw) - 1))
        raw = raw[:i] + bytes([raw[i] ^ data.draw(st.integers(1, 255))]) + raw[i + 1:]
    elif how == "cut":
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    else:
        z = dict(np.load(io.BytesIO(raw), allow_pickle=False))
        key = data.draw(st.sampled_from(sorted(z)))
        if how == "drop":
            del z[key]
        else:
            # 0-d arrays (the metadata) are damaged as one-element ones: slices and
            # concatenation need an axis.
            z[key] = data.draw(_array_damage())(np.atleast_1d(z[key]))
        buf = io.BytesIO()
        np.savez_compressed(buf, **z)
        raw = buf.getvalue()
    (d / "result.npz").write_bytes(raw)
    capsys.readouterr()
    rc = main(["schedule", str(d), "--out", str(d / "k")])
    out, err = capsys.readouterr()
    assert rc in (0, 2), err
    assert "Traceback" not in err
    if rc == 2:
        assert err.count("\n") == 1 and "result.npz" in err
        assert not (d / "k" / "schedule.csv").exists()
    else:  # what was written is the member the file's own front records
        import re

        F = np.load(d / "result.npz", allow_pickle=False)["F"]
        i = int(re.search(r"front member (\d+) of", out).group(1))
        shown = float(re.search(r"makespan ([0-9.]+) h", out).group(1))
        assert shown == pytest.approx(F[i, 0] / 3600, abs=0.006)


# ------------------------------------------------------------- damaged policy files
OK_POLICY = '''from moga.sim import OnlinePolicy
class Greedy(OnlinePolicy):
    def decide(self, s):
        for j in s.queued():
            s.start([j])
'''


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_damaged_policy_files_are_refused_with_the_file_named(tmp_path_factory, data):
    from moga.errors import InputError
    from moga.sim import load_policy

    d = tmp_path_factory.mktemp("pol")
    raw = OK_POLICY.encode()
    how = data.draw(st.sampled_from(["cut", "byte", "insert"]))
    if how == "cut":
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    elif how == "byte":
        i = data.draw(st.integers(0, len(raw) - 1))
        raw = raw[:i] + bytes([data.draw(st.integers(0, 255))]) + raw[i + 1:]
    else:
        i = data.draw(st.integers(0, len(raw)))
        raw = raw[:i] + data.draw(st.sampled_from(
            [b"\x00", b"\xff\xfe", b"(", b"import nothing_here\n", b"raise KeyError(1)\n",
             b"\n  ", b"Greedy = 3\n", b"OnlinePolicy = object\n"])) + raw[i:]
    path = d / "pol.py"
    path.write_bytes(raw)
    try:
        policy = load_policy(f"{path}:Greedy")
    except InputError as e:
        assert str(path) in str(e) or "pol.py" in str(e)
        return
    assert callable(getattr(policy, "decide", None))
