"""End-to-end ``forestcoll`` timings as a user meets them: start-up, loading, solving, writing.

Each row runs the installed ``forestcoll`` command in a new process (numba's cache warm: one
untimed run first) and reports wall time, peak RSS of the child and the output's size. Fabrics:
the N-box DGX H100 rail template as written by ``convert``, the same file with every ``group``
attribute removed (what another tool writes), and that file with nodes and links shuffled.
Compare rows as ratios within one run: the machine is shared.

``--nvl72 R`` adds GB200 NVL72 racks (``nvl72_racks``, R racks of 72 GPUs on a rail-optimised
2-tier InfiniBand network) with and without groups.

Usage::

    python benchmarks/cli_scale.py                # 128 boxes (1024 GPUs)
    python benchmarks/cli_scale.py --boxes 16 32  # several sizes
    python benchmarks/cli_scale.py --boxes --nvl72 16   # only 16 NVL72 racks (1152 GPUs)
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
    args = ap.parse_args()
    sizes = [(b, "dgx_h100_rail", "n", 8) for b in args.boxes]
    sizes += [(r, "nvl72_racks", "racks", 72) for r in args.nvl72]
    print("| GPUs | file | command | wall s | peak RSS MB | output MB | vs plain solve |")
    print("|---:|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
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
