"""The ``moga`` command: one module per command, each with its ``add_arguments(parser)``
beside its handler ``run(args)``; :mod:`moga.cli.common` holds the shared options and
helpers."""

from __future__ import annotations

import argparse
import sys

from ..errors import MissingExtraError
from . import (
    compare,
    evaluate,
    powercap,
    realtime,
    report,
    rl,
    run,
    schedule,
    simulate,
    sweep,
    trace,
    tune,
    value,
    warmup,
)
from .common import WHOLE_TRACE_WARNING, cap_parser, values_may_be_negative
from .warmup import COMPILE_NOTE

__all__ = ["COMMANDS", "COMPILE_NOTE", "WHOLE_TRACE_WARNING", "build_parser", "main"]

#: The commands in the order ``moga --help`` lists them: name, module.
COMMANDS = (("evaluate", evaluate), ("run", run), ("schedule", schedule),
            ("powercap", powercap), ("simulate", simulate), ("realtime", realtime),
            ("rl", rl), ("compare", compare), ("sweep", sweep), ("report", report),
            ("tune", tune), ("value", value), ("warmup", warmup), ("trace", trace))

#: The power-cap option type under its earlier private name.
_cap_parser = cap_parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``moga`` command."""
    parser = argparse.ArgumentParser(
        prog="moga",
        description="Multi-objective evolutionary scheduling on heterogeneous federated clusters.")
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"moga {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS:
        p = sub.add_parser(name, help=module.HELP)
        module.add_arguments(p)
        if hasattr(module, "run"):
            p.set_defaults(func=module.run)
    values_may_be_negative(parser)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as one line each, as the command's other messages."""
    print(f"moga: warning: {message}", file=sys.stderr if file is None else file)


def main(argv=None) -> int:
    """Entry point of the ``moga`` command; returns the exit status."""
    import warnings

    parser = build_parser()
    args = parser.parse_args(argv)
    shown = warnings.showwarning
    warnings.showwarning = _show_warning
    try:
        warmup.compile_notice(args.command, getattr(args, "policy", None))
        return args.func(args)
    except KeyboardInterrupt:
        print("\nmoga: interrupted", file=sys.stderr)
        return 130
    except MissingExtraError as e:
        print(f"moga: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as e:
        # Bad input and unusable files: the project's errors name the file, option or field.
        print(f"moga: error: {e}", file=sys.stderr)
        return 2
    finally:
        warnings.showwarning = shown
