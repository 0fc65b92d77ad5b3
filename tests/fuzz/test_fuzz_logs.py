"""Hostile nccl-tests logs through ``forestcoll measure import`` (issue 21's log items).

Fixed cases first (each was a traceback or a 28 s parse before): ``#wrong`` = inf / 1e400, a
5000-digit ``# Rank``, 160 KB of blank lines after the table, a UTF-8 BOM. Then hypothesis
combines the shapes real logs take (launcher prefixes, NCCL INFO lines spliced into rows, a
document around the table, several runs in one file) with hostile cells and padding. The
promise is :func:`hostile.run_cli`'s: exit 0, or exit 2 with one ``error:`` line, in bounded CPU
time and memory.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hostile import DATA, HOSTILE_NUMBERS, HOSTILE_STRINGS, SAMPLES, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SEED = DATA / "nccl_tests_allgather_2xmi250.log"
FABRIC = SAMPLES / "mi250_2x.json"
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
N = int(os.environ.get("FC_FUZZ_SOAK_EXAMPLES", "600")) if PROFILE in ("soak", "long") else 30
FUZZ = settings(
    max_examples=N,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=PROFILE not in ("soak", "long"),
)


@pytest.fixture(scope="module")
def work():
    folder = Path(tempfile.mkdtemp(prefix="fc-fuzz-logs-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _import(path: Path, work: Path, *extra: str) -> tuple[int, str, str]:
    out = work / "measured.h5"
    out.unlink(missing_ok=True)
    return run_cli(["measure", "import", path, "-t", FABRIC, "-o", out, *extra], "nccl-tests log")


def _row_index(lines: list[str]) -> int:
    return next(i for i, ln in enumerate(lines) if ln.split()[:1] == ["1048576"])


def _with_cell(value: str, cell: int = 8) -> str:
    lines = SEED.read_text().splitlines()
    i = _row_index(lines)
    cells = lines[i].split()
    cells[cell] = value
    lines[i] = "  ".join(cells)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "name, text, code",
    [
        ("wrong-inf", _with_cell("inf"), 2),
        ("wrong-1e400", _with_cell("1e400"), 2),
        ("wrong-1e+06", _with_cell("1e+06"), 0),  # %g count: the row is dropped, not a crash
        (
            "rank-5000-digits",
            SEED.read_text().replace("Rank  0 ", "Rank " + "7" * 5000 + " ", 1),
            2,
        ),
        ("blank-tail", SEED.read_text() + "\n" * 160_000, 0),
        ("space-tail", SEED.read_text() + " \n" * 80_000 + "\t" * 80_000, 0),
        ("bom", "\ufeff" + SEED.read_text(), 0),
        ("bom-json", "\ufeff" + (DATA / "nccl_tests_allgather_2xmi250.json").read_text(), 0),
        ("long-line", SEED.read_text() + "a" * 2_000_000 + "\n", 0),
        ("long-host-info", SEED.read_text() + "x" * 1_000_000 + ":1:1 [0] NCCL INFO y\n", 0),
    ],
)
def test_fixed_hostile_logs(name, text, code, work):
    path = work / f"{name}.log"
    path.write_text(text, encoding="utf-8")
    got, out, err = _import(path, work)
    assert got == code, (name, err[-500:])
    if code == 0:  # the 1 MiB row with a %g #wrong count is dropped and named
        kept = 10 if name == "wrong-1e+06" else 11
        assert f"allgather: {kept} sizes" in out
        assert ("dropped 1 row(s) with #wrong != 0: 1048576" in out) == (kept == 10)


PREFIXES = ["", "[1,0]<stdout>:", "[0] ", "3: ", "(head, rank=0, pid=1) [1,0]<stdout>:"]


@st.composite
def hostile_real_shape(draw) -> str:
    lines = SEED.read_text().splitlines()
    rows = [i for i, ln in enumerate(lines) if ln.strip()[:1].isdigit()]
    for _ in range(draw(st.integers(0, 2))):  # hostile cells
        i = draw(st.sampled_from(rows))
        cells = lines[i].split()
        j = draw(st.integers(0, len(cells) - 1))
        cells[j] = draw(st.sampled_from(HOSTILE_NUMBERS + HOSTILE_STRINGS))
        lines[i] = "  ".join(cells)
    if draw(st.booleans()):  # an INFO line spliced into a row
        i = draw(st.sampled_from(rows))
        cut = draw(st.integers(0, len(lines[i])))
        info = "h:1:2 [0] NCCL INFO " + draw(
            st.sampled_from(
                [
                    "Connected all rings",
                    "NCCL_ALGO set by environment to Ring",
                    "16 coll channels, 0 collnet channels, 16 nvls channels",
                    "9" * 5000,
                ]
            )
        )
        lines[i : i + 1] = [lines[i][:cut] + info, lines[i][cut:]]
    tag = draw(st.sampled_from(PREFIXES))
    text = "".join(tag + ln + "\n" for ln in lines)
    shape = draw(st.integers(0, 4))
    if shape == 1:
        text = "# Doc\n\n1. run it\n```\n" + text + "```\n2. done\n"
    elif shape == 2:
        text = text + text.replace(
            "all_gather_perf",
            draw(
                st.sampled_from(
                    ["all_reduce_perf", "broadcast_perf", "all_gather_perf", "reduce_scatter_perf"]
                )
            ),
        )
    elif shape == 3:
        text = text + draw(st.sampled_from(["\n", " ", "\r\n", "#\n"])) * draw(
            st.sampled_from([1000, 50_000, 160_000])
        )
    elif shape == 4:
        text = "\ufeff" + text
    return text


@FUZZ
@given(text=hostile_real_shape(), coll=st.sampled_from([None, "allgather", "allreduce"]))
def test_hostile_real_shapes(text, coll, work):
    path = work / "shaped.log"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _import(path, work, *(["-c", coll] if coll else []))
