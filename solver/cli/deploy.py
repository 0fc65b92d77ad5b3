"""Deployment side of ``forestcoll export``: MSCCL++ plans, size bands, safe folders and the
environment each runtime needs. Kept apart from :mod:`solver.cli.export` (which calls it).

Folders: RCCL and msccl-executor-nccl load *every* regular file (and symlink) of
``MSCCL_ALGO_DIR`` as an XML algorithm and fail MSCCL's init on one that is not (RCCL
0cbce2a7 ``src/misc/msccl/msccl_lifecycle.cc:177-185``), so an export names its folder's other
files, and ``--bands`` writes only into a new or empty folder.

Size bands: the message size a runtime compares with a file's range is the whole buffer, the
size nccl-tests prints and the simulator uses: MSCCL ``nBytes = count x type size x
sizeMultiplier`` with sizeMultiplier = ranks for allgather and reduce-scatter
(msccl_parser.cc:744-756, msccl_lifecycle.cc:331-334; ``minBytes <= nBytes <= maxBytes``,
maxBytes 0 = no limit); MSCCL++ checks the output size for allgather and the input size otherwise
against ``min_message_size..max_message_size`` (mscclpp v0.10.0 execution_plan.cc:299-311).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from solver.model.errors import ForestCollError
from solver.model.units import format_size
from solver.model.values import printable

if TYPE_CHECKING:
    from solver.msccl.runtimes import Runtime
    from solver.mscclpp.options import PlanOptions

MSCCL_ENV = {
    "msccl-executor": "NCCL_MSCCL_ENABLE=1 MSCCL_ALGO_DIR={dir}   (msccl-executor-nccl; the folder's "
    "files must all be MSCCL XML)",
    "rccl": "RCCL_MSCCL_ENABLE=1 MSCCL_ALGO_DIR={dir}   (RCCL; add RCCL_MSCCL_FORCE_ENABLE=1 where RCCL "
    "does not enable MSCCL for that GPU or scale; the folder's files must all be MSCCL XML)",
    "msccl-legacy": "MSCCL_XML_FILES={files} NCCL_ALGO=MSCCL,RING,TREE   (legacy microsoft/msccl; "
    "files separated by ':')",
}
MSCCLPP_ENV = (
    "MSCCL++ {release}: plan = mscclpp.ExecutionPlan('{file}', rank); executor.execute(rank, send, "
    "recv, send_bytes, recv_bytes, dtype, plan, stream) (python/test/executor_test.py -path {file} "
    "--size SIZE runs it under mpirun); the job's rank i must be the GPU the plan's "
    "forestcoll.ranks[i] names"
)


def other_files(folder: Path, ours: set[str]) -> list[str]:
    """Names of the regular files and symlinks in ``folder`` that are not in ``ours`` (what a
    runtime that loads the whole folder would also read)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    out = []
    for e in entries:
        if e.name in ours:
            continue
        if e.is_symlink() or e.is_file(follow_symlinks=False):
            out.append(e.name)
    return sorted(out)


MAX_FOLDER_FILES = 10_000


def folder_files(path: str, suffix: str, what: str) -> list[Path]:
    """``path`` itself, or the ``suffix`` files of the folder it names (sorted). A folder with
    other files is refused when they are what a runtime would also load (MSCCL_ALGO_DIR)."""
    p = Path(path)
    if not p.is_dir():
        return [p]
    try:
        entries = sorted(os.scandir(p), key=lambda e: e.name)
    except OSError as exc:
        raise ForestCollError(
            f"{printable(path)}: cannot list the folder: {exc.strerror or exc}"
        ) from None
    files = [
        Path(e.path) for e in entries if e.name.endswith(suffix) and (e.is_file() or e.is_symlink())
    ]
    others = [
        e.name
        for e in entries
        if not e.name.endswith(suffix) and (e.is_file(follow_symlinks=False) or e.is_symlink())
    ]
    if len(files) > MAX_FOLDER_FILES:
        raise ForestCollError(
            f"{printable(path)}: {len(files)} files, more than {MAX_FOLDER_FILES}"
        )
    if not files:
        raise ForestCollError(f"{printable(path)}: no {suffix} file in the folder")
    if others and suffix == ".xml":
        shown = ", ".join(printable(n) for n in others[:3])
        raise ForestCollError(
            f"{printable(path)} holds {len(others)} file(s) that are not {what} ({shown}): RCCL and "
            "msccl-executor-nccl load every file of MSCCL_ALGO_DIR and fail MSCCL's init on one that is "
            "not an algorithm XML (RCCL msccl_lifecycle.cc:177-185)"
        )
    return files


def folder_warning(path: Path, runtime: Runtime) -> str | None:
    """A warning when the folder of an exported file holds other files a runtime would load
    (all but the legacy runtime, which loads the files MSCCL_XML_FILES names)."""
    if runtime.legacy:
        return None
    others = other_files(path.resolve().parent, {path.name})
    if not others:
        return None
    shown = ", ".join(printable(n) for n in others[:3]) + (", ..." if len(others) > 3 else "")
    return (
        f"{printable(str(path.resolve().parent))} also holds {len(others)} other file(s) ({shown}): "
        "RCCL and msccl-executor-nccl load every file of MSCCL_ALGO_DIR and fail MSCCL's init on one "
        "that is not an algorithm XML (RCCL msccl_lifecycle.cc:177-185); export into a folder of its own"
    )


def print_environment(paths: list[Path], runtime: Runtime) -> None:
    """How ``runtime`` loads the MSCCL XML files written."""
    files = [p.resolve() for p in paths]
    folder = files[0].parent
    hint = MSCCL_ENV[runtime.name].format(dir=folder, files=":".join(str(f) for f in files))
    print(f"to use it ({runtime.name}): {printable(hint)}")


def print_plan_environment(paths: list[Path]) -> None:
    """How MSCCL++ loads the plans written."""
    from solver.mscclpp import RELEASE

    for f in paths:
        print("to use it: " + printable(MSCCLPP_ENV.format(release=RELEASE, file=f.resolve())))


# ---------------------------------------------------------------------------- MSCCL++ export
def export_mscclpp(args, schedule, order) -> int:
    """``export --format mscclpp``: the plan, checked, then written (or printed)."""
    from solver import mscclpp

    text, report = mscclpp.export_plan(schedule, _plan_options(args, order))
    step = granularity_of(json.loads(text))
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    from solver.io.files import atomic_write_text

    atomic_write_text(args.output, text)
    out = Path(args.output)
    print(f"wrote {printable(str(out))} ({len(text.encode())} bytes): {report.summary()}")
    print(
        f"message sizes: multiples of {step} bytes (buffer_alignment x chunks, execution_plan.cc:299-304)"
    )
    _print_ranks(mscclpp.rank_order(schedule, order))
    print_plan_environment([out])
    return 0


def granularity_of(doc: dict) -> int:
    from solver.mscclpp import size_granularity

    return size_granularity(doc)


def _plan_options(args, order) -> PlanOptions:
    """The MSCCL++ export's options from the command line (``order``: the ranks' node ids)."""
    from solver.mscclpp.options import PlanOptions

    if args.proto != "Simple":
        raise ForestCollError(
            f"MSCCL++ plans are written for the Simple protocol, not --proto {args.proto} "
            "(LL plans use packet ops this export does not write)"
        )
    return PlanOptions(
        order=order,
        instances=args.instances,
        channels=args.channels,
        min_bytes=args.min_bytes,
        max_bytes=args.max_bytes,
        resident=args.max_threadblocks,
    )


def _print_ranks(ranks: list[str]) -> None:
    shown = ", ".join(f"{i}={v}" for i, v in enumerate(ranks[:4]))
    print(
        f"ranks: {printable(shown)}{', ...' if len(ranks) > 4 else ''} (--rank-order FILE to change)"
    )


# ---------------------------------------------------------------------------- size bands
BAND_TREES = (1, 2, 4, None)  # --max-trees-per-root variants compared per size (None = no limit)
BAND_SIZES = [2**p for p in range(10, 33)]  # 1 KiB .. 4 GiB, the simulator's default range


@dataclass
class Band:
    lo: int  # bytes, inclusive
    hi: int | None  # bytes, inclusive; None = no upper limit
    k: object  # the variant's --max-trees-per-root (None: no limit), or "library"
    fc_algbw: (
        float  # GB/s of the best ForestColl variant that fits, at the band's largest grid size
    )
    lib_algbw: float  # GB/s of the library model there
    lib_choice: str
    gain_min: float  # library time / ForestColl time over the band's grid sizes
    gain_max: float


def compute_bands(
    topo, collective: str, sizes: list[int] | None = None, trees=BAND_TREES, fits=None
):
    """Per grid size the fastest ForestColl variant that ``fits(k, schedule)`` (the file can be
    written) against the library model; returns (bands, schedules). Consecutive sizes with the same
    winner merge into one band; the library's bands have k="library"."""
    from solver import solve
    from solver.simulate import sweep

    sizes = sorted(sizes or BAND_SIZES)
    times: dict[int, dict] = {z: {} for z in sizes}
    lib: dict[int, tuple[float, str]] = {}
    schedules = {}
    for k in trees:
        s = solve(topo, collective=collective, max_trees_per_root=k)
        if any(x.k == s.k for x in schedules.values()):
            continue  # the same tree count as a smaller limit: the same variant
        if fits is not None and not fits(k, s):
            continue
        schedules[k] = s
        sw = sweep(topo, collective, algorithms=("forestcoll", "nccl"), sizes=sizes, schedule=s)
        for r in sw.rows:
            if r.algorithm == "nccl":
                lib[r.size] = (r.time, r.choice)
            else:
                times[r.size][k] = r.time
    if not schedules:
        raise ForestCollError("no ForestColl variant fits the target (see the errors above)")
    bands: list[Band] = []
    for i, z in enumerate(sizes):
        k, tf = min(times[z].items(), key=lambda kv: kv[1])
        tl, choice = lib[z]
        winner = k if tf < tl else "library"
        lo = 0 if i == 0 else z
        hi = sizes[i + 1] - 1 if i + 1 < len(sizes) else None
        gain = tl / tf
        if bands and bands[-1].k == winner:
            b = bands[-1]
            b.hi = hi
            b.gain_min, b.gain_max = min(b.gain_min, gain), max(b.gain_max, gain)
            b.fc_algbw, b.lib_algbw = z / tf / 1e9, z / tl / 1e9
            if choice not in b.lib_choice.split(", "):
                b.lib_choice += f", {choice}"
        else:
            bands.append(Band(lo, hi, winner, z / tf / 1e9, z / tl / 1e9, choice, gain, gain))
    return bands, schedules


def _fmt_range(b: Band) -> str:
    return f"{format_size(b.lo) if b.lo else '0'}..{format_size(b.hi + 1) if b.hi is not None else 'max'}"


def _fits(k, schedule, step_of, steps: dict) -> bool:
    """Whether the variant's file can be built for the target and runs power-of-two sizes; says
    why not. ``step_of(schedule)``: the byte step of the sizes the file runs (MSCCL++:
    buffer_alignment x chunks, execution_plan.cc:299-304; MSCCL: nchunksperloop elements of at
    least 1 byte, msccl_lifecycle.cc:333), kept as ``steps[k]``."""
    try:
        step = step_of(schedule)
    except ForestCollError as exc:
        print(f"variant --max-trees-per-root {k or 'none'} skipped: {printable(str(exc))}")
        return False
    if step & (step - 1):
        print(
            f"variant --max-trees-per-root {k or 'none'} skipped: it runs only multiples of {step} bytes, "
            "so no power-of-two size"
        )
        return False
    steps[k] = step
    return True


def _step_of(args, fmt: str, order, runtime: Runtime):
    """The byte step of the sizes a variant's file runs, for :func:`_fits`; MSCCL XML: with the
    options of every band's file but their size range."""
    if fmt == "mscclpp":
        from solver import mscclpp

        return lambda schedule: mscclpp.size_granularity(
            mscclpp.build_plan(schedule, _plan_options(args, order))
        )
    from solver import msccl

    options = msccl.ExportOptions(runtime, args.proto, args.instances, order)
    return lambda schedule: msccl.build_program(schedule, options).nchunksperloop


def export_bands(args, topo_or_schedule_loader, order, runtime: Runtime) -> int:
    """``export --bands``: one checked file per size band where ForestColl beats the library."""
    fmt = args.format or "msccl-xml"
    if fmt not in ("msccl-xml", "mscclpp"):
        raise ForestCollError("--bands writes msccl-xml or mscclpp files (--format)")
    if args.output == "-":
        raise ForestCollError("--bands writes a folder: give -o FOLDER")
    folder = Path(args.output)
    if folder.exists():
        if not folder.is_dir():
            raise ForestCollError(
                f"{printable(str(folder))} exists and is not a folder (--bands writes one file per band into -o FOLDER)"
            )
        others = other_files(folder, set())
        if others:
            raise ForestCollError(
                f"{printable(str(folder))} already holds {len(others)} file(s): --bands writes into a new or "
                "empty folder, which MSCCL_ALGO_DIR can name alone (RCCL loads every file of it and fails "
                "MSCCL init on a non-XML one, msccl_lifecycle.cc:177-185)"
            )
    topo = topo_or_schedule_loader()
    steps: dict = {}
    step_of = _step_of(args, fmt, order, runtime)
    bands, schedules = compute_bands(
        topo, args.collective, fits=lambda k, s: _fits(k, s, step_of, steps)
    )
    print(
        "predicted by the simulator (ForestColl variant vs the library model; algbw at the band's "
        "largest size, gain = library time / ForestColl time over the band's sizes):"
    )
    print(
        f"{'band (message size)':<20} {'winner':>8} {'ForestColl':>11} {'library':>11}  {'gain':>11}  library choice"
    )
    for b in bands:
        who = "library" if b.k == "library" else f"k={b.k or 'opt'}"
        print(
            f"{_fmt_range(b):<20} {who:>8} {b.fc_algbw:>6.1f} GB/s {b.lib_algbw:>6.1f} GB/s  "
            f"{b.gain_min:>4.2f}-{b.gain_max:.2f}x  {b.lib_choice}"
        )
    wins = [b for b in bands if b.k != "library"]
    if not wins:
        print("the library model wins at every size: no file written")
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    coll = args.collective.replace("-", "")
    for b in wins:
        hi = b.hi
        lo = max(b.lo, steps[b.k])  # below its step a file runs no size (the library does)
        name = f"forestcoll_{coll}_{b.lo}_{'max' if hi is None else hi + 1}"
        schedule = schedules[b.k]
        if fmt == "mscclpp":
            from solver import mscclpp

            cap = mscclpp.options.DEFAULT_MAX_MESSAGE
            if b.lo > cap:
                print(
                    f"band {_fmt_range(b)}: not written, MSCCL++ plans address at most {cap} bytes "
                    "(uint32 offsets)"
                )
                continue
            top = None if hi is not None and hi > cap else hi
            plan = replace(_plan_options(args, order), min_bytes=lo, max_bytes=top, name=name)
            path = folder / f"{name}.json"
            report = mscclpp.write_plan(path, schedule, plan)
        else:
            from solver import msccl

            path = folder / f"{name}.xml"
            options = msccl.ExportOptions(runtime, args.proto, args.instances, order, lo, hi, name)
            report = msccl.write_xml(path, schedule, options)
        written.append(path)
        print(f"wrote {printable(str(path))}: {report.summary()}")
    print(f"{len(written)} file(s) in {printable(str(folder))}; the library runs every other size")
    if fmt == "mscclpp":
        print_plan_environment(written)
    else:
        print_environment(written, runtime)
    return 0
