"""The whole-collective timeline: every transfer of every tree chunk by chunk (the model checked
against the schedule's own numbers), and the Timeline panel playing it forward and back."""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

import pytest
from PySide6.QtCore import QSettings
from results_fixtures import FakeSolver, ring4

import solver
from fc_gui.model.timeline import MAX_EVENTS, collective_timeline
from solver.io.templates import dgx_a100, ring


@pytest.mark.parametrize("chunks", [1, 3])
def test_every_gpu_gets_every_shard_exactly_once_over_the_rounds(chunks):
    topo = dgx_a100(2)
    schedule = solver.solve(topo)
    size = 1 << 24
    tl = collective_timeline(schedule, chunks=chunks, size=size)
    gpus = topo.compute_ids
    shard = Fraction(size, len(gpus))
    got: dict[tuple[str, str], Fraction] = defaultdict(Fraction)
    for e in tl.events:
        got[(e.root, e.dst)] += e.bytes
    # every GPU receives exactly M/N bytes of every other GPU's shard, none of its own
    assert got == {(r, v): shard for r in gpus for v in gpus if v != r}
    # pipelining: chunk c of a tree crosses its depth-d edges at round c + d; a node forwards
    # a chunk only after it received it
    arrived = {}
    for e in tl.events:
        arrived[(e.tree, e.chunk, e.dst)] = e.round
    for e in tl.events:
        if e.src != tl.trees[e.tree][1].root:
            assert arrived[(e.tree, e.chunk, e.src)] < e.round
    # who holds gpu0's shard: gpu0 from round 1 on, then every GPU its transfers reached
    first = {}
    for e in tl.events:
        if e.root == gpus[0]:
            first.setdefault(e.dst, e.round)
    for r in range(1, tl.rounds + 1):
        assert tl.holders(r, gpus[0]) == {gpus[0]} | {v for v, at in first.items() if at <= r}
    assert tl.holders(tl.rounds, gpus[0]) >= set(gpus)
    heights = [max(t.depth_of().values()) for _, t in tl.trees]
    assert tl.rounds == max(heights) + chunks - 1
    assert len(tl.events) == chunks * sum(len(t.edges) for _, t in tl.trees)
    text = tl.describe(0)
    assert "round 1" in text and "chunk 1 of" in text and "hop " in text and " B)" in text


def test_allreduce_runs_reduce_scatter_rounds_first_and_limits():
    schedule = solver.solve(ring(4), collective="allreduce")
    tl = collective_timeline(schedule, chunks=2)
    rs = [e.round for e in tl.events if e.phase == "reduce-scatter"]
    ag = [e.round for e in tl.events if e.phase == "allgather"]
    assert rs and ag and max(rs) < min(ag)
    with pytest.raises(ValueError, match="chunks"):
        collective_timeline(schedule, chunks=0)
    big = solver.solve(dgx_a100(2))
    edges = sum(len(t.edges) for _, t in big.all_trees())
    with pytest.raises(ValueError, match="fewer chunks"):
        collective_timeline(big, chunks=MAX_EVENTS // edges + 1)


def test_timeline_panel_plays_forward_and_back(qtbot, tmp_path):
    from fc_gui.controllers.results import install
    from fc_gui.controllers.timeline import TimelineController
    from fc_gui.main_window import MainWindow

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(ring4(), settings=settings, state_dir=tmp_path, install_results=False)
    w.results_controller = install(w, solve_fn=FakeSolver(0.01), warmup=False)
    rc = w.results_controller
    tc = TimelineController(w, rc.state, rc.overlays, interval_ms=20)
    w.show()
    try:
        dock = tc.dock
        assert not dock.play_button.isEnabled() and "Solve" in dock.round_label.text()
        w.results_controller.solving.solve()
        qtbot.waitUntil(lambda: tc.timeline is not None, timeout=5000)
        tl = tc.timeline
        assert dock.table.rowCount() == len(tl.events) and tl.rounds >= 1
        dock.step_button.click()
        assert tc.round == 1 and dock.slider.value() == 1
        assert tc.overlay.items  # the round's transfers are drawn
        assert w.results_controller.overlays.dimmer.dimmed  # the other layers fade
        assert f"Round 1 of {tl.rounds}: {len(tl.at(1))} transfers" in dock.round_label.text()
        dock.back_button.click()
        assert tc.round == 0 and not w.results_controller.overlays.dimmer.dimmed
        dock.back_button.click()
        assert tc.round == 0  # not before the start
        dock.play_button.click()
        assert dock.play_button.text() == "Pause"
        qtbot.waitUntil(lambda: tc.round == tl.rounds and not tc.timer.isActive(), timeout=5000)
        assert dock.play_button.text() == "Play"
        # clicking a transfer says what it moves and draws it
        dock.table.selectRow(0)
        assert dock.detail.text() == tl.describe(0) and tc.picked == 0
        # one GPU's shard only: its transfers listed and drawn
        dock.root_box.setCurrentIndex(dock.root_box.findData("gpu2"))
        assert tc.root == "gpu2" and dock.table.rowCount() == sum(
            1 for e in tl.events if e.root == "gpu2"
        )
        assert {dock.table.item(r, 1).text() for r in range(dock.table.rowCount())} == {"gpu2"}
        tc.go_to(1)
        assert all(tl.events[i].root == "gpu2" for i in tc.current()) and tc.current()
        dock.table.selectRow(0)
        first = next(i for i, e in enumerate(tl.events) if e.root == "gpu2")
        assert tc.picked == first and dock.detail.text() == tl.describe(first)
        dock.root_box.setCurrentIndex(0)
        assert dock.table.rowCount() == len(tl.events)
        # more chunks: more transfers
        dock.chunks_box.setValue(2 * tl.chunks)
        assert len(tc.timeline.events) == 2 * len(tl.events) and tc.round == 0
        # no result: cleared
        w.results_controller.clear_results()
        assert tc.timeline is None and dock.table.rowCount() == 0 and not tc.overlay.items
    finally:
        w.results_controller.shutdown()
        w.undo_stack.setClean()
        w.close()
