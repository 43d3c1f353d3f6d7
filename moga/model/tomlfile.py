"""Reading TOML files with errors that name the file (federations, GA parameters, sweeps)."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["read_toml", "tomllib"]


def read_toml(path, what: str) -> dict:
    """The document of a TOML file; a ValueError naming the file (and ``what`` it holds)."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read the {what}: {e.strerror or e}") from None
