"""docs/dev/layout.md names every module of moga/ and decoders/, and nothing that is gone."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def documented() -> set[str]:
    """The paths of the tree in the layout page's code block (two spaces a level)."""
    text = (ROOT / "docs" / "dev" / "layout.md").read_text()
    block = re.search(r"```\n(moga/.*?)```", text, re.S).group(1)
    stack, paths = [], set()
    for line in block.splitlines():
        m = re.match(r"^( *)(\S+)", line)
        if not m or not m.group(2).endswith(("/", ".py")):
            continue  # a description's continuation line
        depth = len(m.group(1)) // 2
        del stack[depth:]
        if m.group(2).endswith("/"):
            stack.append(m.group(2).rstrip("/"))
        else:
            paths.add("/".join([*stack, m.group(2)]))
    return paths


def present() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for top in ("moga", "decoders")
            for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts}


def test_the_layout_page_lists_every_module():
    assert sorted(present() - documented()) == []


def test_the_layout_page_lists_no_module_that_is_gone():
    assert sorted(documented() - present()) == []
