"""Hypothesis strategies for hostile variants of every input format, and the promise checker.

Each strategy starts from a real, valid seed file and applies one to three mutations an attacker
would try: a number that is too long, too large, negative, not finite or a 4300+ digit integer; a
string with control characters, a lone surrogate or 100 000 characters; nesting thousands of
levels deep; entity declarations; truncation; a forged HDF5 object (external storage, virtual
dataset, external/soft link, unwritten huge dataset, out-of-range index...).

:func:`run_cli` runs the real entry point ``solver.cli.main(argv)`` in-process and checks the
promise: exit 0 or exit 2 with exactly one ``error:`` line on stderr, no exception escaping,
bounded CPU time and memory.
"""

from __future__ import annotations

import contextlib
import io
import json
import resource
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import h5py
import numpy as np
from hypothesis import strategies as st

from solver.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SAMPLES = ROOT / "sample_topologies"

CPU_SECONDS = 20.0  # per CLI run (small seed files take well under a second)
MEMORY_GROWTH_KB = 600 * 1024  # peak RSS growth allowed per run

HOSTILE_NUMBERS = [
    "1e999999999",
    "-1e999999999",
    "1e-999999999",
    "1e400",
    "1e309",
    "-1",
    "-1024",
    "0",
    "-0.0",
    "1e23",
    "1e999",
    "99999999999999999999999",
    "9" * 50,
    "9" * 4400,
    "1" + "0" * 4000,
    "0." + "0" * 3000 + "1",
    "NaN",
    "Infinity",
    "-Infinity",
    "2147483648",
    "18446744073709551616",
]
HOSTILE_STRINGS = [
    "\x01",
    "a\x1b[2Jb",
    "\ud800",
    "x\udfff",
    "\x00",
    "\u202e",
    "tab\there",
    "",
    " ",
    "<&>\"'",
    "]]>",
    "a" * 100_000,
    "\ufffe",
    "gpu0",
]
DEPTHS = [65, 200, 900, 1100, 5000]


#: Counts of outcomes per format (runs, exit codes, error categories), for the soak report.
OUTCOMES: dict[str, Counter] = {}


def run_cli(argv: list[str], fmt: str) -> tuple[int, str, str]:
    """Run ``forestcoll ARGV`` in-process and assert the promise; return (code, out, err)."""
    out, err = io.StringIO(), io.StringIO()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])  # any other exception fails the test
        except SystemExit as exc:  # argparse's usage errors: exit 2 with one line, like main
            code = exc.code
    spent = time.process_time() - start
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    text = err.getvalue()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    counts = OUTCOMES.setdefault(fmt, Counter())
    counts["runs"] += 1
    counts[f"exit {code}"] += 1
    assert spent < CPU_SECONDS, f"{argv}: {spent:.1f} s of CPU"
    assert grown < MEMORY_GROWTH_KB, f"{argv}: peak memory grew by {grown // 1024} MB"
    assert code in (0, 2), (argv, code, text[-2000:])
    assert "Traceback" not in text, text[-2000:]
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith("error: "), (argv, text[-2000:])
        counts["error: " + _category(lines[0])] += 1
    return code, out.getvalue(), text


def _category(line: str) -> str:
    """A short label for an error line (its last clause without numbers), for the report."""
    tail = line.rsplit(": ", 1)[-1]
    words = [w for w in tail.split() if not any(c.isdigit() for c in w)][:5]
    return " ".join(words)[:60]


# ------------------------------------------------------------------------------ JSON formats


def _paths(doc: Any, prefix=()) -> list[tuple]:
    """Every (path) to a value inside a JSON document."""
    found = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            found += _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found += _paths(v, prefix + (i,))
    return found


class _Raw(str):
    """A JSON token written as-is (numbers JSON allows but json.dumps never writes)."""


def _dump(doc: Any) -> str:
    raws: list[str] = []

    def swap(value):
        if isinstance(value, _Raw):
            raws.append(str(value))
            return f"__RAW{len(raws) - 1}__"
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    text = json.dumps(swap(doc), ensure_ascii=True)
    for i, raw in enumerate(raws):
        text = text.replace(f'"__RAW{i}__"', raw, 1)
    return text


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return doc


def hostile_values() -> st.SearchStrategy:
    numbers = st.sampled_from(HOSTILE_NUMBERS)
    return st.one_of(
        numbers.map(lambda n: _Raw(n) if n and n[0] in "-0123456789NI" else n),
        numbers,  # the same text as a JSON string ("1/3", "1e999999999"...)
        st.sampled_from(HOSTILE_STRINGS),
        st.sampled_from(DEPTHS).map(lambda d: _Raw("[" * d + "]" * d)),
        st.sampled_from(DEPTHS).map(lambda d: _Raw('{"a":' * d + "1" + "}" * d)),
        st.sampled_from([None, True, False, [], {}, -1, 2**63, 0.5]),
    )


@st.composite
def hostile_json(draw, seed: Path) -> str:
    """A seed JSON document with one to three values replaced or removed, maybe truncated."""
    doc = json.loads(seed.read_text())
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        if path and draw(st.integers(0, 4)) == 0:
            parent = doc
            for key in path[:-1]:
                parent = parent[key]
            del parent[path[-1]]
        else:
            doc = _set(doc, path, draw(hostile_values()))
    text = _dump(doc)
    if draw(st.integers(0, 9)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return text


# ------------------------------------------------------------------------------ XML formats


@st.composite
def hostile_xml(draw, seed: Path) -> str:
    """A seed XML file (GraphML, NCCL topology, MSCCL) with hostile attributes, text or shape."""
    root = ET.fromstring(seed.read_text())
    elems = list(root.iter())
    raw_nest = ""
    for _ in range(draw(st.integers(1, 3))):
        elem = draw(st.sampled_from(elems))
        action = draw(st.integers(0, 5))
        value = draw(st.one_of(st.sampled_from(HOSTILE_NUMBERS), st.sampled_from(HOSTILE_STRINGS)))
        value = value.replace("\ud800", "&#xD800;").replace("\udfff", "")
        if action <= 2 and elem.attrib:
            key = draw(st.sampled_from(sorted(elem.attrib)))
            elem.set(key, value)
        elif action == 3:
            elem.text = value
        elif action == 4:
            depth = draw(st.sampled_from(DEPTHS))
            tag = elem.tag.rsplit("}", 1)[-1]
            raw_nest = f"<{tag}>" * depth + f"</{tag}>" * depth
        else:
            elem.attrib.clear()
    text = ET.tostring(root, encoding="unicode")
    if raw_nest:  # deep nesting as text (ElementTree itself recurses when serialising)
        cut = text.rfind("</")
        text = text[:cut] + raw_nest + text[cut:] if cut > 0 else text + raw_nest
    mode = draw(st.integers(0, 11))
    if mode == 0:
        text = text[: draw(st.integers(0, len(text)))]
    elif mode == 1:
        bomb = '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        text = bomb + text
    elif mode == 2:
        text = '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>' + text.replace(
            ">", ">&x;", 1
        )
    return text


# ------------------------------------------------------------------------------ nccl-tests text


@st.composite
def hostile_log(draw, seed: Path) -> str:
    lines = seed.read_text().splitlines()
    rows = [i for i, ln in enumerate(lines) if ln.strip() and ln.strip()[0].isdigit()]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.sampled_from(rows))
        tokens = lines[i].split()
        j = draw(st.integers(0, len(tokens) - 1))
        tokens[j] = draw(
            st.one_of(st.sampled_from(HOSTILE_NUMBERS), st.sampled_from(HOSTILE_STRINGS))
        )
        lines[i] = "  ".join(tokens)
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(HOSTILE_STRINGS)))
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ HDF5


def _datasets(f: h5py.File) -> list[str]:
    names: list[str] = []
    f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
    return names


def _groups(f: h5py.File) -> list[str]:
    names: list[str] = ["/"]
    f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Group) else None)
    return names


H5_ACTIONS = [
    "element",
    "attr",
    "reshape",
    "retype",
    "delete",
    "external-storage",
    "vds",
    "external-link",
    "soft-link",
    "huge",
    "bytes",
]


@st.composite
def hostile_h5_edit(draw) -> tuple[str, int, Any, int]:
    """(action, which object, value, byte offset) to apply to a copy of a valid results file."""
    action = draw(st.sampled_from(H5_ACTIONS))
    which = draw(st.integers(0, 10**6))
    value = draw(
        st.one_of(
            st.sampled_from(HOSTILE_NUMBERS),
            st.sampled_from(HOSTILE_STRINGS[:-2]),
            st.sampled_from([-1, -(2**31), 2**31 - 1, 10**6, float("nan"), float("inf"), -1e308]),
        )
    )
    return action, which, value, draw(st.integers(0, 10**9))


def apply_h5_edit(path: Path, edit: tuple[str, int, Any, int], secret: Path) -> None:
    action, which, value, offset = edit
    if action == "bytes":
        data = bytearray(path.read_bytes())
        pos = offset % len(data)
        data[pos : pos + 8] = bytes((b ^ 0x5A) for b in data[pos : pos + 8])
        path.write_bytes(bytes(data))
        return
    with h5py.File(path, "r+") as f:
        datasets = _datasets(f)
        name = datasets[which % len(datasets)]
        ds = f[name]
        parent, leaf = f[name].parent, name.rsplit("/", 1)[-1]
        if action == "element" and ds.shape and ds.shape[0]:
            _set_element(ds, which % ds.shape[0], value)
        elif action == "attr":
            groups = _groups(f)
            obj = f[groups[which % len(groups)]]
            keys = list(obj.attrs) or ["schema_version"]
            try:
                obj.attrs[keys[which % len(keys)]] = (
                    value if not isinstance(value, str) else value[:5000]
                )
            except (UnicodeEncodeError, TypeError, ValueError):
                pass  # HDF5 cannot store it (a lone surrogate): the file stays valid
        elif action == "reshape":
            del parent[leaf]
            parent.create_dataset(leaf, data=np.zeros((2, 3), dtype=np.int32))
        elif action == "retype":
            old = ds[()]
            del parent[leaf]
            parent.create_dataset(leaf, data=np.full(np.shape(old) or (1,), 1.5))
        elif action == "delete":
            del parent[leaf]
        elif action == "external-storage":
            n = max(1, ds.shape[0] if ds.shape else 1)
            del parent[leaf]
            parent.create_dataset(leaf, shape=(n,), dtype="S8", external=[(str(secret), 0, 8 * n)])
        elif action == "vds":
            other = secret.with_suffix(".h5")
            with h5py.File(other, "w") as o:
                o["x"] = np.arange(4)
            layout = h5py.VirtualLayout(shape=(4,), dtype="i8")
            layout[:] = h5py.VirtualSource(str(other), "x", shape=(4,))
            del parent[leaf]
            parent.create_virtual_dataset(leaf, layout)
        elif action == "external-link":
            del parent[leaf]
            parent[leaf] = h5py.ExternalLink(str(secret.with_suffix(".h5")), "/x")
        elif action == "soft-link":
            del parent[leaf]
            parent[leaf] = h5py.SoftLink(parent.name)
        elif action == "huge":
            del parent[leaf]
            parent.create_dataset(leaf, shape=(10**10,), dtype="f8", chunks=(4096,))


def _set_element(ds: h5py.Dataset, i: int, value: Any) -> None:
    kind = ds.dtype.kind
    try:
        if kind in "iu":
            ds[i] = int(value) if isinstance(value, int) else -1
        elif kind == "f":
            ds[i] = value if isinstance(value, float) else float("inf")
        elif kind == "b":
            ds[i] = True
        else:
            ds[i] = str(value)[:100_000]
    except (ValueError, TypeError, OverflowError, UnicodeEncodeError):
        pass  # the value does not fit this dtype; the example keeps the file as it was
