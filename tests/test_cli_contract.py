"""The CLI is a public contract: every command and option keeps its name, default and meaning.

``tests/data/cli_contract.json`` holds every parser's options (dest, option strings,
default, choices, nargs, help, metavar, the group it is shown in) and what each option's
type makes of a set of probe strings. New commands and options extend the contract and
pass; a change to an existing one is a deliberate edit of that file (``python
tests/test_cli_contract.py`` rewrites it from the parser), noted in CHANGELOG.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from moga.cli import build_parser

FIXTURE = Path(__file__).parent / "data" / "cli_contract.json"

#: Strings every option's type is tried on: what it returns or the error it gives.
PROBES = ("0", "1", "-1", "2", "0.5", "1.5", "1e400", "nan", "abc", "60%", "0.6x", "2700W",
          "2.7kW", "4294967296")


def _probe(kind) -> dict | None:
    if kind is None:
        return None
    seen = {}
    for text in PROBES:
        try:
            seen[text] = repr(kind(text))
        except (argparse.ArgumentTypeError, ValueError, TypeError) as e:
            seen[text] = f"error: {e}"
    return seen


def _plain(value):
    """A JSON-safe, comparable form of a default or choice."""
    return json.loads(json.dumps(value, default=repr))


def describe(parser: argparse.ArgumentParser, name: str = "moga") -> dict:
    """``{command: description}`` for ``parser`` and every sub-command under it."""
    groups = {id(a): g.title for g in parser._action_groups for a in g._group_actions}
    mutex = [sorted(a.dest for a in g._group_actions) for g in parser._mutually_exclusive_groups]
    out = {name: {"prog": parser.prog, "description": parser.description, "mutex": mutex,
                  "options": []}}
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            helps = {c.dest: c.help for c in a._choices_actions}
            out[name]["commands"] = [[n, helps.get(n)] for n in a.choices]
            out[name]["subcommand_dest"] = a.dest
            out[name]["subcommand_required"] = a.required
            for n, sp in a.choices.items():
                out.update(describe(sp, f"{name} {n}"))
            continue
        out[name]["options"].append({
            "dest": a.dest, "option_strings": list(a.option_strings),
            "action": type(a).__name__, "default": _plain(a.default),
            "choices": _plain(list(a.choices)) if a.choices is not None else None,
            "nargs": a.nargs, "const": _plain(a.const), "required": a.required,
            "metavar": _plain(a.metavar), "help": a.help, "group": groups.get(id(a)),
            "type": _probe(a.type)})
    return out


def test_every_command_and_option_keeps_its_contract():
    """Nothing of the fixture changes or goes; new commands and options may come (an
    extension keeps the contract), and a command's options keep their order."""
    want = json.loads(FIXTURE.read_text())
    have = _plain(describe(build_parser()))
    assert [c for c in want if c not in have] == [], "commands removed"
    for command, w in want.items():
        h = have[command]
        for key in ("prog", "description", "mutex", "subcommand_dest", "subcommand_required"):
            if key == "mutex":
                assert all(g in h["mutex"] for g in w["mutex"]), command
            else:
                assert h.get(key) == w.get(key), (command, key)
        assert all(c in h.get("commands", []) for c in w.get("commands", [])), command
        by_dest = {o["dest"]: o for o in h["options"]}
        for wo in w["options"]:
            assert wo["dest"] in by_dest, f"{command}: {wo['option_strings']} removed"
            assert by_dest[wo["dest"]] == wo, f"{command} {wo['option_strings'] or wo['dest']}"
        kept = [o["dest"] for o in h["options"] if o["dest"] in {x["dest"] for x in w["options"]}]
        assert kept == [o["dest"] for o in w["options"]], f"{command}: options reordered"


def test_the_contract_lists_every_command():
    want = json.loads(FIXTURE.read_text())
    assert {c for c, _ in want["moga"]["commands"]} >= {
        "evaluate", "run", "schedule", "powercap", "simulate", "realtime", "rl", "compare",
        "sweep", "report", "tune", "value", "warmup", "trace"}
    assert [c for c, _ in want["moga rl"]["commands"]] == ["train", "evaluate"]
    assert sum(len(d["options"]) for d in want.values()) > 200


def test_each_command_is_small_and_beside_its_options():
    """One module per command, options beside the handler, no function over 60 lines and no
    call with more than 12 positional arguments."""
    import ast

    import moga.cli as cli

    for name, module in cli.COMMANDS:
        assert callable(module.add_arguments) and isinstance(module.HELP, str), name
    root = Path(cli.__file__).parent
    long, wide = [], []
    for f in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.end_lineno - node.lineno + 1 > 60:
                    long.append(f"{f.name}:{node.name}")
            elif isinstance(node, ast.Call) and len(node.args) > 12:
                wide.append(f"{f.name}:{node.lineno}")
    assert long == [] and wide == []


if __name__ == "__main__":  # rewrite the fixture from the parser of this checkout
    FIXTURE.write_text(json.dumps(_plain(describe(build_parser())), indent=1) + "\n")
    print(f"wrote {FIXTURE}")
