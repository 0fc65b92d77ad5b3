"""The ``forestcoll`` command line: one module per subcommand, each with ``register(subparsers)``.

A subcommand module defines ``register(subparsers) -> argparse.ArgumentParser`` and sets
``func=run`` on its parser with ``run(args) -> int``. User errors are raised as
:class:`solver.model.errors.ForestCollError` and printed here as one line ``error: ...`` (exit 2);
control characters in the message (a file name holding a newline, an escape sequence read from a
file) are printed escaped (:func:`solver.model.values.printable`), so the line stays one line.

Other installed packages add subcommands through the entry point group ``forestcoll.commands``
(:data:`COMMAND_ENTRY_POINTS`): each entry point names a ``register(subparsers)`` function. The
desktop designer contributes ``gui`` this way, so the solver never names the GUI package.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from solver._version import __version__
from solver.model.errors import Cancelled, ForestCollError

# Built-in subcommands (modules of this package) in the order ``--help`` lists them; plugin
# commands follow. They are imported inside :func:`main`, where Ctrl-C is caught: importing
# numpy/numba/h5py takes most of the first second.
COMMANDS = [
    "info",
    "convert",
    "solve",
    "export",
    "show",
    "check_xml",
    "check_plan",
    "simulate",
    "measure",
    "study",
]

#: Entry point group through which installed packages contribute subcommands.
COMMAND_ENTRY_POINTS = "forestcoll.commands"


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2 (argparse's default)."""

    def error(self, message: str) -> None:  # noqa: D102
        from solver.model.values import printable

        self.exit(2, f"error: {printable(message)} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="forestcoll",
        description=(
            "ForestColl Designer: throughput-optimal collective schedules for heterogeneous "
            "accelerator fabrics. Run 'forestcoll COMMAND --help' for each command."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.set_defaults(func=None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    from importlib.metadata import entry_points

    for entry_point in sorted(entry_points(group=COMMAND_ENTRY_POINTS), key=lambda ep: ep.name):
        entry_point.load()(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 2 user error, 130 interrupted)."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.func is None:
            parser.print_help()
            return 2
        return int(args.func(args) or 0)
    except Cancelled:
        print("error: cancelled", file=sys.stderr)
        return 130
    except ForestCollError as exc:
        from solver.model.values import printable

        print(f"error: {printable(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except RecursionError:
        print("error: input nested too deeply to process", file=sys.stderr)
        return 2
    except MemoryError:
        print(
            "error: out of memory (the input asks for more than this machine has)", file=sys.stderr
        )
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
