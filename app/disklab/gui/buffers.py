"""Bounded growable numpy buffers for live series (never a Python list per sample).

A run of many hours at 2 samples a second is ~100k points per series; past `limit` points the
buffer halves its resolution (keeps every other point) so memory stays bounded for any length.
"""

from __future__ import annotations

import numpy as np


class SeriesBuffer:
    """Append-only (t, y) pairs in doubling float64 arrays."""

    def __init__(self, capacity: int = 1024, limit: int = 1 << 20):
        self._t = np.empty(capacity, dtype=np.float64)
        self._y = np.empty(capacity, dtype=np.float64)
        self._n = 0
        self.limit = limit

    def __len__(self) -> int:
        return self._n

    @property
    def capacity(self) -> int:
        return len(self._t)

    def append(self, t: float, y: float) -> None:
        if self._n == len(self._t):
            if self._n >= self.limit:
                self._decimate()
            else:
                self._grow(2 * len(self._t))
        self._t[self._n] = t
        self._y[self._n] = y
        self._n += 1

    def _grow(self, capacity: int) -> None:
        t = np.empty(capacity, dtype=np.float64)
        y = np.empty(capacity, dtype=np.float64)
        t[: self._n] = self._t[: self._n]
        y[: self._n] = self._y[: self._n]
        self._t, self._y = t, y

    def _decimate(self) -> None:
        half = self._n // 2
        self._t[:half] = self._t[: self._n : 2][:half]
        self._y[:half] = self._y[: self._n : 2][:half]
        self._n = half

    def clear(self) -> None:
        self._n = 0

    def scale(self, factor: float) -> None:
        """Every value multiplied by `factor` in place (the plot's unit changed)."""
        self._y[: self._n] *= factor

    def data(self) -> tuple[np.ndarray, np.ndarray]:
        """Views of the filled part (valid until the next append that grows the buffer)."""
        return self._t[: self._n], self._y[: self._n]
