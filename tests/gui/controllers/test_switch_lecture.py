"""Lecture step (e): why a switch that adds changes allreduce but not allgather, with the open
fabric's figures; only on fabrics with a reducing switch."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtCore import QSettings, Qt

from fc_gui.controllers.lecture import install as install_lecture
from fc_gui.controllers.results import install
from fc_gui.main_window import MainWindow
from fc_gui.model import switch_bounds as SB
from fc_gui.model.lecture import LecturePlan, lecture_steps, pick_tree
from solver.algorithm.pipeline import solve
from solver.io import templates as T
from solver.model.topology import MULTICAST


def _plan(topo):
    s = solve(topo, "allgather")
    return LecturePlan(s, pick_tree(s), switch_bounds=SB.compute(topo))


def test_one_box_step_has_the_three_figures_of_both_collectives():
    steps = lecture_steps(_plan(T.make("dgx_h100_rail", n=1)))
    step = steps[-1]
    assert step.key == "switch" and step.part == "e" and len(steps) > 1
    assert step.table[1] == ("allgather", "514.29 GB/s", "514.29 GB/s", "514.29 GB/s")
    assert step.table[2] == ("allreduce", "257.14 GB/s", "450 GB/s", "450 GB/s")
    text = " ".join(step.paragraphs)
    assert "b0.nvsw adds what it receives" in text
    assert "allgather optimum stays 514.29 GB/s" in text
    assert "b0.nvsw reduces and multicasts: allreduce 450 GB/s instead of 257.14" in text
    assert "exact" in text and "= 450 GB/s" in step.formula


def test_before_the_figures_arrive_the_step_says_so():
    s = solve(T.make("dgx_h100_rail", n=1), "allgather")
    step = lecture_steps(LecturePlan(s, pick_tree(s)))[-1]
    assert step.key == "switch" and not step.table
    assert "being computed in the background" in step.paragraphs[-1]


def test_only_on_a_fabric_with_a_reducing_switch():
    assert all(s.key != "switch" for s in lecture_steps(_plan(T.make("dgx_a100", n=1))))
    topo = T.make("dgx_h100_rail", n=1)
    nodes = tuple(
        replace(n, capabilities=frozenset({MULTICAST})) if n.capabilities else n for n in topo.nodes
    )
    only_cast = replace(topo, nodes=nodes)
    assert all(s.key != "switch" for s in lecture_steps(_plan(only_cast)))


@pytest.fixture
def lecture(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(
        T.make("dgx_h100_rail", n=2), settings=settings, state_dir=tmp_path, install_results=False
    )
    w.results_controller = install(w, solve_fn=solve, warmup=False)
    lc = w.lecture_controller = install_lecture(w)
    w.resize(1300, 800)
    w.show()
    qtbot.waitExposed(w)
    yield lc
    lc.exit()
    lc.task.stop(5000)
    w.results_controller.shutdown()
    w.undo_stack.setClean()
    w.close()


def test_the_window_lecture_ends_with_the_switch_step_of_the_open_fabric(qtbot, lecture):
    lc = lecture
    assert lc.start()
    # the step is there at once; its figures arrive from the background task
    qtbot.waitUntil(lambda: bool(lc.steps) and lc.steps[-1].key == "switch", timeout=60000)
    qtbot.waitUntil(lambda: bool(lc.steps[-1].table), timeout=30000)
    lc.go(len(lc.steps) - 1)
    assert lc.panel.counter.text().endswith("· (e)")
    text = lc.panel.plain_text()
    assert "b0.nvsw, b1.nvsw reduce and multicast: allreduce 400 GB/s instead of 266.67" in text
    assert "533.33" in text  # the allgather optimum of 2x DGX H100 rail, unchanged
    # Left goes back to the ring step; the switch step is the last
    qtbot.keyClick(lc.window.canvas, Qt.Key.Key_Left)
    assert lc.step.key == "ring" and lc.panel.next_button.isEnabled()
