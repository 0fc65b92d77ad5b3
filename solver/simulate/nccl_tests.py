"""Import nccl-tests / rccl-tests results (text logs and ``-J`` JSON files).

Text layout (current nccl-tests; rccl-tests prints the same table)::

    # nccl-tests version 2.13.9 nccl-headers=... nccl-library=...
    # Collective test starting: all_gather_perf
    # nThread 1 nGpus 1 minBytes 1024 maxBytes ... step: 2(factor) warmup iters: 5 iters: 20 ...
    #       size   count  type  redop  root   time  algbw  busbw #wrong   time  algbw  busbw #wrong
    #        (B) (elements)                   (us) (GB/s) (GB/s)          (us) (GB/s) (GB/s)
            1024      256  float  none    -1  20.01   0.05   0.05      0  19.48   0.05   0.05      0

Older versions have no ``redop``/``root`` columns (all_gather) or no ``root`` (all_reduce) and call
the error column ``error`` (a maximum error, not a count); this reader maps columns by the header
line, so both work, as do ``-g 8`` runs (one process driving 8 GPUs: one ``#  Rank`` line per GPU)
and logs indented inside documentation. The out-of-place columns (the first ``time``/``algbw``) are
used when every row has them, else the in-place ones; :attr:`Measurement.variant` says which.
Rows whose ``#wrong`` count (of the variant used) is not 0 are dropped and listed in
:attr:`Measurement.wrong_sizes`: their time is not that of a correct collective.

JSON (``-J FILE``): an object with ``args`` (argv, the binary name tells the collective) and
``results``: objects with ``size``, ``count``, ``type``, ``redop``, ``root``, ``out_of_place`` /
``in_place`` = {``time`` (us), ``alg_bw``, ``bus_bw``, ``nwrong``}.

The collective comes from ``--collective`` or the log: "Collective test starting: X", the JSON
argv[0], a command line in the log (``all_gather_perf ...``), or the file name.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from solver.io.files import read_bytes
from solver.model.values import bounded_float, bounded_int
from solver.io.untrusted import parse_json as parse_untrusted_json
from solver.model.errors import ForestCollError
from solver.model.results import ResultTable

_BINARIES = {
    "all_gather": "allgather",
    "allgather": "allgather",
    "reduce_scatter": "reduce-scatter",
    "reducescatter": "reduce-scatter",
    "all_reduce": "allreduce",
    "allreduce": "allreduce",
}
_COLL_RE = re.compile(r"(all_?gather|reduce_?scatter|all_?reduce)(?:_perf)?", re.IGNORECASE)
MAX_LOG_BYTES = 50 * 1024 * 1024
MAX_SIZE_BYTES = 2**48  # one message (256 TiB; nccl-tests sweeps stop far below)
MAX_TIME_US = 1e12  # one measured time (about 11 days)
MAX_BANDWIDTH = 1e9  # GB/s


class LogFormatError(ForestCollError):
    """A measurement log cannot be read (names the file and line)."""


@dataclass(frozen=True)
class Measurement:
    """Rows of one imported log: sizes in bytes, times in seconds, bandwidths in GB/s."""

    collective: str
    tool: str  # "nccl-tests" or "rccl-tests"
    size_bytes: np.ndarray
    time: np.ndarray  # out-of-place
    algbw: np.ndarray
    busbw: np.ndarray
    time_in_place: np.ndarray
    algbw_in_place: np.ndarray
    source_file: str
    ranks: int = 0  # number of "#  Rank" lines in a text log (0 = unknown)
    variant: str = "out-of-place"  # the columns used for time/algbw_used
    wrong_sizes: tuple[int, ...] = ()  # sizes dropped because #wrong != 0

    @property
    def time_used(self) -> np.ndarray:
        """Times (s) of :attr:`variant`."""
        return self.time if self.variant == "out-of-place" else self.time_in_place

    @property
    def algbw_used(self) -> np.ndarray:
        """algbw (GB/s) of :attr:`variant`."""
        return self.algbw if self.variant == "out-of-place" else self.algbw_in_place

    def table(
        self, algorithm: str = "measured", predicted: ResultTable | None = None
    ) -> ResultTable:
        """A ResultTable with the measured columns (and the predicted ones of ``predicted``,
        interpolated on the measured sizes when given)."""
        n = len(self.size_bytes)
        pt = np.full(n, np.nan)
        pa = np.full(n, np.nan)
        if predicted is not None and len(predicted.size_bytes):
            lookup = {int(s): i for i, s in enumerate(predicted.size_bytes)}
            for j, s in enumerate(self.size_bytes):
                i = lookup.get(int(s))
                if i is not None:
                    pt[j] = predicted.predicted_time[i]
                    pa[j] = predicted.predicted_algbw[i]
        return ResultTable(
            collective=self.collective,
            algorithm=algorithm,
            source=self.tool,
            size_bytes=self.size_bytes.astype(np.int64),
            predicted_time=pt,
            predicted_algbw=pa,
            measured_time=self.time_used,
            measured_algbw=self.algbw_used,
            attrs={
                "file": os.path.basename(self.source_file),
                "compare_on": "time and algbw",
                "variant": self.variant,
            },
        )


def _collective_from_text(text: str) -> str | None:
    m = _COLL_RE.search(text)
    if not m:
        return None
    return _BINARIES[m.group(1).lower()]


def _check_collective(value: str | None, where: str) -> str:
    if value is None:
        raise LogFormatError(
            f"{where}: cannot tell the collective (no 'Collective test starting' line or binary "
            "name); pass --collective"
        )
    if value not in ("allgather", "reduce-scatter", "allreduce"):
        raise LogFormatError(f"{where}: unsupported collective {value!r}")
    return value


def _number(token: str, where: str, what: str) -> float:
    """A time (us) or bandwidth (GB/s) column: ``N/A`` is NaN, otherwise finite, >= 0 and
    within :data:`MAX_TIME_US` / :data:`MAX_BANDWIDTH` (bounded before conversion)."""
    if token.upper() in ("N/A", "NAN", "-NAN"):
        return math.nan
    limit = MAX_TIME_US if what == "time" else MAX_BANDWIDTH
    value = bounded_float(token, f"{where}: {what}", limit=limit, error=LogFormatError)
    if value < 0:
        raise LogFormatError(f"{where}: {what} must be >= 0, got {token[:40]}")
    return value


def _size(value, where: str) -> int:
    return bounded_int(
        value, f"{where}: size", minimum=0, maximum=MAX_SIZE_BYTES, error=LogFormatError
    )


def parse_text(text: str, where: str = "<log>", collective: str | None = None) -> Measurement:
    """Parse a nccl-tests / rccl-tests text log."""
    lines = text.splitlines()
    tool = "rccl-tests" if re.search(r"rccl|RCCL|hip|HIP|MI\d{3}", text) else "nccl-tests"
    coll = collective
    header: list[str] | None = None
    rows = []
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            body = line.lstrip("#").strip()
            if coll is None:
                m = re.match(r"Collective test starting:\s*(\S+)", body)
                if m:
                    coll = _collective_from_text(m.group(1))
            tokens = body.split()
            if tokens[:2] == ["size", "count"] or (
                tokens and tokens[0] == "size" and "time" in tokens
            ):
                header = tokens
            continue
        if coll is None and "_perf" in line:
            coll = _collective_from_text(line)
        if not line[0].isdigit():
            continue  # stray output (NCCL INFO lines, command echo...)
        if header is None:
            raise LogFormatError(f"{where}:{lineno}: data row before the column header line")
        tokens = line.split()
        names = header
        # the header may omit trailing columns like a timestamp; tolerate extra tokens
        if len(tokens) < len(names):
            raise LogFormatError(
                f"{where}:{lineno}: expected {len(names)} columns ({' '.join(names)}), got {len(tokens)}"
            )
        size = _size(tokens[0], f"{where}:{lineno}")
        time_idx = [i for i, n in enumerate(names) if n in ("time", "cputime")]
        wrong_idx = [i for i, n in enumerate(names) if n == "#wrong"]
        algbw_idx = [i for i, n in enumerate(names) if n == "algbw"]
        busbw_idx = [i for i, n in enumerate(names) if n == "busbw"]
        if not time_idx or not algbw_idx or not busbw_idx:
            raise LogFormatError(f"{where}: the column header has no time/algbw/busbw columns")
        vals = []
        for idx_list, what in ((time_idx, "time"), (algbw_idx, "algbw"), (busbw_idx, "busbw")):
            vals.append([_number(tokens[i], f"{where}:{lineno}", what) for i in idx_list])
        t_us, alg, bus = vals
        if not (t_us[0] > 0) and not math.isnan(t_us[0]):
            raise LogFormatError(f"{where}:{lineno}: time must be > 0, got {tokens[time_idx[0]]}")
        wrong = [_wrong_count(tokens[i]) for i in wrong_idx]
        rows.append((size, t_us, alg, bus, wrong))
    if header is None:
        raise LogFormatError(
            f"{where}: no nccl-tests column header ('# size count type ...') found"
        )
    if not rows:
        raise LogFormatError(f"{where}: no result rows under the column header")
    coll = _check_collective(coll or _collective_from_text(os.path.basename(where)), where)
    m = _measurement(coll, tool, rows, where)
    ranks = len({int(x) for x in re.findall(r"^\s*#\s+Rank\s+(\d+)", text, re.MULTILINE)})
    return replace(m, ranks=ranks)


def _wrong_count(token: str) -> int:
    """A ``#wrong`` cell: a count, or ``N/A`` (not checked: 0)."""
    if token.upper() == "N/A":
        return 0
    try:
        return int(float(token))
    except ValueError:
        return 0


def _measurement(coll: str, tool: str, rows: list, where: str) -> Measurement:
    t_out = [r[1][0] for r in rows]
    variant = "out-of-place" if all(t > 0 for t in t_out) else "in-place"
    col = 0 if variant == "out-of-place" else 1
    wrong_sizes = tuple(
        r[0] for r in rows if len(r) > 4 and len(r[4]) > col and r[4][col] != 0
    )
    kept = [r for r in rows if r[0] not in wrong_sizes]
    if not kept:
        raise LogFormatError(f"{where}: every row has #wrong != 0; nothing to import")
    size = np.array([r[0] for r in kept], np.int64)
    t = np.array([r[1][0] for r in kept]) * 1e-6
    t_in = np.array([r[1][1] if len(r[1]) > 1 else math.nan for r in kept]) * 1e-6
    alg = np.array([r[2][0] for r in kept])
    alg_in = np.array([r[2][1] if len(r[2]) > 1 else math.nan for r in kept])
    bus = np.array([r[3][0] for r in kept])
    if variant == "in-place" and not np.all(t_in > 0):
        raise LogFormatError(f"{where}: rows without a time in either out-of-place or in-place")
    return Measurement(
        coll, tool, size, t, alg, bus, t_in, alg_in, where, variant=variant, wrong_sizes=wrong_sizes
    )


def parse_json(text: str, where: str = "<json>", collective: str | None = None) -> Measurement:
    """Parse the ``-J`` JSON output of nccl-tests."""
    doc = parse_untrusted_json(text, where, error=LogFormatError)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise LogFormatError(f"{where}: not an nccl-tests JSON file (no 'results' list)")
    coll = collective
    args = doc.get("args")
    if coll is None and isinstance(args, list) and args:
        coll = _collective_from_text(os.path.basename(str(args[0])))
    tool = "rccl-tests" if "rccl" in str(doc.get("args", "")).lower() else "nccl-tests"
    rows = []
    for i, rec in enumerate(doc["results"]):
        w = f"{where}: results[{i}]"
        if not isinstance(rec, dict):
            raise LogFormatError(f"{w}: not an object")
        if "size" not in rec:
            raise LogFormatError(f"{w}: missing 'size'")
        size = _size(rec["size"], w)
        parts = []
        wrong = []
        for key in ("out_of_place", "in_place"):
            part = rec.get(key)
            if part is None:
                parts.append((math.nan, math.nan, math.nan))
                continue
            if not isinstance(part, dict):
                raise LogFormatError(f"{w}: '{key}' must be an object")
            t = part.get("time", part.get("cpu_time"))
            vals = []
            for what, v in (
                ("time", t),
                ("alg_bw", part.get("alg_bw")),
                ("bus_bw", part.get("bus_bw")),
            ):
                if v is None:
                    raise LogFormatError(f"{w}: '{key}' has no '{what}'")
                vals.append(_number(str(v), w, what))
            parts.append(tuple(vals))
            wrong.append(_wrong_count(str(part.get("nwrong", 0))))
        (t0, a0, b0), (t1, a1, _b1) = parts
        if t0 == 0:
            raise LogFormatError(f"{w}: time must be > 0")
        wrong += [0] * (2 - len(wrong))
        rows.append((size, [t0, t1], [a0, a1], [b0], wrong))
    if not rows:
        raise LogFormatError(f"{where}: 'results' is empty")
    coll = _check_collective(coll or _collective_from_text(os.path.basename(where)), where)
    return _measurement(coll, tool, rows, where)


def load_log(path: str | os.PathLike, collective: str | None = None) -> Measurement:
    """Read a log file (JSON if it starts with '{', else the text table)."""
    p = Path(path)
    data = read_bytes(p, MAX_LOG_BYTES, "a test log", LogFormatError)
    text = data.decode("utf-8", errors="replace")
    if text.lstrip().startswith("{"):
        return parse_json(text, str(p), collective)
    return parse_text(text, str(p), collective)
