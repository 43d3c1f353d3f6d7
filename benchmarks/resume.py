"""A ``moga run`` killed with SIGKILL and resumed: the same front as the run never stopped.

On a 30-day month of RICC (55,103 jobs on ``default@auto``; the bundled HPC2N month
when RICC is not at hand), ``--pop`` x ``--gen`` generations:

1. ``moga run`` to the end (``full``);
2. the same command saving its state every generation, killed with SIGKILL once the
   saved state has reached generation ``--kill-at`` (``cut``);
3. the same command with ``--resume cut``.

Then ``front.csv`` of ``full`` and ``cut`` are compared byte for byte, and each step's
wall time and CPU time are reported beside the state file's size.

Writes ``results/resume.md`` and ``results/resume.json``::

    python benchmarks/resume.py                       # about 5 minutes on 2 cores
    python benchmarks/resume.py --quick --out /tmp/resume
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import add_options, out_dir  # noqa: E402

import moga  # noqa: E402
from moga.outputs import atomic_write  # noqa: E402


def _workload(quick: bool) -> list:
    if quick:
        return ["--n-jobs", "80"]
    try:
        path = moga.resolve_trace("RICC-2010-2.swf.gz")
    except moga.TraceNotFoundError:
        return ["--days", "30"]
    return ["--trace", str(path), "--start", "38911", "--days", "30", "--federation",
            "default@auto"]


def _timed(cmd, kill_at=None, state=None) -> dict:
    """Run ``cmd``; with ``kill_at``, SIGKILL it once ``state`` holds that generation."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = None
    if kill_at is not None:
        while p.poll() is None:
            if state.is_file():
                try:
                    g = moga.load_state(state)["evolution"]["n_gen"]
                except (moga.errors.InputError, KeyError):
                    g = 0
                if g >= kill_at:
                    p.send_signal(signal.SIGKILL)
                    killed = int(g)
                    break
            time.sleep(0.5)
    out, err = p.communicate()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"rc": p.returncode, "wall_s": time.perf_counter() - t0,
            "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "killed_at": killed,
            "tail": (out + err)[-600:]}


def main(argv=None) -> int:
    ap = add_options(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]))
    ap.add_argument("--pop", type=int, default=20)
    ap.add_argument("--gen", type=int, default=8)
    ap.add_argument("--kill-at", type=int, default=4)
    args = ap.parse_args(argv)
    out = out_dir(args)
    gen, kill_at = (4, 2) if args.quick else (args.gen, args.kill_at)
    work = Path(tempfile.mkdtemp(prefix="moga-resume-"))  # the runs' folders: not results
    base = [sys.executable, "-m", "moga", "run", *_workload(args.quick), "--pop",
            str(args.pop), "--gen", str(gen), "--no-progress"]
    env_cut = work / "cut"
    steps = {"full": _timed([*base, "--out", str(work / "full")]),
             "killed": _timed([*base, "--out", str(env_cut), "--checkpoint", "1"],
                              kill_at=kill_at, state=env_cut / "search.npz")}
    state_mb = (env_cut / "search.npz").stat().st_size / 1e6
    steps["resumed"] = _timed([*base, "--resume", str(env_cut)])
    same = ((work / "full" / "front.csv").read_bytes()
            == (env_cut / "front.csv").read_bytes())
    doc = {"command": base, "steps": steps, "state_mb": state_mb, "same_front": same,
           "machine": f"{os.cpu_count()} cores"}
    atomic_write(out / "resume.json", json.dumps(doc, indent=2, default=str) + "\n")
    name = "the RICC month" if "--trace" in base else "the bundled data"
    shown = [Path(a).name if a.endswith(".swf.gz") else a for a in base[4:]]
    lines = [f"# A run killed and resumed: {name}", "",
             f"Regenerate: `python benchmarks/resume.py` ({doc['machine']}). Command: "
             f"`moga run {' '.join(shown)}`; killed with SIGKILL at generation "
             f"{steps['killed']['killed_at']} of {gen} (state saved every generation, "
             f"{state_mb:.1f} MB), then resumed with `--resume`.", "",
             "| step | exit | wall s | CPU s |", "|---|---|---|---|"]
    for k, v in steps.items():
        lines.append(f"| {k} | {v['rc']} | {v['wall_s']:.1f} | {v['cpu_s']:.1f} |")
    lines += ["", f"`front.csv` of the resumed run equals the uninterrupted run's byte for "
              f"byte: {'yes' if same else 'NO'}."]
    atomic_write(out / "resume.md", "\n".join(lines) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    print("\n".join(lines))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
