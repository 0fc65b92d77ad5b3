"""The options of one MSCCL XML export, one frozen value from the CLI or GUI down to the builder.

The callers resolve the runtime name once (:func:`solver.msccl.runtimes.runtime_named`) and build
an :class:`ExportOptions`; :func:`solver.msccl.build_program`, :func:`~solver.msccl.export_xml`
and :func:`~solver.msccl.write_xml` take it whole. :meth:`ExportOptions.check` refuses values
no runtime reads; the builder calls it before building, so a value can be made (and changed with
:func:`dataclasses.replace`, as ``--bands`` does per size band) before it is complete.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from solver.msccl.runtimes import DEFAULT_RUNTIME, INT64, PROTOCOLS, MscclError, Runtime


@dataclass(frozen=True)
class ExportOptions:
    """What an MSCCL XML export targets and writes, besides the schedule.

    Attributes
    ----------
    runtime : Runtime
        The runtime whose limits the program must fit and whose XML dialect it is written in.
    proto : str
        NCCL protocol of the ``<algo>``, one of :data:`~solver.msccl.runtimes.PROTOCOLS`.
    instances : int
        How many times the program is repeated on fresh channels (at least 1).
    order : tuple of str or None
        Compute node ids by rank; None: the fabric's compute order. A list is kept as a tuple.
    min_bytes, max_bytes : int, int or None
        The message sizes the runtime picks this algorithm for; ``max_bytes`` None is the
        runtime's "no limit" (:attr:`max_bytes_written`).
    name : str or None
        The ``<algo name>``; None: one made of the collective, fabric and chunk count.
    """

    runtime: Runtime = DEFAULT_RUNTIME
    proto: str = "Simple"
    instances: int = 1
    order: Sequence[str] | None = None
    min_bytes: int = 0
    max_bytes: int | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.order is not None:
            object.__setattr__(self, "order", tuple(self.order))

    @property
    def max_bytes_written(self) -> int:
        """maxBytes as written: ``max_bytes``, or 0 = no upper limit (msccl_lifecycle.cc:334);
        the legacy runtime has no such value and defaults to 128 MiB itself (src/graph/topo.cc:805),
        so its files say so."""
        if self.max_bytes is not None:
            return self.max_bytes
        return 2**27 if self.runtime.legacy else 0

    def check(self) -> None:
        """Raise :class:`MscclError` on a protocol, instance count or byte range no runtime reads."""
        if self.proto not in PROTOCOLS:
            raise MscclError(f"unknown protocol {self.proto!r} (choose {', '.join(PROTOCOLS)})")
        if self.instances < 1:
            raise MscclError(f"--instances must be >= 1, got {self.instances}")
        high = INT64[1]
        for flag, value in (("--min-bytes", self.min_bytes), ("--max-bytes", self.max_bytes)):
            if value is not None and not 0 <= value <= high:
                raise MscclError(
                    f"{flag} {value} must be between 0 and {high}: the runtimes read it with "
                    "strtoll into an int64_t (msccl_parser.h:82-87)"
                )
        if self.max_bytes and self.min_bytes > self.max_bytes:
            raise MscclError(
                f"--min-bytes {self.min_bytes} is more than --max-bytes {self.max_bytes}"
            )


DEFAULT_OPTIONS = ExportOptions()

__all__ = ["DEFAULT_OPTIONS", "ExportOptions"]
