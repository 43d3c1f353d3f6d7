"""Parameter checks shared by the dataclasses and functions that take numbers from users.

Each check raises :class:`~moga.errors.InputError` naming the parameter, so
that a string, a boolean, NaN or an out-of-range value never reaches
arithmetic that would fail with a less helpful message (or not fail at all).
"""

from __future__ import annotations

import math
import numbers

from .errors import InputError

__all__ = ["check_number", "check_int", "read_npz"]


def check_number(name: str, v, low=None, high=None, *, low_open: bool = False,
                 high_open: bool = False, allow_inf: bool = False) -> float:
    """``v`` as a float, refused unless it is a real number (not a bool) within the bounds.

    ``low`` and ``high`` are inclusive unless ``low_open`` / ``high_open``;
    NaN is always refused, infinities unless ``allow_inf``.
    """
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise InputError(f"{name} must be a number, got {v!r}")
    x = float(v)
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        raise InputError(f"{name} must be a finite number, got {v!r}")
    if low is not None and (x < low or (low_open and x == low)):
        raise InputError(f"{name} must be {'>' if low_open else '>='} {low}, got {v!r}")
    if high is not None and (x > high or (high_open and x == high)):
        raise InputError(f"{name} must be {'<' if high_open else '<='} {high}, got {v!r}")
    return x


def check_int(name: str, v, low=None, high=None) -> int:
    """``v`` as an int, refused unless it is a whole number (not a bool) within ``[low, high]``."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise InputError(f"{name} must be an integer, got {v!r}")
    if isinstance(v, numbers.Integral):
        x = int(v)
    else:
        f = float(v)
        if not math.isfinite(f) or f != int(f):
            raise InputError(f"{name} must be an integer, got {v!r}")
        x = int(f)
    if low is not None and x < low:
        raise InputError(f"{name} must be an integer >= {low}, got {v!r}")
    if high is not None and x > high:
        raise InputError(f"{name} must be an integer <= {high}, got {v!r}")
    return x


def read_npz(path, what: str) -> dict:
    """Every array of the NumPy archive at ``path``, read without pickles.

    ``what`` names the kind of file in the errors (``"policy"``, ``"moga result"``).

    Raises
    ------
    InputError
        Naming the file, if it is missing, cut, not an archive, or a single array.
    """
    import zipfile
    from pathlib import Path

    import numpy as np

    path = Path(path)
    try:
        z = np.load(path, allow_pickle=False)
        if not hasattr(z, "files"):
            raise InputError(f"{path}: not a {what} archive (.npz), but a single array")
        with z:
            return {k: z[k] for k in z.files}
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what} file") from None
    except (OSError, EOFError, zipfile.BadZipFile, ValueError, KeyError) as e:
        raise InputError(f"{path}: not a readable {what} archive (.npz): "
                         f"{type(e).__name__}: {e}") from None
