"""Property-based fuzzing of the loaders: any input gives a result or the project's own error.

The project's errors are ValueError (SWFFormatError, StoreError and the
configuration errors derive from it) and, for files that are not there,
FileNotFoundError naming them. Anything else (a TypeError, KeyError,
IndexError deep inside) is a bug: an error that does not say what was wrong.
"""

from __future__ import annotations

import string

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import moga
from moga.experiments.sweep import config_from_dict

OWN_ERRORS = (ValueError, FileNotFoundError)

# TOML-like values: what a TOML file can hold.
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                    st.floats(allow_nan=True, allow_infinity=True),
                    st.text(string.printable, max_size=12))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(string.ascii_letters, max_size=8), inner,
                                                 max_size=4)), max_leaves=12)

SWF_TOKENS = st.sampled_from(["0", "1", "-1", "2.5", "1e30", "nan", "inf", "x", "", ";", "10",
                              "3600", "-7", "0.0", "64"])


@st.composite
def swf_texts(draw):
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["data", "header", "blank", "junk"]))
        if kind == "data":
            n = draw(st.sampled_from([18, 18, 18, 17, 19]))
            lines.append(" ".join(draw(st.lists(SWF_TOKENS, min_size=n, max_size=n))))
        elif kind == "header":
            lines.append("; " + draw(st.sampled_from(["MaxProcs: 64", "MaxProcs: x", "MaxNodes:",
                                                      "Note: a", "UnixStartTime: -5"])))
        elif kind == "blank":
            lines.append("")
        else:
            lines.append(draw(st.text(string.printable, max_size=30)))
    return "\n".join(lines)


@settings(max_examples=150)
@given(text=swf_texts(), skip=st.booleans(), gz=st.booleans())
def test_swf_reader_fuzz(tmp_path_factory, text, skip, gz):
    import gzip

    p = tmp_path_factory.mktemp("swf") / ("t.swf.gz" if gz else "t.swf")
    data = text.encode()
    p.write_bytes(gzip.compress(data) if gz else data)
    try:
        tr = moga.load_swf(p, skip_malformed=skip)
    except OWN_ERRORS:
        return
    assert tr.report.balanced
    if len(tr):
        js = tr.jobset(n_jobs=len(tr), federation=max(1, int(tr.max_procs)), wide="drop")
        assert len(js) <= len(tr)


@settings(max_examples=150)
@given(raw=st.binary(max_size=200))
def test_swf_reader_on_raw_bytes(tmp_path_factory, raw):
    p = tmp_path_factory.mktemp("raw") / "r.swf.gz"
    p.write_bytes(b"\x1f\x8b" + raw)
    try:
        moga.load_swf(p)
    except OWN_ERRORS:
        pass


cluster_tables = st.dictionaries(
    st.sampled_from(["name", "nodes", "speed", "power_busy", "power_idle", "link", "colour"]),
    scalars, max_size=7)


@settings(max_examples=200)
@given(doc=st.one_of(values, st.fixed_dictionaries(
    {"cluster": st.lists(st.one_of(cluster_tables, scalars), max_size=3)},
    optional={"name": scalars})))
def test_federation_loader_fuzz(doc):
    try:
        moga.Federation.from_dict(doc)
    except OWN_ERRORS:
        pass


trace_tables = st.dictionaries(
    st.sampled_from(["name", "path", "days", "windows", "n_jobs", "starts", "max_procs",
                     "federation", "wide", "release", "x"]),
    st.one_of(scalars, st.just("bundled"), st.lists(st.integers(-2, 3), max_size=3)), max_size=6)


@settings(max_examples=200)
@given(doc=st.one_of(values, st.fixed_dictionaries(
    {"trace": st.one_of(scalars, st.lists(st.one_of(trace_tables, scalars), max_size=2)),
     "algorithms": st.one_of(scalars, st.dictionaries(
         st.sampled_from(["MOGA", "FCFS", "random search", "GA-MF", "SJF"]),
         st.one_of(scalars, st.dictionaries(st.sampled_from(["pop_size", "n_gen", "n_evals",
                                                             "params", "seeded"]),
                                            scalars, max_size=3)), max_size=3))},
    optional={"seeds": values, "model": scalars, "federation": scalars, "name": scalars})))
def test_sweep_config_loader_fuzz(doc):
    try:
        config_from_dict(doc, "fuzz.toml")
    except OWN_ERRORS:
        pass


@settings(max_examples=200)
@given(doc=st.one_of(values, st.dictionaries(
    st.sampled_from(["pop_size", "n_gen", "prob_order_crossover", "prob_blacklist_crossover",
                     "blacklist_crossover", "blend_alpha", "order_mutation_rate",
                     "blacklist_mutation_rate", "seeded", "seed_levels", "x"]),
    values, max_size=5)))
def test_params_loader_fuzz(doc):
    try:
        moga.GAParams.from_dict(doc)
    except OWN_ERRORS:
        pass


# ---------------------------------------------------------------- the newer subsystems' inputs
# Policy files, Deep-EAS configurations and job sequences, real-time and power-cap
# parameters and the exact program's inputs: a result or the project's InputError, never a
# numpy, zipfile or arithmetic error from deep inside.
numbers_ = st.one_of(st.integers(-5, 50), st.floats(-5, 50), st.floats(allow_nan=True,
                                                                          allow_infinity=True),
                     st.booleans(), st.text(string.digits + ".", max_size=4), st.none())


@settings(max_examples=100)
@given(raw=st.binary(max_size=400), zip_magic=st.booleans())
def test_policy_loader_on_raw_bytes(tmp_path_factory, raw, zip_magic):
    from moga.errors import InputError
    from moga.rl.policy import load_params

    p = tmp_path_factory.mktemp("pol") / "p.npz"
    p.write_bytes((b"PK\x03\x04" if zip_magic else b"") + raw)
    try:
        load_params(p)
    except InputError:
        pass


@settings(max_examples=100)
@given(arrays=st.dictionaries(
    st.sampled_from(["w1", "b1", "w2", "b2", "meta_lam", "x"]),
    st.tuples(st.lists(st.integers(0, 12), min_size=0, max_size=2),
              st.sampled_from(["f4", "f8", "i8", "U3", "?"])), max_size=5),
    fill=st.sampled_from([0.0, np.nan, np.inf, 1.0]))
def test_policy_loader_on_npz_archives(tmp_path_factory, arrays, fill):
    from moga.errors import InputError
    from moga.rl.policy import load_params

    p = tmp_path_factory.mktemp("npz") / "p.npz"
    np.savez(p, **{k: np.full(tuple(shape), fill if dt[0] == "f" else 1).astype(dt)
                   for k, (shape, dt) in arrays.items()})
    try:
        params, _ = load_params(p)
    except InputError:
        return
    assert all(np.isfinite(v).all() for v in params.values())


@settings(max_examples=150)
@given(kw=st.dictionaries(st.sampled_from(["K", "N", "H", "Q", "B", "L", "energy", "slowdown",
                                           "lam", "beta", "c", "t_arrive", "max_steps",
                                           "colour"]),
                          st.one_of(numbers_, st.lists(numbers_, max_size=3)), max_size=4))
def test_deep_eas_configuration_fuzz(kw):
    from moga.errors import InputError
    from moga.rl import DeepEASEnv

    try:
        env = DeepEASEnv(config=kw)
    except InputError:
        return
    env.reset(seed=0)


@settings(max_examples=150)
@given(J=st.integers(0, 4), K=st.integers(1, 3), arrival=st.lists(numbers_, max_size=4),
       n=st.lists(st.integers(-1, 12), max_size=4), mu=st.one_of(st.floats(-1, 40), st.just(float("nan"))),
       d=st.integers(-1, 40), action=st.one_of(numbers_, st.integers(-3, 30)))
def test_deep_eas_job_sequence_fuzz(J, K, arrival, n, mu, d, action):
    from moga.errors import InputError
    from moga.rl import DeepEASEnv
    from moga.rl.cluster import JobSequence

    try:
        seq = JobSequence(np.array(arrival[:J], dtype=object) if arrival[:J] else np.zeros(0),
                          np.array(n[:J] + [1] * (J - len(n[:J]))), np.full((J, K), mu),
                          np.full((J, K), d))
        env = DeepEASEnv(jobs=seq)
        env.reset(seed=0)
        env.step(action)
    except InputError:
        pass


@settings(max_examples=150)
@given(machine=st.dictionaries(st.sampled_from(["nodes", "partitions", "memory_gb", "pfs_gbps",
                                                "pfs_usable", "io_nodes_per", "io_gbps"]),
                               st.one_of(numbers_, st.lists(numbers_, max_size=3)), max_size=3),
       ckpt=st.dictionaries(st.sampled_from(["kind", "sys_interval", "data_fraction",
                                             "app_fraction", "app_overhead"]),
                            st.one_of(numbers_, st.sampled_from(["sys", "jit", "x"])),
                            max_size=3),
       thr=st.dictionaries(st.sampled_from(["rtj", "batch"]),
                           st.one_of(numbers_, st.lists(numbers_, max_size=5)), max_size=2))
def test_realtime_parameters_fuzz(machine, ckpt, thr):
    from moga.errors import InputError
    from moga.realtime import Machine
    from moga.realtime.simulator import Checkpointing, Thresholds

    for make, kw in ((Machine, {"nodes": 64, **machine}), (Checkpointing, ckpt),
                     (Thresholds, thr)):
        try:
            make(**kw)
        except InputError:
            pass


@settings(max_examples=150)
@given(cap=numbers_, fraction=numbers_, clusters=st.one_of(st.none(), st.lists(numbers_,
                                                                             max_size=5)),
       window=numbers_, time_limit=numbers_)
def test_power_cap_parameters_fuzz(cap, fraction, clusters, window, time_limit):
    from moga.powercap import CPOptions

    fed = moga.Federation.preset()
    for kw in ({"power_cap": cap}, {"fraction": fraction}, {"cluster_caps": clusters},
               {"power_cap": cap, "cluster_caps": clusters}):
        try:
            f = fed.with_cap(**kw)
        except OWN_ERRORS:
            continue
        assert f.power_cap is None or np.isfinite(f.power_cap)
    try:
        CPOptions(window=window, time_limit=time_limit)
    except OWN_ERRORS:
        pass


@settings(max_examples=80)
@given(J=st.integers(0, 5), release=st.lists(numbers_, max_size=5),
       p=st.lists(st.one_of(st.integers(-1, 6), st.floats(0, 6)), max_size=5),
       nodes=st.lists(st.integers(-1, 4), max_size=5), rtj=st.lists(st.booleans(), max_size=5),
       capacity=numbers_, threshold=numbers_, time_limit=st.sampled_from([1.0, -1, 0, np.nan]))
def test_exact_program_inputs_fuzz(J, release, p, nodes, rtj, capacity, threshold, time_limit):
    from moga.errors import InputError
    from moga.realtime import min_threshold, solve_milp

    def cut(a, fill):
        return (list(a) + [fill] * J)[:J]

    args = (cut(release, 0), cut(p, 1), cut(nodes, 1), cut(rtj, False), capacity)
    try:
        solve_milp(*args, threshold=threshold, time_limit=time_limit)
    except InputError:
        pass
    try:
        min_threshold(*args, time_limit=time_limit)
    except InputError:
        pass
