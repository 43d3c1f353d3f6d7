"""Keep Numba's on-disk cache of the kernels consistent with their sources.

Numba's cache checks only the source file of the function it compiled, not
the files of the helpers inlined into it (numba/numba#1833): after an edit of
``_kernels.py`` a cached ``federated._decode_easy`` would still run the old
helpers. On import, this module hashes every source file of the package and,
when the hash differs from the one stamped beside the cache, removes the
package's cached kernels so that they compile afresh. A package of kernels
elsewhere that calls this package's helpers (``moga.evolution``) does the same
for its own folder on its import, hashing its sources and this package's. It
never fails an import: a cache folder it cannot read or write is left alone.

Numba saves a compiled signature by reading the function's index, adding the
signature with the first free data file name, and writing both back, with
no lock: two processes saving different signatures of one function at once
(a first run compiling in two processes, a sweep's workers starting on one
cold cache) could leave the index naming the other's machine code.
:func:`lock_cache_saves` makes that save hold an exclusive lock on a file
beside the index.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_STAMP = "moga-decoders-source.sha256"


def _sources(folder: Path) -> tuple:
    """The source folders whose code the kernels of ``folder`` may hold: its own, and this
    package's, whose helpers Numba inlines into them."""
    folder = Path(folder).resolve()
    return (_PACKAGE,) if folder == _PACKAGE else (folder, _PACKAGE)


def source_digest(folder: Path = _PACKAGE) -> str:
    """SHA-256 of every ``.py`` file of :func:`_sources` of ``folder`` (default this
    package), in path order."""
    h = hashlib.sha256()
    for root in _sources(folder):
        for p in sorted(root.rglob("*.py")):
            h.update(str(p.relative_to(root.parent)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def lock_cache_saves() -> bool:
    """Make Numba's save of a compiled signature (``IndexDataCacheFile.save``: read the
    index, add the signature, write the index and the data) hold an exclusive
    ``fcntl`` lock on ``<index>.lock``, so that processes saving signatures of one
    function one after the other each keep the other's. Loads need no lock: every
    file is written whole and then renamed into place. Returns whether saves are
    locked: False where ``fcntl`` is missing (Windows) or Numba's class has moved."""
    try:
        import fcntl

        from numba.core.caching import IndexDataCacheFile
    except ImportError:
        return False
    save = getattr(IndexDataCacheFile, "save", None)
    if save is None:
        return False
    if getattr(save, "_moga_locked", False):
        return True

    @functools.wraps(save)
    def locked_save(self, key, data):
        path = getattr(self, "_index_path", None)
        try:
            lock = open(f"{path}.lock", "a") if path else None  # noqa: SIM115 - held below
        except OSError:  # an unwritable folder: Numba's own save reports it
            lock = None
        if lock is None:
            return save(self, key, data)
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return save(self, key, data)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    locked_save._moga_locked = True
    IndexDataCacheFile.save = locked_save
    return True


def _cache_dirs(package: Path = _PACKAGE):
    """Where Numba keeps the cache of each source folder of ``package`` (default this one)."""
    folders = sorted({p.parent for p in Path(package).resolve().rglob("*.py")})
    user = os.environ.get("NUMBA_CACHE_DIR")
    for folder in folders:
        yield folder / "__pycache__"
        if user:
            try:
                from numba.core.caching import _CacheLocator

                sub = _CacheLocator.get_suitable_cache_subpath(str(folder / "x.py"))
            except Exception:  # noqa: BLE001 - a private Numba API: skip if it moved
                continue
            yield Path(user) / sub


def drop_stale_cache(package: Path = _PACKAGE) -> int:
    """Remove the cached kernels of ``package`` (a folder of sources; default this package)
    compiled from other sources, its own or this package's; returns the files removed.

    The stamp is written into every cache folder, creating the folder when
    Numba has not yet done so: a folder that Numba fills later without a stamp
    would otherwise look stale to the next process, which would delete the
    kernels this process compiled and compile them all again.
    """
    digest = source_digest(package)
    removed = 0
    for d in _cache_dirs(package):
        try:
            stamp = d / _STAMP
            if stamp.exists() and stamp.read_text().strip() == digest:
                continue
            if d.is_dir():
                for f in list(d.glob("*.nbi")) + list(d.glob("*.nbc")):
                    f.unlink()
                    removed += 1
            d.mkdir(parents=True, exist_ok=True)
            tmp = d / f".{_STAMP}.{os.getpid()}"
            tmp.write_text(digest + "\n")
            os.replace(tmp, stamp)
        except OSError:
            continue
    return removed


def _module_name(module: str) -> str:
    """The importable name of ``module``: a module of this package by its file name
    (``"federated"``), or any module by its dotted name (``"moga.evolution.survival"``)."""
    if "." in module:
        return module
    (path,) = _PACKAGE.rglob(f"{module}.py")
    return ".".join((__package__, *path.relative_to(_PACKAGE).with_suffix("").parts))


def _kernel_cache_dir(module: str, kernel: str):
    """The folder this process's Numba reads the cache of ``kernel`` of ``module`` from.

    Numba takes the first usable of its locators (``NUMBA_CACHE_DIR``, then the
    source's ``__pycache__``, then a user-wide folder) when it decorates the
    function, so the kernel's own cache object knows. None when the module or
    kernel is not found, or Numba's private attribute has moved.
    """
    import importlib

    try:
        dispatcher = getattr(importlib.import_module(_module_name(module)), kernel)
        return Path(dispatcher._cache._cache_path)
    except Exception:  # noqa: BLE001 - a private Numba API, or no such kernel
        return None


def is_cached(module: str, kernel: str) -> bool:
    """True when Numba's cache holds an index of ``kernel`` of ``module`` (a module of this
    package by file name, ``"federated"``, or a dotted module name), so that this process
    loads it instead of compiling.

    Only the folder Numba reads in this process counts: with ``NUMBA_CACHE_DIR``
    set, kernels cached beside the sources are not loaded."""
    pattern = f"{module.rpartition('.')[2]}.{kernel}-*.nbi"
    own = _kernel_cache_dir(module, kernel)
    for d in ([own] if own is not None else _cache_dirs()):
        try:
            if d.is_dir() and any(d.glob(pattern)):
                return True
        except OSError:
            continue
    return False


#: Kernels another process is compiling into the cache, each with the call that waits for
#: it (:func:`compiling_elsewhere`, :func:`await_elsewhere`).
_ELSEWHERE: dict = {}


def compiling_elsewhere(kernels, wait) -> None:
    """Note that another process is compiling ``kernels`` (``(module, kernel)`` pairs) into
    the cache this process reads; ``wait()`` returns once it is done (or has failed).

    A kernel called before then would be compiled here too, for nothing: its call
    site calls :func:`await_elsewhere` first, and then loads it from the cache (or,
    when the other process failed, compiles it).
    """
    for key in kernels:
        _ELSEWHERE[key] = wait


def await_elsewhere(module: str, kernel: str) -> None:
    """Wait for another process compiling ``kernel`` of ``module``, if one is (see
    :func:`compiling_elsewhere`); then the wait is forgotten for every kernel it covers.

    The kernels stay noted while ``wait()`` runs, so that a call of one of them made
    by ``wait()`` itself also goes through ``wait`` (which must allow that call)
    rather than compiling the kernel here."""
    wait = _ELSEWHERE.get((module, kernel))
    if wait is None:
        return
    wait()
    # Threads leaving the wait one after another each forget the same keys.
    for key in [k for k, w in list(_ELSEWHERE.items()) if w is wait]:
        _ELSEWHERE.pop(key, None)
