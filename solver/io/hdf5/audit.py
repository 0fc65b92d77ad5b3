"""Checks an HDF5 file's structure before anything in it is read: it must be self-contained.

HDF5 lets a dataset keep its bytes in *other* files (external raw storage, virtual datasets) and a
group link into other files (external links) or loop (soft links); reading such a "results file"
would print ``/etc/passwd`` as node ids or hang. A results file written by this program has none
of these, so :func:`audit` refuses them, and it caps what a file may ask for before numpy
allocates anything: elements per dataset (:data:`MAX_ELEMENTS`), the ratio of declared to stored
bytes (an unwritten chunked dataset of 1e10 elements is a few hundred bytes on disk), item sizes,
attribute sizes, object count and group depth.

The walk never follows a link to find out what it is (``getlink=True``) and is iterative.
"""

from __future__ import annotations

import mmap
import zlib

import h5py
import numpy as np

from solver.model.errors import ForestCollError

MAX_ELEMENTS = 1 << 27  # per dataset (1 GiB of float64)
MAX_EXPANSION = 1100  # declared bytes per stored byte (gzip cannot do better than ~1032:1)
SMALL_BYTES = 1 << 20  # datasets below this size are not checked for expansion
MAX_ITEMSIZE = 1 << 16  # bytes of one element (fixed-length strings)
MAX_ATTR_ELEMENTS = 1 << 16
MAX_OBJECTS = 1 << 20  # groups + datasets
MAX_DEPTH = 12  # /schedules/<name>/phases/0/trees/x is 6
MAX_CHUNK_BYTES = 1 << 26  # decoded bytes of one chunk of string references
ALLOWED_FILTERS = {
    h5py.h5z.FILTER_DEFLATE: "gzip",
    h5py.h5z.FILTER_SHUFFLE: "shuffle",
    h5py.h5z.FILTER_FLETCHER32: "fletcher32",
}


def audit(f: h5py.File, where: str, error: type[ForestCollError]) -> None:
    """Raise ``error`` (one line naming ``where`` and the object) unless the whole file is
    self-contained and within the caps above."""
    with open(f.filename, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as raw:
        _check_heaps(raw, where, error)
        _walk(f, raw, where, error)


def _check_heaps(raw: mmap.mmap, where: str, error) -> None:
    """Every global heap collection (where variable-length strings live) must fit in the file:
    HDF5 allocates a collection's declared size before it notices that the file is shorter (a
    flipped byte made a 48 KB file ask for 1.4 GB)."""
    size = len(raw)
    pos = raw.find(b"GCOL")
    while pos >= 0:
        if raw[pos + 4 : pos + 8] == b"\x01\x00\x00\x00" and pos + 16 <= size:
            declared = int.from_bytes(raw[pos + 8 : pos + 16], "little")
            if declared > size - pos:
                raise error(
                    f"{where}: a string heap at byte {pos} declares {declared} bytes, more than "
                    "the file holds (damaged or forged)"
                )
        pos = raw.find(b"GCOL", pos + 4)


_VLEN = np.dtype([("length", "<u4"), ("heap", "<u8"), ("index", "<u4")])


def _check_vlen_refs(ds: h5py.Dataset, raw: mmap.mmap, path: str, where: str, error) -> None:
    """The stored references of a variable-length string dataset must point inside the file and
    name lengths the file can hold (HDF5 allocates the length before reading)."""
    info = h5py.check_string_dtype(ds.dtype)
    if info is None or info.length is not None or not ds.size:
        return
    offset = ds.id.get_offset()
    layout = ds.id.get_create_plist().get_layout()
    if offset is not None:
        data = raw[offset : offset + _VLEN.itemsize * ds.size]
    elif layout == h5py.h5d.CHUNKED:
        data = b"".join(_chunk_bytes(ds, i) for i in range(ds.id.get_num_chunks()))
    elif layout == h5py.h5d.COMPACT:
        raise error(f"{where}: {path}: compact string storage is not written by this program")
    else:
        return  # never written: nothing to read
    refs = np.frombuffer(data[: len(data) // _VLEN.itemsize * _VLEN.itemsize], dtype=_VLEN)
    size = len(raw)
    if refs.size and (refs["length"].max() > size or refs["heap"].max() > size):
        raise error(f"{where}: {path}: a string reference points outside the file (damaged)")


def _chunk_bytes(ds: h5py.Dataset, i: int) -> bytes:
    """The decoded bytes of chunk ``i`` (gzip and shuffle are the only filters audit allows)."""
    info = ds.id.get_chunk_info(i)
    mask, data = ds.id.read_direct_chunk(info.chunk_offset)
    dcpl = ds.id.get_create_plist()
    codes = [dcpl.get_filter(k)[0] for k in range(dcpl.get_nfilters())]
    for k in reversed(range(len(codes))):
        if mask & (1 << k):
            continue
        if codes[k] == h5py.h5z.FILTER_DEFLATE:
            data = zlib.decompressobj().decompress(data, MAX_CHUNK_BYTES)
        elif codes[k] == h5py.h5z.FILTER_SHUFFLE:
            n = len(data) // _VLEN.itemsize * _VLEN.itemsize
            data = np.frombuffer(data[:n], np.uint8).reshape(_VLEN.itemsize, -1).T.tobytes()
    return data


def _walk(f: h5py.File, raw: mmap.mmap, where: str, error) -> None:
    stack: list[tuple[h5py.Group, str, int]] = [(f, "/", 0)]
    count = 0
    while stack:
        group, path, depth = stack.pop()
        _check_attrs(group, path, where, error)
        for name in group:
            full = f"{path.rstrip('/')}/{name}"
            link = group.get(name, getlink=True)
            if isinstance(link, h5py.ExternalLink):
                raise error(
                    f"{where}: {full} is an external link into {link.filename!r}; a results file "
                    "must be self-contained"
                )
            if isinstance(link, h5py.SoftLink):
                raise error(f"{where}: {full} is a soft link to {link.path!r}; not accepted")
            count += 1
            if count > MAX_OBJECTS:
                raise error(f"{where}: more than {MAX_OBJECTS} objects (limit for a results file)")
            obj = group[name]
            if isinstance(obj, h5py.Dataset):
                _check_dataset(obj, full, where, error)
                _check_vlen_refs(obj, raw, full, where, error)
            elif isinstance(obj, h5py.Group):
                if depth + 1 > MAX_DEPTH:
                    raise error(f"{where}: {full}: groups nested more than {MAX_DEPTH} deep")
                stack.append((obj, full, depth + 1))
            else:
                raise error(f"{where}: {full} is a {type(obj).__name__}, not a group or dataset")


def _check_attrs(obj, path: str, where: str, error) -> None:
    for name in obj.attrs:
        aid = obj.attrs.get_id(name)
        shape = aid.shape or ()
        n = 1
        for dim in shape:
            n *= int(dim)
        if n > MAX_ATTR_ELEMENTS or aid.dtype.itemsize > MAX_ITEMSIZE:
            raise error(f"{where}: attribute {name!r} of {path} is too large ({n} elements)")


def _check_dataset(ds: h5py.Dataset, path: str, where: str, error) -> None:
    dcpl = ds.id.get_create_plist()
    if dcpl.get_layout() == h5py.h5d.VIRTUAL:
        raise error(f"{where}: {path} is a virtual dataset (data in other files); not accepted")
    if dcpl.get_external_count() > 0:
        name = dcpl.get_external(0)[0]
        name = name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
        raise error(
            f"{where}: {path} keeps its data in the external file {name[:80]!r}; a results file "
            "must be self-contained"
        )
    for i in range(dcpl.get_nfilters()):
        code = dcpl.get_filter(i)[0]
        if code not in ALLOWED_FILTERS:
            raise error(f"{where}: {path} uses HDF5 filter {code}; only gzip and shuffle are read")
    _check_attrs(ds, path, where, error)
    size = int(ds.size or 0) if ds.shape is not None else 0
    if size > MAX_ELEMENTS:
        raise error(
            f"{where}: {path} declares {size} elements; the limit is {MAX_ELEMENTS} per dataset"
        )
    itemsize = ds.dtype.itemsize
    if itemsize > MAX_ITEMSIZE:
        raise error(f"{where}: {path} has {itemsize}-byte elements; the limit is {MAX_ITEMSIZE}")
    declared = size * itemsize
    if declared > SMALL_BYTES:
        stored = ds.id.get_storage_size()
        if declared > MAX_EXPANSION * stored:
            raise error(
                f"{where}: {path} declares {size} elements but stores only {stored} bytes "
                "(unwritten or forged dataset)"
            )


def permutation(ds, n: int, where: str, error: type[ForestCollError]) -> np.ndarray:
    """A compressed plan's generator: a 1-D integer dataset of exactly ``n`` node indices that
    is a permutation of ``0..n-1``, read only after its shape and dtype are checked (a forged
    length never allocates more than ``n`` entries)."""
    path = getattr(ds, "name", "generator")
    if not isinstance(ds, h5py.Dataset) or ds.dtype.kind not in "iu":
        raise error(f"{where}: {path} must be an integer dataset")
    if ds.ndim != 1 or ds.shape[0] != n:
        raise error(f"{where}: {path} has shape {ds.shape}, expected ({n},): one entry per node")
    values = ds[()].astype(np.int64)
    if n and (values.min() < 0 or values.max() >= n):
        raise error(f"{where}: {path}: node index outside 0..{n - 1}")
    if np.bincount(values, minlength=n).max(initial=0) > 1:
        raise error(f"{where}: {path} maps two nodes to one (not a permutation)")
    return values


__all__ = ["MAX_ELEMENTS", "audit", "permutation"]
