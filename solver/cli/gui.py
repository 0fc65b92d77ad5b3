"""``forestcoll gui``: open the desktop designer (PySide6). Qt is loaded only when it runs."""

from __future__ import annotations

import importlib

from solver.cli._common import add_command


def register(subparsers):
    parser = add_command(
        subparsers,
        "gui",
        "open the desktop designer",
        "Open the ForestColl Designer window on TOPO (v1 JSON, node-link JSON, GraphML or NCCL\n"
        "topology XML) or, without TOPO, on the built-in 2x DGX A100 fabric. With --solve the\n"
        "fabric is solved at once; with --screenshot the window is rendered to a PNG and the\n"
        "program exits (works headless).",
        "forestcoll gui sample_topologies/dgx_a100_2x.json --solve --screenshot out.png",
    )
    parser.add_argument(
        "topo",
        nargs="?",
        metavar="TOPO",
        help="fabric file to open (default: built-in 2x DGX A100)",
    )
    parser.add_argument("--solve", action="store_true", help="solve right after opening")
    parser.add_argument(
        "--screenshot", metavar="PNG", help="render the window to PNG (after --solve) and exit"
    )
    parser.add_argument(
        "--no-recovery",
        action="store_true",
        help="do not offer autosaved work from a previous crash",
    )
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    try:
        app = importlib.import_module("fc_gui.app")
    except ImportError as exc:  # Qt missing or broken: one-line error, no traceback
        from solver.model.errors import ForestCollError

        raise ForestCollError(f"the designer needs PySide6 and pyqtgraph: {exc}") from None
    return app.run(args)
