"""Every catalogue policy gives the same schedules, bit for bit, as when the digests were stored
(tests/schedule_digests.py says how to regenerate them for a change meant to move schedules)."""

import json

import pytest
from schedule_digests import STORE, TRACES, cases, digest

pytestmark = pytest.mark.skipif(not TRACES.is_dir(), reason="needs ../shared/traces")


def test_the_stored_digests_cover_every_case():
    stored = json.loads(STORE.read_text())
    assert sorted(stored) == sorted(key for key, *_ in cases())


@pytest.mark.slow
def test_every_catalogue_schedule_is_unchanged():
    from moga import simulate

    stored = json.loads(STORE.read_text())
    moved = [key for key, js, fed, name, est in cases()
             if digest(simulate(js, fed, name, estimates=est)) != stored[key]]
    assert not moved, f"schedules moved: {moved}"
