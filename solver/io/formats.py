"""Reading and writing fabric files; the format is picked from the file name.

=====================  ==========================================  ==========
extension              format                                      direction
=====================  ==========================================  ==========
``.json``              v1 (``"format": "forestcoll-topology"``);   read/write
                       a JSON file without ``format``/``version``
                       that has networkx's ``directed``/
                       ``multigraph``/``graph``/``edges`` keys is
                       read as node-link
``.nodelink.json``     networkx node-link JSON                      read/write
``.graphml``           GraphML                                      read/write
``.xml``               NCCL topology dump (``NCCL_TOPO_DUMP_FILE``)  read
=====================  ==========================================  ==========
"""

from __future__ import annotations

import os
from pathlib import Path

from solver.io import v1
from solver.io.files import atomic_write_text, read_text
from solver.model.errors import TopologyError
from solver.model.topology import Topology, validate_read

#: a fabric file's size: the 131 072-GPU 3-tier Clos template is 128 MB of GraphML
MAX_FILE_BYTES = 512 * 1024 * 1024
#: memory that parsing a fabric file and building its model may take, estimated from the text
#: before it is parsed (:func:`parse_estimate`), so that a legal-sized but hostile file (512 MB
#: of ``[0.1,0.1,...``: 10^8 exact decimals) is one error line instead of tens of gigabytes
MAX_PARSE_BYTES = 6 * 1024**3
#: bytes per JSON value and per JSON object (parsed, then as a Node or Link with its Fractions)
#: and per XML tag, measured on the 15 360-GPU HPN pod (108 842 objects, 429 371 commas: 104 MB
#: from v1; 699 377 tags: 280 MB from GraphML) and rounded up
JSON_VALUE_BYTES = 200
JSON_OBJECT_BYTES = 500
XML_TAG_BYTES = 500


def _read_text(path: Path) -> str:
    return read_text(path, MAX_FILE_BYTES, "a fabric file")


def parse_estimate(text: str, fmt: str) -> int:
    """Bytes that parsing ``text`` (format ``fmt``) and building its model may take: an upper
    estimate counted in one pass per character class (JSON: values from commas and brackets,
    objects from braces; XML: tags), never below twice the text itself."""
    if fmt in ("v1", "nodelink"):
        objects = text.count("{")
        values = text.count(",") + text.count("[") + objects + 1
        return JSON_VALUE_BYTES * values + JSON_OBJECT_BYTES * objects + 2 * len(text)
    return XML_TAG_BYTES * text.count("<") + 2 * len(text)


def check_parse_estimate(text: str, fmt: str, where: str) -> None:
    """Refuse ``text`` when :func:`parse_estimate` is over :data:`MAX_PARSE_BYTES`."""
    need = parse_estimate(text, fmt)
    if need > MAX_PARSE_BYTES:
        raise TopologyError(
            f"{where}: reading this file would take about {need / 1024**3:.3g} GiB of memory "
            f"(estimated from its {len(text)} characters); the limit is "
            f"{MAX_PARSE_BYTES / 1024**3:.3g} GiB"
        )


def _looks_like_nodelink(data) -> bool:
    """A plain ``.json`` document that is networkx node-link rather than (broken) v1.

    It must not mention v1's ``format``/``version`` and must carry a key networkx writes
    (``directed``, ``multigraph``, ``graph`` or ``edges``); anything else is read as v1 so that
    a missing ``format`` is reported as such.
    """
    if not isinstance(data, dict) or "format" in data or "version" in data:
        return False
    return any(key in data for key in ("directed", "multigraph", "graph", "edges"))


def format_for(path: str | os.PathLike) -> str:
    """The format name for a file name: 'v1', 'nodelink', 'graphml' or 'nccl-xml'."""
    name = Path(path).name.lower()
    if name.endswith(".nodelink.json"):
        return "nodelink"
    if name.endswith(".json"):
        return "v1"
    if name.endswith(".graphml"):
        return "graphml"
    if name.endswith(".xml"):
        return "nccl-xml"
    raise TopologyError(
        f"{path}: unknown file type (use .json, .nodelink.json, .graphml or NCCL .xml)"
    )


def load(path: str | os.PathLike, *, check: bool = True, **options) -> Topology:
    """Read a fabric file of any supported format (picked by :func:`format_for`) and validate it.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.json`` (v1 or node-link), ``.nodelink.json``, ``.graphml`` or NCCL ``.xml`` file of
        at most :data:`MAX_FILE_BYTES`.
    check : bool
        Validate the fabric (:func:`solver.model.topology.validate_read`); False returns it as
        read (the designer opens a broken file to repair it).
    **options
        Go to the NCCL XML importer (``boxes``, ``fabric``; :mod:`solver.io.nccl.topo_xml`).

    Returns
    -------
    Topology

    Raises
    ------
    TopologyError
        An unknown extension, an unreadable, oversized or non-UTF-8 file, a malformed document,
        or (with ``check``) an invalid fabric: one line naming the file and the place.

    Examples
    --------
    >>> import os, tempfile
    >>> from solver.io.formats import load, save
    >>> from solver.io.templates import ring
    >>> path = os.path.join(tempfile.mkdtemp(), "ring.graphml")
    >>> save(ring(4), path)
    >>> len(load(path).compute_ids)
    4
    """
    path = Path(path)
    fmt = format_for(path)
    text = _read_text(path)
    where = str(path)
    check_parse_estimate(text, fmt, where)
    if fmt in ("v1", "nodelink"):
        data = v1.parse_json_exact(text, where)
        if fmt == "v1" and not _looks_like_nodelink(data):
            return v1.from_dict(data, where, check=check)  # names a missing/wrong format
        from solver.io import nodelink

        topo = nodelink.from_data(data, where)
    elif fmt == "graphml":
        from solver.io import graphml

        topo = graphml.loads(text, where)
    else:
        from solver.io.nccl import topo_xml

        topo = topo_xml.loads(text, where, **options)
    return validate_read(topo, where) if check else topo


def dumps(topo: Topology, fmt: str) -> str:
    """Text of ``topo`` in format ``fmt`` ('v1', 'nodelink', 'graphml')."""
    if fmt == "v1":
        return v1.dumps(topo)
    if fmt == "nodelink":
        from solver.io import nodelink

        return nodelink.dumps(topo)
    if fmt == "graphml":
        from solver.io import graphml

        return graphml.dumps(topo)
    raise TopologyError(f"cannot write format {fmt!r} (NCCL XML is import-only)")


def save(topo: Topology, path: str | os.PathLike) -> None:
    """Write ``topo`` atomically in the format its extension names (v1, node-link, GraphML).

    Parameters
    ----------
    topo : Topology
        The fabric to write.
    path : str or os.PathLike
        ``.json`` (v1), ``.nodelink.json`` or ``.graphml``; replaced atomically.

    Raises
    ------
    TopologyError
        An extension that names no format, or NCCL ``.xml`` (import only).
    OutputError
        ``path`` cannot be written (one line naming it and the reason); the old file is kept.
    """
    atomic_write_text(path, dumps(topo, format_for(path)))


__all__ = [
    "MAX_FILE_BYTES",
    "MAX_PARSE_BYTES",
    "parse_estimate",
    "dumps",
    "format_for",
    "load",
    "save",
]
