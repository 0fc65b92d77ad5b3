"""Helpers shared by subcommands: help formatting, loading a fabric, a stderr progress bar."""

from __future__ import annotations

import argparse
import sys
import time

from solver.model.errors import TopologyError
from solver.model.topology import Topology


def add_command(subparsers, name: str, summary: str, description: str, example: str):
    """Add a subcommand parser whose help ends with an example."""
    return subparsers.add_parser(
        name,
        help=summary,
        description=description,
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_fabric_options(parser) -> None:
    """``--boxes``/``--fabric`` for NCCL XML inputs (ignored for other formats)."""
    parser.add_argument(
        "--boxes",
        type=int,
        default=1,
        metavar="N",
        help="NCCL XML only: replicate the box N times and join the NICs (default 1)",
    )
    parser.add_argument(
        "--fabric",
        choices=("ib", "rail"),
        default="ib",
        help="NCCL XML only, with --boxes > 1: one IB switch for all NICs (ib, default) or one "
        "switch per NIC index (rail)",
    )


def load_fabric(path: str, args, *, check: bool = True) -> Topology:
    """Load ``path`` with the NCCL options of ``args`` (which must exist for XML only)."""
    from solver.io.formats import format_for, load

    options = {}
    if format_for(path) == "nccl-xml":
        options = {"boxes": args.boxes, "fabric": args.fabric}
    elif args.boxes != 1:
        raise TopologyError(f"--boxes applies to NCCL XML files only, not {path}")
    return load(path, check=check, **options)


class ProgressBar:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal.

    Use as the ``progress(phase, fraction)`` callback of long-running solver functions.
    """

    def __init__(self, stream=None, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._last = 0.0

    def __call__(self, phase: str, fraction: float) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if fraction < 1.0 and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = int(round(width * max(0.0, min(1.0, fraction))))
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r{phase:<16} [{bar}] {100 * fraction:5.1f}%")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 60 + "\r")
            self.stream.flush()
