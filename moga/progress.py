"""The one progress bar of the long commands (sweeps, tuning, comparisons).

A one-line bar on stderr that is redrawn in place on a terminal and printed
as a plain line per step otherwise; ``enabled=False`` (the CLI's
``--no-progress``) silences it.
"""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


class Progress:
    """Count steps of a known total and show them."""

    def __init__(self, total: int, enabled: bool = True, stream=None, every: int = 1):
        self.total, self.n, self.enabled = int(total), 0, bool(enabled)
        self.every = max(1, int(every))  # off a terminal, print every ``every``-th step
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.perf_counter()

    def step(self, label: str = "") -> None:
        """One more step done."""
        self.n += 1
        if not self.enabled:
            return
        frac = self.n / max(self.total, 1)
        bar = "#" * int(30 * frac)
        msg = (f"[{bar:<30}] {self.n}/{self.total} {time.perf_counter() - self.t0:6.0f} s  "
               f"{label}")
        if self.tty:
            self.stream.write("\r" + msg[:120].ljust(120))
        elif self.n % self.every and self.n != self.total:
            return
        else:
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
