"""Ctrl-C while the command line imports numpy/numba/h5py: rc 130 and one line, no traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FABRIC = ROOT / "sample_topologies" / "dgx_a100_2x.json"


def _wait_for_mapping(pid: int, needle: str, timeout: float = 60.0) -> bool:
    """Wait until the process has loaded a shared library whose path contains ``needle``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if needle in Path(f"/proc/{pid}/maps").read_text():
                return True
        except OSError:
            return False
        time.sleep(0.002)
    return False


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("needle", ["_multiarray_umath", "llvmlite"])
def test_ctrl_c_during_imports_is_rc_130_without_traceback(needle):
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba-cache-interrupt-test"),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "solver.cli", "solve", str(FABRIC)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # as a user's shell starts it: a CI job run in the background inherits SIGINT ignored,
        # and Python then installs no KeyboardInterrupt handler at all
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    loaded = _wait_for_mapping(proc.pid, needle)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert loaded, f"{needle} never loaded: {err}"
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err
    assert err.strip().splitlines() == ["error: interrupted"]
