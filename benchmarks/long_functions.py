"""List the functions longer than a limit (default 100 lines) in the given packages.

A function's length is counted from its ``def`` line to its last line, docstring and
comments included (``ast`` end_lineno - lineno + 1). Nested functions are listed on their own
and also count inside their parent.

Example::

    python3 benchmarks/long_functions.py solver fc_gui
    python3 benchmarks/long_functions.py --limit 80 solver
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path


def long_functions(root: Path, limit: int) -> list[tuple[int, str]]:
    """Return ``(lines, "path:line qualified_name")`` for every function over ``limit`` lines."""
    found: list[tuple[int, str]] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found.extend(_walk(tree, path, "", limit))
    return found


def _walk(node: ast.AST, path: Path, prefix: str, limit: int):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{child.name}"
            if not isinstance(child, ast.ClassDef):
                length = child.end_lineno - child.lineno + 1
                if length > limit:
                    yield length, f"{path}:{child.lineno} {name}"
            yield from _walk(child, path, name + ".", limit)
        else:
            yield from _walk(child, path, prefix, limit)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="example: python3 benchmarks/long_functions.py solver fc_gui",
    )
    parser.add_argument("packages", nargs="+", type=Path, help="folders to scan")
    parser.add_argument(
        "--limit", type=int, default=100, help="report functions over this many lines"
    )
    args = parser.parse_args(argv)
    rows: list[tuple[int, str]] = []
    for package in args.packages:
        rows.extend(long_functions(package, args.limit))
    rows.sort(key=lambda row: (-row[0], row[1]))
    print(f"{'lines':>5}  function (over {args.limit} lines)")
    for length, where in rows:
        print(f"{length:>5}  {where}")
    print(f"total: {len(rows)} functions over {args.limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
