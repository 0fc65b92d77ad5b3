"""The HDF5 results file: one fabric, many schedules and predicted-vs-measured tables.

Layout (schema ``forestcoll-results``, version 1.2; 1.1 added ``/studies``, 1.2 ``/plans``)::

    /                      attrs schema, schema_version, creator, creator_version, created, modified
    /topology              attrs name, extra_json
      nodes/               id, kind, role (UTF-8 strings), x, y (float64, NaN = unset),
                           group (string), has_group (bool), extra_json (string),
                           capabilities ("reduce,multicast"; only when a switch has some)
      links/               source, target (int32 node indices), bandwidth (float64, units GB/s),
                           bandwidth_exact ("p/q" strings), latency (float64, units us, NaN = unset),
                           latency_exact ("" = unset), directed (bool), extra_json
    /schedules/<name>      attrs collective, k, max_trees_per_root (0 = no limit), optimal_algbw,
                           optimal_algbw_exact, algbw, algbw_exact, algbw_units = "GB/s",
                           phase_topology ("same" | "reversed")
      trees/               CSR: root, multiplicity, weight (+ weight_exact), edge_offsets,
                           edge_src, edge_dst, path_offsets, path_nodes (node indices)
      bottleneck/          attrs compute_nodes_inside, egress_bandwidth (+ _exact, units GB/s);
                           nodes, link_source, link_target, link_bandwidth (+ _exact)
      link_load/           source, target, bandwidth (+ _exact), load (+ load_exact)
      warnings             strings
      timings              group whose attributes are phase -> seconds (attr units = "s")
      phases/0, phases/1   allreduce: the reduce-scatter and allgather schedules, same layout
    /results/<name>        size_bytes (units B), predicted_time, measured_time (units s),
                           predicted_algbw, measured_algbw (units GB/s); attrs collective,
                           algorithm, source, schedule, attrs_json
    /studies/<name>        design-study rows, one dataset per column (:mod:`solver.io.studies_h5`)
    /plans/<name>          compressed plans: representative trees + generator
                           (:mod:`solver.io.plans_h5`)
    /provenance            attrs program, program_version, python, numpy, numba, networkx, h5py;
      <schedule name>      attrs options_json, timings_json, written

Every write builds the new file in memory and writes it with
:func:`solver.io.files.atomic_write_bytes` (temporary file, then rename), so a failed write or a
full disk never damages what was there. Reading first audits the file's structure
(:mod:`solver.io.h5_audit`: no external storage, virtual datasets, external or soft links, no
forged sizes) and then checks every dataset's shape, dtype and index range.
Datasets larger than :data:`COMPRESS_MIN` elements are gzip + shuffle compressed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import io
import json
import math
import os
import platform
from fractions import Fraction
from pathlib import Path
from collections.abc import Callable, Mapping
from typing import Any

import h5py
import numpy as np

from solver.model.errors import ForestCollError, TopologyError
from solver.io.files import atomic_write_bytes, check_input_file, memory_headroom, write_lock
from solver.io.h5_audit import audit
from solver.model.values import exact_number, printable
from solver.io.untrusted import json_value, parse_json
from solver.model.results import ResultTable
from solver.model.schedule import BottleneckCut, LinkLoad, Schedule, Tree, TreeEdge
from solver.model.topology import Link, Node, Topology, validate
from solver.model.units import format_size
from solver.io.v1 import capabilities_json

SCHEMA = "forestcoll-results"
SCHEMA_VERSION = "1.2"
CREATOR = "ForestColl Designer"
MAX_FILE_BYTES = 4 * 2**30  # a results file larger than this is refused before it is opened
COMPRESS_MIN = 4096  # elements; smaller datasets are stored contiguous

_STR = h5py.string_dtype("utf-8")


class ResultsFileError(ForestCollError):
    """A results file is unreadable, of another kind, too new, or inconsistent."""


# ----------------------------------------------------------------------------- small helpers
def _now() -> str:
    return _dt.datetime.now(_dt.UTC).astimezone().isoformat(timespec="seconds")


def _frac(value: Fraction) -> str:
    return (
        str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    )


def _parse_frac(text: str, what: str = "exact value") -> Fraction:
    """An exact value stored as ``"p/q"`` text, read in bounded time (no ``1e999999999``)."""
    return exact_number(text, what, error=ResultsFileError)


def _version() -> str:
    from solver._version import __version__

    return __version__


def _dataset(group: h5py.Group, name: str, data: Any, dtype: Any, units: str | None = None):
    """Create a dataset; strings as UTF-8; gzip + shuffle from :data:`COMPRESS_MIN` elements."""
    if dtype is _STR:
        arr = np.array([str(x) for x in data], dtype=object)
    else:
        arr = np.asarray(data, dtype=dtype)
    kwargs: dict[str, Any] = {}
    if arr.size >= COMPRESS_MIN:
        kwargs = {"compression": "gzip", "shuffle": True, "chunks": True}
    ds = group.create_dataset(name, data=arr, dtype=dtype, shape=arr.shape, **kwargs)
    if units is not None:
        ds.attrs["units"] = units
    return ds


def _strings(ds, length: int | None = None) -> list[str]:
    """A 1-D string dataset (``length`` elements when given) as Python strings."""
    if not isinstance(ds, h5py.Dataset) or h5py.check_string_dtype(ds.dtype) is None:
        raise ResultsFileError(f"{_name(ds)} must be a string dataset")
    _check_shape(ds, length)
    try:
        return [x.decode("utf-8") if isinstance(x, bytes) else str(x) for x in ds[()]]
    except UnicodeDecodeError:
        raise ResultsFileError(f"{_name(ds)} holds text that is not UTF-8") from None


def _name(obj) -> str:
    return obj.name if hasattr(obj, "name") else repr(obj)


def _check_shape(ds, length: int | None) -> None:
    if ds.ndim != 1:
        raise ResultsFileError(f"{ds.name} must be one-dimensional, has shape {ds.shape}")
    if length is not None and ds.shape[0] != length:
        raise ResultsFileError(f"{ds.name} has {ds.shape[0]} entries, expected {length}")


def _numbers(ds, kinds: str, length: int | None = None) -> np.ndarray:
    """A 1-D numeric dataset whose dtype kind is one of ``kinds`` ('i', 'u', 'f', 'b')."""
    if not isinstance(ds, h5py.Dataset) or ds.dtype.kind not in kinds:
        raise ResultsFileError(f"{_name(ds)} must be a numeric dataset ({kinds!r})")
    _check_shape(ds, length)
    return ds[()]


def _indices(ds, n: int, length: int | None = None) -> np.ndarray:
    """Node indices: integers in ``0..n-1`` (``-1`` is not "the last node")."""
    arr = _numbers(ds, "iu", length).astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        bad = int(arr.min()) if arr.min() < 0 else int(arr.max())
        raise ResultsFileError(f"{ds.name}: node index {bad} is outside 0..{n - 1}")
    return arr


def _offsets(ds, count: int, total: int) -> np.ndarray:
    """CSR offsets: ``count + 1`` non-decreasing integers from 0 to ``total``."""
    arr = _numbers(ds, "iu", count + 1).astype(np.int64)
    if arr[0] != 0 or arr[-1] != total or np.any(np.diff(arr) < 0):
        raise ResultsFileError(f"{ds.name}: offsets must rise from 0 to {total}")
    return arr


def _attr_int(obj, name: str, minimum: int, maximum: int) -> int:
    value = obj.attrs[name]
    if isinstance(value, np.ndarray) or not isinstance(value, (int, np.integer, float, np.floating)):
        raise ResultsFileError(f"{obj.name}: attribute {name!r} must be a whole number")
    if not (minimum <= value <= maximum) or int(value) != value:
        raise ResultsFileError(
            f"{obj.name}: attribute {name!r} must be a whole number in {minimum}..{maximum}"
        )
    return int(value)


def _json_or_empty(value: Any) -> str:
    if not value:
        return ""
    try:
        return json.dumps(dict(value), sort_keys=True)
    except (TypeError, ValueError):
        return ""


def _attr_str(obj, name: str, default: str = "") -> str:
    value = obj.attrs.get(name, default)
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


# ----------------------------------------------------------------------------- file checks
def _check_schema(f: h5py.File, path: Path) -> None:
    schema = _attr_str(f, "schema", "")
    if schema != SCHEMA:
        raise ResultsFileError(f"{path}: not a ForestColl results file (schema {schema[:40]!r})")
    version = _attr_str(f, "schema_version", "")
    parts = version.split(".")
    if len(parts) != 2 or not all(p.isascii() and p.isdigit() and len(p) <= 4 for p in parts):
        raise ResultsFileError(
            f"{path}: bad schema_version {version[:40]!r} (expected MAJOR.MINOR, e.g. 1.0)"
        )
    major = int(parts[0])
    if major < 1:
        raise ResultsFileError(f"{path}: bad schema_version {version!r} (major version 0)")
    ours = int(SCHEMA_VERSION.split(".")[0])
    if major > ours:
        raise ResultsFileError(
            f"{path}: results file schema version {version} is newer than this program reads "
            f"({SCHEMA_VERSION}); update ForestColl Designer"
        )


def _open_read(path: str | os.PathLike) -> h5py.File:
    """Open a results file after checking it is a regular file within :data:`MAX_FILE_BYTES`,
    then audit its structure (no external storage, VDS, external or soft links, no forged sizes:
    :mod:`solver.io.h5_audit`) and its schema."""
    p = Path(path)
    check_input_file(p, MAX_FILE_BYTES, "a results file", ResultsFileError)
    try:
        f = h5py.File(p, "r")
    except OSError:
        raise ResultsFileError(f"{p}: not an HDF5 file (or it is damaged)") from None
    try:
        try:
            audit(f, str(p), ResultsFileError)
            _check_schema(f, p)
        except ForestCollError:
            raise
        except _DAMAGE as exc:  # a corrupt header, heap or attribute
            raise ResultsFileError(f"{p}: damaged results file ({_why(exc)})") from None
    except BaseException:
        f.close()
        raise
    return f


_DAMAGE = (
    KeyError,
    ValueError,
    IndexError,
    TypeError,
    ZeroDivisionError,
    AttributeError,
    OverflowError,
    OSError,  # a corrupt chunk or heap
    RuntimeError,
    MemoryError,  # a forged size met the memory_headroom cap
)


def _read_headroom(path: str | os.PathLike) -> int:
    """Address space a read may add: 64 bytes per file byte (gzip'd data expands, the reader
    builds Python objects), at least 256 MiB, at most 2 GiB (the largest dataset is 1 GiB)."""
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    return min(max(64 * size, 256 * 2**20), 2 * 2**30)


@contextlib.contextmanager
def _reading(path: str | os.PathLike):
    """Open a results file for reading; a missing or malformed part is a one-line error."""
    with memory_headroom(_read_headroom(path)):
        with _reading_unbounded(path) as f:
            yield f


@contextlib.contextmanager
def _reading_unbounded(path: str | os.PathLike):
    f = _open_read(path)
    try:
        yield f
    except ResultsFileError as exc:
        text = str(exc)
        raise ResultsFileError(text if text.startswith(str(path)) else f"{path}: {text}") from None
    except TopologyError as exc:
        raise ResultsFileError(f"{path}: stored fabric is invalid: {exc}") from None
    except ForestCollError:
        raise
    except _DAMAGE as exc:
        raise ResultsFileError(
            f"{path}: damaged or incomplete results file ({_why(exc)})"
        ) from None
    finally:
        f.close()


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]


# ----------------------------------------------------------------------------- topology
def _write_topology(g: h5py.Group, topo: Topology) -> None:
    g.attrs["name"] = topo.name
    g.attrs["extra_json"] = _json_or_empty(topo.extra)
    index = {n.id: i for i, n in enumerate(topo.nodes)}
    nodes = g.create_group("nodes")
    _dataset(nodes, "id", [n.id for n in topo.nodes], _STR)
    _dataset(nodes, "kind", [n.kind for n in topo.nodes], _STR)
    _dataset(nodes, "role", [n.role for n in topo.nodes], _STR)
    _dataset(nodes, "x", [math.nan if n.x is None else float(n.x) for n in topo.nodes], np.float64)
    _dataset(nodes, "y", [math.nan if n.y is None else float(n.y) for n in topo.nodes], np.float64)
    _dataset(nodes, "group", [n.group or "" for n in topo.nodes], _STR)
    _dataset(nodes, "has_group", [n.group is not None for n in topo.nodes], np.bool_)
    _dataset(nodes, "extra_json", [_json_or_empty(n.extra) for n in topo.nodes], _STR)
    if any(n.capabilities for n in topo.nodes):  # only then: other files stay as they were
        _dataset(nodes, "capabilities", [",".join(capabilities_json(n)) for n in topo.nodes],
                 _STR)
    links = g.create_group("links")
    _dataset(links, "source", [index[lk.source] for lk in topo.links], np.int32)
    _dataset(links, "target", [index[lk.target] for lk in topo.links], np.int32)
    _dataset(links, "bandwidth", [float(lk.bandwidth) for lk in topo.links], np.float64, "GB/s")
    _dataset(links, "bandwidth_exact", [_frac(lk.bandwidth) for lk in topo.links], _STR).attrs[
        "units"
    ] = "GB/s"
    _dataset(
        links,
        "latency",
        [math.nan if lk.latency is None else float(lk.latency) for lk in topo.links],
        np.float64,
        "us",
    )
    _dataset(
        links,
        "latency_exact",
        ["" if lk.latency is None else _frac(lk.latency) for lk in topo.links],
        _STR,
    ).attrs["units"] = "us"
    _dataset(links, "directed", [lk.directed for lk in topo.links], np.bool_)
    _dataset(links, "extra_json", [_json_or_empty(lk.extra) for lk in topo.links], _STR)


def _extra(text: str, what: str = "extra_json") -> dict:
    if not text:
        return {}
    value = json_value(parse_json(text, what, error=ResultsFileError), what, ResultsFileError)
    if not isinstance(value, dict):
        raise ResultsFileError(f"{what} must hold a JSON object")
    return value


def _read_topology(g: h5py.Group) -> Topology:
    """The stored fabric; every dataset's shape, dtype and index range is checked, then the
    fabric is validated like any fabric file."""
    nodes_g, links_g = g["nodes"], g["links"]
    ids = _strings(nodes_g["id"])
    n = len(ids)
    kinds = _strings(nodes_g["kind"], n)
    roles = _strings(nodes_g["role"], n)
    xs = _numbers(nodes_g["x"], "fiu", n).astype(np.float64)
    ys = _numbers(nodes_g["y"], "fiu", n).astype(np.float64)
    groups = _strings(nodes_g["group"], n)
    has_group = _numbers(nodes_g["has_group"], "bui", n)
    nextra = _strings(nodes_g["extra_json"], n)
    caps = _strings(nodes_g["capabilities"], n) if "capabilities" in nodes_g else [""] * n
    nodes = tuple(
        Node(
            id=ids[i],
            kind=kinds[i],
            role=roles[i],
            x=None if math.isnan(xs[i]) else float(xs[i]),
            y=None if math.isnan(ys[i]) else float(ys[i]),
            group=groups[i] if has_group[i] else None,
            extra=_extra(nextra[i], f"{nodes_g.name}/extra_json[{i}]"),
            capabilities=frozenset(c for c in caps[i].split(",") if c),
        )
        for i in range(n)
    )
    src = _indices(links_g["source"], n)
    m = len(src)
    dst = _indices(links_g["target"], n, m)
    bw = _strings(links_g["bandwidth_exact"], m)
    lat = _strings(links_g["latency_exact"], m)
    directed = _numbers(links_g["directed"], "bui", m)
    lextra = _strings(links_g["extra_json"], m)
    where = links_g.name
    links = tuple(
        Link(
            source=ids[int(src[i])],
            target=ids[int(dst[i])],
            bandwidth=_parse_frac(bw[i], f"{where}/bandwidth_exact[{i}]"),
            latency=_parse_frac(lat[i], f"{where}/latency_exact[{i}]") if lat[i] else None,
            directed=bool(directed[i]),
            extra=_extra(lextra[i], f"{where}/extra_json[{i}]"),
        )
        for i in range(m)
    )
    topo = Topology(
        name=_attr_str(g, "name"),
        nodes=nodes,
        links=links,
        extra=_extra(_attr_str(g, "extra_json"), f"{g.name} extra_json"),
    )
    validate(topo)
    return topo


def _topology_difference(a: Topology, b: Topology) -> str:
    """A short description of the first difference between two fabrics."""
    if a.name != b.name:
        return f"fabric name {a.name!r} vs {b.name!r}"
    if len(a.nodes) != len(b.nodes):
        return f"{len(a.nodes)} vs {len(b.nodes)} nodes"
    for na, nb in zip(a.nodes, b.nodes):
        if na != nb:
            return f"node {na.id!r} differs"
    if len(a.links) != len(b.links):
        return f"{len(a.links)} vs {len(b.links)} links"
    for i, (la, lb) in enumerate(zip(a.links, b.links)):
        if la != lb:
            return f"link {i} ({la.label}) differs"
    return "no difference"


# ----------------------------------------------------------------------------- schedules
def _check_refs(s: Schedule, index: dict[str, int]) -> None:
    """Every node the schedule names outside its tree edges is in the fabric (the tree edges
    are checked as they are indexed, in :func:`_tree_arrays`)."""
    refs = [t.root for t in s.trees] + list(s.bottleneck.nodes)
    refs += [v for ll in s.link_load for v in (ll.source, ll.target)]
    refs += [v for u, w, _ in s.bottleneck.links for v in (u, w)]
    for v in refs:
        if v not in index:
            raise ResultsFileError(
                f"schedule {s.collective!r} refers to node {v!r}, which its fabric lacks"
            )


def _tree_arrays(s: Schedule, index: dict[str, int]):
    """(edge offsets per tree, edge sources, edge targets, path offsets per edge, path nodes) as
    node indices; a path shared by many trees is indexed once."""
    edge_off = [0]
    path_off = [0]
    e_src: list[int] = []
    e_dst: list[int] = []
    p_nodes: list[int] = []
    known: dict[tuple[str, ...], list[int]] = {}
    try:
        for t in s.trees:
            for e in t.edges:
                nodes = known.get(e.path)
                if nodes is None:
                    nodes = known[e.path] = [index[v] for v in e.path]
                e_src.append(index[e.src])
                e_dst.append(index[e.dst])
                p_nodes.extend(nodes)
                path_off.append(len(p_nodes))
            edge_off.append(len(e_src))
    except KeyError as exc:
        raise ResultsFileError(
            f"schedule {s.collective!r} refers to node {exc.args[0]!r}, which its fabric lacks"
        ) from None
    return edge_off, e_src, e_dst, path_off, p_nodes


def _write_schedule_group(g: h5py.Group, s: Schedule, topo: Topology) -> None:
    index = {n.id: i for i, n in enumerate(topo.nodes)}
    _check_refs(s, index)
    g.attrs["collective"] = s.collective
    g.attrs["k"] = int(s.k)
    g.attrs["max_trees_per_root"] = int(s.max_trees_per_root or 0)
    g.attrs["optimal_algbw"] = float(s.optimal_algbw_exact)
    g.attrs["optimal_algbw_exact"] = _frac(s.optimal_algbw_exact)
    g.attrs["algbw"] = float(s.algbw_exact)
    g.attrs["algbw_exact"] = _frac(s.algbw_exact)
    g.attrs["algbw_units"] = "GB/s"
    if s.topology == topo:
        g.attrs["phase_topology"] = "same"
    elif s.topology == topo.reversed():
        g.attrs["phase_topology"] = "reversed"
    else:
        raise ResultsFileError(
            f"schedule phase {s.collective!r} is on another fabric ({_topology_difference(s.topology, topo)})"
        )

    trees = g.create_group("trees")
    edge_off, e_src, e_dst, path_off, p_nodes = _tree_arrays(s, index)
    _dataset(trees, "root", [index[t.root] for t in s.trees], np.int32)
    _dataset(trees, "multiplicity", [t.multiplicity for t in s.trees], np.int64)
    _dataset(trees, "weight", [float(t.weight) for t in s.trees], np.float64)
    _dataset(trees, "weight_exact", [_frac(t.weight) for t in s.trees], _STR)
    _dataset(trees, "edge_offsets", edge_off, np.int64)
    _dataset(trees, "edge_src", e_src, np.int32)
    _dataset(trees, "edge_dst", e_dst, np.int32)
    _dataset(trees, "path_offsets", path_off, np.int64)
    _dataset(trees, "path_nodes", p_nodes, np.int32)

    cut = s.bottleneck
    b = g.create_group("bottleneck")
    b.attrs["compute_nodes_inside"] = int(cut.compute_nodes_inside)
    b.attrs["egress_bandwidth"] = float(cut.egress_bandwidth)
    b.attrs["egress_bandwidth_exact"] = _frac(cut.egress_bandwidth)
    b.attrs["egress_bandwidth_units"] = "GB/s"
    _dataset(b, "nodes", [index[v] for v in cut.nodes], np.int32)
    _dataset(b, "link_source", [index[u] for u, _, _ in cut.links], np.int32)
    _dataset(b, "link_target", [index[v] for _, v, _ in cut.links], np.int32)
    _dataset(b, "link_bandwidth", [float(w) for _, _, w in cut.links], np.float64, "GB/s")
    _dataset(b, "link_bandwidth_exact", [_frac(w) for _, _, w in cut.links], _STR).attrs[
        "units"
    ] = "GB/s"

    ll = g.create_group("link_load")
    _dataset(ll, "source", [index[x.source] for x in s.link_load], np.int32)
    _dataset(ll, "target", [index[x.target] for x in s.link_load], np.int32)
    _dataset(ll, "bandwidth", [float(x.bandwidth) for x in s.link_load], np.float64, "GB/s")
    _dataset(ll, "bandwidth_exact", [_frac(x.bandwidth) for x in s.link_load], _STR).attrs[
        "units"
    ] = "GB/s"
    _dataset(ll, "load", [float(x.load) for x in s.link_load], np.float64, "1")
    _dataset(ll, "load_exact", [_frac(x.load) for x in s.link_load], _STR)

    _dataset(g, "warnings", list(s.warnings), _STR)
    tg = g.create_group("timings")
    tg.attrs["units"] = "s"
    for key, value in dict(s.timings).items():
        tg.attrs[str(key)] = float(value)
    if s.phases:
        pg = g.create_group("phases")
        for i, phase in enumerate(s.phases):
            _write_schedule_group(pg.create_group(str(i)), phase, topo)


def _read_schedule_group(g: h5py.Group, topo: Topology, depth: int = 0) -> Schedule:
    ids = topo.node_ids
    n = len(ids)
    t = g["trees"]
    roots = _indices(t["root"], n)
    count = len(roots)
    mult = _numbers(t["multiplicity"], "iu", count).astype(np.int64)
    if count and mult.min() < 1:
        raise ResultsFileError(f"{t.name}/multiplicity must be >= 1")
    weights = _strings(t["weight_exact"], count)
    esrc = _indices(t["edge_src"], n)
    edst = _indices(t["edge_dst"], n, len(esrc))
    eoff = _offsets(t["edge_offsets"], count, len(esrc))
    pn = _indices(t["path_nodes"], n)
    poff = _offsets(t["path_offsets"], len(esrc), len(pn))
    # Trees share edges (a schedule of N GPUs has N·k trees but far fewer distinct routed
    # edges: 6.7x fewer on 256 GPUs), so equal edges become one object, as the solver makes
    # them: reading builds each path once and the verifier checks each path once.
    esrc_l, edst_l, pn_l, poff_l, eoff_l = (a.tolist() for a in (esrc, edst, pn, poff, eoff))
    shared: dict[tuple[int, ...], TreeEdge] = {}

    def edge(j: int) -> TreeEdge:
        key = (esrc_l[j], edst_l[j], *pn_l[poff_l[j] : poff_l[j + 1]])
        found = shared.get(key)
        if found is None:
            found = shared[key] = TreeEdge(src=ids[key[0]], dst=ids[key[1]],
                                           path=tuple(ids[v] for v in key[2:]))
        return found

    trees = []
    for i in range(count):
        trees.append(
            Tree(
                root=ids[int(roots[i])],
                multiplicity=int(mult[i]),
                weight=_parse_frac(weights[i], f"{t.name}/weight_exact[{i}]"),
                edges=tuple(edge(j) for j in range(eoff_l[i], eoff_l[i + 1])),
            )
        )
    b = g["bottleneck"]
    b_src = _indices(b["link_source"], n)
    b_dst = _indices(b["link_target"], n, len(b_src))
    bw = _strings(b["link_bandwidth_exact"], len(b_src))
    cut = BottleneckCut(
        nodes=tuple(ids[int(v)] for v in _indices(b["nodes"], n)),
        compute_nodes_inside=_attr_int(b, "compute_nodes_inside", 0, n),
        egress_bandwidth=_parse_frac(_attr_str(b, "egress_bandwidth_exact"), f"{b.name} egress"),
        links=tuple(
            (ids[int(u)], ids[int(v)], _parse_frac(bw[j], f"{b.name}/link_bandwidth_exact[{j}]"))
            for j, (u, v) in enumerate(zip(b_src, b_dst))
        ),
    )
    ll = g["link_load"]
    l_src = _indices(ll["source"], n)
    l_dst = _indices(ll["target"], n, len(l_src))
    lbw = _strings(ll["bandwidth_exact"], len(l_src))
    lload = _strings(ll["load_exact"], len(l_src))
    link_load = tuple(
        LinkLoad(
            source=ids[int(u)],
            target=ids[int(v)],
            bandwidth=_parse_frac(lbw[j], f"{ll.name}/bandwidth_exact[{j}]"),
            load=_parse_frac(lload[j], f"{ll.name}/load_exact[{j}]"),
        )
        for j, (u, v) in enumerate(zip(l_src, l_dst))
    )
    timings = {k: _finite(v, f"{g.name}/timings {k}") for k, v in g["timings"].attrs.items()
               if k != "units"}
    phases: tuple[Schedule, ...] = ()
    if "phases" in g:
        if depth > 0:
            raise ResultsFileError(f"{g.name}: phases inside phases")
        pg = g["phases"]
        keys = sorted(pg.keys(), key=lambda key: (len(key), key))
        if keys != [str(i) for i in range(len(keys))]:
            raise ResultsFileError(f"{pg.name}: phases must be named 0, 1, ...")
        phases = tuple(_read_schedule_group(pg[key], topo, depth + 1) for key in keys)
    k_limit = _attr_int(g, "max_trees_per_root", 0, 2**31)
    own_topo = topo if _attr_str(g, "phase_topology", "same") == "same" else topo.reversed()
    return Schedule(
        topology=own_topo,
        collective=_attr_str(g, "collective"),
        k=_attr_int(g, "k", 0, 2**31),
        max_trees_per_root=k_limit or None,
        optimal_algbw_exact=_parse_frac(_attr_str(g, "optimal_algbw_exact"), f"{g.name} optimum"),
        algbw_exact=_parse_frac(_attr_str(g, "algbw_exact"), f"{g.name} algbw_exact"),
        bottleneck=cut,
        trees=tuple(trees),
        link_load=link_load,
        timings=timings,
        warnings=tuple(_strings(g["warnings"])),
        phases=phases,
    )


def _finite(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ResultsFileError(f"{what} must be a number") from None
    if not math.isfinite(number):
        raise ResultsFileError(f"{what} must be finite")
    return number


# ----------------------------------------------------------------------------- results tables
def _write_table(g: h5py.Group, table: ResultTable) -> None:
    g.attrs["collective"] = table.collective
    g.attrs["algorithm"] = table.algorithm
    g.attrs["source"] = table.source
    g.attrs["schedule"] = table.schedule
    try:
        g.attrs["attrs_json"] = (
            json.dumps(dict(table.attrs), sort_keys=True, default=_numpy_json)
            if table.attrs
            else ""
        )
    except (TypeError, ValueError):
        raise ResultsFileError(
            f"result table attrs must be JSON values: {dict(table.attrs)!r}"
        ) from None
    _dataset(g, "size_bytes", table.size_bytes, np.int64, "B")
    _dataset(g, "predicted_time", table.predicted_time, np.float64, "s")
    _dataset(g, "predicted_algbw", table.predicted_algbw, np.float64, "GB/s")
    _dataset(g, "measured_time", table.measured_time, np.float64, "s")
    _dataset(g, "measured_algbw", table.measured_algbw, np.float64, "GB/s")


def _numpy_json(value: Any) -> Any:
    """numpy scalars and arrays in table attrs become plain JSON values."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _read_table(g: h5py.Group) -> ResultTable:
    attrs_json = _attr_str(g, "attrs_json", "")
    sizes = _numbers(g["size_bytes"], "iuf", None)
    m = len(sizes)
    if m and (not np.all(np.isfinite(sizes)) or sizes.min() < 0 or sizes.max() > 2.0**62):
        raise ResultsFileError(f"{g.name}/size_bytes must be between 0 and 2**62 bytes")
    columns = {}
    for column in ("predicted_time", "predicted_algbw", "measured_time", "measured_algbw"):
        values = _numbers(g[column], "iuf", m).astype(np.float64)
        if np.any(values < 0) or np.any(np.isinf(values)):
            raise ResultsFileError(f"{g.name}/{column} must be >= 0 (NaN = not measured)")
        columns[column] = values
    return ResultTable(
        collective=_attr_str(g, "collective"),
        algorithm=_attr_str(g, "algorithm"),
        source=_attr_str(g, "source"),
        size_bytes=sizes.astype(np.int64),
        schedule=_attr_str(g, "schedule"),
        attrs=_extra(attrs_json, f"{g.name} attrs_json"),
        **columns,
    )


# ----------------------------------------------------------------------------- file-level writes
def default_name(schedule: Schedule) -> str:
    """``allgather`` or ``allgather_k1`` (with ``max_trees_per_root``)."""
    name = schedule.collective
    if schedule.max_trees_per_root:
        name += f"_k{schedule.max_trees_per_root}"
    return name


def _check_name(name: str) -> str:
    if not name or "/" in name or name in (".", ".."):
        raise ResultsFileError(f"bad name {name!r} for a schedule or table (no '/', not empty)")
    return name


def _modify(path: str | os.PathLike, topology: Topology | None, edit) -> None:
    """Run ``edit(h5file)`` on a copy of ``path`` (created with ``topology`` if missing), then
    rename the copy over ``path``. On any failure the original file is untouched. Concurrent
    updates are serialised (:func:`solver.io.files.write_lock`): each reads the other's."""
    with write_lock(path):  # another writer's update is read, not lost
        _modify_locked(Path(path), topology, edit)


def _modify_locked(target: Path, topology: Topology | None, edit) -> None:
    exists = target.exists()
    if exists:
        _open_read(target).close()  # schema/version check before anything else
    elif topology is None:
        raise ResultsFileError(f"{target}: no such results file (write a schedule to it first)")
    try:
        data = _modify_copy(target, exists, topology, edit)
    except ForestCollError:
        raise
    except OSError as exc:
        raise ResultsFileError(f"{target}: cannot write: {exc.strerror or exc}") from None
    except _DAMAGE as exc:
        raise ResultsFileError(
            f"{target}: cannot update ({_why(exc)}); the file was left as it was"
        ) from None
    atomic_write_bytes(target, data)  # one-line OutputError on a full disk; old file intact


def _modify_copy(target: Path, exists: bool, topology: Topology | None, edit) -> bytes:
    """The new file's bytes: HDF5 works on a copy in memory, so a full disk or a failing
    library call never meets a half-written file (h5py crashed on ENOSPC while flushing)."""
    buffer = io.BytesIO(target.read_bytes() if exists else b"")
    mode = "r+" if exists else "w"
    with h5py.File(buffer, mode) as f:
        if not exists:
            f.attrs["schema"] = SCHEMA
            f.attrs["schema_version"] = SCHEMA_VERSION
            f.attrs["creator"] = CREATOR
            f.attrs["creator_version"] = _version()
            f.attrs["created"] = _now()
            _write_topology(f.create_group("topology"), topology)
            f.create_group("schedules")
            f.create_group("results")
            _write_provenance_root(f.create_group("provenance"))
        elif topology is not None:
            stored = _read_topology(f["topology"])
            if stored != topology:
                raise ResultsFileError(
                    f"{target}: the file holds another fabric ({_topology_difference(stored, topology)}); "
                    "write to a new results file"
                )
        f.attrs["modified"] = _now()
        edit(f)
    return buffer.getvalue()


def _write_provenance_root(g: h5py.Group) -> None:
    import networkx
    import numba

    g.attrs["program"] = CREATOR
    g.attrs["program_version"] = _version()
    g.attrs["python"] = platform.python_version()
    g.attrs["numpy"] = np.__version__
    g.attrs["numba"] = numba.__version__
    g.attrs["networkx"] = networkx.__version__
    g.attrs["h5py"] = h5py.__version__


def write_schedule(
    path: str | os.PathLike,
    schedule: Schedule,
    name: str | None = None,
    tables: Callable[[Schedule, str], Mapping[str, ResultTable]] | None = None,
) -> str:
    """Store ``schedule`` in the results file ``path`` (created if missing); return its name.

    A schedule of the same name is replaced. ``tables(schedule, name)`` gives predicted tables
    to store with it under ``/results`` (e.g. :func:`solver.simulate.estimate.model_tables`: this
    module stores tables, it does not compute them). Refuses (:class:`ResultsFileError`) a file
    that holds another fabric.
    """
    name = _check_name(name or default_name(schedule))
    topo = schedule.topology
    index = {n.id: i for i, n in enumerate(topo.nodes)}
    for part in (schedule, *schedule.phases):
        _check_refs(part, index)
    tables = dict(tables(schedule, name)) if tables is not None else {}

    def edit(f: h5py.File) -> None:
        sg = f.require_group("schedules")
        if name in sg:
            del sg[name]
        _write_schedule_group(sg.create_group(name), schedule, topo)
        rg = f.require_group("results")
        for tname, table in tables.items():
            if tname in rg:
                del rg[tname]
            _write_table(rg.create_group(tname), table)
        pg = f.require_group("provenance")
        if name in pg:
            del pg[name]
        p = pg.create_group(name)
        p.attrs["options_json"] = json.dumps(
            {"collective": schedule.collective, "max_trees_per_root": schedule.max_trees_per_root}
        )
        p.attrs["timings_json"] = json.dumps(
            {k: float(v) for k, v in dict(schedule.timings).items()}
        )
        p.attrs["program_version"] = _version()
        p.attrs["written"] = _now()

    _modify(path, topo, edit)
    return name


def write_results(path: str | os.PathLike, name: str, table: ResultTable) -> None:
    """Store (or replace) the table ``/results/<name>`` of an existing results file."""
    name = _check_name(name)
    if not isinstance(table, ResultTable):
        raise ResultsFileError(f"write_results needs a ResultTable, got {type(table).__name__}")

    def edit(f: h5py.File) -> None:
        rg = f.require_group("results")
        if name in rg:
            del rg[name]
        _write_table(rg.create_group(name), table)

    _modify(path, None, edit)


# ----------------------------------------------------------------------------- reads
def read_topology(path: str | os.PathLike) -> Topology:
    with _reading(path) as f:
        return _read_topology(f["topology"])


def read_schedules(path: str | os.PathLike) -> dict[str, Schedule]:
    with _reading(path) as f:
        topo = _read_topology(f["topology"])
        sg = f.get("schedules")
        if sg is None:
            return {}
        return {name: _read_schedule_group(sg[name], topo) for name in sg}


def read_results(path: str | os.PathLike) -> dict[str, ResultTable]:
    with _reading(path) as f:
        rg = f.get("results")
        if rg is None:
            return {}
        return {name: _read_table(rg[name]) for name in rg}


def summarize(path: str | os.PathLike) -> str:
    """A human summary: file metadata, fabric, schedules and result tables.

    Text from the file is escaped (:func:`solver.model.values.printable`: an escape sequence in
    a name or attribute is shown, not obeyed); figures come from the exact attributes. Nothing
    here verifies a schedule: ``forestcoll show`` does that before it prints this."""
    with _reading(path) as f:
        topo = _read_topology(f["topology"])
        lines = [
            (
                f"{path}: {SCHEMA} {_attr_str(f, 'schema_version')}, written by {_attr_str(f, 'creator')} "
                f"{_attr_str(f, 'creator_version')}, created {_attr_str(f, 'created')}"
            ),
            (
                f"fabric {topo.name!r}: {len(topo.compute_ids)} compute nodes, {len(topo.switch_ids)} switches, "
                f"{len(topo.links)} links"
            ),
        ]
        sg = f.get("schedules", {})
        lines.append(f"schedules ({len(sg)}):")
        for name in sg.keys() if sg else []:
            g = sg[name]
            k_lim = _attr_int(g, "max_trees_per_root", 0, 2**31)
            ntrees = len(g["trees"]["root"]) if "trees" in g else 0
            if "phases" in g:
                ntrees = sum(len(g["phases"][p]["trees"]["root"]) for p in g["phases"])
            lines.append(
                f"  {name}: {_attr_str(g, 'collective')}, k={_attr_int(g, 'k', 0, 2**31)}"
                f"{f', K<={k_lim}' if k_lim else ''}, {_algbw_text(g)}, "
                f"{ntrees} trees"
            )
        rg = f.get("results", {})
        lines.append(f"results ({len(rg)}):")
        for name in rg.keys() if rg else []:
            g = rg[name]
            table = _read_table(g)
            sizes = table.size_bytes
            measured = int(np.count_nonzero(~np.isnan(table.measured_time)))
            span = (
                f"{format_size(int(sizes.min()))}..{format_size(int(sizes.max()))}"
                if len(sizes)
                else "empty"
            )
            lines.append(
                f"  {name}: {_attr_str(g, 'source')} / {_attr_str(g, 'algorithm')}, {len(sizes)} sizes {span}, "
                f"{measured} measured"
            )
        plans = f.get("plans", {})
        if len(plans):
            lines.append(f"plans ({len(plans)}):")
        for name in plans.keys() if plans else []:
            g = plans[name]
            reps = len(g["trees"]["root"]) if "trees" in g else 0
            order = _attr_int(g, "order", 1, 2**31)
            lines.append(
                f"  {name}: {_attr_str(g, 'collective')}, k={_attr_int(g, 'k', 0, 2**31)}, "
                f"{_algbw_text(g)}, compressed: {reps} representative "
                f"trees x {order} translates = {reps * order} trees"
            )
        studies = f.get("studies", {})
        if len(studies):
            lines.append(f"studies ({len(studies)}):")
        for name in studies.keys() if studies else []:
            g = studies[name]
            state = "complete" if bool(g.attrs.get("complete", False)) else "incomplete"
            lines.append(
                f"  {name}: {_attr_str(g, 'study')} ({_attr_str(g, 'collective')}), "
                f"{int(g.attrs.get('rows', 0))} of {int(g.attrs.get('rows_total', 0))} rows, {state}"
            )
    return "\n".join(printable(line) for line in lines)


def _algbw_text(g: h5py.Group) -> str:
    """``algbw A GB/s (optimum O = p/q)`` from the exact attributes (the float ones are for
    other readers; nothing here trusts them)."""
    algbw = _parse_frac(_attr_str(g, "algbw_exact"), f"{g.name} algbw_exact")
    optimum = _parse_frac(_attr_str(g, "optimal_algbw_exact"), f"{g.name} optimum")
    return f"algbw {float(algbw):.3f} GB/s (optimum {float(optimum):.3f} = {_frac(optimum)[:60]})"
