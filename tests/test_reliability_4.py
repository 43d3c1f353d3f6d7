"""Regression tests of the fourth hostile pass (../shared/reviews/reliability-4.md), one or
more per defect, numbered as there, and of the two outside checks of issue 54."""

from __future__ import annotations

import json

import numpy as np
import pytest

import moga
from moga.sim import Session

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def small():
    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=60, federation=fed, batch=True)
    return js, fed


# ------------------------------------------------------------- 4. Session verbs' arguments
def test_4_preempt_refuses_a_repeated_job(small):
    s = Session(*small)
    s.start(s.queued())
    j = int(s.running()[0][0])
    with pytest.raises(ValueError, match=f"preempt got job {j} twice"):
        s.preempt([j, j])
    assert j in s.running()[0]  # nothing stopped


@pytest.mark.parametrize("verb", ["start", "reject"])
def test_4_start_and_reject_refuse_a_repeated_job(small, verb):
    s = Session(*small)
    with pytest.raises(ValueError, match=f"{verb} got job 3 twice"):
        getattr(s, verb)([3, 3])
    assert 3 in s.queued()


def test_4_verbs_refuse_unknown_finished_and_waiting_jobs(small):
    s = Session(*small)
    with pytest.raises(ValueError, match="not a job of the set"):
        s.preempt([10**6])
    with pytest.raises(ValueError, match="not a job of the set"):
        s.current_start([10**6])
    with pytest.raises(ValueError, match="current_start: job 0 is not running"):
        s.current_start([0])
    with pytest.raises(ValueError, match="preempt: job 0 is not running"):
        s.preempt([0])
    s.start([0])
    while 0 in s.running()[0]:
        s.advance()
    with pytest.raises(ValueError, match="preempt: job 0 is not running"):
        s.preempt([0])
    with pytest.raises(ValueError, match="is not waiting"):
        s.reject([0])


def test_4_verbs_refuse_2d_positions_and_absurd_restarts(small):
    s = Session(*small)
    with pytest.raises(ValueError, match="1-D sequence"):
        s.start(np.array([[1], [2]]))
    s.start([1])
    with pytest.raises(ValueError, match="restart must be <="):
        s.preempt([1], restart=1e300)
