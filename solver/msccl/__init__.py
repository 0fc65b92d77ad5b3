"""MSCCL XML export of ForestColl schedules, and a checker that executes MSCCL XML symbolically.

- :func:`build_program` / :func:`export_xml`: Schedule -> MSCCL XML for msccl-executor-nccl,
  RCCL or the legacy MSCCL runtime (``solver.msccl.generate``), with the options of one
  :class:`ExportOptions` value (``solver.msccl.options``; the runtime resolved from its name once,
  :func:`runtime_named`);
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
from solver.msccl.options import DEFAULT_OPTIONS, ExportOptions
from solver.msccl.program import Program, parse_xml, to_xml
from solver.msccl.rules import check_rules
from solver.msccl.runtimes import (
    PROTOCOLS,
    RUNTIMES,
    MscclError,
    PeersLimit,
    Runtime,
    runtime_named,
)
from solver.msccl.shaping import Shaped, shape


def export_xml(
    schedule: Schedule, options: ExportOptions = DEFAULT_OPTIONS, check: bool = True
) -> str:
    """The MSCCL XML text of ``schedule``, checked by executing it.

    Parameters
    ----------
    schedule : Schedule
        An allgather, reduce-scatter or allreduce schedule (``solver.solve``'s result).
    options : ExportOptions
        The runtime, protocol, instances, rank order, message-size range and name
        (default: msccl-executor, Simple, one instance, the fabric's compute order).
    check : bool
        Execute the XML symbolically for ``options.runtime`` and verify its result before
        returning it (:func:`check_xml`); False skips that (benchmarks time the two apart).

    Returns
    -------
    str
        The XML text, as :func:`write_xml` writes it.

    Raises
    ------
    MscclError
        When the schedule cannot fit the runtime (the message names the limit and its source
        line, :class:`PeersLimit` for too many partners per GPU) or an option is out of range.

    Examples
    --------
    >>> from solver import solve
    >>> from solver.io.templates import ring
    >>> from solver.msccl import ExportOptions, export_xml, runtime_named
    >>> text = export_xml(solve(ring(4)), ExportOptions(runtime_named("rccl"), proto="LL"))
    >>> 'proto="LL"' in text
    True
    """
    text = to_xml(build_program(schedule, options))
    if check:
        check_xml(text, options.runtime, where="generated XML")
    return text


def write_xml(
    path: str | os.PathLike, schedule: Schedule, options: ExportOptions = DEFAULT_OPTIONS
) -> CheckReport:
    """Export (:func:`export_xml`), check, then write ``path`` atomically.

    Parameters
    ----------
    path : str or os.PathLike
        The XML file to write (replaced atomically; on any error it is left as it was).
    schedule : Schedule
        An allgather, reduce-scatter or allreduce schedule (``solver.solve``'s result).
    options : ExportOptions
        As for :func:`export_xml`.

    Returns
    -------
    CheckReport
        What executing the XML found (ranks, threadblocks, steps), for a one-line summary.

    Raises
    ------
    MscclError
        As :func:`export_xml`, or when ``path`` cannot be written (one line naming it).
    """
    text = to_xml(build_program(schedule, options))
    report = check_xml(text, options.runtime, where="generated XML")
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
    "ExportOptions",
    "MscclError",
    "PeersLimit",
    "Shaped",
    "Program",
    "Runtime",
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
    "runtime_named",
    "to_xml",
    "write_xml",
]
