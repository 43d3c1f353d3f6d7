"""Shared fixtures and hypothesis strategies."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import moga

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci")

SHARED_TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"


@pytest.fixture(scope="session")
def default_fed():
    return moga.Federation.preset("default")


@pytest.fixture(scope="session")
def default_trace():
    return moga.load_default()


@st.composite
def instances(draw, max_jobs=14, max_clusters=4, max_nodes=8, release=None, sigma_zero=False,
              single_cluster=False, min_clusters=1):
    """A small random federation, job-set and chromosome.

    Speeds and powers come from small sets so that ties occur; links are slow
    and bandwidths high enough that links saturate.
    """
    K = 1 if single_cluster else draw(st.integers(min_clusters, max_clusters))
    nodes = np.array(draw(st.lists(st.integers(1, max_nodes), min_size=K, max_size=K)))
    speed = np.array(draw(st.lists(st.sampled_from([0.5, 0.8, 1.0, 1.3, 1.6, 2.0]),
                                   min_size=K, max_size=K)))
    pidle = np.array(draw(st.lists(st.sampled_from([5.0, 10.0, 20.0]), min_size=K, max_size=K)))
    pbusy = pidle + np.array(draw(st.lists(st.sampled_from([0.0, 30.0, 60.0, 100.0, 250.0]),
                                           min_size=K, max_size=K)))
    link = np.array(draw(st.lists(st.sampled_from([5.0, 20.0, 100.0, 1000.0]),
                                  min_size=K, max_size=K)))
    J = draw(st.integers(1, max_jobs))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    total = int(nodes.sum())
    tasks = rng.integers(1, total + 1, J)
    if draw(st.booleans()):
        runtime = rng.integers(1, 20, J).astype(float)  # integer run times: many ties
    else:
        runtime = rng.uniform(0.5, 100.0, J)
    sigma = np.zeros(J) if sigma_zero else rng.uniform(0.0, 1.0, J)
    bw = rng.uniform(0.0, 40.0, J)
    single = tasks == 1
    sigma[single] = 0.0
    bw[single] = 0.0
    use_release = draw(st.booleans()) if release is None else release
    rel = rng.integers(0, 60, J).astype(float) if use_release else np.zeros(J)
    order = rng.permutation(J)
    kind = draw(st.sampled_from(["zero", "uniform", "grid"]))
    if kind == "zero":
        bl = np.zeros((J, K))
    elif kind == "uniform":
        bl = rng.uniform(0.0, 1.0, (J, K))
    else:
        bl = rng.choice([0.0, 0.25, 0.5, 1.0], (J, K))
    js = moga.JobSet.from_arrays(rel, tasks, runtime, sigma=sigma, bw=bw)
    fed = moga.Federation(names=[f"c{k}" for k in range(K)], nodes=nodes, speed=speed,
                          power_busy=pbusy, power_idle=pidle, link=link)
    return js, fed, order, bl


@pytest.fixture(autouse=True)
def _catalogues_as_shipped():
    """Every test starts and ends with the catalogues users extend (objectives, policies)
    as shipped: a test, or a guide's example, that registers an entry of its own leaves no
    trace in the next test, the CLI's help and contract included."""
    from moga.model.objectives import CATALOGUE
    from moga.policies import POLICIES

    shipped = [(c, dict(c)) for c in (CATALOGUE, POLICIES)]
    yield
    for catalogue, entries in shipped:
        catalogue.clear()
        catalogue.update(entries)
