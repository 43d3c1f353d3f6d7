"""The project's own error types.

Bad input is reported where it is read, as one of these (or as
:class:`~moga.model.workload.SWFFormatError`,
:class:`~moga.experiments.sweep.store.StoreError`,
:class:`~moga.outputs.OutputError`), with a message that names the file,
option or field. The ``moga`` command prints them in one line and exits with
status 2; any other exception is an internal error and keeps its traceback.
"""

from __future__ import annotations

__all__ = ["InputError", "MissingExtraError", "require"]


class InputError(ValueError):
    """A value, file or option that the project cannot use; the message says which and why."""


class MissingExtraError(ImportError):
    """A feature needs an optional dependency that is not installed; the message names the
    extra to install (or, with ``package=True``, the package itself)."""

    def __init__(self, feature: str, extra: str, cause: str = "", package: bool = False):
        self.extra = extra
        msg = (f"{feature} needs {extra}: pip install {extra}" if package else
               f"{feature} needs the {extra} extra: pip install 'moga[{extra}]' (in a clone: "
               f"pip install '.[{extra}]')")
        if cause:
            msg += f" ({cause})"
        super().__init__(msg)


def require(module: str, feature: str, extra: str):
    """Import ``module`` for ``feature``, or raise :class:`MissingExtraError` naming ``extra``."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingExtraError(feature, extra, str(e)) from None
