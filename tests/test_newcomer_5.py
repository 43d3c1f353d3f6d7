"""The frictions of the fifth newcomer review (issue 66, item 6), each checked by behaviour."""

from __future__ import annotations

import csv
import json

from moga.cli import main


def test_compare_names_its_schedule_folders_and_reports_wall_and_cpu_time(tmp_path, capsys):
    """Friction 5: a fixed folder name for every algorithm; friction 8: the table's time
    column says wall time, and a CPU column sits beside it (compare.csv's cpu_time_s)."""
    out = tmp_path / "c"
    assert main(["compare", "--n-jobs", "25", "--pop", "6", "--gen", "2", "--no-progress",
                 "--algorithms", "EASY", "MOGA without blacklist", "random search",
                 "--out", str(out)]) == 0
    assert sorted(p.name for p in (out / "schedules").iterdir()) == [
        "EASY", "MOGA_without_blacklist", "random_search"]
    head = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("algorithm"))
    assert head.split()[-4:] == ["wall", "s", "CPU", "s"] and "time s" not in head
    with open(out / "compare.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert all(float(r["cpu_time_s"]) >= 0 for r in rows)
    doc = json.loads((out / "compare.json").read_text())
    assert all("cpu_time_s" in r and "wall_time_s" in r for r in doc["rows"])


def _conf():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "conf.py"
    spec = importlib.util.spec_from_file_location("moga_docs_conf", path)
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def test_the_cli_reference_keeps_option_names_addresses_and_one_default():
    """Friction 6: no en dash for "--gen", no mailto link for NAME@auto, and no second
    "Default:" line under a help text that states its default."""
    from types import SimpleNamespace

    from docutils.core import publish_doctree
    from docutils.nodes import reference

    conf = _conf()
    assert "d" not in conf.smartquotes_action  # dashes stay hyphens
    rst = ("--federation\n    name or NAME@auto (default: default)\n\n    Default: ``'default'``"
           "\n\n--json\n    print JSON\n\n    Default: ``False``\n")
    tree = publish_doctree(rst)
    assert any(r.get("refuri", "").startswith("mailto:") for r in tree.findall(reference))
    conf._cli_as_its_help_says(SimpleNamespace(env=SimpleNamespace(docname="cli")), tree)
    text = tree.astext()
    assert not any(r.get("refuri", "").startswith("mailto:") for r in tree.findall(reference))
    assert "NAME@auto" in text and "Default: 'default'" not in text
    assert "Default: False" in text  # a help text without its default keeps the line


def test_warmup_says_each_group_asked_as_it_starts_while_it_compiles_and_as_it_ends(
        capsys, monkeypatch):
    """Friction 7: one line per group asked, as it starts and ends, and a line while a cold
    group is still compiling, so that minutes of compiling are never silent."""
    import time

    from moga import warmup

    monkeypatch.setattr(warmup, "cold_groups", lambda groups: [g for g in groups
                                                                if g == "decoder"])
    monkeypatch.setattr(warmup, "_compile", lambda group: time.sleep(0.35))
    monkeypatch.setattr(warmup, "STILL_EVERY", 0.1)
    assert main(["warmup", "--groups", "decoder", "value decoders"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("compiling or loading 2 kernel groups (decoder, value decoders)")
    assert out[1].strip().startswith("decoder: compiling (")
    assert any(ln.strip().startswith("decoder: still compiling,") for ln in out)
    assert any(ln.strip().startswith("decoder: compiled in ") for ln in out)
    assert out[-3].strip() == "value decoders: loading from the cache"
    assert out[-2].strip().startswith("value decoders: loaded from the cache in ")
    assert out[-1].startswith("done in ")
    assert not any("real-time" in ln or "every kernel group" in ln for ln in out)


def test_a_python_policy_is_recorded_with_its_own_backfill_or_n_a(tmp_path):
    """Friction 9: a user's policy starts jobs in an order of its own, so metrics.json says
    "n/a" rather than "none", unless its class says (the docs' example says "easy")."""
    from pathlib import Path

    saf = Path(__file__).resolve().parents[1] / "docs" / "guide" / "examples" / "saf_easy.py"
    plain = tmp_path / "plain.py"
    plain.write_text(saf.read_text().replace('    backfill = "easy"', "    pass  #"))
    for spec, want in ((f"{saf}:SmallestAreaFirst", "easy"),
                       (f"{plain}:SmallestAreaFirst", "n/a")):
        out = tmp_path / want.replace("/", "")
        assert main(["simulate", "--policy", spec, "--n-jobs", "30", "--no-gantt",
                     "--no-progress", "--out", str(out)]) == 0
        assert json.loads((out / "metrics.json").read_text())["metrics"]["backfill"] == want
    out = tmp_path / "rf"
    assert main(["simulate", "--policy", "realtime-first", "--n-jobs", "30", "--no-gantt",
                 "--no-progress", "--out", str(out)]) == 0
    assert json.loads((out / "metrics.json").read_text())["metrics"]["backfill"] == "none"


def test_an_island_run_reports_its_decode_seconds_not_a_share_of_the_wall_time(tmp_path,
                                                                                 capsys):
    """Friction 4: islands decode in parallel, so their decode time over the driver's wall
    time could read "(102% decoding)"; the line gives the seconds summed over the islands."""
    assert main(["run", "--n-jobs", "30", "--pop", "8", "--gen", "2", "--islands", "2",
                 "--no-progress", "--out", str(tmp_path / "i")]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("front:"))
    assert "s decoding summed over the 2 islands" in line and "% decoding" not in line


def test_run_on_a_scheduler_without_the_sweep_extra_says_only_that(tmp_path, capsys,
                                                                     monkeypatch):
    """Friction 13: the missing extra is found before the job-set line is printed."""
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    assert main(["run", "--n-jobs", "20", "--scheduler", "tcp://127.0.0.1:1", "--islands", "2",
                 "--out", str(tmp_path / "r")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "sweep" in err and len(err.strip().splitlines()) == 1


def test_the_gantt_strip_stacks_the_clusters_as_the_bands_and_convergence_says_its_base():
    """Friction 12: the first cluster (the top band) is the top of the nodes-in-use strip,
    and convergence.png says what the hypervolume is normalised by."""
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np

    import moga
    from moga.plot import plot_convergence, plot_gantt

    fed = moga.Federation.preset("default").scaled(64)
    js = moga.load_default().jobset(start=400, n_jobs=60, federation=fed, batch=False)
    fig = plot_gantt(moga.evaluate(js, fed, backfill="easy"))
    strip = fig.axes[1]
    tops = {}
    for poly in strip.collections:  # each cluster's fill, stacked
        y = np.concatenate([p.vertices[:, 1] for p in poly.get_paths()])
        tops[poly.get_label()] = y.max()
    assert max(tops, key=tops.get) == fed.names[0]
    legend = [t.get_text() for t in strip.get_legend().get_texts()]
    assert legend == list(fed.names)  # top to bottom, as stacked
    fig = plot_convergence({"n_gen": [1, 2], "hv": [0.1, 0.2]})
    assert "submit order" in fig.axes[0].get_xlabel()
