"""Property-based fuzzing of the loaders: any input gives a result or the project's own error.

The project's errors are ValueError (SWFFormatError, StoreError and the
configuration errors derive from it) and, for files that are not there,
FileNotFoundError naming them. Anything else (a TypeError, KeyError,
IndexError deep inside) is a bug: an error that does not say what was wrong.
"""

from __future__ import annotations

import string

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
