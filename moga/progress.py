"""The one progress bar of the long commands (sweeps, tuning, comparisons).

A one-line bar on stderr that is redrawn in place on a terminal and printed
as a plain line per step otherwise; ``enabled=False`` (the CLI's
``--no-progress``) silences it.
"""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]

#: Off a terminal, a count that moved gets a line after this many seconds without one.
QUIET_S = 30.0


class Progress:
    """Count steps of a known total and show them."""

    def __init__(self, total: int, enabled: bool = True, stream=None, every: int = 1):
        self.total, self.n, self.enabled = int(total), 0, bool(enabled)
        self.every = max(1, int(every))  # off a terminal, print every ``every``-th step
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.perf_counter()
        self._shown = 0  # the count of the last line printed off a terminal, and when
        self._shown_at = self.t0

    def step(self, label: str = "") -> None:
        """One more step done."""
        self.update(self.n + 1, label)

    def update(self, n: int, label: str = "") -> None:
        """``n`` steps done in all (a count that may jump, as a simulation's jobs started).

        Off a terminal a line is printed each time the count reaches a further
        multiple of ``every``, when it moved and :data:`QUIET_S` seconds passed
        since the last line, and once at the total.
        """
        self.n = int(n)
        if not self.enabled:
            return
        frac = self.n / max(self.total, 1)
        bar = "#" * int(30 * frac)
        msg = (f"[{bar:<30}] {self.n}/{self.total} {time.perf_counter() - self.t0:6.0f} s  "
               f"{label}")
        if self.tty:
            self.stream.write("\r" + msg[:120].ljust(120))
        elif self.n // self.every <= self._shown // self.every and (
                self.n != self.total or self._shown == self.total) and not (
                self.n != self._shown and time.perf_counter() - self._shown_at >= QUIET_S):
            return
        else:
            self._shown, self._shown_at = self.n, time.perf_counter()
            self.stream.write(msg + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.enabled and self.tty and self.n:
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
