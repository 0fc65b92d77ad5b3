"""solver.io.files: bounded reads, atomic writes that respect the umask and keep modes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from solver.io import files
from solver.io.files import OutputError
from solver.model.errors import TopologyError


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        files.atomic_write_text(tmp_path / "a.json", "x")
        os.umask(0o002)
        files.atomic_write_text(tmp_path / "b.json", "x")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a.json") == 0o644
    assert _mode(tmp_path / "b.json") == 0o664


def test_overwrite_keeps_the_mode(tmp_path):
    target = tmp_path / "a.xml"
    target.write_text("old")
    os.chmod(target, 0o640)
    files.atomic_write_text(target, "new")
    assert target.read_text() == "new" and _mode(target) == 0o640


def test_symlinked_output_replaces_the_linked_file_and_keeps_the_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    files.atomic_write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_missing_folders_are_created(tmp_path):
    files.atomic_write_text(tmp_path / "algos" / "deep" / "x.xml", "x")
    assert (tmp_path / "algos" / "deep" / "x.xml").read_text() == "x"


def test_stale_temp_of_a_dead_process_is_removed(tmp_path):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(dead.stdout)
    stale = tmp_path / f".x.json.{pid}.abcd1234{files.TEMP_SUFFIX}"
    stale.write_text("half")
    mine = tmp_path / f".x.json.{os.getpid()}.abcd1234{files.TEMP_SUFFIX}"
    mine.write_text("in progress")  # a live writer's temp file is left alone
    other = tmp_path / ".x.json.notours.tmp"
    other.write_text("keep")
    files.atomic_write_text(tmp_path / "x.json", "x")
    assert not stale.exists() and mine.exists() and other.exists()


def test_failed_write_leaves_old_file_and_no_temp(tmp_path):
    target = tmp_path / "a.json"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with files.atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_unencodable_text_is_one_line(tmp_path):
    with pytest.raises(OutputError, match="U\\+D800"):
        files.atomic_write_text(tmp_path / "a.json", "id \ud800")
    assert list(tmp_path.iterdir()) == []


def test_reads_refuse_folders_devices_and_big_files(tmp_path):
    with pytest.raises(TopologyError, match="is a folder"):
        files.read_text(tmp_path, 100, "a fabric file")
    with pytest.raises(TopologyError, match="not a regular file"):
        files.read_text("/dev/zero", 100, "a fabric file")
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(TopologyError, match="not a regular file"):
        files.read_text(fifo, 100, "a fabric file")  # would block forever if opened
    big = tmp_path / "big.json"
    big.write_bytes(b"x" * 2048)
    with pytest.raises(TopologyError, match="larger than the 1 KB limit for a fabric file"):
        files.read_text(big, 1024, "a fabric file")
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf{}")
    assert files.read_text(tmp_path / "bom.json", 100, "x") == "{}"
    (tmp_path / "latin.json").write_bytes(b"{\xff}")
    with pytest.raises(TopologyError, match="not UTF-8 text \\(byte 1\\)"):
        files.read_text(tmp_path / "latin.json", 100, "x")


def test_non_regular_targets_are_refused_not_replaced(tmp_path):
    """``-o /dev/null`` or a FIFO used to be replaced by a regular file (issue 21 item 4)."""
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="not a regular file"):
        files.atomic_write_text(fifo, "x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    link = tmp_path / "null.xml"
    link.symlink_to(os.devnull)  # through a symbolic link too
    with pytest.raises(OutputError, match="not a regular file"):
        files.atomic_write_text(link, "x")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(files.TEMP_SUFFIX)] == []


def test_a_name_of_255_bytes_is_written(tmp_path):
    """The temporary name (``.NAME.PID.RANDOM.fctmp``) used to exceed NAME_MAX."""
    for name in ("a" * 251 + ".xml", "é" * 125 + ".xml"):  # 255 bytes, ASCII and two-byte UTF-8
        assert len(os.fsencode(name)) <= 255
        files.atomic_write_text(tmp_path / name, "x")
        assert (tmp_path / name).read_text() == "x"
    stem = files.temp_stem(tmp_path, "a" * 251 + ".xml")
    assert len(os.fsencode(f".{stem}.4194304.abcd1234{files.TEMP_SUFFIX}")) <= 255
    assert files.temp_stem(tmp_path, "x.json") == "x.json"
    # a stale temporary file of such a name is still found and removed
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = tmp_path / f".{stem}.{int(dead.stdout)}.abcd1234{files.TEMP_SUFFIX}"
    stale.write_text("half")
    files.atomic_write_text(tmp_path / ("a" * 251 + ".xml"), "y")
    assert not stale.exists()


def test_write_lock_serialises_writers_and_times_out(tmp_path):
    target = tmp_path / "r.h5"
    script = (
        "import sys, time; from solver.io.files import write_lock\n"
        "with write_lock(sys.argv[1]):\n"
        "    print('locked', flush=True); time.sleep(1.5)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(target)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(OutputError, match="another program has been writing"):
            with files.write_lock(target, timeout=0.2):
                pass
        import time

        start = time.monotonic()
        with files.write_lock(target, timeout=30):  # waits for the holder, then proceeds
            waited = time.monotonic() - start
        assert 0.5 < waited < 30
    finally:
        holder.wait(timeout=30)
