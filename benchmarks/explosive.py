"""Explosive-but-valid fabrics (issue 21): time, CPU, peak RSS and outcome of each case.

    python3 benchmarks/explosive.py [--code FOLDER] [--wall SECONDS] [--only TEXT]

Runs every case of ``tests/fuzz/explosive.py`` as ``python -m solver.cli ...`` in a child under
the same memory (address space) and CPU limits as the fuzz test and prints one table row per
case. ``--code FOLDER`` runs another checkout of the code (put first on ``PYTHONPATH``), e.g. an
older commit unpacked with ``git archive``, for before/after figures; ``--wall`` kills a child
that runs longer (default 60 s), reported as "killed after".
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
from explosive import MEMORY_LIMIT, _limits, cases  # noqa: E402


def run(argv: list[str], cwd: Path, env: dict, wall: float):
    out, err = cwd / "child.out", cwd / "child.err"
    t0 = time.monotonic()
    with open(out, "w") as fo, open(err, "w") as fe:
        proc = subprocess.Popen(
            [sys.executable, "-m", "solver.cli", *argv],
            cwd=cwd,
            env=env,
            stdout=fo,
            stderr=fe,
            preexec_fn=_limits,
        )
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > wall:
                proc.kill()
                killed = True
            time.sleep(0.05)
    elapsed = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    lines = [ln for ln in err.read_text().splitlines() if ln.strip()]
    if killed:
        outcome = f"killed after {wall:.0f} s"
    elif code == 0:
        outcome = "exit 0"
    elif code == 2 and len(lines) == 1:
        outcome = "exit 2: " + lines[0][7:90]
    else:
        outcome = f"exit {code}: " + (lines[-1][:90] if lines else "")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, outcome


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--code", help="folder of the code to run (default: this checkout)")
    ap.add_argument("--wall", type=float, default=60.0)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    env = dict(os.environ)
    code = Path(args.code).resolve() if args.code else ROOT
    env["PYTHONPATH"] = str(code)
    print(f"code: {code}; memory limit {MEMORY_LIMIT / 1024**3:.0f} GiB, wall {args.wall:.0f} s")
    print("| case | file | wall | CPU | peak RSS | outcome |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for case in cases():
            if args.only not in case.name:
                continue
            path = folder / f"fabric{case.ext}"
            path.write_text(case.text)
            wall, cpu, rss, outcome = run(
                [case.command, str(path), *case.argv], folder, env, args.wall
            )
            size = path.stat().st_size
            print(
                f"| {case.name} | {size / 1024:.0f} KB | {wall:.1f} s | {cpu:.1f} s | "
                f"{rss} MB | {outcome} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
