"""Output files written atomically: a result file is whole or absent, never cut.

Every file the project writes as a result goes through :func:`atomic_write`
(text or bytes) or :func:`atomic_path` (anything a library writes to a path,
such as a matplotlib figure or a NumPy archive): the content goes to a
temporary name in the same folder, is flushed and fsynced, and is renamed over
the destination. A crash, a full disk or an exception while writing leaves the
previous file (or none) and removes the temporary one. The error of a failed
write names the file.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["OutputError", "atomic_create", "atomic_path", "atomic_write", "check_writable",
           "safe_name"]


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


def safe_name(name: str) -> str:
    """``name`` as a file or folder name: every run of other characters than letters,
    digits, ``-``, ``_`` and ``.`` becomes one ``_``."""
    import re

    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(name))


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
