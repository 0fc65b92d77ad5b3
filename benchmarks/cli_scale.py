"""End-to-end ``forestcoll`` timings as a user meets them: start-up, loading, solving, writing.

Each row runs the installed ``forestcoll`` command in a new process (numba's cache warm: one
untimed run first) and reports wall time, peak RSS of the child and the output's size. Fabrics:
the N-box DGX H100 rail template as written by ``convert``, the same file with every ``group``
attribute removed (what another tool writes), and that file with nodes and links shuffled.
Compare rows as ratios within one run: the machine is shared.

``--nvl72 R`` adds GB200 NVL72 racks (``nvl72_racks``, R racks of 72 GPUs on a rail-optimised
2-tier InfiniBand network) with and without groups.

``--clusters`` adds the issue's cluster rows (no group-free copies): the 32 768-GPU 3-tier Clos
(``clos3`` 8 zones x 256 racks), the 30 720-GPU 2-pod Alibaba HPN and the 131 072-GPU Clos
(32 zones), each built by ``convert``, summarised by ``info``, solved with ``--optimum-only``
(text and ``--json``) and, with ``--compressed -o out.h5``, as a plan where one exists; a row
that fails or runs over ``--timeout`` says so instead of stopping the table.

Usage::

    python benchmarks/cli_scale.py                # 128 boxes (1024 GPUs)
    python benchmarks/cli_scale.py --boxes 16 32  # several sizes
    python benchmarks/cli_scale.py --boxes --nvl72 16   # only 16 NVL72 racks (1152 GPUs)
    python benchmarks/cli_scale.py --boxes --clusters  # only the 32K / 30K / 131K clusters
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def forestcoll() -> list[str]:
    exe = shutil.which("forestcoll")
    return [exe] if exe else [sys.executable, "-m", "solver.cli"]


def run(argv: list[str], stdout_path: Path | None = None) -> tuple[float, int]:
    """(wall seconds, this child's peak RSS in MB) of one command; fails loudly on an error."""
    with open(stdout_path or os.devnull, "w") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(forestcoll() + argv, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {err.read()[-500:]}")
    return wall, usage.ru_maxrss // 1024


#: (label, template, parameters, GPUs) of the --clusters rows
CLUSTERS = [
    ("clos3 8x256", "clos3", {"zones": 8, "racks_per_zone": 256}, 32_768),
    ("hpn 2 pods", "hpn", {"segments": 15, "pods": 2}, 30_720),
    ("clos3 32x256", "clos3", {"zones": 32, "racks_per_zone": 256}, 131_072),
]


def try_run(argv: list[str], stdout_path: Path | None, timeout: float) -> tuple[float, int, str]:
    """(wall s, peak RSS MB, outcome) of one command: 'ok', 'exit N: last error line' or
    'stopped after T s'; never raises."""
    with open(stdout_path or os.devnull, "w") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(forestcoll() + argv, stdout=out, stderr=err, text=True)
        stopped = False
        while True:  # wait4 with WNOHANG: the child's own rusage, and a deadline
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                stopped = True
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.2)
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        if stopped:
            return wall, usage.ru_maxrss // 1024, f"stopped after {timeout:.0f} s"
        if code != 0:
            err.seek(0)
            lines = err.read().strip().splitlines() or [""]
            return wall, usage.ru_maxrss // 1024, f"exit {code}: {lines[-1][:150]}"
    return wall, usage.ru_maxrss // 1024, "ok"


def cluster_rows(folder: Path, timeout: float) -> None:
    print("| GPUs | fabric | command | wall s | peak RSS MB | output MB | outcome |")
    print("|---:|---|---|---:|---:|---:|---|")
    for label, template, params, gpus in CLUSTERS:
        path = folder / f"{template}_{gpus}.json"
        out_json, out_h5 = folder / "opt.json", folder / "plan.h5"
        build = ["convert", "--template", template]
        for key, value in params.items():
            build += ["--param", f"{key}={value}"]
        rows = [
            ("convert --template", build + [str(path)], None, path),
            ("info", ["info", str(path)], None, None),
            ("solve --optimum-only", ["solve", str(path), "--optimum-only"], None, None),
            (
                "solve --optimum-only --json > opt.json",
                ["solve", str(path), "--optimum-only", "--json"],
                out_json,
                out_json,
            ),
            (
                "solve --compressed -o plan.h5",
                ["solve", str(path), "--compressed", "-o", str(out_h5)],
                None,
                out_h5,
            ),
        ]
        for name, argv, stdout, product in rows:
            if product is not None and product.exists():
                product.unlink()
            wall, rss, outcome = try_run(argv, stdout, timeout)
            size = product.stat().st_size / 1e6 if product is not None and product.exists() else 0
            print(
                f"| {gpus} | {label} | `{name}` | {wall:.2f} | {rss} | {size:.1f} | {outcome} |",
                flush=True,
            )
            if name.startswith("convert") and outcome != "ok":
                break


def fabrics(
    boxes: int, folder: Path, template: str = "dgx_h100_rail", param: str = "n"
) -> dict[str, Path]:
    grouped = folder / f"{template}{boxes}.json"
    run(["convert", "--template", template, "--param", f"{param}={boxes}", str(grouped)])
    doc = json.loads(grouped.read_text())
    for node in doc["nodes"]:
        node.pop("group", None)
    for key in ("template", "template_params"):
        doc.pop(key, None)
    plain = folder / f"{template}{boxes}_nogroup.json"
    plain.write_text(json.dumps(doc))
    rng = random.Random(0)
    rng.shuffle(doc["nodes"])
    rng.shuffle(doc["links"])
    shuffled = folder / f"{template}{boxes}_shuffled.json"
    shuffled.write_text(json.dumps(doc))
    return {"grouped": grouped, "no group": plain, "no group, shuffled": shuffled}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boxes", type=int, nargs="*", default=[128])
    ap.add_argument("--nvl72", type=int, nargs="*", default=[], metavar="RACKS")
    ap.add_argument("--clusters", action="store_true", help="the 32K/30K/131K cluster rows")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per --clusters row")
    args = ap.parse_args()
    sizes = [(b, "dgx_h100_rail", "n", 8) for b in args.boxes]
    sizes += [(r, "nvl72_racks", "racks", 72) for r in args.nvl72]
    if not args.clusters:
        print("| GPUs | file | command | wall s | peak RSS MB | output MB | vs plain solve |")
        print("|---:|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.clusters:
            cluster_rows(folder, args.timeout)
            if sizes:
                print()
                print(
                    "| GPUs | file | command | wall s | peak RSS MB | output MB | vs plain solve |"
                )
                print("|---:|---|---|---:|---:|---:|---:|")
        for boxes, template, param, per_box in sizes:
            files = fabrics(boxes, folder, template, param)
            run(["solve", str(files["grouped"])])  # fills numba's cache: not timed
            base = None
            for label, path in files.items():
                out_json = folder / "out.json"
                out_h5 = folder / "out.h5"
                rows = [
                    ("solve", ["solve", str(path)], None, None),
                    ("solve --json > out.json", ["solve", str(path), "--json"], out_json, out_json),
                    ("solve -o out.h5", ["solve", str(path), "-o", str(out_h5)], None, out_h5),
                ]
                for name, argv, stdout, product in rows:
                    if product is not None and product.exists():
                        product.unlink()
                    wall, rss = run(argv, stdout)
                    base = wall if base is None else base
                    size = product.stat().st_size / 1e6 if product is not None else 0.0
                    print(
                        f"| {boxes * per_box} | {label} | `{name}` | {wall:.2f} | {rss} | "
                        f"{size:.1f} | {wall / base:.2f}x |",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
