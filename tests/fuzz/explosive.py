"""Explosive-but-valid fabrics (issue 21): small legal files whose naive solve blows up.

Each case is a fabric file built here (no hostile bytes: every value is legal) plus the command
line to run and what must come out: ``"ok"`` with the exact algbw the schedule must reach, or
``"refused"`` with words the single ``error:`` line must hold (the limit it names).
:func:`run_bounded` runs ``python -m solver.cli`` in a child process under a memory limit
(``RLIMIT_AS``) and a CPU-time limit (``RLIMIT_CPU``), so a case that asks for 15 GiB fails
fast instead of taking the machine, and a case that loops is killed by its CPU budget rather
than by a wall clock.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

MEMORY_LIMIT = 3 * 1024**3  # address space of the child (the interpreter + numba take ~1 GB)
CPU_LIMIT = 240  # seconds of CPU for the child; the slowest case takes ~30 s on 2 busy cores


def _doc(name: str, nodes: list[dict], links: list[dict]) -> str:
    return json.dumps(
        {
            "format": "forestcoll-topology",
            "version": 1,
            "name": name,
            "nodes": nodes,
            "links": links,
        }
    )


def _gpus(n: int) -> list[dict]:
    return [{"id": f"g{i}", "kind": "compute"} for i in range(n)]


def star(n: int, bw: int = 100) -> str:
    """n GPUs each joined only to one switch (1000 GPUs: an 89 KB file)."""
    return _doc(
        f"star{n}",
        _gpus(n) + [{"id": "s0", "kind": "switch"}],
        [{"source": f"g{i}", "target": "s0", "bandwidth": bw} for i in range(n)],
    )


def chain(n: int, bw: int = 100) -> str:
    return _doc(
        f"chain{n}",
        _gpus(n),
        [{"source": f"g{i}", "target": f"g{i + 1}", "bandwidth": bw} for i in range(n - 1)],
    )


def ring(n: int, bw: int = 100, other: int | None = None) -> str:
    """A ring of n GPUs; with ``other`` every second link has that bandwidth (not uniform)."""
    return _doc(
        f"ring{n}",
        _gpus(n),
        [
            {
                "source": f"g{i}",
                "target": f"g{(i + 1) % n}",
                "bandwidth": bw if other is None or i % 2 == 0 else other,
            }
            for i in range(n)
        ],
    )


def switch_chain(m: int, bw: int = 100) -> str:
    """Two GPUs joined by a chain of m switches."""
    nodes = _gpus(2) + [{"id": f"s{i}", "kind": "switch"} for i in range(m)]
    links = [
        {"source": "g0", "target": "s0", "bandwidth": bw},
        {"source": f"s{m - 1}", "target": "g1", "bandwidth": bw},
    ]
    links += [{"source": f"s{i}", "target": f"s{i + 1}", "bandwidth": bw} for i in range(m - 1)]
    return _doc(f"swchain{m}", nodes, links)


def ring3(bandwidths: tuple[str, str, str]) -> str:
    """A 3-GPU ring with the given (exact decimal) bandwidths: fine decimals make the optimum's
    tree count k astronomically large."""
    links = [
        {"source": f"g{i}", "target": f"g{(i + 1) % 3}", "bandwidth": float(b)}
        for i, b in enumerate(bandwidths)
    ]
    return _doc("ring3", _gpus(3), links)


def multi_node_nvlink_dump(hosts: int) -> str:
    """An NCCL topology dump of ``hosts`` hosts (2 GPUs each) whose NVLinks all go to the one
    shared NVSwitch node (multi-node NVLink): the scale-up check walked it once per host."""
    out = ['<system version="1">']
    rank = 0
    for h in range(hosts):
        out.append(
            f'<cpu host_hash="0x{h + 1:x}" numaid="0" arch="x86_64" vendor="AuthenticAMD" '
            'familyid="23" modelid="49">'
        )
        out.append(
            '<pci busid="0000:01:00.0" class="0x060400" link_speed="16.0 GT/s PCIe" '
            'link_width="16">'
        )
        for g in range(2):
            out.append(
                f'<pci busid="0000:0{g + 2}:00.0" class="0x030200" link_speed="16.0 GT/s '
                f'PCIe" link_width="16"><gpu dev="{g}" sm="80" rank="{rank}" gdr="1">'
                '<nvlink target="0000:c4:00.0" count="12" tclass="0x068000"/></gpu></pci>'
            )
            rank += 1
        out.append(
            '<pci busid="0000:05:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" '
            f'link_width="16"><nic><net name="mlx5_0" dev="0" speed="200000" port="1" '
            f'guid="0x{h + 1:x}"/></nic></pci>'
        )
        out.append("</pci></cpu>")
    out.append("</system>")
    return "\n".join(out)


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    ext: str
    argv: tuple[str, ...]  # after the file name
    expect: str  # "ok" or "refused"
    algbw: Fraction | None = None  # the exact optimum the schedule must reach ("ok")
    words: tuple[str, ...] = ()  # what the error line must say ("refused")
    command: str = "solve"


def cases() -> list[Case]:
    n_star, n_chain = 1000, 3000
    return [
        # K = 1e12 with an optimum needing k = 1e13: k = K alone reaches the bound x*
        Case(
            "fixed-k K=1e12",
            ring3(("100", "100.00000000001", "100")),
            ".json",
            ("--max-trees-per-root", str(10**12)),
            "ok",
            Fraction(300),
        ),
        # odd K: k = K falls short of x*, and trying all 5e11 k is refused with the limit
        Case(
            "fixed-k K=1e12-1",
            ring3(("3", "3.0000000000001", "1")),
            ".json",
            ("--max-trees-per-root", str(10**12 - 1)),
            "refused",
            words=("--max-trees-per-root", "limit"),
        ),
        Case(
            f"star of {n_star}", star(n_star), ".json", (), "ok", Fraction(n_star * 100, n_star - 1)
        ),
        Case("star of 5000", star(5000), ".json", (), "refused", words=("tree edges", "limit")),
        Case(
            f"chain of {n_chain}",
            chain(n_chain),
            ".json",
            (),
            "ok",
            Fraction(n_chain * 100, n_chain - 1),
        ),
        Case("ring of 65536", ring(65536), ".json", (), "refused", words=("tree edges", "limit")),
        Case("ring of 1000", ring(1000), ".json", (), "ok", Fraction(1000 * 200, 999)),
        Case("ring of 256", ring(256), ".json", (), "ok", Fraction(256 * 200, 255)),
        # rings of alternating 100/50 GB/s links are not forced: the general pipeline's limits
        Case(
            "ring of 1000, 100/50",
            ring(1000, 100, 50),
            ".json",
            (),
            "refused",
            words=("max-flows", "limit"),
        ),
        Case(
            "ring of 700, 100/50",
            ring(700, 100, 50),
            ".json",
            (),
            "refused",
            words=("tree packing", "limit"),
        ),
        Case(
            "ring of 200, 100/50", ring(200, 100, 50), ".json", (), "ok", Fraction(200 * 100, 198)
        ),  # S: 198 GPUs between two 50 GB/s links
        Case("chain of 65534 switches", switch_chain(65534), ".json", (), "ok", Fraction(200)),
        Case("info on 2000 hosts", multi_node_nvlink_dump(2000), ".xml", (), "ok", command="info"),
    ]


def _limits() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT))


def run_bounded(argv: list[str], cwd: Path) -> tuple[int, str, str, float, int]:
    """Run ``forestcoll ARGV`` in a child under the limits; (code, out, err, CPU s, peak RSS KB)."""
    out, err = cwd / "child.out", cwd / "child.err"
    with open(out, "w") as fo, open(err, "w") as fe:
        proc = subprocess.Popen(
            [sys.executable, "-m", "solver.cli", *argv],
            cwd=cwd,
            stdout=fo,
            stderr=fe,
            preexec_fn=_limits,
        )
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
    return (
        proc.returncode,
        out.read_text(),
        err.read_text(),
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss,
    )
