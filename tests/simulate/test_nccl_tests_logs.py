"""The nccl-tests reader on the logs users bring (issue 20 item 4, issue 21's log items):
several runs in one file, launcher prefixes, NCCL INFO lines spliced into rows, tables inside
documents, the run's settings, and rows above the forward-only bound with their reason."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from solver.simulate import calibration as C
from solver.simulate.nccl_tests import (
    LogFormatError,
    above_bound_reason,
    algo_allows,
    load_log,
    nvls_state,
    parse_text,
    read_sections,
)

DATA = Path(__file__).resolve().parents[1] / "data"
ROOT = DATA.parents[1]
REAL = DATA / "real" / "logs"
AG_LOG = DATA / "nccl_tests_allgather_2xmi250.log"
AR_REAL = REAL / "rccl_allreduce_mi300x_1node.log"
INFO = "node-a:4711:4711 [0] NCCL INFO Connected all rings"


def _rows(m):
    return m.size_bytes.tolist(), m.time_used.tolist(), m.algbw_used.tolist()


def test_multi_collective_log_is_split_and_selected():
    # a "run all collectives" log: two runs, each with its "Collective test starting" line
    text = AR_REAL.read_text() + "\n" + AG_LOG.read_text()
    with pytest.raises(LogFormatError, match=r"2 runs in one log .*allreduce: lines .*allgather"):
        parse_text(text, "all.log")
    ag = parse_text(text, "all.log", "allgather")
    ar = parse_text(text, "all.log", "allreduce")
    assert _rows(ag) == _rows(load_log(AG_LOG)) and ag.ranks == 32
    assert _rows(ar) == _rows(load_log(AR_REAL)) and ar.ranks == 8
    assert len(ag.sections) == 2 and ag.section.startswith("all_gather_perf, lines ")
    with pytest.raises(LogFormatError, match="no reduce-scatter run in the log"):
        parse_text(text, "all.log", "reduce-scatter")
    # -c selects, it does not relabel: a single allgather run is not an allreduce
    with pytest.raises(LogFormatError, match="holds allgather only"):
        parse_text(AG_LOG.read_text(), "x.log", "allreduce")


def test_unsupported_sections_are_skipped_and_the_supported_one_taken():
    ag = AG_LOG.read_text()
    bcast = ag.replace("all_gather_perf", "broadcast_perf")
    m = parse_text(bcast + ag, "all.log")
    assert m.collective == "allgather" and _rows(m) == _rows(load_log(AG_LOG))


def test_two_runs_of_one_collective_are_refused():
    ag = AG_LOG.read_text()
    with pytest.raises(LogFormatError, match="2 allgather runs in one log"):
        parse_text(ag + ag, "x.log", "allgather")


def test_tag_output_real_log():
    # SkyPilot job prefix + mpirun --tag-output on every line (tests/data/real/README.md)
    m = load_log(REAL / "nccl_allgather_h200_a3ultra_skypilot_tagged.log")
    assert (m.collective, m.ranks, len(m.size_bytes)) == ("allgather", 16, 24)
    i = list(m.size_bytes).index(1 << 30)
    assert m.time_used[i] == pytest.approx(3123.9e-6) and m.algbw_used[i] == pytest.approx(343.72)
    # busbw = algbw * 15/16 for allgather on 16 ranks: the table really is allgather's
    assert m.busbw[i] == pytest.approx(343.72 * 15 / 16, abs=0.01)


@pytest.mark.parametrize("tag", ["[1,0]<stdout>:", "[0] ", "0: ", "[prterun-h-1@1,0]<stdout>: "])
def test_launcher_prefixes(tag):
    text = "".join(tag + ln + "\n" for ln in AG_LOG.read_text().splitlines())
    assert _rows(parse_text(text, "x.log")) == _rows(load_log(AG_LOG))


def _splice(text: str, at: str) -> str:
    """The 1 MiB row printed in pieces with an NCCL INFO line written in between (as NCCL and
    nccl-tests share stdout): after the row's first cells ("root") or after the out-of-place
    cells ("wrong")."""
    lines = text.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.split()[:1] == ["1048576"])
    cells = lines[i].split("  ")
    row = lines[i]
    cut = row.index(" -1 ") + 3 if at == "root" else row.index(" 0 ") + 2
    lines[i] = row[:cut] + INFO + "\n" + INFO.replace("rings", "trees") + "\n" + row[cut:]
    assert cells
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("at", ["root", "wrong"])
def test_info_line_spliced_into_a_row(at):
    text = _splice(AG_LOG.read_text(), at)
    assert "-1node-a:4711" in text or "0node-a:4711" in text
    assert _rows(parse_text(text, "x_allgather.log")) == _rows(load_log(AG_LOG))


def test_hydra_tags_glued_inside_rows():
    # as in NVIDIA/nccl#1453: "[0]" before every piece of a row, INFO lines in between
    out = []
    for ln in AG_LOG.read_text().splitlines():
        if ln.split()[:1] == ["1048576"]:
            cut = ln.index(" -1 ") + 3
            out.append("[0] " + ln[:cut] + "[0] " + INFO)
            out.append("[0] " + ln[cut:].replace("      0  ", "      0[0]  ", 1))
        else:
            out.append("[0] " + ln)
    assert _rows(parse_text("\n".join(out), "x.log")) == _rows(load_log(AG_LOG))


def test_table_inside_a_markdown_document():
    doc = (
        "# Results\n\nSteps:\n\n1. Build nccl-tests.\n2. Run it on 4 nodes:\n\n```\n"
        + AG_LOG.read_text()
        + "```\n\n3. Compare with the bound.\n10 GB/s was the goal.\n"
    )
    assert _rows(parse_text(doc, "README.md")) == _rows(load_log(AG_LOG))


def test_run_settings_are_recorded():
    lines = AR_REAL.read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if "size" in ln and "count" in ln)
    extra = [
        "NCCL version 2.21.5+cuda12.4",
        "node-a:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring",
        "node-a:1:1 [0] NCCL INFO NCCL_PROTO set by environment to Simple",
        "node-a:1:1 [0] NCCL INFO 24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p",
    ]
    cmd = "mpirun -np 8 -x NCCL_MAX_NCHANNELS=2 -x NCCL_ALGO=Tree ./all_reduce_perf -b 8 -e 8G"
    text = "\n".join([cmd] + lines[:k] + extra + lines[k:])
    m = parse_text(text, "x.log")
    s = m.settings
    assert s["nccl_version"] == "2.21.5+cuda12.4" and s["NCCL_PROTO"] == "Simple"
    assert s["NCCL_ALGO"] == "Ring"  # NCCL's own report wins over the command line
    assert s["NCCL_MAX_NCHANNELS"] == "2" and m.settings_from["NCCL_MAX_NCHANNELS"].endswith(
        "command line"
    )
    assert s["nvls"] == "off" and s["nvls_channels"] == "0"
    # the nccl-tests header's library code
    assert load_log(AG_LOG).settings["nccl_library"] == "2.20.5"


def test_nvls_rules():
    assert nvls_state({"nvls_channels": "16"}, "allreduce") == "on"
    assert nvls_state({"nvls_channels": "16", "NCCL_NVLS_ENABLE": "0"}, "allreduce") == "off"
    assert nvls_state({"NCCL_ALGO": "ring,tree"}, "allreduce") == "off"
    assert nvls_state({"NCCL_ALGO": "^nvls"}, "allreduce") == "off"
    assert nvls_state({"NCCL_ALGO": "nvlstree"}, "allreduce") == ""
    assert nvls_state({}, "allreduce") == ""
    assert algo_allows("allreduce:nvls,ring;allgather:ring", "nvls", "allreduce")
    assert not algo_allows("allreduce:nvls,ring;allgather:ring", "nvls", "allgather")
    r = above_bound_reason("allreduce", {"nvls_channels": "16"}, nvswitch=True)
    assert r.startswith("NVLS")
    assert above_bound_reason("allreduce", {}, nvswitch=True).startswith("NVLS likely")
    assert above_bound_reason("allreduce", {"NCCL_NVLS_ENABLE": "0"}, True).startswith("no in")
    assert above_bound_reason("allgather", {"nvls_channels": "16"}, True).startswith("no in")


def test_repeated_sizes_keep_the_median_row():
    lines = AG_LOG.read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.split()[:1] == ["1024"])
    row = lines[k]
    slow = row.replace("45.01", "95.01", 1)
    slower = row.replace("45.01", "99.01", 1)
    assert slow != row
    text = "\n".join(lines[: k + 1] + [slow, slower] + lines[k + 1 :])
    m = parse_text(text, "x.log")
    assert m.repeats == 3 and m.time[0] == pytest.approx(95.01e-6)
    assert len(m.size_bytes) == len(load_log(AG_LOG).size_bytes)


def test_several_independent_runs_in_one_section_are_refused():
    # nccl-tests without MPI started by mpirun -np 2: "Rank 0" twice (NVIDIA/nccl-tests#107)
    text = AG_LOG.read_text()
    rank0 = next(ln for ln in text.splitlines() if ln.lstrip("# ").startswith("Rank  0"))
    with pytest.raises(LogFormatError, match="rank 0 is listed twice"):
        parse_text(text.replace(rank0, rank0 + "\n" + rank0), "x.log")


@pytest.mark.parametrize("value", ["inf", "1e400", "-1", "nan", "x"])
def test_hostile_wrong_cell_is_one_error(value):
    lines = AG_LOG.read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.split()[:1] == ["1024"])
    cells = lines[k].split()
    cells[8] = value
    lines[k] = "  ".join(cells)
    with pytest.raises(LogFormatError, match=f"x.log:{k + 1}: #wrong"):
        parse_text("\n".join(lines), "x.log")


def test_hostile_rank_number_bom_and_blank_tail():
    text = AG_LOG.read_text()
    rank0 = next(ln for ln in text.splitlines() if ln.lstrip("# ").startswith("Rank  0"))
    with pytest.raises(LogFormatError, match="rank: number text is 5000 characters"):
        parse_text(text.replace(rank0, rank0.replace("Rank  0", "Rank " + "9" * 5000)), "x.log")
    assert _rows(parse_text("\ufeff" + text, "x.log")) == _rows(load_log(AG_LOG))
    start = time.process_time()
    m = parse_text(text + "\n" * 160_000 + " \n" * 100_000, "x.log")
    assert time.process_time() - start < 3.0 and m.ranks == 32


def test_read_sections_lists_every_run():
    text = AR_REAL.read_text() + AG_LOG.read_text().replace("all_gather_perf", "alltoall_perf")
    secs = read_sections(text, "x.log")
    assert [s.collective for s in secs] == ["allreduce", "alltoall"]
    assert all(s.rows for s in secs)


def test_measure_import_names_the_reason_above_the_bound(tmp_path, capsys):
    from solver.cli import main
    from solver.io.formats import save
    from solver.io.hdf5.results import read_results
    from solver.simulate.calibration import boxes_with_rails

    # the 8-GPU allreduce on an NVSwitch box of 100 GB/s per GPU: forward-only bound
    # 100 / (2 * 7/8) = 57.14 GB/s; the log's NVLS channels explain rows above it
    fabric = tmp_path / "nvsw.json"
    save(boxes_with_rails("nvsw", 1, 8, 0, nvswitch_bw=100), fabric)
    lines = AR_REAL.read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if "size" in ln and "count" in ln)
    info = "node-a:1:1 [0] NCCL INFO 16 coll channels, 0 collnet channels, 16 nvls channels"
    log = tmp_path / "ar.log"
    log.write_text("\n".join(lines[:k] + [info] + lines[k:]) + "\n")
    out = tmp_path / "r.h5"
    assert main(["measure", "import", str(log), "-t", str(fabric), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "above the forward-only bound 57.14 GB/s: NVLS: the NVSwitch adds" in text
    assert "nvls=on" in text
    t = read_results(out)["measured_allreduce_rccl_tests"]
    above = t.attrs["above_bound_sizes"]
    assert above == [int(s) for s, a in zip(t.size_bytes, t.measured_algbw) if a > 400 / 7]
    assert above and t.attrs["above_bound_reason"].startswith("NVLS")
    assert t.attrs["settings"]["nvls"] == "on"


def test_every_real_log_imports():
    for path in sorted(REAL.iterdir()):
        if path.suffix != ".log" or "mi325x" in path.name:  # the headerless MI325X excerpts
            continue
        # dstack's Crusoe excerpt names no collective: the calibration table says which
        named = {g.file: g.collective for g in C.LOGS if g.collective}
        m = load_log(path, named.get(path.name))
        # dstack's A3 High run sweeps 8 MiB..8 GiB (-b 8M): 11 sizes
        # (the OCI tutorial's run sweeps 1-16 GiB: 5 sizes)
        least = 11 if "dstack" in path.name else 5 if "oci" in path.name else 20
        assert len(m.size_bytes) >= least and np.all(np.diff(m.size_bytes) > 0), path.name


def test_log_printed_without_its_hash_marks_reads_like_the_marked_one():
    """dstack's A3 High guide prints nccl-tests' output without the '#' of its comment lines
    (nThread line, column header, closing lines); it reads as the marked log does."""
    path = REAL / "nccl_allgather_h100_a3high_tcpx_dstack_2node.log"
    m = load_log(path)
    assert m.collective == "allgather" and m.variant == "out-of-place"
    assert list(m.size_bytes[[0, -1]]) == [8 << 20, 8 << 30]
    i = list(m.size_bytes).index(1 << 30)
    assert m.time_used[i] == pytest.approx(20431e-6) and m.algbw_used[i] == pytest.approx(52.55)
    marked = "\n".join(
        (
            "# " + line
            if line.strip().startswith(("nThread", "size", "(B)", "Out of", "Avg"))
            else line
        )
        for line in path.read_text().splitlines()
    )
    again = parse_text(marked, "marked", "allgather")
    assert np.array_equal(again.size_bytes, m.size_bytes)
    assert np.array_equal(again.algbw_used, m.algbw_used)
