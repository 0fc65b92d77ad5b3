"""``forestcoll gui TOPO --solve --screenshot out.png``: open, solve, render, exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication
from results_fixtures import FakeSolver, failing_solver, ring4

from fc_gui.controllers.results import install
from fc_gui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "sample_topologies" / "dgx_a100_1x.json"


def run_gui(*args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    env.pop("DISPLAY", None)
    return subprocess.run(
        [sys.executable, "-m", "solver.cli", "gui", *args],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def image_stats(path: Path) -> tuple[int, int, int]:
    """(width, height, number of distinct colours on a sampling grid)."""
    img = QImage(str(path))
    assert not img.isNull(), f"{path} is not a readable image"
    step = 7
    colors = {
        img.pixel(x, y) for x in range(0, img.width(), step) for y in range(0, img.height(), step)
    }
    return img.width(), img.height(), len(colors)


def test_cli_solve_and_screenshot(tmp_path):
    out = tmp_path / "shot.png"
    proc = run_gui(str(SAMPLE), "--solve", "--screenshot", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    w, h, colors = image_stats(out)
    assert w >= 800 and h >= 500
    assert colors > 50, "screenshot looks blank"


def test_cli_screenshot_without_solve(tmp_path):
    out = tmp_path / "editor.png"
    proc = run_gui(str(SAMPLE), "--screenshot", str(out))
    assert proc.returncode == 0, proc.stderr
    assert image_stats(out)[2] > 20


def test_cli_bad_file_exits_2_with_one_line_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "forestcoll-topology", "version": 1, "nodes": [')
    proc = run_gui(str(bad), "--solve", "--screenshot", str(tmp_path / "x.png"))
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "bad.json" in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "x.png").exists()


# ---------------------------------------------------------------------- in process
@pytest.fixture
def batch_window(qtbot, tmp_path, monkeypatch):
    exits: list[int] = []
    monkeypatch.setattr(QApplication, "exit", staticmethod(lambda code=0: exits.append(code)))
    windows = []

    def make(solve_fn):
        settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
        w = MainWindow(ring4(), settings=settings, state_dir=tmp_path, install_results=False)
        w.results_controller = install(w, solve_fn=solve_fn, warmup=False)
        w.resize(1000, 700)
        w.show()
        windows.append(w)
        return w

    yield make, exits
    for w in windows:
        w.results_controller.shutdown()
        w.undo_stack.setClean()
        w.close()


def test_run_batch_solves_then_saves_and_exits_0(qtbot, tmp_path, batch_window):
    make, exits = batch_window
    w = make(FakeSolver(0.05))
    out = tmp_path / "batch.png"
    w.results_controller.batch.run(solve=True, screenshot=str(out))
    qtbot.waitUntil(lambda: bool(exits), timeout=5000)
    assert exits == [0]
    assert w.results_controller.state.schedule is not None
    assert image_stats(out)[2] > 20


def test_run_batch_failed_solve_exits_2_without_dialog(
    qtbot, tmp_path, batch_window, capsys, monkeypatch
):
    from PySide6.QtWidgets import QMessageBox

    dialogs = []
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda *a, **k: dialogs.append(a)))
    make, exits = batch_window
    w = make(failing_solver("no schedule: fabric too odd"))
    out = tmp_path / "never.png"
    w.results_controller.batch.run(solve=True, screenshot=str(out))
    qtbot.waitUntil(lambda: bool(exits), timeout=5000)
    assert exits == [2]
    assert dialogs == []
    assert "error: no schedule: fabric too odd" in capsys.readouterr().err
    assert not out.exists()


def test_run_batch_unwritable_screenshot_exits_2(qtbot, tmp_path, batch_window, capsys):
    make, exits = batch_window
    w = make(FakeSolver(0.01))
    (tmp_path / "plain").write_text("a file, not a folder")
    w.results_controller.batch.run(solve=False, screenshot=str(tmp_path / "plain" / "x.png"))
    qtbot.waitUntil(lambda: bool(exits), timeout=5000)
    assert exits == [2]
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "cannot write" in err and "not a folder" in err


def test_run_batch_unexpected_solver_error_is_one_line(qtbot, batch_window, capsys, monkeypatch):
    """A non-ForestColl error (a bug) in a batch run: one error line, exit 2, no traceback
    (``forestcoll gui --solve`` turns tracebacks off: fc_gui/app.py)."""
    from fc_gui.controllers import background

    monkeypatch.setattr(background, "PRINT_TRACEBACKS", False)
    make, exits = batch_window
    w = make(FakeSolver(0.01, RuntimeError("kaboom")))
    w.results_controller.batch.run(solve=True)
    qtbot.waitUntil(lambda: bool(exits), timeout=5000)
    err = capsys.readouterr().err
    assert exits == [2]
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "kaboom" in lines[0], err


@pytest.mark.parametrize(
    "name, text",
    [
        (
            "bw.json",
            '{"format": "forestcoll-topology", "version": 1, "nodes": [{"id": "a", '
            '"kind": "compute"}, {"id": "b", "kind": "compute"}], "links": [{"source": '
            '"a", "target": "b", "bandwidth": 1e999999999}]}',
        ),
        ("deep.json", '{"format": "forestcoll-topology", "x": ' + "[" * 3000 + "]" * 3000 + "}"),
        ("deep.xml", "<system><cpu>" + "<pci>" * 2000 + "</pci>" * 2000 + "</cpu></system>"),
    ],
)
def test_cli_hostile_file_in_batch_mode_is_one_line(name, text, tmp_path):
    bad = tmp_path / name
    bad.write_text(text)
    proc = run_gui(str(bad), "--solve", "--screenshot", str(tmp_path / "x.png"))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}"), proc.stderr
