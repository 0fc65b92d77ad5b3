"""Fuzzing check-xml with runtime-reader divergences (issue 21): files an XML library reads but
RCCL's / msccl-executor's own reader fails on or misreads.

Each example is a seed that passes, with one divergence (``reader_divergence.py``) at a drawn
place. The promise: ``forestcoll check-xml`` exits 2 with one ``error:`` line naming the reader
rule (and the file's line), within the fuzz suite's CPU and memory bounds, and the file is
well-formed XML, so the refusal is the reader's rule and not the XML parser's.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hostile import DATA, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reader_divergence import EDITS, reader_divergent_xml

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
N = (
    int(os.environ.get("FC_FUZZ_SOAK_EXAMPLES", "600")) // 10 if PROFILE in ("soak", "long") else 8
)  # per class
SEEDS = [
    DATA / "msccl_ok_ring_allgather.xml",
    DATA / "msccl_ok_reduce_scatter2.xml",
    DATA / "msccl_ok_ring_allgather_deps.xml",
    DATA / "real" / "msccl" / "alltoall-8n-0-9kb.xml",
]


@pytest.fixture(scope="module")
def work():
    folder = Path(tempfile.mkdtemp(prefix="fc-fuzz-reader-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_seeds_pass(work):
    for seed in SEEDS:
        code, out, _ = run_cli(["check-xml", seed, "--runtime", "rccl"], "msccl reader")
        assert code == 0 and "ok: " in out


@settings(
    max_examples=N,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=PROFILE not in ("soak", "long"),
)
@given(
    data=st.data(), seed=st.sampled_from(SEEDS), runtime=st.sampled_from(["rccl", "msccl-executor"])
)
@pytest.mark.parametrize("edit", sorted(EDITS))
def test_reader_divergence_is_refused_by_its_rule(edit, data, seed, runtime, work):
    case = data.draw(reader_divergent_xml(seed.read_text(), edit))
    if not case.text.startswith("<?xml"):
        ET.fromstring(case.text)  # well-formed: an XML library reads it
    path = work / "in.xml"
    path.write_bytes(case.text.encode("utf-8"))
    code, _, err = run_cli(["check-xml", path, "--runtime", runtime], "msccl reader")
    assert code == 2, (case.edit, case.text[:300])
    assert f"[reader rule {case.rule}: msccl_parser.cc:" in err, (case.edit, err)
    assert re.search(r": line \d+: ", err), err
