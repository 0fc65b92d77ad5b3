"""The solver package must never load Qt (napari-style model/view boundary)."""

import pkgutil
import subprocess
import sys

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
