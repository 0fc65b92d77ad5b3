"""Subcommands contributed by other packages: ``gui`` comes from fc_gui through an entry point."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

from solver.cli import COMMAND_ENTRY_POINTS, build_parser, main

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _subcommands(parser) -> list[str]:
    (action,) = [a for a in parser._actions if a.dest == "command"]
    return list(action.choices)


def test_pyproject_declares_the_gui_command():
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]
    assert declared[COMMAND_ENTRY_POINTS] == {"gui": "fc_gui.cli:register"}


def test_installed_metadata_has_the_gui_entry_point():
    """Fails when the installed metadata is stale: re-run ``pip install -e .``."""
    found = {ep.name: ep.value for ep in entry_points(group=COMMAND_ENTRY_POINTS)}
    assert found.get("gui") == "fc_gui.cli:register"


def test_cli_discovers_gui_after_its_own_commands():
    parser = build_parser()
    commands = _subcommands(parser)
    assert {"info", "solve", "export", "simulate", "measure", "gui"} <= set(commands)
    assert commands[-1] == "gui"


def test_registering_gui_loads_no_qt():
    code = (
        "import sys\n"
        "from solver.cli import build_parser\n"
        "build_parser()\n"
        "assert 'fc_gui.cli' in sys.modules\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'shiboken6', 'pyqtgraph', 'fc_gui.app')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_gui_without_pyside6_says_how_to_install(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "PySide6", None)  # what `import PySide6` sees when absent
    code = main(["gui", "--screenshot", str(tmp_path / "x.png")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: the designer needs PySide6")
    assert "python3 -m pip install 'PySide6-Essentials>=6.6" in err
    assert "'pyqtgraph" not in err  # installed, so not asked for
    assert not (tmp_path / "x.png").exists()
