"""A lesson is a file: save the lecture (fabric, the teacher's notes and own steps, text size),
open it again, and bad lesson files are one-line errors."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QSettings
from results_fixtures import FakeSolver, ring4

from fc_gui.controllers.lecture import install as install_lecture
from fc_gui.controllers.results import install
from fc_gui.main_window import MainWindow
from fc_gui.model.lecture import LectureStep
from fc_gui.model.lesson import (
    Lesson,
    LessonError,
    OwnStep,
    apply_lesson,
    lesson_to_dict,
    read_lesson,
    write_lesson,
)


def _window(qtbot, tmp_path, name):
    settings = QSettings(str(tmp_path / f"{name}.ini"), QSettings.Format.IniFormat)
    w = MainWindow(ring4(), settings=settings, state_dir=tmp_path / name, install_results=False)
    w.results_controller = install(w, solve_fn=FakeSolver(0.01), warmup=False)
    lc = w.lecture_controller = install_lecture(w)
    w.resize(1300, 800)
    w.show()
    qtbot.waitExposed(w)
    return w, lc


def _close(w, lc):
    lc.exit()
    lc.task.stop(5000)
    w.results_controller.shutdown()
    w.undo_stack.setClean()
    w.close()


def test_save_a_lesson_with_notes_and_own_steps_and_open_it_again(qtbot, tmp_path):
    w, lc = _window(qtbot, tmp_path, "a")
    try:
        assert lc.start()
        qtbot.waitUntil(lambda: len(lc.steps) == 7, timeout=10000)
        lc.next()  # the cut
        assert lc.step.key == "cut"
        lc.edit_note("Ask the class first: where is the bottleneck?")
        assert "Note: Ask the class first" in lc.panel.plain_text()
        lc.add_step("Your turn", "Which link would you upgrade?\n\nWhy that one?")
        assert lc.step.key == "own0" and lc.step.title == "Your turn"
        assert lc.steps[lc.index - 1].key == "cut" and len(lc.steps) == 8
        assert "Which link would you upgrade?" in lc.panel.plain_text()
        assert lc.panel.remove_step_button.isVisible()
        lc.add_step("Spare", "to be removed")
        assert lc.step.key == "own1" and len(lc.steps) == 9
        lc.panel.remove_step_button.click()
        assert len(lc.steps) == 8 and lc.step.key == "own0"
        assert [s.title for s in lc.own_steps] == ["Your turn"]
        lc.go(0)
        assert not lc.panel.remove_step_button.isVisible()  # a lecture step stays
        lc.remove_step()
        assert len(lc.steps) == 8
        lc.go(2)
        lc.panel.set_scale(2.0)
        # a what-if: one link out of service when the lesson opens
        doc = w.document
        uid = next(u for u, ln in doc.links.items() if {ln.source, ln.target} == {"gpu1", "gpu2"})
        slow = doc.links[uid]
        doc.set_disabled((), [uid], True)
        out = lc.save_lesson(tmp_path / "ring.lesson.json")
        assert out is not None
        data = json.loads(out.read_text())
        assert data["format"] == "forestcoll-lesson" and data["text_scale"] == 2.0
        assert data["notes"] == {"cut": "Ask the class first: where is the bottleneck?"}
        assert data["own_steps"] == [
            {
                "after": "cut",
                "title": "Your turn",
                "text": "Which link would you upgrade?\n\nWhy that one?",
            }
        ]
        assert len(data["fabric"]["nodes"]) == 4
        assert data["what_if"] == {"nodes": [], "links": [[slow.source, slow.target, 0]]}
    finally:
        _close(w, lc)
    # another window opens it: same fabric, same steps, same text size
    w2, lc2 = _window(qtbot, tmp_path, "b")
    try:
        w2.file_actions.new_fabric(__import__("solver.io.templates", fromlist=["ring"]).ring(6))
        w2.undo_stack.setClean()
        assert lc2.open_lesson(tmp_path / "ring.lesson.json")
        qtbot.waitUntil(lambda: len(lc2.steps) == 8, timeout=10000)
        assert len(w2.document.nodes) == 4 and lc2.panel.scale == 2.0
        (off,) = w2.document.disabled_links  # the what-if, as an undoable edit
        assert {w2.document.links[off].source, w2.document.links[off].target} == {"gpu1", "gpu2"}
        assert w2.undo_stack.canUndo()
        assert [s.key for s in lc2.steps][1:3] == ["cut", "own0"]
        lc2.go(1)
        assert "Note: Ask the class first" in lc2.panel.plain_text()
    finally:
        _close(w2, lc2)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.update(format="other"), "not a lesson file"),
        (lambda d: d.update(version=9), "version 9"),
        (lambda d: d.update(text_scale=7), "text_scale"),
        (
            lambda d: d.update(own_steps=[{"after": "cut", "title": 3, "text": ""}]),
            "title must be text",
        ),
        (lambda d: d.update(notes={"cut": "x" * 6000}), "longer than"),
        (
            lambda d: d["fabric"]["links"].append(
                {"source": "gpu0", "target": "nope", "bandwidth": 1}
            ),
            "nope",
        ),
        (lambda d: d.update(extra=1), "unknown field 'extra'"),
        (lambda d: d.update(what_if={"nodes": ["gpu9"]}), "what_if nodes"),
        (lambda d: d.update(what_if={"links": [["gpu0", "gpu1", 5]]}), "what_if link"),
    ],
)
def test_bad_lesson_files_are_one_line_errors(tmp_path, edit, message):
    lesson = Lesson("ring", ring4(), {"cut": "hello"}, (OwnStep("cut", "t", "x"),))
    data = lesson_to_dict(lesson)
    edit(data)
    path = tmp_path / "bad.lesson.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LessonError, match=message) as err:
        read_lesson(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)
    path.write_text("{not json")
    with pytest.raises(LessonError):
        read_lesson(path)
    good = tmp_path / "good.lesson.json"
    write_lesson(good, lesson)
    assert read_lesson(good) == lesson


def test_own_steps_go_after_their_step_or_at_the_end():
    steps = [
        LectureStep(k, "a", k, ("p",), frozenset({"cut"}), tree_level=i - 2 if i > 1 else -1)
        for i, k in enumerate(("fabric", "cut", "tree0", "ring"))
    ]
    own = (OwnStep("", "first", "a"), OwnStep("tree0", "mine", "b"), OwnStep("tree9", "late", "c"))
    out = apply_lesson(steps, {"ring": "end here"}, own)
    assert [s.key for s in out] == ["own0", "fabric", "cut", "tree0", "own1", "ring", "own2"]
    assert out[4].tree_level == out[3].tree_level and out[4].layers == out[3].layers
    assert out[5].paragraphs[-1] == "Note: end here"
