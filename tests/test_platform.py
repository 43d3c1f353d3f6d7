"""Federations: presets, TOML, validation."""

from __future__ import annotations

import numpy as np
import pytest

import moga
from moga.model.platform import PRESETS


@pytest.mark.parametrize("name", [p for p in PRESETS if p != "machine"])
def test_presets_load_and_faster_spends_more_per_work(name):
    fed = moga.Federation.preset(name)
    assert fed.n_clusters == 4
    order = np.argsort(-fed.speed)
    epw = (fed.power_busy / fed.speed)[order]
    assert np.all(np.diff(epw) < 0)
    assert np.all(fed.power_busy >= fed.power_idle)


def test_the_machine_preset_is_one_cluster_that_resizes():
    fed = moga.Federation.preset("machine")
    assert fed.names == ("machine",) and fed.total_nodes == 256 and fed.speed[0] == 1.0
    assert moga.Federation.load("machine@auto", auto_nodes=8192).total_nodes == 8192


def test_default_preset_matches_design():
    fed = moga.Federation.preset()
    assert fed.names == ("fast", "upper", "base", "slow")
    np.testing.assert_array_equal(fed.nodes, [32, 64, 64, 96])
    np.testing.assert_allclose(fed.speed, [1.6, 1.3, 1.0, 0.8])
    np.testing.assert_allclose(fed.power_busy, 10 + 60 * fed.speed**3.2941, atol=0.06)
    assert fed.total_nodes == 256
    ricc, curie = moga.Federation.preset("ricc"), moga.Federation.preset("curie")
    assert ricc.total_nodes == 8192 and curie.total_nodes == 93312
    # Links scale with the federation: the same bandwidth per node as the default preset.
    for big in (ricc, curie):
        np.testing.assert_allclose(big.link / big.nodes, fed.link / fed.nodes)


def test_toml_roundtrip(tmp_path):
    fed = moga.Federation.preset()
    p = tmp_path / "f.toml"
    p.write_text(fed.to_toml())
    back = moga.Federation.from_toml(p)
    assert back.names == fed.names and back.name == fed.name
    for f in ("nodes", "speed", "power_busy", "power_idle", "link"):
        np.testing.assert_array_equal(getattr(back, f), getattr(fed, f))
    assert moga.Federation.load(str(p)).total_nodes == 256
    assert moga.Federation.load("default").total_nodes == 256


CLUSTER = 'name = "a"\nnodes = 4\nspeed = 1.0\npower_busy = 50.0\npower_idle = 10.0\nlink = 100.0\n'


@pytest.mark.parametrize("change, message", [
    (("nodes = 4", "nodes = 0"), "nodes must be > 0"),
    (("nodes = 4", "nodes = 2.5"), "nodes must be an integer"),
    (("speed = 1.0", "speed = -1.0"), "speed must be > 0"),
    (("link = 100.0", "link = -5.0"), "link must be > 0"),
    (("power_busy = 50.0", "power_busy = 5.0"), "power_busy .* must be >= power_idle"),
    (("power_idle = 10.0", "power_idle = 0.0"), "power_idle must be > 0"),
    (("link = 100.0\n", ""), r"misses key\(s\) \['link'\]"),
    (("link = 100.0", "link = 100.0\nlinks = 3"), r"unknown key\(s\) \['links'\]"),
    (("speed = 1.0", 'speed = "fast"'), "'speed' must be a number"),
])
def test_validation_names_cluster_and_field(tmp_path, change, message):
    p = tmp_path / "bad.toml"
    p.write_text("[[cluster]]\n" + CLUSTER.replace(*change))
    with pytest.raises(ValueError, match=message):
        moga.Federation.from_toml(p)


def test_other_errors(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text("name = 'x'\n")
    with pytest.raises(ValueError, match="no \\[\\[cluster\\]\\]"):
        moga.Federation.from_toml(p)
    p.write_text("[[cluster]\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        moga.Federation.from_toml(p)
    with pytest.raises(ValueError, match="unknown federation preset"):
        moga.Federation.preset("nope")
    with pytest.raises(ValueError, match="neither a preset"):
        moga.Federation.load("nope.toml")
    with pytest.raises(ValueError, match="unique"):
        moga.Federation(names=["a", "a"], nodes=[1, 1], speed=[1, 1], power_busy=[2, 2],
                        power_idle=[1, 1], link=[1, 1])


def test_scaled_keeps_shares_and_bandwidth_per_node():
    fed = moga.Federation.preset("default")
    for name in ("ricc", "curie"):
        preset = moga.Federation.preset(name)
        s = fed.scaled(preset.total_nodes)
        assert s.nodes.tolist() == preset.nodes.tolist()
        np.testing.assert_allclose(s.link, preset.link)
    s = fed.scaled(338)
    assert s.total_nodes == 338 and s.name == "default@338" and min(s.nodes) >= 1
    np.testing.assert_allclose(s.link / s.total_nodes, fed.link / fed.total_nodes)
    assert fed.scaled(4).nodes.tolist() == [1, 1, 1, 1]
    with pytest.raises(ValueError, match="at least the 4 clusters"):
        fed.scaled(3)


def test_load_resizes_with_at():
    assert moga.Federation.load("default@512").total_nodes == 512
    assert moga.Federation.load("default@auto", auto_nodes=338).total_nodes == 338
    with pytest.raises(ValueError, match="no trace was given"):
        moga.Federation.load("default@auto")
    with pytest.raises(ValueError, match="node count or 'auto'"):
        moga.Federation.load("default@many")


def test_too_wide_jobs_name_the_resizing_option():
    tr = moga.load_default()
    with pytest.raises(ValueError, match=r"scaled\(240\).*NAME@auto"):
        tr.jobset(federation=moga.Federation.preset().scaled(16))
    js = tr.jobset(n_jobs=500, federation=moga.Federation.load("default@auto",
                                                                auto_nodes=tr.auto_nodes))
    assert len(js) == 500
