"""``moga realtime``: real-time jobs on a batch system (priority queue, preemption,
checkpointing)."""

from __future__ import annotations

import json
import sys

from ..outputs import atomic_write, output_set
from .common import (
    add_workload_args,
    bounded,
    listed,
    plots,
    prepare_out,
    read_trace,
    seed,
    settings,
    step_lines,
    write_schedules,
)

HELP = ("real-time jobs on a batch system: high-priority queue, preemption and checkpointing "
        "(release mode)")

SCHEMES = ["baseline", "highpq", "preempt-none", "preempt-sys", "preempt-app", "preempt-jit",
           "preempt-jit-improved", "preempt-jit-qsim"]

#: The I/O model's options: option dest, Machine field.
IO_OPTIONS = (("memory_gb", "memory_gb"), ("pfs_gbps", "pfs_gbps"), ("pfs_usable", "pfs_usable"),
              ("io_nodes_per", "io_nodes_per"), ("io_gbps", "io_gbps"),
              ("min_io_nodes", "min_io_nodes"))


def add_arguments(p) -> None:
    add_workload_args(p, power=None, federation=False, kill=False)
    p.add_argument("--machine", default="auto",
                   help="mira (49,152 nodes in partitions), auto (the trace's MaxProcs) or a "
                        "node count (default: auto)")
    p.add_argument("--rtj-fraction", type=bounded("--rtj-fraction", "rtj_fraction"), nargs="+",
                   default=[0.1], help="shares of real-time jobs, each in [0, 1] (default 0.1)")
    p.add_argument("--schemes", nargs="+", default=None, choices=SCHEMES,
                   help="default: all eight (preempt-jit-improved is the project's reading "
                        "of the improved heuristic, preempt-jit-qsim the authors' Qsim rule)")
    p.add_argument("--tag-seed", type=seed, default=0, help="seed of the real-time tags")
    _add_checkpoint_arguments(p)
    _add_io_arguments(p)
    p.add_argument("--out", default="moga-realtime", help="output folder (default: moga-realtime)")
    p.add_argument("--slowdown-on", choices=["runtime", "walltime"], default="runtime",
                   help="divide slowdowns by the run time or by the requested time (the "
                        "authors' definition) (default: runtime)")
    p.add_argument("--no-schedules", action="store_true",
                   help="do not write schedules/ (the schedule files of every run)")
    p.add_argument("--no-progress", action="store_true", help="no per-run progress lines")


def _add_checkpoint_arguments(p) -> None:
    p.add_argument("--sys-interval", type=bounded("--sys-interval", "sys_interval"), default=None,
                   help="SYS-CKPT interval, s of computation (default 3600)")
    p.add_argument("--ckpt-data", type=bounded("--ckpt-data", "ckpt_fraction"), default=None,
                   help="SYS and JIT checkpoint data per node, share of node memory "
                        "(default 0.5)")
    p.add_argument("--app-overhead", type=bounded("--app-overhead", "app_overhead"), default=None,
                   help="APP-CKPT's budget: share of the requested time spent writing "
                        "(default 0.05)")
    p.add_argument("--app-data", type=bounded("--app-data", "ckpt_fraction"), default=None,
                   help="APP-CKPT data per node, share of node memory (default 0.25)")
    p.add_argument("--rtj-threshold", type=bounded("--rtj-threshold", "slowdown_threshold"), default=None,
                   help="improved heuristic: a real-time job preempts only when waiting would "
                        "take its slowdown above this (default 1.5; preempt-jit-improved)")
    p.add_argument("--trigger", type=bounded("--trigger", "trigger"), default=None,
                   help="preempt-jit-qsim: a real-time job turns preemptive once its slowdown "
                        "on its requested time, had it started now, reaches this (default 1.1)")
    p.add_argument("--batch-thresholds", type=bounded("--batch-thresholds", "slowdown_threshold"), nargs=4,
                   default=None, metavar=("NS", "NL", "WS", "WL"),
                   help="improved heuristic: projected slowdown above which a batch job of "
                        "each class (narrow-short, narrow-long, wide-short, wide-long) is not "
                        "preempted (default 3.0 1.3 10.0 2.0)")


def _add_io_arguments(p) -> None:
    p.add_argument("--memory-gb", type=bounded("--memory-gb", "machine_rate"), default=None,
                   help="memory per node, GB (default 16, Mira's)")
    p.add_argument("--pfs-gbps", type=bounded("--pfs-gbps", "machine_rate"), default=None,
                   help="file-system bandwidth, GB/s (default: Mira's 240 with --machine mira, "
                        "else 240 x nodes / 49152, Mira's scaled to the machine)")
    p.add_argument("--pfs-usable", type=bounded("--pfs-usable", "pfs_usable"), default=None,
                   help="share of the file system usable for checkpoints (default 0.9)")
    p.add_argument("--io-nodes-per", type=bounded("--io-nodes-per", "io_nodes_per"), default=None,
                   help="compute nodes per I/O node (default 128, Mira's)")
    p.add_argument("--io-gbps", type=bounded("--io-gbps", "machine_rate"), default=None,
                   help="bandwidth of one I/O node, GB/s (default 4, Mira's)")
    p.add_argument("--min-io-nodes", type=bounded("--min-io-nodes", "min_io_nodes"), default=None,
                   help="I/O nodes a job has at least (default 1; 0: a proportional share)")


def _check_options(args, schemes) -> None:
    """Refuse an option that changes no chosen scheme."""
    from ..realtime.study import SCHEME_SET

    used = {SCHEME_SET[s][1] for s in schemes}  # the checkpointing kinds they use
    for option, value, needs in (
            ("--sys-interval", args.sys_interval, "sys" in used),
            ("--app-overhead", args.app_overhead, "app" in used),
            ("--app-data", args.app_data, "app" in used),
            ("--ckpt-data", args.ckpt_data, bool(used & {"sys", "jit"})),
            ("--rtj-threshold", args.rtj_threshold, "preempt-jit-improved" in schemes),
            ("--trigger", args.trigger, "preempt-jit-qsim" in schemes),
            ("--batch-thresholds", args.batch_thresholds,
             bool({"preempt-jit-improved", "preempt-jit-qsim"} & set(schemes)))):
        if value is not None and not needs:
            raise ValueError(f"{option} changes no scheme of --schemes {' '.join(schemes)}")


def _machine(args, trace):
    """The machine of ``--machine`` with the I/O options."""
    import dataclasses

    from ..realtime import Machine

    io = {field: getattr(args, dest) for dest, field in IO_OPTIONS
          if getattr(args, dest) is not None}
    if args.machine == "mira":
        return dataclasses.replace(Machine.mira(), **io)
    if args.machine == "auto":
        return Machine.scaled(int(trace.auto_nodes),
                              name=f"{trace.name}@{int(trace.auto_nodes)}", **io)
    try:
        n = int(args.machine)
    except ValueError:
        raise ValueError(f"--machine takes mira, auto or a node count, got "
                         f"{args.machine!r}") from None
    return Machine.scaled(n, name=f"{n} nodes", **io)


def _jobset(args, trace, machine):
    """The job-set in release mode; on Mira, jobs keep their share of the trace's machine
    (docs/guide/realtime.md)."""
    if args.machine != "mira":
        return trace.jobset(start=args.start, n_jobs=args.n_jobs, days=args.days,
                            federation=machine.nodes, wide=args.wide, seed=args.attr_seed,
                            batch=False)
    size = int(trace.auto_nodes)
    js = machine.scale_jobs(trace.jobset(
        start=args.start, n_jobs=args.n_jobs, days=args.days, federation=size,
        wide=args.wide, seed=args.attr_seed, batch=False), size)
    if size != machine.nodes:
        print(f"moga: note: job sizes scaled from the trace's {size} nodes to Mira's "
              f"{machine.nodes} (x{machine.nodes / size:.3g})", file=sys.stderr, flush=True)
    return js


def _study(args, js, machine):
    from ..realtime import Thresholds
    from ..realtime.study import realtime_study

    line = step_lines(not args.no_progress, "")

    def say(f, label):
        line(f"{f:.0%} real-time: {label}")

    checkpoint = {k: v for k, v in (("sys_interval", args.sys_interval),
                                    ("data_fraction", args.ckpt_data),
                                    ("app_overhead", args.app_overhead),
                                    ("app_fraction", args.app_data)) if v is not None}
    thresholds = Thresholds(**{k: v for k, v in (("rtj", args.rtj_threshold),
                                                 ("trigger", args.trigger),
                                                 ("batch", args.batch_thresholds))
                               if v is not None})
    return realtime_study(js, machine, fractions=args.rtj_fraction, schemes=args.schemes,
                          seed=args.tag_seed, checkpoint=checkpoint, thresholds=thresholds,
                          slowdown_on=args.slowdown_on, progress=say)


def run(args) -> int:
    from ..realtime.study import SCHEME_SET, plot_slowdowns, study_table

    out = prepare_out(args.out, ["realtime.md", "realtime.json", "slowdown.png"],
                      command="realtime")
    _check_options(args, list(SCHEME_SET) if args.schemes is None else args.schemes)
    trace = read_trace(args)
    machine = _machine(args, trace)
    js = _jobset(args, trace, machine)
    print(f"{js.name}: {len(js)} jobs (release mode) on {machine.name} ({machine.nodes} nodes"
          + (", partitions" if machine.partitions else "") + f"); real-time shares "
          f"{args.rtj_fraction}; I/O: {machine.io_summary()}", flush=True)
    runs = _study(args, js, machine)
    table = study_table(runs)
    with output_set(out, "realtime", settings(args)) as o:
        atomic_write(o / "realtime.md", f"# Real-time jobs: {js.name} on {machine.name}\n\n"
                                         f"Slowdowns on {args.slowdown_on}. I/O: "
                                         f"{machine.io_summary()}.\n\n{table}\n")
        atomic_write(o / "realtime.json", json.dumps(
            {"jobset": js.name, "machine": machine.name, "nodes": machine.nodes,
             "io": {field: getattr(machine, field) for _, field in IO_OPTIONS},
             "runs": [{"fraction": r.fraction, "scheme": r.label, **r.metrics} for r in runs]},
            indent=2, default=float) + "\n")
        drawn = plots([("slowdown.png", lambda: plot_slowdowns(runs, o / "slowdown.png"))])
        sched = "" if args.no_schedules else ", " + write_schedules(o, {
            f"rtj{r.fraction:g}-{r.label}": r.result.schedule() for r in runs}) + \
            " (schedule.csv, schedule.swf and segments.csv per share and scheme)"
    print(table)
    print(f"wrote {out}/realtime.md, realtime.json{sched}" + listed(drawn))
    return 0
