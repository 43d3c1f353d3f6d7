"""Where trace files are found: the one place that resolves a trace by name.

The package ships one small trace excerpt (the bundled HPC2N month); every
other trace is a file of the Parallel Workloads Archive that the user
downloads. Commands, sweep configurations and benchmarks name traces either
by path or by file name; a bare file name (``HPC2N-2002-2.2-cln.swf.gz``) is
looked up, in this order, in

1. the folders of the ``MOGA_TRACES`` environment variable (``os.pathsep``
   separated),
2. ``../shared/traces`` beside the repository (the developers' shared folder),
   when it exists,
3. the current directory.

``"bundled"`` names the bundled excerpt. A name that is found nowhere raises
:class:`TraceNotFoundError`, which says which file is missing, where it was
looked for, and where the archive publishes it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["TRACES_ENV", "PWA_URL", "TraceNotFoundError", "search_path", "resolve_trace",
           "KNOWN_TRACES"]

#: Environment variable with the folders that hold trace files.
TRACES_ENV = "MOGA_TRACES"
#: Where the Parallel Workloads Archive publishes its logs.
PWA_URL = "https://www.cs.huji.ac.il/labs/parallel/workload/logs.html"

#: Trace files the benchmarks and sweep configurations use, with the archive page of each.
KNOWN_TRACES = {
    "HPC2N-2002-2.2-cln.swf.gz": "https://www.cs.huji.ac.il/labs/parallel/workload/l_hpc2n/",
    "RICC-2010-2.swf.gz": "https://www.cs.huji.ac.il/labs/parallel/workload/l_ricc/",
    "CEA-Curie-2011-2.1-cln.swf.gz": "https://www.cs.huji.ac.il/labs/parallel/workload/l_cea_curie/",
    "CTC-SP2-1996-3.1-cln.swf.gz": "https://www.cs.huji.ac.il/labs/parallel/workload/l_ctc_sp2/",
    "NASA-iPSC-1993-3.1-cln.swf.gz": "https://www.cs.huji.ac.il/labs/parallel/workload/l_nasa_ipsc/",
    "METACENTRUM-2009-2.swf.gz": "https://www.cs.huji.ac.il/labs/parallel/workload/l_metacentrum/",
    "LCG.swf.gz": "https://www.cs.huji.ac.il/labs/parallel/workload/l_lcg/",
}

_REPO = Path(__file__).resolve().parents[2]


class TraceNotFoundError(FileNotFoundError):
    """A trace file that is not where it was looked for."""


def search_path() -> list[Path]:
    """The folders searched for a trace given by file name, in order."""
    folders = [Path(p).expanduser() for p in os.environ.get(TRACES_ENV, "").split(os.pathsep) if p]
    shared = _REPO.parent / "shared" / "traces"
    if shared.is_dir():
        folders.append(shared)
    folders.append(Path.cwd())
    return folders


def resolve_trace(name, base=None) -> Path | str:
    """The path of a trace given by path or file name (``"bundled"`` is returned as is).

    Parameters
    ----------
    name : str or Path
        ``"bundled"``, a path (absolute, or relative to ``base`` or the current
        directory), or a bare file name looked up in :func:`search_path`.
    base : Path, optional
        Folder that relative paths are relative to (a sweep file's folder).

    Raises
    ------
    TraceNotFoundError
        Naming the file, the places searched and where to download it.
    """
    if not isinstance(name, (str, os.PathLike)):
        raise TypeError(f"a trace is named by a path or file name, got {type(name).__name__}")
    s = os.fspath(name)
    if s == "bundled":
        return s
    if not s.strip():
        raise TraceNotFoundError("empty trace name")
    p = Path(s).expanduser()
    tried = []
    if p.is_absolute():
        tried.append(p)
    else:
        if base is not None:
            tried.append(Path(base) / p)
        tried.append(Path.cwd() / p)
        if len(p.parts) == 1 or not p.parent.exists():
            tried.extend(folder / p.name for folder in search_path())
    for cand in tried:
        if cand.is_file():
            return cand.resolve()
    where = KNOWN_TRACES.get(p.name, PWA_URL)
    looked = ", ".join(dict.fromkeys(str(c.parent) for c in tried))
    raise TraceNotFoundError(
        f"trace {p.name!r} not found (looked in: {looked}). Download it from the Parallel "
        f"Workloads Archive ({where}) and put it in a folder named by the {TRACES_ENV} "
        f"environment variable, or pass its path.")
