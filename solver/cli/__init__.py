"""The ``forestcoll`` command line: one module per subcommand, each with ``register(subparsers)``.

A subcommand module defines ``register(subparsers) -> argparse.ArgumentParser`` and sets
``func=run`` on its parser with ``run(args) -> int``. User errors are raised as
:class:`solver.model.errors.ForestCollError` and printed here as one line ``error: ...`` (exit 2).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from solver.model.errors import Cancelled, ForestCollError

# Subcommands in the order ``--help`` lists them (module names under solver.cli).
COMMANDS = [
    "info", "convert", "solve", "export", "show", "check_xml", "simulate", "measure", "study", "gui"
]


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2 (argparse's default)."""

    def error(self, message: str) -> None:  # noqa: D102
        self.exit(2, f"error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    from solver import __version__

    parser = _Parser(
        prog="forestcoll",
        description=(
            "ForestColl Designer: throughput-optimal collective schedules for heterogeneous "
            "accelerator fabrics. Run 'forestcoll COMMAND --help' for each command."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # subcommand not built yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except Cancelled:
        print("error: cancelled", file=sys.stderr)
        return 130
    except ForestCollError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
