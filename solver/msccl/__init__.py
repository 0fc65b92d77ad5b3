"""MSCCL XML export of ForestColl schedules, and a checker that executes MSCCL XML symbolically.

- :func:`build_program` / :func:`export_xml`: Schedule -> MSCCL XML for msccl-executor-nccl,
  RCCL or the legacy MSCCL runtime (``solver.msccl.generate``);
- :func:`check_xml` / :func:`check_file`: parser rules + symbolic execution + result check
  (``solver.msccl.interpreter``);
- :func:`shape`: a schedule whose GPUs have few partners, for a runtime's threadblock limit
  (``solver.msccl.shaping``).

Ranks are the fabric's compute nodes in file order (``Topology.compute_ids``) unless a rank order
is given. Every XML this package writes has passed the checker first.
"""

from __future__ import annotations

import os

from solver.io.files import atomic_write_text
from solver.model.schedule import Schedule
from solver.msccl.generate import build_program, rank_order
from solver.msccl.interpreter import CheckReport, check_file, check_program, check_xml
from solver.msccl.program import Program, parse_xml, to_xml
from solver.msccl.rules import check_rules
from solver.msccl.runtimes import PROTOCOLS, RUNTIMES, MscclError, PeersLimit
from solver.msccl.shaping import Shaped, shape


def export_xml(
    schedule: Schedule,
    runtime: str = "msccl-executor",
    proto: str = "Simple",
    instances: int = 1,
    order: list[str] | None = None,
    min_bytes: int = 0,
    max_bytes: int | None = None,
    name: str | None = None,
    check: bool = True,
) -> str:
    """The MSCCL XML text of ``schedule`` for ``runtime``, checked by executing it.

    ``order`` is the rank order (compute node ids; default: the fabric's compute order). See
    :func:`solver.msccl.generate.build_program` for the other options. Raises
    :class:`MscclError` naming the limit when the schedule cannot fit the runtime.
    """
    program = build_program(schedule, runtime, proto, instances, order, min_bytes, max_bytes, name)
    text = to_xml(program)
    if check:
        check_xml(text, runtime, where="generated XML")
    return text


def write_xml(
    path: str | os.PathLike,
    schedule: Schedule,
    runtime: str = "msccl-executor",
    proto: str = "Simple",
    instances: int = 1,
    order: list[str] | None = None,
    min_bytes: int = 0,
    max_bytes: int | None = None,
    name: str | None = None,
) -> CheckReport:
    """Export, check, then write ``path`` atomically; returns the check report."""
    program = build_program(schedule, runtime, proto, instances, order, min_bytes, max_bytes, name)
    text = to_xml(program)
    report = check_xml(text, runtime, where="generated XML")
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise MscclError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return report


def read_rank_order(path: str | os.PathLike) -> list[str]:
    """A rank-order file: one compute node id per line (blank lines and # comments ignored)."""
    from solver.io.files import read_text  # capped, regular files only (a FIFO never blocks)

    lines = read_text(path, 16 * 2**20, "a rank-order file", MscclError).splitlines()
    return [ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()]


__all__ = [
    "PROTOCOLS",
    "RUNTIMES",
    "CheckReport",
    "MscclError",
    "PeersLimit",
    "Shaped",
    "Program",
    "build_program",
    "check_file",
    "check_program",
    "check_rules",
    "check_xml",
    "export_xml",
    "parse_xml",
    "rank_order",
    "shape",
    "read_rank_order",
    "to_xml",
    "write_xml",
]
