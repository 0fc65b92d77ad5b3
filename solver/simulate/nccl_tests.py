"""Import nccl-tests / rccl-tests results (text logs and ``-J`` JSON files).

Text layout (current nccl-tests, ``src/util.cu``; rccl-tests prints the same table)::

    # nccl-tests version 2.13.9 nccl-headers=... nccl-library=...
    # Collective test starting: all_gather_perf
    # nThread 1 nGpus 1 minBytes 1024 maxBytes ... step: 2(factor) warmup iters: 5 iters: 20 ...
    #       size   count  type  redop  root   time  algbw  busbw #wrong   time  algbw  busbw #wrong
    #        (B) (elements)                   (us) (GB/s) (GB/s)          (us) (GB/s) (GB/s)
            1024      256  float  none    -1  20.01   0.05   0.05      0  19.48   0.05   0.05      0
    ...
    # Avg bus bandwidth    : 12.3
    # Collective test concluded: all_gather_perf

What is read:

- **Sections.** A log may hold several runs ("run all collectives" scripts): each starts at
  ``# Collective test starting: X`` (or, in logs of older nccl-tests, at ``# nThread``) and ends at
  ``# Collective test concluded`` / ``# Avg bus bandwidth``. A section's collective comes from that
  line, else from a binary name (``all_gather_perf``, a banner ``=== all_gather_perf ===``) in the
  lines before it. :func:`read_sections` returns every section; :func:`parse_text` selects one (by
  ``collective``, or the only one of allgather / reduce-scatter / allreduce) and refuses a log
  where that is ambiguous.
- **Columns** are mapped by the header line, so old layouts (no ``redop``/``root``, ``error``
  instead of ``#wrong``), ``-I`` per-iteration columns and ``-T`` timestamps all work. The
  out-of-place columns are used when every row has them, else the in-place ones
  (:attr:`Measurement.variant`). Rows whose ``#wrong`` (of that variant) is not 0 are dropped and
  listed in :attr:`Measurement.wrong_sizes`. A size printed several times (``-N`` cycles, or the
  zero-byte rows small sizes round to) keeps its median-time row (:attr:`Measurement.repeats`).
- **Launcher prefixes**: ``mpirun --tag-output`` (``[1,0]<stdout>:``), Hydra ``-prepend-rank``
  (``[0]``, also glued inside a row as it is printed in pieces), ``srun -l`` (``0: ``) and a
  SkyPilot job log's ``(head, rank=0, pid=3808)`` before any of them.
- **NCCL INFO/WARN lines** between rows or spliced into one (NCCL writes its debug lines to the
  same stdout while nccl-tests prints a row in three pieces): the INFO text is cut out and the
  row's pieces joined.
- **Documents**: a table indented in a markdown or text file; only lines shaped like a result
  row (size, count, data type) are rows, so prose such as a numbered list item is skipped. A log
  printed without its ``#`` marks (the nThread line, the column header and the closing lines
  start the line instead) reads the same.
- **Run settings** (:attr:`Measurement.settings`): nccl/rccl version (``NCCL version 2.21.5``,
  or the ``nccl-library=22105`` code), every ``NCCL_*``/``RCCL_*`` variable NCCL reports as
  ``set by environment`` (or, failing that, one written ``NCCL_X=value`` on a command line in the
  log), and ``nvls`` = on/off when the log shows it (``N nvls channels``, NVLS multicast support,
  ``NCCL_NVLS_ENABLE``, an ``NCCL_ALGO`` list without NVLS).

Everything is read line by line with anchored patterns (linear time in the file size); numbers are
bounded before conversion; a UTF-8 BOM is ignored.

JSON (``-J FILE``): an object with ``args`` (argv, the binary name tells the collective) and
``results``: objects with ``size``, ``count``, ``type``, ``redop``, ``root``, ``out_of_place`` /
``in_place`` = {``time`` (us), ``alg_bw``, ``bus_bw``, ``nwrong``}.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from solver.io.files import read_bytes
from solver.io.untrusted import parse_json as parse_untrusted_json
from solver.model.errors import ForestCollError
from solver.model.results import ResultTable
from solver.model.values import bounded_float, bounded_int

#: the collectives ``measure import`` compares with ForestColl
SUPPORTED = ("allgather", "reduce-scatter", "allreduce")
#: nccl-tests binaries (``<name>_perf``) and the collective each measures; longest names first
#: so that a suffix match picks ``all_reduce`` before ``reduce``
_BINARIES = {
    "reduce_scatter": "reduce-scatter",
    "reducescatter": "reduce-scatter",
    "all_gather": "allgather",
    "allgather": "allgather",
    "all_reduce": "allreduce",
    "allreduce": "allreduce",
    "alltoallv": "alltoallv",
    "alltoall": "alltoall",
    "all_to_all": "alltoall",
    "hypercube": "hypercube",
    "broadcast": "broadcast",
    "sendrecv": "sendrecv",
    "scatter": "scatter",
    "gather": "gather",
    "reduce": "reduce",
}
_PERF_RE = re.compile(r"([A-Za-z_]{1,40})_perf")
_DATA_TYPES = re.compile(
    r"(?:u?int(?:8|16|32|64)|half|float(?:16|32|64)?|double|bfloat16|bf16|fp16|fp32|"
    r"f8e4m3|f8e5m2|fp8_e4m3|fp8_e5m2|fp8|\w{0,16}float\w{0,16})",
    re.IGNORECASE,
)
_SETTING_RE = re.compile(r"\b((?:NCCL|RCCL)_[A-Z0-9_]{1,40}) set by environment to ([^\s]{0,200})")
_ASSIGN_RE = re.compile(r"\b((?:NCCL|RCCL)_[A-Z0-9_]{1,40})=([A-Za-z0-9_,.^:;+-]{1,100})")
_VERSION_RE = re.compile(
    r"\b(NCCL|RCCL) version ?:? ?(\d{1,3}\.\d{1,3}\.\d{1,3}[0-9A-Za-z.+_-]{0,40})"
)
_TESTS_VERSION_RE = re.compile(
    r"^(nccl|rccl)-tests version (\S{1,40}).{0,80}?nccl-library=(\d{1,9})", re.IGNORECASE
)
#: nccl-tests' own comment lines when printed without their leading '#' (terminal renderings in
#: documentation drop it): the nThread line, the column header, the two closing lines
_UNMARKED_RE = re.compile(
    r"(?:nThread \d{1,6} nGpus |size +count +type .{0,80}\btime\b.{0,40}\balgbw\b"
    r"|Avg bus bandwidth +:|Out of bounds values +:|Collective test (?:starting|concluded):)"
)
_NVLS_CHANNELS_RE = re.compile(r"\b(\d{1,6}) nvls channels")
_RCCL_HINT = re.compile(r"\b(?:rccl|RCCL|HIP|hipMalloc|gfx9\d{2}|MI\d{3}|Instinct)")
_INFO_MARKERS = (" NCCL INFO", " NCCL WARN", " RCCL INFO", " RCCL WARN", " NCCL TRACE")
_TAG_RE = re.compile(r"(\[[^\]\s]{1,200}\]<std(?:out|err)>:|\[\d{1,7}\](?= |$)|\d{1,7}: )")
#: a SkyPilot / Ray job-log prefix: "(head, rank=0, pid=3808) ", "(worker1, rank=1, pid=2769, ip=...) "
_JOB_PREFIX_RE = re.compile(r"\([A-Za-z0-9_.-]{1,64}, rank=\d{1,7}[^()]{0,200}\) ")
MAX_LOG_BYTES = 50 * 1024 * 1024
MAX_SIZE_BYTES = 2**48  # one message (256 TiB; nccl-tests sweeps stop far below)
MAX_TIME_US = 1e12  # one measured time (about 11 days)
MAX_BANDWIDTH = 1e9  # GB/s
MAX_WRONG = 2**62  # a #wrong count (elements)
MAX_RANK = 10**7
MAX_SETTINGS = 64  # variables kept per section (a log cannot grow the report without bound)


class LogFormatError(ForestCollError):
    """A measurement log cannot be read (names the file and line)."""


@dataclass(frozen=True)
class Measurement:
    """Rows of one imported log section: sizes in bytes, times in seconds, bandwidths in GB/s."""

    collective: str
    tool: str  # "nccl-tests" or "rccl-tests"
    size_bytes: np.ndarray
    time: np.ndarray  # out-of-place
    algbw: np.ndarray
    busbw: np.ndarray
    time_in_place: np.ndarray
    algbw_in_place: np.ndarray
    source_file: str
    ranks: int = 0  # number of "#  Rank" lines in the section (0 = unknown)
    variant: str = "out-of-place"  # the columns used for time/algbw_used
    wrong_sizes: tuple[int, ...] = ()  # sizes dropped because #wrong != 0
    #: the run's settings the log shows (see the module notes): "nccl_version", "nvls",
    #: "NCCL_ALGO", "NCCL_PROTO", "NCCL_MAX_NCHANNELS", ... (text values, printable ASCII)
    settings: dict = field(default_factory=dict)
    #: where each setting was read ("line 12, NCCL INFO", "line 3, command line")
    settings_from: dict = field(default_factory=dict)
    section: str = ""  # "all_gather_perf, lines 3-40" (empty for JSON)
    #: the sections of the file, one line each ("allgather: lines 3-40, 23 rows")
    sections: tuple[str, ...] = ()
    repeats: int = 1  # most rows printed for one size (-N cycles); the median-time one is kept

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
                "settings": dict(self.settings),
            },
        )


@dataclass
class Section:
    """One run inside a text log (see :func:`read_sections`)."""

    first_line: int
    last_line: int = 0
    binary: str = ""  # "all_gather_perf" (from the log), "" when the log does not say
    collective: str | None = None
    header: list[str] | None = None
    header_line: int = 0
    rows: list = field(default_factory=list)  # (lineno, tokens)
    ranks: dict = field(default_factory=dict)  # rank number -> line
    settings: dict = field(default_factory=dict)
    settings_from: dict = field(default_factory=dict)
    nthread_seen: bool = False
    closed: bool = False

    def describe(self) -> str:
        name = self.collective or "unknown collective"
        return f"{name}: lines {self.first_line}-{self.last_line}, {len(self.rows)} rows"


def _collective_of(name: str) -> str | None:
    """The collective of a binary or file name (``all_gather_perf``, ``x_allreduce.log``)."""
    for m in _PERF_RE.finditer(name):
        found = _binary_collective(m.group(1))
        if found:
            return found
    low = name.lower()
    for key in (
        "reduce_scatter",
        "reducescatter",
        "all_gather",
        "allgather",
        "all_reduce",
        "allreduce",
    ):
        if key in low:
            return _BINARIES[key]
    return None


def _binary_collective(stem: str) -> str | None:
    stem = stem.lower()
    for key, coll in _BINARIES.items():  # longest first
        if stem.endswith(key):
            return coll
    return None


def _check_collective(value: str | None, where: str) -> str:
    if value is None:
        raise LogFormatError(
            f"{where}: cannot tell the collective (no 'Collective test starting' line or binary "
            "name); pass --collective"
        )
    if value not in SUPPORTED:
        raise LogFormatError(
            f"{where}: unsupported collective {value!r} (measure import takes "
            + ", ".join(SUPPORTED)
            + ")"
        )
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


def _wrong_count(token: str, where: str) -> int:
    """A ``#wrong`` cell: a count (nccl-tests prints it with ``%g``: ``0``, ``1e+06``), or
    ``N/A`` (not checked: 0). Anything else (``inf``, ``1e400``, text) is refused."""
    if token.upper() == "N/A":
        return 0
    value = bounded_float(token, f"{where}: #wrong", limit=float(MAX_WRONG), error=LogFormatError)
    if value < 0:
        raise LogFormatError(f"{where}: #wrong must be >= 0, got {token[:40]}")
    return int(value)


def _printable(text: str, limit: int = 100) -> str:
    """Printable ASCII only (settings go to the terminal and into HDF5 attributes)."""
    return "".join(c if " " <= c <= "~" else "?" for c in text[:limit])


# ----------------------------------------------------------------------------- line reading


def _strip_tag(line: str) -> str:
    """Drop a launcher's prefix (``[1,0]<stdout>:``, ``[0]``, ``0: ``) at the start of the line
    and, for the bracketed ones, where the launcher glued it inside the line (a row printed in
    pieces gets the tag before each piece)."""
    body = line.lstrip()
    job = _JOB_PREFIX_RE.match(body)
    if job:
        body = body[job.end() :].lstrip()
    m = _TAG_RE.match(body)
    if not m:
        return body if job else line
    tag = m.group(1)
    rest = body[m.end() :]
    if tag.startswith("["):
        parts = rest.split(tag)
        if len(parts) > 1:  # glued copies: "-1[0]    1626.5" -> "-1     1626.5"
            out = [parts[0]]
            for piece in parts[1:]:
                if out[-1] and not out[-1][-1].isspace():
                    out.append(" ")
                else:
                    out.append(tag)  # a copy after a blank is text (e.g. a cudaDev "[0]")
                out.append(piece)
            rest = "".join(out)
    return rest


def _split_info(line: str) -> tuple[str, str]:
    """(row text before an NCCL INFO/WARN line spliced into it, the INFO text); (line, "") when
    the line has no INFO marker. The INFO line starts with ``host:pid:tid [dev]``; when NCCL
    wrote it right after a row piece, the host name is glued to the row's last cell, which is
    an integer (``root`` -1 or ``#wrong`` 0) or ``N/A``: the shortest such prefix is cut off."""
    pos = -1
    for marker in _INFO_MARKERS:
        p = line.find(marker)
        if p >= 0 and (pos < 0 or p < pos):
            pos = p
    if pos < 0:
        return line, ""
    head = line[:pos].rstrip()
    if head.endswith("]"):  # the "[dev]" cell
        cut = head.rfind("[")
        head = head[:cut].rstrip() if cut >= 0 else head
    start = max(head.rfind(" "), head.rfind("\t")) + 1  # the host:pid:tid token
    glued = head[start:]
    before = head[:start]
    cell = ""
    if before.strip():
        if glued[:3].upper() == "N/A":
            cell = glued[:3]
        elif glued[:1] == "-" and glued[1:2].isdigit():
            cell = glued[:2]
        elif glued[:1].isdigit():
            cell = glued[:1]
    return before + cell, line[start + len(cell) :]


def _is_row_start(tokens: list[str]) -> bool:
    return (
        len(tokens) >= 3
        and tokens[0].isdigit()
        and tokens[1].isdigit()
        and _DATA_TYPES.fullmatch(tokens[2]) is not None
    )


def _is_number(token: str) -> bool:
    if token.upper() == "N/A":
        return True
    if len(token) > 40:
        return token.lstrip("-").replace(".", "", 1).isdigit()
    try:
        float(token)
    except ValueError:
        return False
    return True


def _library_version(code: str) -> str:
    """``nccl-library=22105`` -> 2.21.5 (codes >= 2.9 are X*10000+Y*100+Z, older X*1000+Y*100+Z)."""
    n = int(code)
    if n >= 20900:
        return f"{n // 10000}.{n % 10000 // 100}.{n % 100}"
    return f"{n // 1000}.{n % 1000 // 100}.{n % 100}"


def _note_setting(sec: Section, key: str, value: str, where: str, strong: bool) -> None:
    """Record a setting; values NCCL reports (``strong``) win over ones from a command line."""
    value = _printable(value.strip().rstrip("."))
    known = sec.settings_from.get(key, "")
    if key in sec.settings and (known.endswith("NCCL INFO") and not strong):
        return
    if key not in sec.settings and len(sec.settings) >= MAX_SETTINGS:
        return
    if key in sec.settings and sec.settings[key] != value and strong == known.endswith("NCCL INFO"):
        if value not in sec.settings[key].split(" | "):
            value = sec.settings[key] + " | " + value  # two values seen: keep both
    sec.settings[key] = value
    sec.settings_from[key] = where


def _scan_settings(sec: Section, text: str, lineno: int, info: bool) -> None:
    tag = f"line {lineno}, " + ("NCCL INFO" if info else "command line")
    m = _VERSION_RE.search(text)
    if m:
        _note_setting(sec, f"{m.group(1).lower()}_version", m.group(2), tag, True)
    if info:
        m = _SETTING_RE.search(text)
        if m:
            _note_setting(sec, m.group(1), m.group(2), tag, True)
        m = _NVLS_CHANNELS_RE.search(text)
        if m:
            _note_setting(sec, "nvls_channels", m.group(1), tag, True)
        if "NVLS multicast support is not available" in text:
            _note_setting(sec, "nvls_multicast", "not available", tag, True)
        elif "NVLS multicast support is available" in text:
            _note_setting(sec, "nvls_multicast", "available", tag, True)
        elif " NVLS comm " in text:
            _note_setting(sec, "nvls_comm", "yes", tag, True)
    else:
        for m in _ASSIGN_RE.finditer(text[:4000]):
            _note_setting(sec, m.group(1), m.group(2), tag, False)


def algo_allows(value: str, algorithm: str, collective: str) -> bool:
    """Whether an ``NCCL_ALGO`` value lets NCCL use ``algorithm`` (lower case, e.g. "nvls") for
    ``collective``: a list (``ring,tree``), an exclusion (``^nvls``), or per-collective parts
    (``allreduce:nvls,ring;allgather:ring``); NVLSTree counts as NVLS."""
    value = value.lower().replace(" ", "")
    coll = collective.replace("-", "")
    chosen = None
    for part in value.split(";"):
        if ":" in part:
            name, _, algos = part.partition(":")
            if name.replace("_", "") == coll:
                chosen = algos
        elif chosen is None:
            chosen = part
    if chosen is None:
        return True
    exclude = chosen.startswith("^")
    names = {a for a in chosen.lstrip("^").split(",") if a}
    hit = any(a == algorithm or a.startswith(algorithm) for a in names)
    return not hit if exclude else hit


def nvls_state(settings: dict, collective: str) -> str:
    """ "on", "off" or "" (the log does not say) for NVLS in a run with these settings."""
    if settings.get("NCCL_NVLS_ENABLE", "").strip() == "0":
        return "off"
    algo = settings.get("NCCL_ALGO")
    if algo and " | " not in algo and not algo_allows(algo, "nvls", collective):
        return "off"
    if settings.get("nvls_multicast") == "not available":
        return "off"
    channels = settings.get("nvls_channels", "")
    if channels.isdigit():
        return "on" if int(channels) > 0 else "off"
    if settings.get("nvls_comm") == "yes":
        return "on"
    return ""


def read_sections(text: str, where: str = "<log>") -> list[Section]:
    """Every run (section) of a text log, with its rows (``(lineno, tokens)``), header, ranks
    and settings. Linear in the text; refuses (:class:`LogFormatError`) what it cannot place."""
    if text.startswith("\ufeff"):
        text = text[1:]
    sections: list[Section] = []
    gap = Section(first_line=1)  # lines outside any section: settings/binary for the next one
    gap_binary = ""
    current: Section | None = None
    pending: tuple[int, list[str]] | None = None  # a row still missing cells
    tool_rccl = False

    def finish_row():
        nonlocal pending
        if pending is None:
            return
        lineno, tokens = pending
        pending = None
        assert current is not None and current.header is not None
        if len(tokens) < len(current.header):
            raise LogFormatError(
                f"{where}:{lineno}: expected {len(current.header)} columns "
                f"({' '.join(current.header)}), got {len(tokens)}"
            )
        current.rows.append((lineno, tokens))

    def open_section(lineno: int, binary: str) -> Section:
        nonlocal current, gap, gap_binary
        finish_row()
        if current is not None and not current.closed:
            current.last_line = lineno - 1
        sec = Section(first_line=lineno, binary=binary or gap_binary)
        sec.settings.update(gap.settings)
        sec.settings_from.update(gap.settings_from)
        sec.collective = _collective_of(sec.binary) if sec.binary else None
        sections.append(sec)
        gap = Section(first_line=lineno)
        gap_binary = ""
        current = sec
        return sec

    def close_section(lineno: int):
        nonlocal current
        finish_row()
        if current is not None:
            current.closed = True
            current.last_line = lineno
        current = None

    lines = text.splitlines()
    for lineno, raw in enumerate(lines, 1):
        if not raw or raw.isspace():
            continue
        line = _strip_tag(raw.lstrip("\ufeff"))
        if not tool_rccl and _RCCL_HINT.search(line[:400]):
            tool_rccl = True
        line, info = _split_info(line)
        if info:
            _scan_settings(current if current is not None else gap, info, lineno, True)
        stripped = line.strip()
        if stripped.startswith("```"):
            continue
        if not stripped:
            continue
        if not stripped.startswith("#") and _UNMARKED_RE.match(stripped):
            stripped = (
                "# " + stripped
            )  # a log whose '#' marks were lost (dstack's docs print it so)
        if stripped.startswith("#"):
            body = stripped.lstrip("#").strip()
            tokens = body.split()
            if body.startswith("Collective test starting:"):
                open_section(lineno, tokens[3] if len(tokens) > 3 else "")
                continue
            if body.startswith("Collective test concluded"):
                if current is not None:
                    close_section(lineno)
                continue
            if body.startswith("nThread "):
                if current is None or current.nthread_seen:
                    open_section(lineno, "")
                current.nthread_seen = True
                continue
            m = _TESTS_VERSION_RE.match(body)
            if m:
                target = current if current is not None else gap
                _note_setting(
                    target, "nccl_tests_version", m.group(2), f"line {lineno}, header", True
                )
                _note_setting(
                    target,
                    "nccl_library",
                    _library_version(m.group(3)),
                    f"line {lineno}, header",
                    True,
                )
                if m.group(1).lower() == "rccl":
                    tool_rccl = True
                continue
            if tokens[:1] == ["Rank"] and len(tokens) > 1:
                if current is None:  # "# Using devices" without a "# nThread" line first
                    open_section(lineno, "")
                rank = bounded_int(
                    tokens[1],
                    f"{where}:{lineno}: rank",
                    minimum=0,
                    maximum=MAX_RANK,
                    error=LogFormatError,
                )
                if rank in current.ranks:
                    raise LogFormatError(
                        f"{where}:{lineno}: rank {rank} is listed twice (lines "
                        f"{current.ranks[rank]} and {lineno}): several independent runs were "
                        "printed into one section (nccl-tests without MPI started by mpirun?); "
                        "import one run's output"
                    )
                current.ranks[rank] = lineno
                continue
            if tokens[:1] == ["size"] and ("time" in tokens or "cputime" in tokens):
                if current is None:
                    open_section(lineno, "")
                elif current.rows or pending is not None:
                    open_section(lineno, current.binary)  # a second table: another run
                current.header = tokens
                current.header_line = lineno
                continue
            if body.startswith(("Avg bus bandwidth", "Out of bounds values")):
                if current is not None and current.header is not None:
                    finish_row()
                    if body.startswith("Avg bus bandwidth"):
                        close_section(lineno)
                continue
            continue
        tokens = stripped.split()
        if current is not None and current.header is not None and not current.closed:
            if _is_row_start(tokens):
                finish_row()
                pending = (lineno, tokens)
                if len(tokens) >= len(current.header):
                    finish_row()
                continue
            if pending is not None and _is_number(tokens[0]):
                pending[1].extend(tokens)
                if len(pending[1]) >= len(current.header):
                    finish_row()
                continue
        elif _is_row_start(tokens):
            raise LogFormatError(f"{where}:{lineno}: data row before the column header line")
        # prose, a command line or a banner
        if pending is not None:
            finish_row()
        binary = next(
            (
                m.group(0)
                for m in _PERF_RE.finditer(stripped[:4000])
                if _binary_collective(m.group(1))
            ),
            "",
        )
        if current is not None and current.rows and binary:
            close_section(lineno - 1)  # the next run's command: this section is over
        if current is None:
            if binary and not gap_binary:
                gap_binary = binary
            _scan_settings(gap, stripped, lineno, False)
        else:
            if binary and not current.binary:
                current.binary = binary
                current.collective = _collective_of(binary)
            _scan_settings(current, stripped, lineno, False)
    finish_row()
    last = len(lines)
    for sec in sections:
        if not sec.last_line:
            sec.last_line = last
        sec.settings["tool"] = "rccl-tests" if tool_rccl else "nccl-tests"
    return [s for s in sections if s.header is not None or s.rows]


def _pick(sections: list[Section], where: str, collective: str | None) -> Section:
    """The section to import (see :func:`parse_text`)."""
    with_rows = [s for s in sections if s.rows]
    if not sections or all(s.header is None for s in sections):
        raise LogFormatError(
            f"{where}: no nccl-tests column header ('# size count type ...') found"
        )
    if not with_rows:
        raise LogFormatError(f"{where}: no result rows under the column header")
    if len(with_rows) == 1:
        sec = with_rows[0]
        if collective is not None and sec.collective is not None and sec.collective != collective:
            raise LogFormatError(
                f"{where}: the log holds {sec.collective} only (lines {sec.first_line}-"
                f"{sec.last_line}), not {collective}"
            )
        return sec
    listing = "; ".join(s.describe() for s in with_rows)
    unknown = [s for s in with_rows if s.collective is None]
    if unknown:
        raise LogFormatError(
            f"{where}: {len(with_rows)} runs in one log and the one at lines "
            f"{unknown[0].first_line}-{unknown[0].last_line} names no collective; cut the log "
            "to one run"
        )
    if collective is None:
        supported = [s for s in with_rows if s.collective in SUPPORTED]
        if len(supported) == 1:
            return supported[0]
        raise LogFormatError(
            f"{where}: {len(with_rows)} runs in one log ({listing}); pass --collective to pick one"
        )
    match = [s for s in with_rows if s.collective == collective]
    if not match:
        raise LogFormatError(f"{where}: no {collective} run in the log ({listing})")
    if len(match) > 1:
        lines = ", ".join(f"{s.first_line}-{s.last_line}" for s in match)
        raise LogFormatError(
            f"{where}: {len(match)} {collective} runs in one log (lines {lines}); cut the log "
            "to one run"
        )
    return match[0]


def parse_text(text: str, where: str = "<log>", collective: str | None = None) -> Measurement:
    """Parse a nccl-tests / rccl-tests text log: the section of ``collective`` (or the log's
    only allgather / reduce-scatter / allreduce run). A log without any collective name (e.g. an
    excerpt of rows) takes ``collective``, else the file name's."""
    sections = read_sections(text, where)
    sec = _pick(sections, where, collective)
    coll = sec.collective or collective or _collective_of(os.path.basename(where))
    coll = _check_collective(coll, where)
    header = sec.header
    assert header is not None
    time_idx = [i for i, n in enumerate(header) if n in ("time", "cputime")]
    wrong_idx = [i for i, n in enumerate(header) if n in ("#wrong", "error")]
    algbw_idx = [i for i, n in enumerate(header) if n == "algbw"]
    busbw_idx = [i for i, n in enumerate(header) if n == "busbw"]
    if not time_idx or not algbw_idx or not busbw_idx:
        raise LogFormatError(
            f"{where}:{sec.header_line}: the column header has no time/algbw/busbw columns"
        )
    type_idx = header.index("type") if "type" in header else None
    redop_idx = header.index("redop") if "redop" in header else None
    kinds: dict[tuple[str, str], int] = {}
    rows = []
    for lineno, tokens in sec.rows:
        w = f"{where}:{lineno}"
        size = _size(tokens[0], w)
        t_us = [_number(tokens[i], w, "time") for i in time_idx]
        alg = [_number(tokens[i], w, "algbw") for i in algbw_idx]
        bus = [_number(tokens[i], w, "busbw") for i in busbw_idx]
        if not (t_us[0] > 0) and not math.isnan(t_us[0]):
            raise LogFormatError(f"{w}: time must be > 0, got {tokens[time_idx[0]]}")
        # "error" (old layout) is a maximum error, not a count: only #wrong drops rows
        wrong = [_wrong_count(tokens[i], w) if header[i] == "#wrong" else 0 for i in wrong_idx]
        kind = (
            tokens[type_idx] if type_idx is not None else "",
            tokens[redop_idx] if redop_idx is not None else "",
        )
        kinds.setdefault(kind, lineno)
        rows.append((size, t_us, alg, bus, wrong))
    if len(kinds) > 1:
        shown = ", ".join(
            f"{t} {o}".strip() + f" (line {n})" for (t, o), n in list(kinds.items())[:4]
        )
        raise LogFormatError(
            f"{where}: the {coll} run mixes {len(kinds)} data types / reductions ({shown}); "
            "cut the log to one"
        )
    m = _measurement(coll, sec.settings.get("tool", "nccl-tests"), rows, where)
    span = f"lines {sec.first_line}-{sec.last_line}"
    settings = {k: v for k, v in sec.settings.items() if k != "tool"}
    state = nvls_state(settings, coll)
    if state:
        settings["nvls"] = state
    return replace(
        m,
        ranks=len(sec.ranks),
        settings=settings,
        settings_from={k: v for k, v in sec.settings_from.items() if k in settings},
        section=f"{sec.binary}, {span}" if sec.binary else span,
        sections=tuple(s.describe() for s in sections if s.rows),
    )


def _measurement(coll: str, tool: str, rows: list, where: str) -> Measurement:
    t_out = [r[1][0] for r in rows]
    variant = "out-of-place" if all(t > 0 for t in t_out) else "in-place"
    col = 0 if variant == "out-of-place" else 1
    wrong_sizes = tuple(
        dict.fromkeys(r[0] for r in rows if len(r) > 4 and len(r[4]) > col and r[4][col] != 0)
    )
    kept = [r for r in rows if r[0] not in wrong_sizes]
    if not kept:
        raise LogFormatError(f"{where}: every row has #wrong != 0; nothing to import")
    if variant == "in-place" and not all(len(r[1]) > 1 and r[1][1] > 0 for r in kept):
        raise LogFormatError(f"{where}: rows without a time in either out-of-place or in-place")
    # one row per size: the median-time row of repeated sizes (-N cycles, sizes rounded to 0)
    by_size: dict[int, list] = {}
    for r in kept:
        by_size.setdefault(r[0], []).append(r)
    repeats = max(len(v) for v in by_size.values())
    chosen = []
    for size in sorted(by_size):
        group = sorted(by_size[size], key=lambda r: r[1][col] if len(r[1]) > col else math.inf)
        chosen.append(group[(len(group) - 1) // 2])
    size = np.array([r[0] for r in chosen], np.int64)
    t = np.array([r[1][0] for r in chosen]) * 1e-6
    t_in = np.array([r[1][1] if len(r[1]) > 1 else math.nan for r in chosen]) * 1e-6
    alg = np.array([r[2][0] for r in chosen])
    alg_in = np.array([r[2][1] if len(r[2]) > 1 else math.nan for r in chosen])
    bus = np.array([r[3][0] for r in chosen])
    return Measurement(
        coll,
        tool,
        size,
        t,
        alg,
        bus,
        t_in,
        alg_in,
        where,
        variant=variant,
        wrong_sizes=wrong_sizes,
        repeats=repeats,
    )


def parse_json(text: str, where: str = "<json>", collective: str | None = None) -> Measurement:
    """Parse the ``-J`` JSON output of nccl-tests."""
    doc = parse_untrusted_json(text, where, error=LogFormatError)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise LogFormatError(f"{where}: not an nccl-tests JSON file (no 'results' list)")
    coll = collective
    args = doc.get("args")
    if coll is None and isinstance(args, list) and args:
        coll = _collective_of(os.path.basename(str(args[0])))
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
            nwrong = part.get("nwrong", 0)
            wrong.append(_wrong_count("N/A" if nwrong is None else str(nwrong), w))
        (t0, a0, b0), (t1, a1, _b1) = parts
        if t0 == 0:
            raise LogFormatError(f"{w}: time must be > 0")
        wrong += [0] * (2 - len(wrong))
        rows.append((size, [t0, t1], [a0, a1], [b0], wrong))
    if not rows:
        raise LogFormatError(f"{where}: 'results' is empty")
    coll = _check_collective(coll or _collective_of(os.path.basename(where)), where)
    return _measurement(coll, tool, rows, where)


def _log_text(p: Path) -> str:
    data = read_bytes(p, MAX_LOG_BYTES, "a test log", LogFormatError)
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def load_log(path: str | os.PathLike, collective: str | None = None) -> Measurement:
    """Read a log file (JSON if it starts with '{', else the text table)."""
    p = Path(path)
    text = _log_text(p)
    if text.lstrip().startswith("{"):
        return parse_json(text, str(p), collective)
    return parse_text(text, str(p), collective)


def load_log_runs(path: str | os.PathLike) -> list[Measurement]:
    """Every allgather / reduce-scatter / allreduce run of a log, one :class:`Measurement` each
    (what the designer imports: a "run all collectives" log gives one line per collective it
    compares; other collectives' runs are listed in each measurement's ``sections``). A log of
    one run is :func:`load_log`'s; two runs of one collective are refused as there."""
    p = Path(path)
    text = _log_text(p)
    if text.lstrip().startswith("{"):
        return [parse_json(text, str(p))]
    sections = read_sections(text, str(p))
    runs = [s.collective for s in sections if s.rows and s.collective in SUPPORTED]
    if len(runs) <= 1:
        return [parse_text(text, str(p))]
    return [parse_text(text, str(p), c) for c in dict.fromkeys(runs)]


def above_bound_reason(collective: str, settings: dict, nvswitch: bool) -> str:
    """Why a measured algbw can sit above ForestColl's forward-only bound (a schedule that
    only forwards and adds on GPUs cannot beat it): in-switch reduction (NVLS on an NVSwitch,
    CollNet/SHARP in the network) for allreduce, else the fabric given is not the one that ran
    (or its link figures are below the hardware's)."""
    state = nvls_state(settings, collective)
    if collective == "allreduce":
        if state == "on":
            return "NVLS: the NVSwitch adds (in-switch reduction), which forwarding cannot match"
        if settings.get("NCCL_COLLNET_ENABLE", "").strip() == "1":
            return "CollNet/SHARP: the network adds (in-network reduction)"
        if nvswitch and state == "":
            return (
                "NVLS likely: an NVSwitch fabric and the log does not turn NVLS off "
                "(in-switch reduction beats forwarding)"
            )
    return (
        "no in-switch reduction in this log: the fabric's link figures are below what "
        "ran (or the log ran on another fabric)"
    )
