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


def test_kernel_entries_of_the_catalogue_name_a_rule_of_the_table():
    starts = {r.start for r in KERNEL_RULES.values()}
    loop_entries = [p for p in POLICIES.values()
                    if p.kind == "kernel" and p.code.startswith(("decoders.federated.",
                                                                 "decoders.easy."))]
    assert {p.name for p in loop_entries} == {"fcfs", "easy", "prb", "saf"}
    for p in loop_entries:
        assert _resolve(p.code) in starts, p.name
        rule = "in_order" if p.name == "fcfs" else p.name
        assert KERNEL_RULES[rule].group in p.kernels, p.name
