"""``moga report``: statistics, tests and plots of a sweep's results store."""

from __future__ import annotations

import sys

HELP = "statistics, tests and plots of a sweep's results store"


def add_arguments(p) -> None:
    p.add_argument("out", metavar="STORE", help="results store of moga sweep (its --out)")
    p.add_argument("--out", "--dest", dest="dest", default=None,
                   help="report folder (default: STORE/report); --dest is the older name")


def run(args) -> int:
    from ..experiments.report import make_report

    written = make_report(args.out, args.dest)
    if written["foreign"]:
        print(f"moga: warning: {len(written['foreign'])} run row(s) in {args.out} do not belong "
              "to its recorded configuration (another sweep wrote into it); left out of the "
              "report", file=sys.stderr)
    print(f"wrote {written['report']} with {len(written['plots'])} plot(s) and "
          f"{len(written['tables'])} table(s)")
    return 0
