"""``forestcoll gui``: the designer's subcommand, contributed to the solver's command line.

``pyproject.toml`` names :func:`register` in the entry point group ``forestcoll.commands``; the
``forestcoll`` command (``solver.cli``) discovers it there and never imports this package by
name. This module imports no Qt: PySide6 and pyqtgraph are loaded only when the command runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from solver.cli._common import add_command, add_fabric_options
from solver.model.errors import ForestCollError

#: Third-party packages the window needs, with the requirement to install (see pyproject.toml).
GUI_REQUIREMENTS = {
    "PySide6": (
        "PySide6-Essentials>=6.6,<6.12" if sys.version_info < (3, 12) else "PySide6-Essentials>=6.6"
    ),
    "pyqtgraph": "pyqtgraph>=0.13.7",
}


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``gui`` subcommand to the ``forestcoll`` subparsers (entry point target)."""
    parser = add_command(
        subparsers,
        "gui",
        "open the desktop designer",
        "Open the ForestColl Designer window on TOPO (v1 JSON, node-link JSON, GraphML, NCCL\n"
        "topology XML or a results file) or, without TOPO, on the built-in 2x DGX A100 fabric.\n"
        "An NCCL/RCCL dump is read with --boxes/--fabric/--intra/--*-bw as forestcoll solve\n"
        "reads it; when they do not fit it (a skeleton dump without --intra) the import dialog\n"
        "opens with them, saying why. With --solve the\n"
        "fabric is solved at once; with --screenshot the window is rendered to a PNG and the\n"
        "program exits (works headless); with --figure the fabric and its result are written as\n"
        "a slide figure (vector SVG, or PNG --width pixels wide) and the program exits.",
        "forestcoll gui sample_topologies/dgx_a100_2x.json --solve --figure fig.svg",
    )
    parser.add_argument(
        "topo",
        nargs="?",
        metavar="TOPO",
        help="fabric file to open (default: built-in 2x DGX A100)",
    )
    add_fabric_options(parser)
    parser.add_argument("--solve", action="store_true", help="solve right after opening")
    parser.add_argument(
        "--screenshot", metavar="PNG", help="render the window to PNG (after --solve) and exit"
    )
    parser.add_argument(
        "--figure",
        metavar="OUT",
        help="write the figure (fabric, cut, heat map, legend) to OUT.svg or OUT.png and exit",
    )
    parser.add_argument(
        "--width", type=int, default=None, metavar="PX", help="figure width in pixels (PNG)"
    )
    parser.add_argument(
        "--no-recovery",
        action="store_true",
        help="do not offer autosaved work from a previous crash",
    )
    parser.set_defaults(func=run)
    return parser


def missing_requirements() -> list[str]:
    """The requirements (pip syntax) of :data:`GUI_REQUIREMENTS` whose package is not installed."""
    return [req for name, req in GUI_REQUIREMENTS.items() if importlib.util.find_spec(name) is None]


def run(args: argparse.Namespace) -> int:
    """Open the window (``fc_gui.app.run``), or fail in one line when Qt is not installed."""
    missing = missing_requirements()
    if missing:
        quoted = " ".join(f"'{req}'" for req in missing)
        raise ForestCollError(
            f"the designer needs {', '.join(GUI_REQUIREMENTS)}; "
            f"install with: python3 -m pip install {quoted}"
        )
    from fc_gui.app import run as run_window

    return run_window(args)
