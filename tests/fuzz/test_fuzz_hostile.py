"""Fuzzing every input format through the real command line (issue 13).

For each format, hypothesis builds hostile variants of real seed files (see ``hostile.py``) and
runs ``forestcoll`` in-process on them. The promise: exit 0, or exit 2 with exactly one
``error:`` line; no traceback, bounded CPU time and memory; and whatever ``convert`` writes can be
read back. The ``ci``/``dev`` profiles run :data:`EXAMPLES` examples per format (a few hundred in
all); ``HYPOTHESIS_PROFILE=soak`` runs :data:`SOAK_EXAMPLES` per format, and with
``FC_FUZZ_REPORT=FILE`` the counts per format are written to FILE as JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hostile import (
    DATA,
    OUTCOMES,
    SAMPLES,
    apply_h5_edit,
    hostile_h5_edit,
    hostile_json,
    hostile_log,
    hostile_xml,
    run_cli,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
EXAMPLES = 40
SOAK_EXAMPLES = int(os.environ.get("FC_FUZZ_SOAK_EXAMPLES", "600"))
N = SOAK_EXAMPLES if PROFILE in ("soak", "long") else EXAMPLES
FUZZ = settings(
    max_examples=N,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=PROFILE not in ("soak", "long"),  # CI runs the same examples every time
)

FABRIC_SEEDS = {
    "v1": SAMPLES / "ring_8.json",
    "v1-switches": SAMPLES / "fat_tree_4x4.json",
}


@pytest.fixture(scope="module")
def work():
    folder = Path(tempfile.mkdtemp(prefix="fc-fuzz-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _report():
    """With FC_FUZZ_REPORT=FILE, the counts so far are written after every test."""
    yield
    report = os.environ.get("FC_FUZZ_REPORT")
    if report:
        Path(report).write_text(
            json.dumps({fmt: dict(c) for fmt, c in OUTCOMES.items()}, indent=1, sort_keys=True)
        )


def _fabric_round_trip(path: Path, fmt: str, work: Path, ext: str) -> None:
    """info must keep the promise; if convert accepts the file, its output reads back."""
    run_cli(["info", path], fmt)
    out = work / f"out{ext}"
    out.unlink(missing_ok=True)
    code, _, _ = run_cli(["convert", path, out], fmt)
    if code == 0:
        back, _, err = run_cli(["info", out], fmt + " (written back)")
        assert back == 0, f"convert wrote a {ext} file that info refuses: {err}"


OUT_EXT = st.sampled_from([".json", ".graphml", ".nodelink.json"])


@pytest.mark.parametrize("seed", sorted(FABRIC_SEEDS))
@FUZZ
@given(data=st.data())
def test_v1_json(seed, data, work):
    text = data.draw(hostile_json(FABRIC_SEEDS[seed]))
    path = work / "in.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _fabric_round_trip(path, "v1 json", work, data.draw(OUT_EXT))


@FUZZ
@given(data=st.data())
def test_nodelink_json(data, work):
    seed = work / "seed.nodelink.json"
    if not seed.exists():
        run_cli(["convert", SAMPLES / "dgx_a100_1x.json", seed], "seed")
    path = work / "in.nodelink.json"
    path.write_text(data.draw(hostile_json(seed)), encoding="utf-8", errors="surrogatepass")
    _fabric_round_trip(path, "node-link json", work, data.draw(OUT_EXT))


@FUZZ
@given(data=st.data())
def test_graphml(data, work):
    seed = DATA / "yed_like.graphml"
    path = work / "in.graphml"
    path.write_text(data.draw(hostile_xml(seed)), encoding="utf-8", errors="surrogatepass")
    _fabric_round_trip(path, "graphml", work, data.draw(OUT_EXT))


@FUZZ
@given(data=st.data())
def test_nccl_topology_xml(data, work):
    path = work / "in.xml"
    text = data.draw(hostile_xml(DATA / "dgx_a100_nccl_topo.xml"))
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    run_cli(["info", path], "nccl xml")


@FUZZ
@given(
    data=st.data(),
    seed=st.sampled_from(
        ["nccl_tests_allgather_2xmi250.log", "nccl_tests_allreduce_1xa100_old.log"]
    ),
)
def test_nccl_tests_text_log(data, seed, work):
    path = work / "in.log"
    path.write_text(data.draw(hostile_log(DATA / seed)), encoding="utf-8", errors="surrogatepass")
    fabric = SAMPLES / ("mi250_2x.json" if "mi250" in seed else "dgx_a100_1x.json")
    run_cli(
        ["measure", "import", path, "-t", fabric, "-o", work / "measured.h5"], "nccl-tests text"
    )


@FUZZ
@given(data=st.data())
def test_nccl_tests_json_log(data, work):
    path = work / "in.json"
    text = data.draw(hostile_json(DATA / "nccl_tests_allgather_2xmi250.json"))
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    run_cli(
        ["measure", "import", path, "-t", SAMPLES / "mi250_2x.json", "-o", work / "measured.h5"],
        "nccl-tests json",
    )


@pytest.fixture(scope="module")
def valid_h5(work):
    path = work / "valid.h5"
    code, _, err = run_cli(["solve", SAMPLES / "ring_8.json", "-o", path], "seed")
    assert code == 0, err
    secret = work / "secret.txt"
    secret.write_text("fuzz-secret-4b1d\n" * 64)
    return path, secret


@FUZZ
@given(edit=hostile_h5_edit())
def test_hdf5_results(edit, valid_h5, work):
    valid, secret = valid_h5
    path = work / "in.h5"
    shutil.copyfile(valid, path)
    apply_h5_edit(path, edit, secret)
    for argv in (
        ["show", path, "--trees", "allgather"],
        ["export", path, "--format", "json", "-o", work / "out.json"],
    ):
        _, out, err = run_cli(argv, "hdf5")
        assert "fuzz-secret-4b1d" not in out + err


@FUZZ
@given(
    data=st.data(),
    seed=st.sampled_from(["msccl_ok_ring_allgather.xml", "msccl_ok_reduce_scatter2.xml"]),
)
def test_msccl_xml(data, seed, work):
    path = work / "in.xml"
    path.write_text(data.draw(hostile_xml(DATA / seed)), encoding="utf-8", errors="surrogatepass")
    run_cli(["check-xml", path], "msccl xml")
