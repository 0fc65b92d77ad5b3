"""The options of one MSCCL++ plan export, one frozen value from the CLI down to the builder.

The CLI builds a :class:`PlanOptions` once from its arguments; :func:`solver.mscclpp.build_plan`,
:func:`~solver.mscclpp.export_plan` and :func:`~solver.mscclpp.write_plan` take it whole, and
``--bands`` changes only the byte range and name per band (:func:`dataclasses.replace`).
:meth:`PlanOptions.check` refuses values the executor cannot read; the builder calls it first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from solver.mscclpp.plan import COMMON, RESIDENT_THREADBLOCKS, UINT32_MAX, MscclppError, cite

#: how tree edges get their channels: "auto" (memory inside a box, port across), "port" (all port)
CHANNEL_CHOICES = ("auto", "port")
#: offsets are uint32_t in the device plan (execution_common.hpp:115-118)
DEFAULT_MAX_MESSAGE = UINT32_MAX


@dataclass(frozen=True)
class PlanOptions:
    """What an MSCCL++ plan export targets and writes, besides the schedule.

    Attributes
    ----------
    order : tuple of str or None
        Compute node ids by rank; None: the fabric's compute order. A list is kept as a tuple.
    instances : int
        How many times the plan is repeated on fresh threadblocks and channels (at least 1).
    channels : str
        One of :data:`CHANNEL_CHOICES`.
    min_bytes, max_bytes : int, int or None
        The message sizes the plan is selected for; ``max_bytes`` None: :data:`DEFAULT_MAX_MESSAGE`.
    name : str or None
        The plan's ``name``; None: one made of the collective and chunk count.
    resident : int or None
        Threadblocks per rank that can run at once, the GPU's SM/CU count (None:
        :data:`solver.mscclpp.plan.RESIDENT_THREADBLOCKS`, an A100's 108).
    """

    order: Sequence[str] | None = None
    instances: int = 1
    channels: str = "auto"
    min_bytes: int = 0
    max_bytes: int | None = None
    name: str | None = None
    resident: int | None = None

    def __post_init__(self) -> None:
        if self.order is not None:
            object.__setattr__(self, "order", tuple(self.order))

    @property
    def max_bytes_written(self) -> int:
        """The upper message size as written: ``max_bytes``, or :data:`DEFAULT_MAX_MESSAGE`."""
        return DEFAULT_MAX_MESSAGE if self.max_bytes is None else self.max_bytes

    @property
    def resident_threadblocks(self) -> int:
        """``resident``, or :data:`~solver.mscclpp.plan.RESIDENT_THREADBLOCKS` when None."""
        return RESIDENT_THREADBLOCKS if self.resident is None else self.resident

    def check(self) -> None:
        """Raise :class:`MscclppError` on an instance count, channel choice or byte range the
        executor cannot read."""
        if self.instances < 1:
            raise MscclppError(f"--instances must be >= 1, got {self.instances}")
        if self.channels not in CHANNEL_CHOICES:
            raise MscclppError(
                f"unknown channel choice {self.channels!r} ({', '.join(CHANNEL_CHOICES)})"
            )
        lo, hi = self.min_bytes, self.max_bytes_written
        if not 0 <= lo <= hi <= DEFAULT_MAX_MESSAGE:
            raise MscclppError(
                f"message sizes {lo}..{hi} must lie in 0..{DEFAULT_MAX_MESSAGE}: offsets are "
                f"uint32_t in the device plan ({cite(COMMON)}:115-118)"
            )


DEFAULT_PLAN_OPTIONS = PlanOptions()

__all__ = ["CHANNEL_CHOICES", "DEFAULT_MAX_MESSAGE", "DEFAULT_PLAN_OPTIONS", "PlanOptions"]
