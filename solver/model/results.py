"""Predicted-vs-measured tables: one row per message size.

A :class:`ResultTable` is what ``/results/<name>`` of the HDF5 results file holds. The model (the
bound and an alpha-aware estimate), the simulator and imported nccl-tests logs all produce one.
Missing values are NaN (e.g. a model table has no measured columns).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SOURCES = ("model", "simulator", "nccl-tests", "rccl-tests")


@dataclass(frozen=True)
class ResultTable:
    """Times in seconds, algbw in GB/s (1e9 bytes/s), sizes in bytes."""

    collective: str
    algorithm: str  # "forestcoll", "ring", "tree", "direct", "blink", or a measured label
    source: str  # one of SOURCES
    size_bytes: np.ndarray  # int64
    predicted_time: np.ndarray  # float64, s
    predicted_algbw: np.ndarray  # float64, GB/s
    measured_time: np.ndarray  # float64, s (NaN when not measured)
    measured_algbw: np.ndarray  # float64, GB/s (NaN when not measured)
    schedule: str = ""  # name of the schedule in /schedules it belongs to, if any
    attrs: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        n = len(self.size_bytes)
        for name in ("predicted_time", "predicted_algbw", "measured_time", "measured_algbw"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"ResultTable.{name} has {len(getattr(self, name))} rows, not {n}")

    @classmethod
    def empty_measured(cls, n: int) -> np.ndarray:
        return np.full(n, np.nan)
