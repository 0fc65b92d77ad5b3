"""A full disk: one line, exit 2, the old file intact, no temporary file left behind.

The disk is a small tmpfs mounted for the test (root only); where mounting is not allowed the
tests are skipped with that reason (nothing is faked).
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from solver.cli import main

ROOT = Path(__file__).resolve().parents[2]
FABRIC = ROOT / "sample_topologies" / "ring_8.json"


@pytest.fixture()
def small_disk(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(disk: Path) -> None:
    """Use up every free byte of the disk."""
    with open(disk / "filler", "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    # leave nothing: a later write of even a few bytes fails


CASES = {
    "convert-json": (["convert", str(FABRIC)], "out.json"),
    "convert-graphml": (["convert", str(FABRIC)], "out.graphml"),
    "solve-h5": (["solve", str(FABRIC), "-o"], "out.h5"),
    "solve-json": (["solve", str(FABRIC), "-o"], "out.json"),
    "export-json": (["export", str(FABRIC), "--format", "json", "-o"], "out.json"),
    "export-msccl": (["export", str(FABRIC), "--max-trees-per-root", "1", "-o"], "out.xml"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_full_disk_is_one_line_and_keeps_the_old_file(case, small_disk, capsys):
    argv, name = CASES[case]
    target = small_disk / name
    assert main([*argv, str(target)]) == 0, capsys.readouterr().err  # the old file
    old = target.read_bytes()
    mode = os.stat(target).st_mode
    _fill(small_disk)
    capsys.readouterr()
    code = main([*argv, str(target)])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and "no space left" in lines[0]
    assert target.read_bytes() == old and os.stat(target).st_mode == mode
    assert sorted(p.name for p in small_disk.iterdir()) == sorted(["filler", name])
