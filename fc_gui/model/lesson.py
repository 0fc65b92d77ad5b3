"""A lesson is a file: the lecture's fabric, the teacher's note on any step, the teacher's own
steps (a title and a text, after a given step) and the presenter settings (pure, no Qt).

File (JSON, ``.lesson.json``)::

    {"format": "forestcoll-lesson", "version": 1, "title": "...",
     "fabric": {...the fabric in the v1 format...},
     "notes": {"cut": "Ask the class where the bottleneck is first."},
     "own_steps": [{"after": "cut", "title": "Your turn", "text": "..."}],
     "text_scale": 1.5, "compare_size": 1073741824,
     "what_if": {"nodes": ["sw1"], "links": [["gpu1", "gpu2", 0]]}}

``what_if`` is what is out of service (disabled) when the lesson opens: nodes by id, links by
their ends and which of the links between those ends (0 = the first in the fabric's order).

Step keys are the lecture's (``fabric``, ``cut``, ``tree0``..., ``ring``); an own step after a
key the lecture does not have (another tree depth) goes at the end. Reading checks every field
and names the first wrong one on one line; the fabric is checked like any fabric file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from typing import Any

from fc_gui.model.lecture import COMPARE_SIZES, DEFAULT_COMPARE_SIZE, LectureStep
from solver.io import v1
from solver.io.files import atomic_write_text, read_text
from solver.model.errors import ForestCollError
from solver.model.topology import Topology

LESSON_FORMAT = "forestcoll-lesson"
LESSON_VERSION = 1
MAX_LESSON_BYTES = 16 << 20
MAX_TEXT = 5000  # characters of a note or an own step's text
MAX_TITLE = 200
MAX_OWN_STEPS = 50
TEXT_SCALES = (1.0, 1.25, 1.5, 2.0, 2.5)  # the presenter's text sizes (lecture panel)


class LessonError(ForestCollError, ValueError):
    """A lesson file that cannot be read (one line, names the file and the field)."""


@dataclass(frozen=True)
class OwnStep:
    after: str  # the lecture step it follows ("" = before the first)
    title: str
    text: str


@dataclass(frozen=True)
class Lesson:
    title: str
    topology: Topology
    notes: dict[str, str] = field(default_factory=dict)
    own_steps: tuple[OwnStep, ...] = ()
    text_scale: float = 1.5
    compare_size: int = DEFAULT_COMPARE_SIZE
    disabled_nodes: tuple[str, ...] = ()
    disabled_links: tuple[tuple[str, str, int], ...] = ()  # source, target, occurrence


def link_key(topology: Topology, index: int) -> tuple[str, str, int]:
    """(source, target, n) of ``topology.links[index]``: the n-th link between those ends."""
    ln = topology.links[index]
    n = sum(
        1
        for other in topology.links[:index]
        if (other.source, other.target) == (ln.source, ln.target)
    )
    return (ln.source, ln.target, n)


def link_index(topology: Topology, key: tuple[str, str, int]) -> int | None:
    """The index in ``topology.links`` of the link ``key`` names (None: there is none)."""
    src, dst, n = key
    seen = 0
    for i, ln in enumerate(topology.links):
        if (ln.source, ln.target) == (src, dst):
            if seen == n:
                return i
            seen += 1
    return None


def lesson_to_dict(lesson: Lesson) -> dict[str, Any]:
    return {
        "format": LESSON_FORMAT,
        "version": LESSON_VERSION,
        "title": lesson.title,
        "fabric": v1.to_dict(lesson.topology),
        "notes": {k: v for k, v in lesson.notes.items() if v.strip()},
        "own_steps": [
            {"after": s.after, "title": s.title, "text": s.text} for s in lesson.own_steps
        ],
        "text_scale": lesson.text_scale,
        "compare_size": lesson.compare_size,
        "what_if": {
            "nodes": list(lesson.disabled_nodes),
            "links": [list(k) for k in lesson.disabled_links],
        },
    }


def _text(value: Any, what: str, where: str, limit: int) -> str:
    if not isinstance(value, str):
        raise LessonError(f"{where}: {what} must be text, not {type(value).__name__}")
    if len(value) > limit:
        raise LessonError(f"{where}: {what} is longer than {limit} characters")
    return value


def lesson_from_dict(data: Any, where: str = "<lesson>") -> Lesson:
    """The lesson in ``data`` (parsed JSON); :class:`LessonError` names what is wrong."""
    if not isinstance(data, dict) or data.get("format") != LESSON_FORMAT:
        raise LessonError(f'{where}: not a lesson file ("format": "{LESSON_FORMAT}" missing)')
    if data.get("version") != LESSON_VERSION:
        raise LessonError(
            f"{where}: lesson version {data.get('version')!r} is not supported "
            f"(this designer reads version {LESSON_VERSION})"
        )
    unknown = set(data) - {
        "format",
        "version",
        "title",
        "fabric",
        "notes",
        "own_steps",
        "text_scale",
        "compare_size",
        "what_if",
    }
    if unknown:
        raise LessonError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    title = _text(data.get("title", ""), "title", where, MAX_TITLE)
    if "fabric" not in data:
        raise LessonError(f"{where}: no fabric")
    try:
        topology = v1.from_dict(data["fabric"], f"{where}: fabric")
    except ForestCollError as exc:
        raise LessonError(str(exc)) from None
    notes_raw = data.get("notes", {})
    if not isinstance(notes_raw, dict):
        raise LessonError(f"{where}: notes must be an object of step -> text")
    notes = {
        _text(k, "a note's step", where, 40): _text(v, f"the note of step {k!r}", where, MAX_TEXT)
        for k, v in notes_raw.items()
    }
    steps_raw = data.get("own_steps", [])
    if not isinstance(steps_raw, list) or len(steps_raw) > MAX_OWN_STEPS:
        raise LessonError(f"{where}: own_steps must be a list of at most {MAX_OWN_STEPS} steps")
    own = []
    for i, s in enumerate(steps_raw):
        if not isinstance(s, dict) or set(s) - {"after", "title", "text"}:
            raise LessonError(f"{where}: own step {i + 1} must have after, title and text only")
        own.append(
            OwnStep(
                _text(s.get("after", ""), f"own step {i + 1}'s after", where, 40),
                _text(s.get("title", ""), f"own step {i + 1}'s title", where, MAX_TITLE),
                _text(s.get("text", ""), f"own step {i + 1}'s text", where, MAX_TEXT),
            )
        )
    scale = data.get("text_scale", 1.5)
    if scale not in TEXT_SCALES:
        raise LessonError(f"{where}: text_scale must be one of {list(TEXT_SCALES)}, not {scale!r}")
    size = data.get("compare_size", DEFAULT_COMPARE_SIZE)
    if size not in COMPARE_SIZES:
        raise LessonError(f"{where}: compare_size must be one of {list(COMPARE_SIZES)}")
    what_if = data.get("what_if", {})
    if not isinstance(what_if, dict) or set(what_if) - {"nodes", "links"}:
        raise LessonError(f"{where}: what_if must be an object with nodes and links")
    ids = {n.id for n in topology.nodes}
    nodes = what_if.get("nodes", [])
    if not isinstance(nodes, list) or any(not isinstance(n, str) or n not in ids for n in nodes):
        raise LessonError(f"{where}: what_if nodes must be ids of the fabric's nodes")
    links = []
    for k in what_if.get("links", []) if isinstance(what_if.get("links", []), list) else [None]:
        ok = (
            isinstance(k, list)
            and len(k) == 3
            and all(isinstance(x, str) for x in k[:2])
            and isinstance(k[2], int)
            and not isinstance(k[2], bool)
            and k[2] >= 0
        )
        if not ok or link_index(topology, (k[0], k[1], k[2])) is None:
            raise LessonError(
                f"{where}: what_if link {k!r} is not a link of the fabric ([source, target, n])"
            )
        links.append((k[0], k[1], k[2]))
    return Lesson(
        title, topology, notes, tuple(own), float(scale), int(size), tuple(nodes), tuple(links)
    )


def read_lesson(path: str | os.PathLike) -> Lesson:
    text = read_text(path, MAX_LESSON_BYTES, "a lesson", LessonError)
    try:
        data = v1.parse_json_exact(text, str(path))
    except ForestCollError as exc:
        raise LessonError(str(exc)) from None
    return lesson_from_dict(data, str(path))


def write_lesson(path: str | os.PathLike, lesson: Lesson) -> None:
    """Write atomically (a failed write leaves no half file)."""
    atomic_write_text(path, json.dumps(lesson_to_dict(lesson), indent=1, ensure_ascii=False) + "\n")


def apply_lesson(
    steps: list[LectureStep], notes: dict[str, str], own_steps: tuple[OwnStep, ...]
) -> list[LectureStep]:
    """The lecture's ``steps`` with each teacher's note as a last paragraph ("Note: ...") and
    the own steps inserted after theirs (showing the same layers and tree level)."""
    out: list[LectureStep] = []
    keys = {s.key for s in steps}
    pending = [s for s in own_steps if s.after == ""]

    def own(step: OwnStep, like: LectureStep | None, i: int) -> LectureStep:
        base = like if like is not None else (steps[0] if steps else None)
        layers = base.layers if base is not None else frozenset()
        return LectureStep(
            f"own{i}",
            base.part if base is not None else "",
            step.title,
            tuple(p for p in step.text.split("\n\n") if p.strip()) or ("",),
            layers,
            tree_level=base.tree_level if like is not None else -1,
        )

    numbered = {id(s): i for i, s in enumerate(own_steps)}
    for s in pending:
        out.append(own(s, None, numbered[id(s)]))
    for step in steps:
        note = notes.get(step.key, "").strip()
        out.append(replace(step, paragraphs=step.paragraphs + (f"Note: {note}",)) if note else step)
        for s in own_steps:
            if s.after == step.key:
                out.append(own(s, step, numbered[id(s)]))
    for s in own_steps:
        if s.after and s.after not in keys:
            out.append(own(s, steps[-1] if steps else None, numbered[id(s)]))
    return out
