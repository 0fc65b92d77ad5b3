"""Every third-party module the project imports is declared in pyproject.toml.

A clean virtualenv has exactly what pyproject declares: a module imported by ``solver/`` or
``fc_gui/`` must come from ``[project] dependencies`` (else ``forestcoll`` dies on a user's machine);
one imported by ``tests/`` or ``benchmarks/`` may also come from the ``test`` extra. A module counts
as declared when the distribution that installs it is declared, or is pulled in by a declared
extra (``dask[distributed]`` declares ``distributed``).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_FOLDERS = ("solver", "fc_gui")
DEV_FOLDERS = ("tests", "benchmarks")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement(req: str) -> tuple[str, list[str]]:
    """(distribution name, extras) of a PEP 508 requirement string."""
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", req)
    assert m, f"unreadable requirement {req!r}"
    return _norm(m.group(1)), [e.strip() for e in (m.group(2) or "").split(",") if e.strip()]


def _declared(reqs: list[str]) -> set[str]:
    """Distribution names the requirements install directly or through a named extra."""
    out: set[str] = set()
    for req in reqs:
        name, extras = _requirement(req)
        out.add(name)
        for extra in extras:
            for sub in metadata.requires(name) or []:
                if re.search(rf"extra\s*==\s*['\"]{re.escape(extra)}['\"]", sub):
                    out.add(_requirement(sub)[0])
    return out


def _own_modules() -> set[str]:
    """Top-level names that are the project's: its packages and the helper modules and folders
    of tests/ and benchmarks/ (imported by their bare names under pytest's rootdir)."""
    own = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    for folder in DEV_FOLDERS:
        for p in (ROOT / folder).rglob("*"):
            own.add(p.stem if p.suffix == ".py" else p.name)
    return own | set(DEV_FOLDERS)


def imported_modules(folder: str) -> dict[str, Path]:
    """Third-party top-level modules imported anywhere under ``folder``, with a file for each."""
    own = _own_modules()
    found: dict[str, Path] = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in own or top == "__future__":
                    continue
                found.setdefault(top, path.relative_to(ROOT))
    return found


def undeclared(folders: tuple[str, ...], declared: set[str]) -> list[str]:
    dists = metadata.packages_distributions()
    problems = []
    for folder in folders:
        for module, path in imported_modules(folder).items():
            providers = {_norm(d) for d in dists.get(module, [])}
            if not providers:
                problems.append(
                    f"{module} (imported in {path}) is installed by no distribution here "
                    f"and declared nowhere in pyproject.toml"
                )
            elif not providers & declared:
                problems.append(
                    f"{module} (imported in {path}, from {', '.join(sorted(providers))}) "
                    f"is not declared in pyproject.toml"
                )
    return problems


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_runtime_imports_are_runtime_dependencies():
    problems = undeclared(RUNTIME_FOLDERS, _declared(_project()["dependencies"]))
    assert not problems, "\n".join(problems)


def test_test_and_benchmark_imports_are_declared():
    project = _project()
    declared = _declared(project["dependencies"] + project["optional-dependencies"]["test"])
    problems = undeclared(DEV_FOLDERS, declared)
    assert not problems, "\n".join(problems)


def test_the_check_names_an_undeclared_import(tmp_path, monkeypatch):
    """The walk above really sees imports: a file importing a module nothing declares is named."""
    pkg = tmp_path / "solver"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "uses_pip.py").write_text("import numpy\nfrom pip._internal import main\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    problems = undeclared(("solver",), {"numpy"})
    assert len(problems) == 1 and problems[0].startswith("pip (imported in solver/uses_pip.py")
