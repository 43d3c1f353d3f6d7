"""The event loop's rule table: one row per rule, and everything that names a rule reads it."""

from __future__ import annotations

import importlib

from decoders import federated
from decoders.federated import KERNEL_RULES, LOOP_RULES
from moga.policies import POLICIES
from moga.warmup import KERNEL_GROUPS


def _resolve(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_codes_are_the_loops_places():
    assert [r.code for r in KERNEL_RULES.values()] == list(range(len(KERNEL_RULES)))
    assert LOOP_RULES == {name: r.code for name, r in KERNEL_RULES.items()}
    for name, r in KERNEL_RULES.items():
        loop = federated._LOOPS[r.code]
        assert loop.__name__ == f"_decode_{name}"
        assert getattr(federated, f"_decode_{name}") is loop


def test_each_rule_has_its_compile_group():
    for name, r in KERNEL_RULES.items():
        assert r.group in KERNEL_GROUPS, (name, r.group)
        assert ("federated", f"_decode_{name}") in KERNEL_GROUPS[r.group][1]


def test_dispatch_methods_are_the_dispatch_rows():
    assert federated.DISPATCH_METHODS == tuple(n for n, r in KERNEL_RULES.items() if r.dispatch)


def _forwards_to(start, fn) -> bool:
    """``start`` is ``fn``, or a hook of the loop whose code calls ``fn`` (by its name, a
    global of the hook's module that is ``fn``)."""
    if start is fn:
        return True
    code, names = start.py_func.__code__, start.py_func.__globals__
    return any(names.get(n) is fn for n in code.co_names)


def test_kernel_entries_of_the_catalogue_name_a_rule_of_the_table():
    loop_entries = [p for p in POLICIES.values()
                    if p.kind == "kernel" and p.code.startswith(("decoders.federated.",
                                                                 "decoders.easy."))]
    assert {p.name for p in loop_entries} == {"fcfs", "easy", "prb", "saf"}
    for p in loop_entries:
        rule = "in_order" if p.name == "fcfs" else p.name
        assert _forwards_to(KERNEL_RULES[rule].start, _resolve(p.code)), p.name
        assert KERNEL_RULES[rule].group in p.kernels, p.name


def test_the_loop_has_no_rule_of_its_own():
    """Every rule reaches the loop through its hooks: the loop's code names none of the
    rules' functions, and each specialisation's hooks are its row's."""
    hooks = ("_prepare", "_reset", "_begin", "_start")
    names = set(federated._loop.__code__.co_names)
    assert set(hooks) <= names
    for r in KERNEL_RULES.values():
        for fn in (r.start, r.prepare, r.reset, r.begin):
            assert fn.py_func.__name__ not in names
    for name, r in KERNEL_RULES.items():
        g = federated._LOOPS[r.code].py_func.__globals__
        assert [g[h] for h in hooks] == [r.prepare, r.reset, r.begin, r.start], name
