"""One table of bounds (issue 66, item 4): every user-given number is checked against
``moga.bounds.BOUNDS``, wherever it comes in.

The tests cover the class, not cases: every numeric option of every command reads the
table and follows it at its edges; every table entry is read by at least one entry point;
``docs/bounds.md`` is the table's own rendering; the Python entry points and the decoders'
duck-typed inputs refuse a value just outside their bound with a one-line error naming the
input. The slow Hypothesis test drives ``moga.cli.main`` with values drawn around each bound
(and NaN, inf, huge and tiny numbers) for every command and option.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import moga
import moga.cli as cli
from moga.bounds import BOUNDS, markdown
from moga.errors import InputError

ROOT = Path(__file__).resolve().parent.parent

#: Values every numeric option meets besides its edges.
SPECIALS = (math.nan, math.inf, -math.inf, 1e308, -1e308, 1e-308, -0.0, 0, 1, 2**63, -(2**63))


def _options(parser=None, name=("moga",)):
    """``(command words, positionals to fill, action)`` of every option of every command."""
    parser = parser or cli.build_parser()
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for n, sp in a.choices.items():
                yield from _options(sp, name + (n,))
        elif a.option_strings and a.type is not None:
            fill = [p for p in parser._actions if not p.option_strings and p.nargs != "?"
                    and not isinstance(p, argparse._SubParsersAction)]
            yield name[1:], len(fill), a


def _numeric(a) -> bool:
    """Whether the option's type makes a number (or a cap) of a plain number."""
    for text in ("1", "0.5", "2", "4", "1000"):
        try:
            v = a.type(text)
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            continue
        return isinstance(v, (int, float)) or (isinstance(v, tuple) and len(v) == 2
                                              and isinstance(v[1], float))
    return False


NUMERIC = [(words, fill, a) for words, fill, a in _options() if _numeric(a)]
CASES = [pytest.param(words, fill, a, id=f"{' '.join(words)} {a.option_strings[-1]}")
         for words, fill, a in NUMERIC]


def _text(v) -> str:
    return repr(v) if isinstance(v, float) else str(v)


def _accepted(key: str, v) -> bool:
    b = BOUNDS[key]
    if key == "power_cap":  # a cap is a finite number > 0 (inf is "no cap" only in Python)
        return b.contains(v) and math.isfinite(v)
    return b.contains(v)


def test_the_page_is_the_table():
    """docs/bounds.md is what ``python -m moga.bounds`` writes, and the docs index links it."""
    assert (ROOT / "docs" / "bounds.md").read_text() == markdown(), \
        "regenerate with: python -m moga.bounds > docs/bounds.md"
    assert re.search(r"^bounds$", (ROOT / "docs" / "index.md").read_text(), re.M)


def test_every_numeric_option_reads_the_table():
    """No numeric option of any command has a bound of its own: each type carries its key."""
    assert len(NUMERIC) > 50
    free = [f"{' '.join(w)} {a.option_strings[-1]}" for w, _, a in NUMERIC
            if getattr(a.type, "bound", None) not in BOUNDS]
    assert free == []


def test_every_table_entry_is_read_somewhere():
    """Each entry is used by an option type or by a check in the code (not only documented)."""
    used = {getattr(a.type, "bound", None) for _, _, a in NUMERIC}
    code = "\n".join(f.read_text() for pkg in ("moga", "decoders")
                     for f in (ROOT / pkg).rglob("*.py") if f.name != "bounds.py")
    for key in BOUNDS:
        if key in used:
            continue
        k = re.escape(key)
        assert re.search(rf"""(BOUNDS\[["']{k}["']\]|(check_bounds|_in_bounds)\(["']{k}["']"""
                         rf"""|for [\w, ]+ in \(\(?[^)]*["']{k}["'])""", code), \
            f"BOUNDS[{key!r}] is read by no entry point"


def test_every_entry_is_documented_with_its_places():
    for key, b in BOUNDS.items():
        assert b.what and b.read, key
        inside, outside = b.edges()
        assert inside and outside, key
        assert all(b.contains(v) for v in inside), key
        assert not any(b.contains(v) for v in outside), key


@pytest.mark.parametrize("words, fill, action", CASES)
def test_option_types_follow_their_bound_at_its_edges(words, fill, action):
    """Just inside each bound parses; just outside, NaN and -inf give the option's error."""
    key = action.type.bound
    inside, outside = BOUNDS[key].edges()
    for v in inside:
        action.type(_text(v))
    for v in [*outside, math.nan, -math.inf]:
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(action.option_strings[-1])
                           if key != "seed" else "seed"):
            action.type(_text(v))


def _drive(monkeypatch, capsys, words, fill, action, v):
    """``moga WORDS ... OPTION v`` with the command's work stubbed: (exit status, stderr)."""
    module = dict(cli.COMMANDS)[words[0]]
    for attr in ("run", "run_train", "run_evaluate"):
        if hasattr(module, attr):
            monkeypatch.setattr(module, attr, lambda args: 0)
    n = action.nargs if isinstance(action.nargs, int) else 1
    argv = [*words, *["x"] * fill, action.option_strings[-1], *[_text(v)] * n]
    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = e.code
    return code, capsys.readouterr().err


def _check(code, err, words, action, v):
    key = action.type.bound
    assert "Traceback" not in err
    if _accepted(key, v):
        assert code == 0, (words, action.option_strings, v, err)
    else:
        assert code == 2, (words, action.option_strings, v)
        errors = [line for line in err.splitlines() if "error:" in line]
        assert len(errors) == 1 and action.option_strings[-1] in errors[0], err


@pytest.mark.slow
@pytest.mark.parametrize("words, fill, action", CASES)
@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_command_takes_or_refuses_values_around_each_bound(words, fill, action, data,
                                                                 monkeypatch, capsys):
    """For every command and numeric option, a value drawn just inside or outside a bound,
    or a special number, gives exit 0 or exit 2 with one error line naming the option."""
    b = BOUNDS[action.type.bound]
    inside, outside = b.edges()
    edges = [e for e in (b.low, b.high) if e is not None]
    near = st.sampled_from(edges).flatmap(
        lambda e: st.integers(int(e) - 3, int(e) + 3) if b.integer
        else st.floats(e - max(1.0, abs(e)) * 1e-9, e + max(1.0, abs(e)) * 1e-9))
    v = data.draw(st.one_of(st.sampled_from([*inside, *outside, *SPECIALS]), near))
    code, err = _drive(monkeypatch, capsys, words, fill, action, v)
    if b.integer and isinstance(v, float):  # "1.0", "nan", "1e-308": not an integer's text
        assert code == 2 and "Traceback" not in err, (words, action.option_strings, v)
        return
    _check(code, err, words, action, v)


# -- the Python entry points ---------------------------------------------------------------

def _fed_with(field, value):
    c = {"name": "a", "nodes": 4, "speed": 1.0, "power_busy": 100.0, "power_idle": 10.0,
         "link": 1e3}
    if field == "power_busy":
        c["power_idle"] = min(10.0, value)
    if field == "power_idle":
        c["power_busy"] = max(100.0, min(value, 1e7))
    c[field] = value
    return moga.Federation.from_clusters([c])


def _decode_with(field, value):
    import decoders

    job = {"release": [0.0], "tasks": [1], "runtime": [10.0], "sigma": [0.0], "bw": [0.0]}
    cl = {"nodes": [4], "speed": [1.0], "power_busy": [100.0], "power_idle": [10.0],
          "link": [1e3]}
    if field in job:
        job[field] = [value]
    else:
        cl[field] = [value]
        if field == "power_busy":
            cl["power_idle"] = [min(10.0, value)]
        if field == "power_idle":
            cl["power_busy"] = [max(100.0, min(value, 1e7))]
    return decoders.decode_arrays(*[np.array(job[k]) for k in job],
                                  *[np.array(cl[k]) for k in cl],
                                  np.array([0]), np.zeros((1, 1), dtype=np.int8))


PYTHON = {
    "pop_size": lambda v: moga.GAParams(pop_size=v),
    "n_gen": lambda v: moga.GAParams(n_gen=v),
    "archive_size": lambda v: moga.GAParams(archive_size=v, easy_search=False),
    "fast_end": lambda v: moga.GAParams(fast_end=v),
    "resequence_rate": lambda v: moga.GAParams(resequence_rate=v),
    "seed": lambda v: moga.evolution.params.check_seed(v),
    "nodes": lambda v: _fed_with("nodes", v),
    "speed": lambda v: _fed_with("speed", v),
    "link": lambda v: _fed_with("link", v),
    "power_busy": lambda v: _fed_with("power_busy", v),
    "power_idle": lambda v: _fed_with("power_idle", v),
}
for _f in ("speed", "link", "release", "runtime", "bw", "sigma"):
    PYTHON[f"decode {_f}"] = (lambda f: lambda v: _decode_with(f, v))(_f)


@pytest.mark.parametrize("name", sorted(PYTHON))
def test_python_entry_points_follow_the_table(name):
    """A value just outside the bound is an error naming the input; just inside is taken."""
    key = name.split()[-1]
    inside, outside = BOUNDS[key].edges()
    for v in outside:
        with pytest.raises(ValueError, match=re.escape(key)) as e:
            PYTHON[name](v)
        assert "\n" not in str(e.value)
    for v in inside:
        if key in ("sigma", "runtime", "release", "bw") or v in (BOUNDS[key].low,
                                                                   BOUNDS[key].high):
            try:
                PYTHON[name](v)
            except ValueError as e:  # a check of another kind (capacity, width) may answer
                assert key not in str(e).split(" must")[0], e


def test_decode_refuses_a_nan_or_non_positive_power_cap():
    import decoders
    js = moga.JobSet.from_arrays([0.0], [1], [10.0], sigma=[0.0], bw=[0.0])
    fed = moga.Federation.preset("default")
    for cap in (math.nan, 0.0, -1.0):
        with pytest.raises(ValueError, match="power_cap must be"):
            decoders.decode(js, _duck(fed, cap))


def _duck(fed, cap):
    import types
    f = {k: np.array(getattr(fed, k)) for k in ("nodes", "speed", "power_busy", "power_idle",
                                                 "link")}
    return types.SimpleNamespace(**f, power_cap=cap)


def test_input_error_is_the_python_form():
    with pytest.raises(InputError, match="pop_size"):
        BOUNDS["pop_size"].check("pop_size", 10**9)
    assert BOUNDS["sys_interval"].check("sys_interval", math.inf) == math.inf
    with pytest.raises(InputError):
        BOUNDS["sys_interval"].check("sys_interval", -math.inf)
