"""The solver package must never load Qt (napari-style model/view boundary)."""

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import solver


def test_importing_every_solver_module_loads_no_qt():
    modules = [
        m.name
        for m in pkgutil.walk_packages(solver.__path__, prefix="solver.")
        if not m.name.endswith("__main__")
    ]
    assert "solver.model.topology" in modules
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'shiboken6', 'pyqtgraph', 'fc_gui', 'PyQt5', 'PyQt6'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"solver imported Qt modules: {out.stdout.strip()}"


def test_solver_source_never_imports_the_gui_package():
    """Static check: no ``import fc_gui``/``from fc_gui ...`` and no module named by string.

    The ``gui`` subcommand reaches the solver's CLI through an entry point instead
    (tests/cli/test_entry_points.py).
    """
    root = Path(solver.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source, filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                # importlib.import_module("fc_gui...") and friends
                names = [node.value] if node.value.startswith("fc_gui") else []
            else:
                continue
            offenders += [
                f"{path.relative_to(root.parent)}:{node.lineno} {name}"
                for name in names
                if name.split(".")[0] == "fc_gui"
            ]
    assert len(list(root.rglob("*.py"))) > 30
    assert offenders == []
