"""Old import path of the whole-run dispatchers: :func:`dispatch` and :class:`Dispatch` live
in :mod:`decoders.federated` (a thin re-export, kept for ``moga.powercap``)."""

from __future__ import annotations

from .federated import Dispatch, dispatch

__all__ = ["Dispatch", "dispatch"]
