"""Output files written atomically: a result file is whole or absent, never cut.

Every file the project writes as a result goes through :func:`atomic_write`
(text or bytes) or :func:`atomic_path` (anything a library writes to a path,
such as a matplotlib figure or a NumPy archive): the content goes to a
temporary name in the same folder, is flushed and fsynced, and is renamed over
the destination. A crash, a full disk or an exception while writing leaves the
previous file (or none) and removes the temporary one. The error of a failed
write names the file.

Names built from data (a trace, a policy, a run's label) become file names
through :func:`safe_name` only, and :func:`inside` checks that a path built
from them stays in its folder.

A command's outputs are one set (:func:`output_set`): the files are written
into a staging folder inside ``--out``; at the end, under a lock file, the
previous set's files (listed in the folder's manifest, ``.moga-set.json``) are
removed and the new ones moved in, and a manifest naming the command, its
settings and its files is written last. A folder thus holds the files of one
command only; a command that fails before the end leaves the previous set as
it was, and one stopped while moving its files in leaves a manifest that says
``"complete": false``, which readers (``moga schedule``) refuse through
:func:`check_set`.

A command removes only its own previous set: as Git refuses to overwrite files
it did not write, :func:`check_out` refuses a folder whose manifest names
another command, and a folder the command reads its input from. The manifest
is read against a typed schema (:data:`MANIFEST_FIELDS`); one that fails it is
unreadable, and the message names the file and the field.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import time
from pathlib import Path

__all__ = ["MANIFEST", "MANIFEST_FIELDS", "OutputError", "OutputSet", "atomic_create",
           "atomic_path", "atomic_write", "check_out", "check_set", "check_writable", "inside",
           "manifest_problem", "output_set", "read_manifest", "safe_name"]

#: The manifest of a folder's output set.
MANIFEST = ".moga-set.json"
_LOCK = ".moga-set.lock"
_STAGE = ".moga-staging-"
#: How long a command waits for another one to finish moving its set in, s.
LOCK_WAIT_S = 60.0
#: The manifest's fields: name -> (type, what it must be, required). A manifest with a field
#: of another type, or without a required one, is unreadable.
MANIFEST_FIELDS = {
    "command": (str, "a string", True),
    "files": (list, "a list of file names (strings)", True),
    "complete": (bool, "true or false", True),
    "settings": (dict, "an object", False),
    "written": (str, "a string", False),
    "previous": (list, "a list of file names (strings)", False),
}


class OutputError(OSError):
    """An output file or folder that cannot be written; the message names it."""


def _tmp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path to write ``path`` through; rename it into place on success.

    The writer may open the temporary path itself (``fig.savefig(tmp)``,
    ``np.savez(tmp, ...)``); the file it leaves is fsynced and renamed. On any
    exception the temporary file is removed and the destination is untouched.

    Raises
    ------
    OutputError
        If the file cannot be written (full disk, read-only folder), naming it.
    """
    path = Path(path)
    tmp = _tmp_name(path)
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except OSError as e:
        if isinstance(e, OutputError):
            raise
        raise OutputError(f"{path}: cannot write the file: {e.strerror or e}") from None
    finally:
        with contextlib.suppress(OSError):
            if tmp.exists():
                tmp.unlink()


def atomic_write(path, data) -> None:
    """Write ``data`` (str or bytes) to ``path`` atomically (see the module docstring)."""
    raw = data.encode() if isinstance(data, str) else bytes(data)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(raw)
        fh.flush()


def atomic_create(path, data) -> bool:
    """Create ``path`` with ``data`` (str or bytes) unless it exists; True when this call did.

    The content is written and fsynced under a temporary name, then linked into
    place, which fails when the name exists: of processes racing to create the
    file exactly one succeeds, and no reader ever sees it half written.

    Raises
    ------
    OutputError
        If the file cannot be written, naming it.
    """
    path = Path(path)
    raw = data.encode() if isinstance(data, str) else bytes(data)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.new")
    try:
        with open(tmp, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        _fsync_dir(path.parent)
        return True
    except OSError as e:
        raise OutputError(f"{path}: cannot write the file: {e.strerror or e}") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def safe_name(name) -> str:
    """``name`` as one file or folder name that stays in its folder.

    Every run of characters other than letters, digits, ``-``, ``_`` and
    ``.`` becomes one ``_``; a leading dot becomes ``_`` (so neither ``..``
    nor a hidden name comes out), and an empty name is ``_``. A name that had
    to change, or is longer than 100 characters, gets a short digest of the
    original appended, so that two different names never share a file.
    """
    raw = str(name)
    s = re.sub(r"[^A-Za-z0-9_.-]+", "_", raw)
    s = re.sub(r"^\.", "_", s) or "_"
    if s != raw or len(s) > 100:
        s = f"{s[:100]}-{hashlib.sha256(raw.encode('utf-8', 'replace')).hexdigest()[:8]}"
    return s


def inside(folder, path) -> Path:
    """``path``, checked to lie inside ``folder`` once both are resolved (links followed).

    Raises
    ------
    OutputError
        If it does not, naming both.
    """
    folder, path = Path(folder), Path(path)
    root = folder.resolve()
    real = path.resolve()
    if real != root and root not in real.parents:
        raise OutputError(f"{path}: refusing to write outside the output folder {folder}")
    return path


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _load_manifest(folder) -> tuple[dict | None, str | None]:
    """``(manifest, None)``, ``(None, None)`` without one, or ``(None, why)`` when the file
    is there but unreadable or fails :data:`MANIFEST_FIELDS` (``why`` names the field)."""
    path = Path(folder) / MANIFEST
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, f"cannot be read ({e.strerror or e})"
    try:
        doc = json.loads(text)
    except ValueError:
        return None, "is not JSON"
    if not isinstance(doc, dict):
        return None, f"is not a JSON object (a {type(doc).__name__})"
    for name, (kind, what, required) in MANIFEST_FIELDS.items():
        if name not in doc:
            if required:
                return None, f"has no field {name!r}"
            continue
        v = doc[name]
        if not isinstance(v, kind) or (kind is list and not all(isinstance(x, str)
                                                                for x in v)):
            return None, f"field {name!r} must be {what}, got {json.dumps(v)[:60]}"
    return doc, None


def read_manifest(folder) -> dict | None:
    """The manifest of ``folder``'s output set, or None when it has none or an unreadable one
    (not JSON, or a field of :data:`MANIFEST_FIELDS` missing or of the wrong type; see
    :func:`manifest_problem`)."""
    return _load_manifest(folder)[0]


def manifest_problem(folder) -> str | None:
    """Why ``folder``'s manifest is unreadable, naming the file and the field; None when it
    is readable or absent."""
    why = _load_manifest(folder)[1]
    return None if why is None else f"{Path(folder) / MANIFEST}: the outputs' manifest {why}"


def check_set(folder, file=None, what: str = "") -> None:
    """Refuse to read ``folder``'s outputs unless they are one whole set.

    A folder without a manifest (written by an older version, or by hand) is
    taken as it is. With one, the set must be complete and, given ``file``
    (a name inside ``folder``), list it.

    Raises
    ------
    InputError
        Naming the folder and what is wrong.
    """
    from .errors import InputError

    folder = Path(folder)
    doc, why = _load_manifest(folder)
    if doc is None:
        if why is not None:
            raise InputError(f"{folder / MANIFEST}: the outputs' manifest {why}, so it is "
                             "unreadable; run the command again")
        return
    cmd = doc["command"]
    if not doc["complete"]:
        raise InputError(f"{folder}: an incomplete set of outputs (moga {cmd} stopped while "
                         "writing them); run it again")
    if file is not None and Path(file).name not in doc["files"]:
        raise InputError(f"{folder}/{Path(file).name}: not part of the folder's outputs "
                         f"(moga {cmd} wrote {', '.join(doc['files']) or 'nothing'})"
                         + (f"; {what}" if what else ""))


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _under(a: Path, b: Path) -> bool:
    try:
        ra, rb = a.resolve(), b.resolve()
    except OSError:
        return False
    return ra == rb or rb in ra.parents


def check_out(out, command: str, reads=(), within=()) -> None:
    """Refuse to write ``command``'s outputs into ``out`` where they would replace files that
    the command did not write.

    The rule (docs/outputs.md): a command replaces only its own previous set. ``out`` is
    refused when its manifest names another command (complete or not: its files are that
    command's), when it is one of the folders ``reads`` the command reads its input from,
    and when it is, or lies inside, one of the folders ``within`` (the parts of a store the
    command reads). A folder without a manifest, or with an unreadable one, is taken: the
    files in it that no set lists are never removed.

    Parameters
    ----------
    out : path
        The output folder.
    command : str
        The command about to write there, as its manifest names it (``run``, ``rl train``).
    reads, within : iterables of paths
        Folders ``out`` may not be, and folders it may not be or lie inside.

    Raises
    ------
    OutputError
        One line naming ``out``, and the other command's set or the folder read.
    """
    out = Path(out)
    for r in reads:
        if _same(out, Path(r)):
            raise OutputError(f"--out {out}: moga {command} reads its input from this folder, "
                              "and its outputs would replace the files there; choose another "
                              "--out")
    for r in within:
        if _under(out, Path(r)):
            raise OutputError(f"--out {out}: inside {r}, which moga {command} reads; choose "
                              "another --out")
    doc = read_manifest(out)
    if doc is not None and doc["command"] != command:
        state = "the outputs" if doc["complete"] else "an incomplete set of outputs"
        raise OutputError(f"--out {out}: holds {state} of moga {doc['command']} "
                          f"({', '.join(doc['files'][:4])}"
                          f"{', ...' if len(doc['files']) > 4 else ''}), which moga {command} "
                          "would replace; choose another --out, or remove that folder first")


class OutputSet:
    """The files of one command, written into a staging folder (see :func:`output_set`).

    ``oset / "name"`` and :meth:`path` give the staging path to write a file
    of the set through (with :func:`atomic_write`, a library's ``save`` ...).
    """

    def __init__(self, out: Path, stage: Path):
        self.out, self.stage = out, stage

    def path(self, *parts) -> Path:
        """The staging path of the file ``parts`` (folders then name, each made a
        :func:`safe_name`), its folders created."""
        if not parts:
            raise ValueError("path needs a file name")
        p = inside(self.stage, self.stage.joinpath(*(safe_name(x) for x in parts)))
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def __truediv__(self, name) -> Path:
        return self.path(name)

    def files(self) -> list[str]:
        """The set's files so far, relative to the folder, in POSIX form, sorted."""
        return sorted(p.relative_to(self.stage).as_posix() for p in self.stage.rglob("*")
                      if p.is_file() and not p.name.endswith(".tmp"))


def _acquire(out: Path) -> Path:
    lock = out / _LOCK
    deadline = time.monotonic() + LOCK_WAIT_S
    while not atomic_create(lock, str(os.getpid())):
        try:
            pid = int(lock.read_text().strip() or 0)
        except (OSError, ValueError):
            pid = 0
        if pid and not _pid_alive(pid):  # left by a killed command
            with contextlib.suppress(OSError):
                lock.unlink()
            continue
        if time.monotonic() > deadline:
            raise OutputError(f"{out}: another moga command (process {pid}) is writing its "
                              f"outputs there; wait for it, or remove {lock} if none runs")
        time.sleep(0.05)
    return lock


def _remove_old(out: Path, names) -> None:
    """Remove the files ``names`` (relative) of a previous set, and the folders they leave
    empty; names that leave ``out`` are ignored."""
    root = out.resolve()
    folders = set()
    for name in names:
        p = out / str(name)
        try:
            real = p.parent.resolve() / p.name
        except OSError:
            continue
        if root not in real.parents or not (p.is_file() or p.is_symlink()):
            continue
        with contextlib.suppress(OSError):
            p.unlink()
        folders.update(q for q in p.parents if root in q.resolve().parents)
    for f in sorted(folders, key=lambda q: len(q.parts), reverse=True):
        with contextlib.suppress(OSError):
            f.rmdir()  # only when empty


def _clean_stale_stages(out: Path) -> None:
    for d in out.glob(_STAGE + "*"):
        try:
            pid = int(d.name[len(_STAGE):].split("-")[0])
        except ValueError:
            continue
        if pid != os.getpid() and not _pid_alive(pid):
            shutil.rmtree(d, ignore_errors=True)


@contextlib.contextmanager
def output_set(out, command: str, settings: dict | None = None, reads=(), within=()):
    """Write one command's outputs as one set into the folder ``out``.

    Yields an :class:`OutputSet`: every file of the set is written through its
    staging paths. When the block ends without an exception the previous
    set's files are removed, the new ones moved in and the manifest
    (``command``, ``settings``, ``files``, ``"complete": true``) written,
    under a lock that another command writing to the same folder waits for.
    On an exception the staging folder is removed and ``out`` is untouched.
    The previous set is only ever the same command's: :func:`check_out` is
    applied on entry and again under the lock.

    Parameters
    ----------
    out : path
        The output folder (created if missing).
    command : str
        The command's name, for the manifest and messages.
    settings : dict, optional
        What the command ran with (JSON-able; other values are written as strings).
    reads, within : iterables of paths
        Folders the command reads from, as :func:`check_out` takes them.

    Raises
    ------
    OutputError
        If ``out`` holds another command's set or is a folder the command
        reads, if the files cannot be written or moved in, or if another
        command holds the lock for longer than :data:`LOCK_WAIT_S`.
    """
    out = Path(out)
    check_out(out, command, reads, within)
    try:
        out.mkdir(parents=True, exist_ok=True)
        _clean_stale_stages(out)
        stage = out / f"{_STAGE}{os.getpid()}-{os.urandom(4).hex()}"
        stage.mkdir()
    except OSError as e:
        raise OutputError(f"{out}: cannot write there: {e.strerror or e}") from None
    oset = OutputSet(out, stage)
    try:
        yield oset
        files = oset.files()
        lock = _acquire(out)
        try:
            check_out(out, command, reads, within)  # another command may have written since
            old = read_manifest(out) or {}
            doc = {"command": command, "settings": settings or {}, "files": files,
                   "complete": False, "written": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
            # Marked incomplete while files move, with the old list so a later run
            # still removes them.
            pending = dict(doc, previous=sorted(set(old.get("files", []))
                                                | set(old.get("previous", []))))
            atomic_write(out / MANIFEST, json.dumps(pending, indent=2, default=str) + "\n")
            _remove_old(out, pending["previous"])
            try:
                for name in files:
                    dst = out / name
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    inside(out, dst.parent)  # a link at dst itself is replaced, not followed
                    if dst.is_dir() and not dst.is_symlink():
                        raise OutputError(f"{dst}: is a folder, so the result file cannot be "
                                          "written")
                    os.replace(stage / name, dst)
                for d in {(out / n).parent for n in files} | {out}:
                    _fsync_dir(d)
            except OSError as e:
                if isinstance(e, OutputError):
                    raise
                raise OutputError(f"{out}: cannot move the outputs in: {e.strerror or e}") \
                    from None
            atomic_write(out / MANIFEST, json.dumps(dict(doc, complete=True), indent=2,
                                                    default=str) + "\n")
        finally:
            with contextlib.suppress(OSError):
                lock.unlink()
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def check_writable(folder, what: str = "--out") -> Path:
    """Create ``folder`` and prove that it takes real bytes, before any work.

    A probe of a few kilobytes is written, fsynced and removed, so that a full
    disk or a read-only mount is found before a search runs for results that
    could not be kept.

    Raises
    ------
    OutputError
        Naming ``what`` and the folder.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{what} {folder}: exists and is not a folder")
    probe = folder / f".moga-write-test-{os.getpid()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(probe, "wb") as fh:
            fh.write(b"\0" * 16384)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as e:
        raise OutputError(f"{what} {folder}: cannot write there: {e.strerror or e}") from None
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    return folder
