"""One CLI convention: help and defaults everywhere, caps, --trace, --out, notices."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

import moga
from moga.cli import _cap_parser, build_parser, main


def _actions(parser, name="moga"):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for n, sp in a.choices.items():
                yield from _actions(sp, f"{name} {n}")
        elif a.dest != "help":
            yield name, a


def test_every_option_has_help():
    missing = [(cmd, a.option_strings or a.dest) for cmd, a in _actions(build_parser())
               if not a.help]
    assert missing == []


def test_version_and_python_m(capsys):
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"moga {moga.__version__}"
    r = subprocess.run([sys.executable, "-m", "moga", "--version"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == f"moga {moga.__version__}"


@pytest.mark.parametrize("text, bare, expected", [
    ("60%", "W", ("x", 0.6)), ("0.6x", "W", ("x", 0.6)), ("2700W", "x", ("W", 2700.0)),
    ("2.7kW", "x", ("W", 2700.0)), ("2700", "W", ("W", 2700.0)), ("0.6", "x", ("x", 0.6)),
    (" 45 % ", "x", ("x", 0.45)),
])
def test_cap_syntax_is_one_in_every_command(text, bare, expected):
    kind, v = _cap_parser("--caps", bare)(text)
    assert kind == expected[0] and v == pytest.approx(expected[1])


@pytest.mark.parametrize("text", ["lots", "-5%", "0", "infW", "nan"])
def test_bad_caps_are_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="--caps"):
        _cap_parser("--caps", "x")(text)


def test_powercap_takes_watts_and_percentages(tmp_path):
    fed = moga.Federation.preset()
    out = tmp_path / "P"
    watts = f"{0.8 * fed.peak_power:.6f}W"
    assert main(["powercap", "--n-jobs", "30", "--caps", "100%", watts, "--dispatchers", "prb",
                 "--out", str(out), "--no-progress"]) == 0
    import json

    caps = [r["cap_W"] for r in json.loads((out / "powercap.json").read_text())["runs"]]
    assert caps[0] is None  # the uncapped baseline
    assert caps[1:] == pytest.approx([fed.peak_power, 0.8 * fed.peak_power])


def test_trace_option_and_report_out(tmp_path, capsys):
    assert main(["trace", "--trace", str(moga.model.workload.default_trace_path())]) == 0
    assert main(["trace", "a.swf", "--trace", "b.swf"]) == 2
    args = build_parser().parse_args(["report", "S", "--out", "R"])
    assert (args.out, args.dest) == ("S", "R")
    assert build_parser().parse_args(["report", "S", "--dest", "R"]).dest == "R"


def test_a_whole_long_trace_warns_before_work(tmp_path, capsys):
    from moga.cli import WHOLE_TRACE_WARNING

    line = "{i} {i} 0 100 1 -1 -1 1 200 -1 1 1 1 1 1 1 -1 -1\n"
    p = tmp_path / "long.swf"
    p.write_text("; MaxProcs: 8\n" + "".join(line.format(i=i) for i in range(WHOLE_TRACE_WARNING
                                                                               + 10)))
    assert main(["evaluate", "--trace", str(p), "--federation", "default@8",
                 "--model", "fluid"]) == 0
    err = capsys.readouterr().err
    assert f"{WHOLE_TRACE_WARNING + 10:,} jobs" in err and "--days 30" in err
    assert main(["evaluate", "--trace", str(p), "--federation", "default@8", "--n-jobs", "20",
                 "--model", "fluid"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_params_file_generations_are_said(tmp_path, capsys):
    p = tmp_path / "best.toml"
    p.write_text("[ga]\npop_size = 8\nn_gen = 2\n")
    assert main(["run", "--n-jobs", "20", "--params", str(p), "--out", str(tmp_path / "R"),
                 "--no-progress"]) == 0
    assert "2 generations from" in capsys.readouterr().err


def test_warmup_and_the_compile_notice(tmp_path, capsys, monkeypatch):
    from moga import warmup

    assert main(["warmup", "--groups", "decoder"]) == 0
    assert "decoder" in capsys.readouterr().out
    assert "decoder" not in warmup.cold_groups(["decoder"])
    monkeypatch.setattr(warmup, "cold_groups", lambda groups: list(groups))
    assert main(["evaluate", "--n-jobs", "5", "--model", "fluid"]) == 0
    assert "compiling the kernels once (decoder)" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown kernel group"):
        warmup.warmup(["nope"])


def test_the_real_time_loop_is_a_light_kernel_group(tmp_path, capsys, monkeypatch):
    from moga import warmup

    assert main(["warmup", "--groups", "real-time loop"]) == 0
    assert "real-time loop" not in warmup.cold_groups(["real-time loop"])
    monkeypatch.setattr(warmup, "cold_groups", lambda groups: list(groups))
    assert main(["realtime", "--n-jobs", "30", "--schemes", "baseline", "--no-schedules",
                 "--out", str(tmp_path / "rt")]) == 0
    assert "compiling the kernels once (real-time loop): about a minute per group" in \
        capsys.readouterr().err
    assert not (tmp_path / "rt" / "schedules").exists()


def test_the_compile_notice_names_the_groups_of_a_simulate_policy():
    from moga.warmup import command_groups

    assert command_groups("simulate", "rt-preempt-jit") == ("real-time loop",)
    assert command_groups("simulate", "Max-Max-Value") == ("online value heuristics",)
    assert command_groups("simulate", "easy") == ("EASY decoder",)
    assert command_groups("simulate", "fcfs") == ("decoder",)
    assert command_groups("simulate", "hybrid") == ("dispatch steps",)
    assert command_groups("simulate", "online-moga") == ("dispatch steps", "decoder")
    assert command_groups("simulate", "my.py:Policy") == ("dispatch steps",)
    assert command_groups("run") == ("decoder", "EASY decoder", "search")
    assert command_groups("trace") == ()


@pytest.mark.parametrize("module, argv, extra", [
    ("optuna", ["tune", "--n-jobs", "10", "--trials", "1", "--budget", "400"], "tune"),
    ("ortools", ["powercap", "--n-jobs", "10", "--dispatchers", "hybrid"], "cp"),
    ("distributed", ["sweep", "benchmarks/sweeps/tiny.toml", "--workers", "1"], "sweep"),
])
def test_a_missing_extra_is_one_line_naming_it(module, argv, extra, tmp_path, monkeypatch,
                                               capsys):
    from pathlib import Path

    for name in list(sys.modules):
        if name == module or name.startswith(module + "."):
            monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, module, None)
    root = Path(__file__).resolve().parents[1]
    argv = [str(root / a) if a.endswith(".toml") else a for a in argv]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("moga: error: ") and f"pip install 'moga[{extra}]'" in err[-1]
    assert not any("Traceback" in line for line in err)


def test_require_names_the_extra():
    from moga.errors import MissingExtraError, require

    with pytest.raises(MissingExtraError, match=r"the thing needs the gym extra: pip install "
                                                r"'moga\[gym\]'"):
        require("no_such_module_here", "the thing", "gym")


def test_warmup_takes_the_old_batch_decoder_group_with_a_warning(capsys):
    """'batch decoder' was one group; it is now the in-order and the EASY loop's (the CLI
    contract keeps the old name, deprecated)."""
    from moga.cli import main

    assert main(["warmup", "--groups", "batch decoder"]) == 0
    out, err = capsys.readouterr()
    assert "decoder, EASY decoder" in out
    assert "kernel group 'batch decoder' is now 'decoder' and 'EASY decoder'" in err
