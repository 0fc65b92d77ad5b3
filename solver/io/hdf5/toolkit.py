"""The shared parts of the HDF5 results file's readers and writers (:mod:`solver.io.hdf5.results`,
:mod:`~solver.io.hdf5.plans`, :mod:`~solver.io.hdf5.studies`).

- the schema constants and :class:`ResultsFileError`;
- datasets and attributes written and read with their shape, dtype and range checked
  (:func:`dataset`, :func:`strings`, :func:`numbers`, :func:`attr_int`, :func:`attr_str`, ...);
- the fabric and schedule groups (:func:`read_topology_group`, :func:`write_schedule_group`,
  :func:`read_schedule_group`, :func:`check_refs`);
- the file as a whole: :func:`reading` (audit, schema check, one-line errors, bounded memory) and
  :func:`modify` (edit a copy in memory, then rename it over the file).
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
from typing import Any

import h5py
import numpy as np

from solver.io.files import atomic_write_bytes, check_input_file, memory_headroom, write_lock
from solver.io.hdf5.audit import audit
from solver.io.untrusted import json_value, parse_json
from solver.io.v1 import capabilities_json
from solver.model.errors import ForestCollError, TopologyError
from solver.model.schedule import BottleneckCut, LinkLoad, Schedule, Tree, TreeEdge
from solver.model.topology import Link, Node, Topology, validate
from solver.model.values import exact_number

SCHEMA = "forestcoll-results"
SCHEMA_VERSION = "1.2"
CREATOR = "ForestColl Designer"
MAX_FILE_BYTES = 4 * 2**30  # a results file larger than this is refused before it is opened
COMPRESS_MIN = 4096  # elements; smaller datasets are stored contiguous

STR = h5py.string_dtype("utf-8")


class ResultsFileError(ForestCollError):
    """A results file is unreadable, of another kind, too new, or inconsistent."""


# ----------------------------------------------------------------------------- small helpers
def now() -> str:
    return _dt.datetime.now(_dt.UTC).astimezone().isoformat(timespec="seconds")


def frac(value: Fraction) -> str:
    return (
        str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    )


def parse_frac(text: str, what: str = "exact value") -> Fraction:
    """An exact value stored as ``"p/q"`` text, read in bounded time (no ``1e999999999``)."""
    return exact_number(text, what, error=ResultsFileError)


def program_version() -> str:
    from solver._version import __version__

    return __version__


def dataset(group: h5py.Group, name: str, data: Any, dtype: Any, units: str | None = None):
    """Create a dataset; strings as UTF-8; gzip + shuffle from :data:`COMPRESS_MIN` elements."""
    if dtype is STR:
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


def strings(ds, length: int | None = None) -> list[str]:
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


def numbers(ds, kinds: str, length: int | None = None) -> np.ndarray:
    """A 1-D numeric dataset whose dtype kind is one of ``kinds`` ('i', 'u', 'f', 'b')."""
    if not isinstance(ds, h5py.Dataset) or ds.dtype.kind not in kinds:
        raise ResultsFileError(f"{_name(ds)} must be a numeric dataset ({kinds!r})")
    _check_shape(ds, length)
    return ds[()]


def indices(ds, n: int, length: int | None = None) -> np.ndarray:
    """Node indices: integers in ``0..n-1`` (``-1`` is not "the last node")."""
    arr = numbers(ds, "iu", length).astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        bad = int(arr.min()) if arr.min() < 0 else int(arr.max())
        raise ResultsFileError(f"{ds.name}: node index {bad} is outside 0..{n - 1}")
    return arr


def offsets(ds, count: int, total: int) -> np.ndarray:
    """CSR offsets: ``count + 1`` non-decreasing integers from 0 to ``total``."""
    arr = numbers(ds, "iu", count + 1).astype(np.int64)
    if arr[0] != 0 or arr[-1] != total or np.any(np.diff(arr) < 0):
        raise ResultsFileError(f"{ds.name}: offsets must rise from 0 to {total}")
    return arr


def attr_int(obj, name: str, minimum: int, maximum: int) -> int:
    value = obj.attrs[name]
    if isinstance(value, np.ndarray) or not isinstance(
        value, (int, np.integer, float, np.floating)
    ):
        raise ResultsFileError(f"{obj.name}: attribute {name!r} must be a whole number")
    if not (minimum <= value <= maximum) or int(value) != value:
        raise ResultsFileError(
            f"{obj.name}: attribute {name!r} must be a whole number in {minimum}..{maximum}"
        )
    return int(value)


def json_or_empty(value: Any) -> str:
    if not value:
        return ""
    try:
        return json.dumps(dict(value), sort_keys=True)
    except (TypeError, ValueError):
        return ""


def attr_str(obj, name: str, default: str = "") -> str:
    value = obj.attrs.get(name, default)
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


# ----------------------------------------------------------------------------- file checks
def _check_schema(f: h5py.File, path: Path) -> None:
    schema = attr_str(f, "schema", "")
    if schema != SCHEMA:
        raise ResultsFileError(f"{path}: not a ForestColl results file (schema {schema[:40]!r})")
    version = attr_str(f, "schema_version", "")
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


def open_read(path: str | os.PathLike) -> h5py.File:
    """Open a results file after checking it is a regular file within :data:`MAX_FILE_BYTES`,
    then audit its structure (no external storage, VDS, external or soft links, no forged sizes:
    :mod:`solver.io.hdf5.audit`) and its schema."""
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
        except DAMAGE as exc:  # a corrupt header, heap or attribute
            raise ResultsFileError(f"{p}: damaged results file ({why(exc)})") from None
    except BaseException:
        f.close()
        raise
    return f


DAMAGE = (
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
def reading(path: str | os.PathLike):
    """Open a results file for reading; a missing or malformed part is a one-line error."""
    with memory_headroom(_read_headroom(path)):
        with _reading_unbounded(path) as f:
            yield f


@contextlib.contextmanager
def _reading_unbounded(path: str | os.PathLike):
    f = open_read(path)
    try:
        yield f
    except ResultsFileError as exc:
        text = str(exc)
        raise ResultsFileError(text if text.startswith(str(path)) else f"{path}: {text}") from None
    except TopologyError as exc:
        raise ResultsFileError(f"{path}: stored fabric is invalid: {exc}") from None
    except ForestCollError:
        raise
    except DAMAGE as exc:
        raise ResultsFileError(f"{path}: damaged or incomplete results file ({why(exc)})") from None
    finally:
        f.close()


def why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]


# ----------------------------------------------------------------------------- topology
def write_topology_group(g: h5py.Group, topo: Topology) -> None:
    g.attrs["name"] = topo.name
    g.attrs["extra_json"] = json_or_empty(topo.extra)
    index = {n.id: i for i, n in enumerate(topo.nodes)}
    nodes = g.create_group("nodes")
    dataset(nodes, "id", [n.id for n in topo.nodes], STR)
    dataset(nodes, "kind", [n.kind for n in topo.nodes], STR)
    dataset(nodes, "role", [n.role for n in topo.nodes], STR)
    dataset(nodes, "x", [math.nan if n.x is None else float(n.x) for n in topo.nodes], np.float64)
    dataset(nodes, "y", [math.nan if n.y is None else float(n.y) for n in topo.nodes], np.float64)
    dataset(nodes, "group", [n.group or "" for n in topo.nodes], STR)
    dataset(nodes, "has_group", [n.group is not None for n in topo.nodes], np.bool_)
    dataset(nodes, "extra_json", [json_or_empty(n.extra) for n in topo.nodes], STR)
    if any(n.capabilities for n in topo.nodes):  # only then: other files stay as they were
        dataset(nodes, "capabilities", [",".join(capabilities_json(n)) for n in topo.nodes], STR)
    links = g.create_group("links")
    dataset(links, "source", [index[lk.source] for lk in topo.links], np.int32)
    dataset(links, "target", [index[lk.target] for lk in topo.links], np.int32)
    dataset(links, "bandwidth", [float(lk.bandwidth) for lk in topo.links], np.float64, "GB/s")
    dataset(links, "bandwidth_exact", [frac(lk.bandwidth) for lk in topo.links], STR).attrs[
        "units"
    ] = "GB/s"
    dataset(
        links,
        "latency",
        [math.nan if lk.latency is None else float(lk.latency) for lk in topo.links],
        np.float64,
        "us",
    )
    dataset(
        links,
        "latency_exact",
        ["" if lk.latency is None else frac(lk.latency) for lk in topo.links],
        STR,
    ).attrs["units"] = "us"
    dataset(links, "directed", [lk.directed for lk in topo.links], np.bool_)
    dataset(links, "extra_json", [json_or_empty(lk.extra) for lk in topo.links], STR)


def json_object(text: str, what: str = "extra_json") -> dict:
    if not text:
        return {}
    value = json_value(parse_json(text, what, error=ResultsFileError), what, ResultsFileError)
    if not isinstance(value, dict):
        raise ResultsFileError(f"{what} must hold a JSON object")
    return value


def read_topology_group(g: h5py.Group) -> Topology:
    """The stored fabric; every dataset's shape, dtype and index range is checked, then the
    fabric is validated like any fabric file."""
    nodes_g, links_g = g["nodes"], g["links"]
    ids = strings(nodes_g["id"])
    n = len(ids)
    kinds = strings(nodes_g["kind"], n)
    roles = strings(nodes_g["role"], n)
    xs = numbers(nodes_g["x"], "fiu", n).astype(np.float64)
    ys = numbers(nodes_g["y"], "fiu", n).astype(np.float64)
    groups = strings(nodes_g["group"], n)
    has_group = numbers(nodes_g["has_group"], "bui", n)
    nextra = strings(nodes_g["extra_json"], n)
    caps = strings(nodes_g["capabilities"], n) if "capabilities" in nodes_g else [""] * n
    nodes = tuple(
        Node(
            id=ids[i],
            kind=kinds[i],
            role=roles[i],
            x=None if math.isnan(xs[i]) else float(xs[i]),
            y=None if math.isnan(ys[i]) else float(ys[i]),
            group=groups[i] if has_group[i] else None,
            extra=json_object(nextra[i], f"{nodes_g.name}/extra_json[{i}]"),
            capabilities=frozenset(c for c in caps[i].split(",") if c),
        )
        for i in range(n)
    )
    src = indices(links_g["source"], n)
    m = len(src)
    dst = indices(links_g["target"], n, m)
    bw = strings(links_g["bandwidth_exact"], m)
    lat = strings(links_g["latency_exact"], m)
    directed = numbers(links_g["directed"], "bui", m)
    lextra = strings(links_g["extra_json"], m)
    where = links_g.name
    links = tuple(
        Link(
            source=ids[int(src[i])],
            target=ids[int(dst[i])],
            bandwidth=parse_frac(bw[i], f"{where}/bandwidth_exact[{i}]"),
            latency=parse_frac(lat[i], f"{where}/latency_exact[{i}]") if lat[i] else None,
            directed=bool(directed[i]),
            extra=json_object(lextra[i], f"{where}/extra_json[{i}]"),
        )
        for i in range(m)
    )
    topo = Topology(
        name=attr_str(g, "name"),
        nodes=nodes,
        links=links,
        extra=json_object(attr_str(g, "extra_json"), f"{g.name} extra_json"),
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
def check_refs(s: Schedule, index: dict[str, int]) -> None:
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


def write_schedule_group(g: h5py.Group, s: Schedule, topo: Topology) -> None:
    index = {n.id: i for i, n in enumerate(topo.nodes)}
    check_refs(s, index)
    g.attrs["collective"] = s.collective
    g.attrs["k"] = int(s.k)
    g.attrs["max_trees_per_root"] = int(s.max_trees_per_root or 0)
    g.attrs["optimal_algbw"] = float(s.optimal_algbw_exact)
    g.attrs["optimal_algbw_exact"] = frac(s.optimal_algbw_exact)
    g.attrs["algbw"] = float(s.algbw_exact)
    g.attrs["algbw_exact"] = frac(s.algbw_exact)
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
    dataset(trees, "root", [index[t.root] for t in s.trees], np.int32)
    dataset(trees, "multiplicity", [t.multiplicity for t in s.trees], np.int64)
    dataset(trees, "weight", [float(t.weight) for t in s.trees], np.float64)
    dataset(trees, "weight_exact", [frac(t.weight) for t in s.trees], STR)
    dataset(trees, "edge_offsets", edge_off, np.int64)
    dataset(trees, "edge_src", e_src, np.int32)
    dataset(trees, "edge_dst", e_dst, np.int32)
    dataset(trees, "path_offsets", path_off, np.int64)
    dataset(trees, "path_nodes", p_nodes, np.int32)

    cut = s.bottleneck
    b = g.create_group("bottleneck")
    b.attrs["compute_nodes_inside"] = int(cut.compute_nodes_inside)
    b.attrs["egress_bandwidth"] = float(cut.egress_bandwidth)
    b.attrs["egress_bandwidth_exact"] = frac(cut.egress_bandwidth)
    b.attrs["egress_bandwidth_units"] = "GB/s"
    dataset(b, "nodes", [index[v] for v in cut.nodes], np.int32)
    dataset(b, "link_source", [index[u] for u, _, _ in cut.links], np.int32)
    dataset(b, "link_target", [index[v] for _, v, _ in cut.links], np.int32)
    dataset(b, "link_bandwidth", [float(w) for _, _, w in cut.links], np.float64, "GB/s")
    dataset(b, "link_bandwidth_exact", [frac(w) for _, _, w in cut.links], STR).attrs["units"] = (
        "GB/s"
    )

    ll = g.create_group("link_load")
    dataset(ll, "source", [index[x.source] for x in s.link_load], np.int32)
    dataset(ll, "target", [index[x.target] for x in s.link_load], np.int32)
    dataset(ll, "bandwidth", [float(x.bandwidth) for x in s.link_load], np.float64, "GB/s")
    dataset(ll, "bandwidth_exact", [frac(x.bandwidth) for x in s.link_load], STR).attrs["units"] = (
        "GB/s"
    )
    dataset(ll, "load", [float(x.load) for x in s.link_load], np.float64, "1")
    dataset(ll, "load_exact", [frac(x.load) for x in s.link_load], STR)

    dataset(g, "warnings", list(s.warnings), STR)
    tg = g.create_group("timings")
    tg.attrs["units"] = "s"
    for key, value in dict(s.timings).items():
        tg.attrs[str(key)] = float(value)
    if s.phases:
        pg = g.create_group("phases")
        for i, phase in enumerate(s.phases):
            write_schedule_group(pg.create_group(str(i)), phase, topo)


def read_schedule_group(g: h5py.Group, topo: Topology, depth: int = 0) -> Schedule:
    ids = topo.node_ids
    n = len(ids)
    t = g["trees"]
    roots = indices(t["root"], n)
    count = len(roots)
    mult = numbers(t["multiplicity"], "iu", count).astype(np.int64)
    if count and mult.min() < 1:
        raise ResultsFileError(f"{t.name}/multiplicity must be >= 1")
    weights = strings(t["weight_exact"], count)
    esrc = indices(t["edge_src"], n)
    edst = indices(t["edge_dst"], n, len(esrc))
    eoff = offsets(t["edge_offsets"], count, len(esrc))
    pn = indices(t["path_nodes"], n)
    poff = offsets(t["path_offsets"], len(esrc), len(pn))
    # Trees share edges (a schedule of N GPUs has N·k trees but far fewer distinct routed
    # edges: 6.7x fewer on 256 GPUs), so equal edges become one object, as the solver makes
    # them: reading builds each path once and the verifier checks each path once.
    esrc_l, edst_l, pn_l, poff_l, eoff_l = (a.tolist() for a in (esrc, edst, pn, poff, eoff))
    shared: dict[tuple[int, ...], TreeEdge] = {}

    def edge(j: int) -> TreeEdge:
        key = (esrc_l[j], edst_l[j], *pn_l[poff_l[j] : poff_l[j + 1]])
        found = shared.get(key)
        if found is None:
            found = shared[key] = TreeEdge(
                src=ids[key[0]], dst=ids[key[1]], path=tuple(ids[v] for v in key[2:])
            )
        return found

    trees = []
    for i in range(count):
        trees.append(
            Tree(
                root=ids[int(roots[i])],
                multiplicity=int(mult[i]),
                weight=parse_frac(weights[i], f"{t.name}/weight_exact[{i}]"),
                edges=tuple(edge(j) for j in range(eoff_l[i], eoff_l[i + 1])),
            )
        )
    b = g["bottleneck"]
    b_src = indices(b["link_source"], n)
    b_dst = indices(b["link_target"], n, len(b_src))
    bw = strings(b["link_bandwidth_exact"], len(b_src))
    cut = BottleneckCut(
        nodes=tuple(ids[int(v)] for v in indices(b["nodes"], n)),
        compute_nodes_inside=attr_int(b, "compute_nodes_inside", 0, n),
        egress_bandwidth=parse_frac(attr_str(b, "egress_bandwidth_exact"), f"{b.name} egress"),
        links=tuple(
            (ids[int(u)], ids[int(v)], parse_frac(bw[j], f"{b.name}/link_bandwidth_exact[{j}]"))
            for j, (u, v) in enumerate(zip(b_src, b_dst))
        ),
    )
    ll = g["link_load"]
    l_src = indices(ll["source"], n)
    l_dst = indices(ll["target"], n, len(l_src))
    lbw = strings(ll["bandwidth_exact"], len(l_src))
    lload = strings(ll["load_exact"], len(l_src))
    link_load = tuple(
        LinkLoad(
            source=ids[int(u)],
            target=ids[int(v)],
            bandwidth=parse_frac(lbw[j], f"{ll.name}/bandwidth_exact[{j}]"),
            load=parse_frac(lload[j], f"{ll.name}/load_exact[{j}]"),
        )
        for j, (u, v) in enumerate(zip(l_src, l_dst))
    )
    timings = {
        k: finite(v, f"{g.name}/timings {k}") for k, v in g["timings"].attrs.items() if k != "units"
    }
    phases: tuple[Schedule, ...] = ()
    if "phases" in g:
        if depth > 0:
            raise ResultsFileError(f"{g.name}: phases inside phases")
        pg = g["phases"]
        keys = sorted(pg.keys(), key=lambda key: (len(key), key))
        if keys != [str(i) for i in range(len(keys))]:
            raise ResultsFileError(f"{pg.name}: phases must be named 0, 1, ...")
        phases = tuple(read_schedule_group(pg[key], topo, depth + 1) for key in keys)
    k_limit = attr_int(g, "max_trees_per_root", 0, 2**31)
    own_topo = topo if attr_str(g, "phase_topology", "same") == "same" else topo.reversed()
    return Schedule(
        topology=own_topo,
        collective=attr_str(g, "collective"),
        k=attr_int(g, "k", 0, 2**31),
        max_trees_per_root=k_limit or None,
        optimal_algbw_exact=parse_frac(attr_str(g, "optimal_algbw_exact"), f"{g.name} optimum"),
        algbw_exact=parse_frac(attr_str(g, "algbw_exact"), f"{g.name} algbw_exact"),
        bottleneck=cut,
        trees=tuple(trees),
        link_load=link_load,
        timings=timings,
        warnings=tuple(strings(g["warnings"])),
        phases=phases,
    )


def finite(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ResultsFileError(f"{what} must be a number") from None
    if not math.isfinite(number):
        raise ResultsFileError(f"{what} must be finite")
    return number


def check_name(name: str) -> str:
    if not name or "/" in name or name in (".", ".."):
        raise ResultsFileError(f"bad name {name!r} for a schedule or table (no '/', not empty)")
    return name


def modify(path: str | os.PathLike, topology: Topology | None, edit) -> None:
    """Run ``edit(h5file)`` on a copy of ``path`` (created with ``topology`` if missing), then
    rename the copy over ``path``. On any failure the original file is untouched. Concurrent
    updates are serialised (:func:`solver.io.files.write_lock`): each reads the other's."""
    with write_lock(path):  # another writer's update is read, not lost
        _modify_locked(Path(path), topology, edit)


def _modify_locked(target: Path, topology: Topology | None, edit) -> None:
    exists = target.exists()
    if exists:
        open_read(target).close()  # schema/version check before anything else
    elif topology is None:
        raise ResultsFileError(f"{target}: no such results file (write a schedule to it first)")
    try:
        data = _modify_copy(target, exists, topology, edit)
    except ForestCollError:
        raise
    except OSError as exc:
        raise ResultsFileError(f"{target}: cannot write: {exc.strerror or exc}") from None
    except DAMAGE as exc:
        raise ResultsFileError(
            f"{target}: cannot update ({why(exc)}); the file was left as it was"
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
            f.attrs["creator_version"] = program_version()
            f.attrs["created"] = now()
            write_topology_group(f.create_group("topology"), topology)
            f.create_group("schedules")
            f.create_group("results")
            _write_provenance_root(f.create_group("provenance"))
        elif topology is not None:
            stored = read_topology_group(f["topology"])
            if stored != topology:
                raise ResultsFileError(
                    f"{target}: the file holds another fabric ({_topology_difference(stored, topology)}); "
                    "write to a new results file"
                )
        f.attrs["modified"] = now()
        edit(f)
    return buffer.getvalue()


def _write_provenance_root(g: h5py.Group) -> None:
    import networkx
    import numba

    g.attrs["program"] = CREATOR
    g.attrs["program_version"] = program_version()
    g.attrs["python"] = platform.python_version()
    g.attrs["numpy"] = np.__version__
    g.attrs["numba"] = numba.__version__
    g.attrs["networkx"] = networkx.__version__
    g.attrs["h5py"] = h5py.__version__
