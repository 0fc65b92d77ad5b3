"""Forged-but-well-formed results files through every consumer (issue 21 items 1 and 5).

A lie inside a well-formed file must end as exit 2 with one ``error:`` line naming the rule it
breaks, in every command that uses the stored schedule, plan or study rows: ``show``,
``export`` (JSON and MSCCL XML), ``simulate RESULTS.h5`` and ``study --resume``; nothing is
written and nothing of the lie is printed. The random test sets one element of a stored
schedule to another legal value: the promise is exit 2 with one line, or exit 0 with an export
that verifies (the edit changed nothing that matters).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import h5py
import pytest
from forged import (
    PLAN_FORGERIES,
    SCHEDULE_FORGERIES,
    STUDY_FORGERIES,
    apply_well_formed_edit,
    well_formed_edit,
)
from hostile import SAMPLES, run_cli
from hypothesis import HealthCheck, given, settings

RING8 = SAMPLES / "ring_8.json"


@pytest.fixture(scope="module")
def work():
    folder = Path(tempfile.mkdtemp(prefix="fc-forged-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def seeds(work):
    """Real files: ring_8's allgather schedule, 4x DGX A100's compressed plan, a failure
    study of ring_8's links."""
    files = {"schedule": work / "ring8.h5", "plan": work / "dgx4.h5", "study": work / "study.h5"}
    for argv in (
        ["solve", RING8, "-o", files["schedule"]],
        ["solve", SAMPLES / "dgx_a100_4x.json", "--compressed", "-o", files["plan"]],
        ["study", "failures", RING8, "--elements", "links", "--workers", "1", "-o", files["study"]],
    ):
        code, _, err = run_cli(argv, "seed")
        assert code == 0, err
    return files


def _forged(seed: Path, forge, work: Path) -> Path:
    path = work / f"forged-{seed.name}"
    shutil.copyfile(seed, path)
    with h5py.File(path, "r+") as f:
        forge(f)
    return path


def _refused(argv, words: str, fmt: str) -> str:
    code, out, err = run_cli(argv, fmt)
    assert code == 2, (argv, out, err)
    assert words in err, (argv, err)
    return out


def _schedule_commands(path: Path, work: Path) -> list[list]:
    return [
        ["show", path],
        ["export", path, "--format", "json", "-o", work / "out.json"],
        ["export", path, "-o", work / "out.xml"],
        ["simulate", path, "-a", "forestcoll", "-s", "1M:4M"],
    ]


@pytest.mark.parametrize("name", sorted(SCHEDULE_FORGERIES))
def test_forged_schedules_are_refused_by_every_consumer(name, seeds, work):
    forge, words = SCHEDULE_FORGERIES[name]
    path = _forged(seeds["schedule"], forge, work)
    for argv in _schedule_commands(path, work):
        out = _refused(argv, words, "forged schedule")
        assert "2285.714" not in out and "verified" not in out
        assert not (work / "out.json").exists() and not (work / "out.xml").exists()


@pytest.mark.parametrize("name", sorted(PLAN_FORGERIES))
def test_forged_plans_are_refused_by_every_consumer(name, seeds, work):
    forge, words = PLAN_FORGERIES[name]
    path = _forged(seeds["plan"], forge, work)
    for argv in (
        ["show", path, "--trees", "allgather"],
        ["export", path, "-o", work / "out.xml"],
        ["export", path, "--format", "json", "-o", work / "out.json"],
    ):
        out = _refused(argv, words, "forged plan")
        assert "2666.667" not in out and "representative trees of" not in out
        assert not (work / "out.json").exists() and not (work / "out.xml").exists()


def test_float_attributes_are_never_believed(seeds, work):
    """The float twins of exact values are for other readers: a forged one changes nothing."""

    def forge(f):
        g = f["schedules/allgather"]
        g.attrs["algbw"] = g.attrs["optimal_algbw"] = 9999.0
        f["schedules/allgather/link_load/load"][...] = 7.0

    path = _forged(seeds["schedule"], forge, work)
    code, out, err = run_cli(["show", path, "--verify"], "forged float")
    assert code == 0, err
    assert "9999" not in out and "228.571" in out and "verified: schedule allgather" in out


@pytest.mark.parametrize("name", sorted(STUDY_FORGERIES))
def test_forged_study_rows_are_refused_by_resume(name, seeds, work):
    forge, words = STUDY_FORGERIES[name]
    path = _forged(seeds["study"], forge, work)
    before = path.read_bytes()
    _refused(
        [
            "study",
            "failures",
            RING8,
            "--elements",
            "links",
            "--workers",
            "1",
            "-o",
            path,
            "--resume",
        ],
        words,
        "forged study",
    )
    assert path.read_bytes() == before  # nothing appended to a file that lies


def test_text_from_a_results_file_is_printed_escaped(seeds, work):
    """Escape sequences in stored strings used to reach the terminal (clear screen, title)."""

    def forge(f):
        f.attrs["creator"] = "evil\x1b]0;owned\x07\x1b[2J"
        f["results"].move("allgather.bound", "bound\x1b[31mred")

    path = _forged(seeds["schedule"], forge, work)
    code, out, err = run_cli(["show", path], "escaped text")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert "evil\\x1b]0;owned\\x07\\x1b[2J" in out and "bound\\x1b[31mred" in out


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(edit=well_formed_edit())
def test_well_formed_edits_are_refused_or_harmless(edit, seeds, work):
    path = _forged(seeds["schedule"], lambda f: apply_well_formed_edit(f, edit), work)
    out = work / "edited.json"
    out.unlink(missing_ok=True)
    code, _, err = run_cli(["export", path, "--format", "json", "-o", out], "well-formed edit")
    if code == 0:  # it passed the verifier: the figures are the fabric's (ring_8: 1600/7)
        doc = json.loads(out.read_text())
        assert doc["optimal_algbw_exact"] == doc["algbw_exact"] == "1600/7", (edit, doc)
        assert sum(t["multiplicity"] for t in doc["trees"]) == doc["k"] * 8
    else:
        assert not out.exists()
