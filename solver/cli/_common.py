"""Helpers shared by subcommands: help formatting, loading a fabric, a stderr progress bar."""

from __future__ import annotations

import argparse
import sys
import time

from solver.io.nccl.options import OVERRIDE_CLASSES
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
    """``--boxes``, ``--fabric``, ``--intra`` and ``--<class>-bw`` for NCCL/RCCL ``.xml`` dumps.

    :func:`load_fabric` refuses them for other formats (one error line).
    """
    group = parser.add_argument_group("NCCL/RCCL topology dumps (.xml)")
    group.add_argument(
        "--boxes",
        type=int,
        default=1,
        metavar="N",
        help="repeat the dump N times (default 1); each host_hash of the dump is one box",
    )
    group.add_argument(
        "--fabric",
        choices=("ib", "rail"),
        default="ib",
        help="how several boxes are joined through their NICs: one IB switch (ib, default) or "
        "one switch per NIC index (rail)",
    )
    group.add_argument(
        "--intra",
        metavar="KIND:GBPS",
        help="skeleton dumps (PCI devices only): the GPU-to-GPU fabric of each box, "
        "nvswitch:GBPS (every GPU to one switch), mesh:GBPS (every GPU pair) or none; "
        "presets at line rate nvswitch:a100|h100|b200 (300/450/900), mesh:mi300x (64)",
    )
    for cls, meaning in OVERRIDE_CLASSES.items():
        group.add_argument(
            f"--{cls}-bw",
            metavar="GBPS",
            help=f"override the {cls} bandwidth (NVLink/xGMI: the line rate by default, the "
            f"runtime's figure kept as rated_link_bw): GB/s {meaning}"
            if cls in ("nvlink", "xgmi")
            else f"override the runtime's {cls} bandwidth: GB/s {meaning}",
        )


def _xml_options(args) -> dict[str, object]:
    bandwidth = {cls: vars(args)[f"{cls}_bw"] for cls in OVERRIDE_CLASSES}
    return {
        "boxes": args.boxes,
        "fabric": args.fabric,
        "intra": args.intra,
        "bandwidth": {k: v for k, v in bandwidth.items() if v is not None},
    }


def load_fabric(path: str, args, *, check: bool = True) -> Topology:
    """Load ``path`` with the dump options of ``args`` (see :func:`add_fabric_options`)."""
    from solver.io.formats import format_for, load

    options = _xml_options(args)
    if format_for(path) == "nccl-xml":
        return load(path, check=check, **options)
    given = [f"--{k.replace('_', '-')}" for k in ("boxes",) if options[k] != 1]
    given += ["--intra"] if options["intra"] is not None else []
    given += [f"--{cls}-bw" for cls in options["bandwidth"]]
    if given:
        raise TopologyError(f"{given[0]} applies to NCCL/RCCL .xml dumps only, not {path}")
    return load(path, check=check)


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
