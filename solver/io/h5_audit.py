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

import h5py

from solver.model.errors import ForestCollError

MAX_ELEMENTS = 1 << 27  # per dataset (1 GiB of float64)
MAX_EXPANSION = 1100  # declared bytes per stored byte (gzip cannot do better than ~1032:1)
SMALL_BYTES = 1 << 20  # datasets below this size are not checked for expansion
MAX_ITEMSIZE = 1 << 16  # bytes of one element (fixed-length strings)
MAX_ATTR_ELEMENTS = 1 << 16
MAX_OBJECTS = 1 << 20  # groups + datasets
MAX_DEPTH = 12  # /schedules/<name>/phases/0/trees/x is 6
ALLOWED_FILTERS = {
    h5py.h5z.FILTER_DEFLATE: "gzip",
    h5py.h5z.FILTER_SHUFFLE: "shuffle",
    h5py.h5z.FILTER_FLETCHER32: "fletcher32",
}


def audit(f: h5py.File, where: str, error: type[ForestCollError]) -> None:
    """Raise ``error`` (one line naming ``where`` and the object) unless the whole file is
    self-contained and within the caps above."""
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


__all__ = ["MAX_ELEMENTS", "audit"]
