"""The one place that opens files: bounded reads of untrusted input, atomic writes of output.

Reading (:func:`read_text`, :func:`read_bytes`, :func:`check_input_file`): only regular files
(a FIFO or ``/dev/zero`` would block or never end), at most ``max_bytes`` (the caller's format
cap, named in the message), text as UTF-8 (a BOM is dropped). Every failure is one line in the
caller's error class.

Writing (:func:`atomic_path`, :func:`atomic_write_text`, :func:`atomic_write_bytes`): the data
goes to a temporary file beside the target, is flushed to disk, then renamed over the target, so
a crash, a full disk or Ctrl-C never leaves a half-written file and the old file survives.

- Modes: a new file gets ``0666 & ~umask`` like any file the shell creates (the temporary file is
  created with mode 0666 and the kernel applies the umask); an overwritten file keeps its mode.
- Symlinks: writing to a path that is a symbolic link replaces the file the link points to; the
  link stays (like ``cp`` and most editors). A dangling link creates the file it
  points to (an error only when that folder is missing).
- Missing folders: ``-o algos/x.xml`` creates ``algos/`` (and its parents) with the umask.
- Temporary files are named ``.NAME.PID.RANDOM.fctmp``; one left behind by a killed process
  (its PID no longer runs) is removed by the next write of ``NAME`` in that folder. When that
  name would exceed the folder's ``NAME_MAX`` (255 bytes on most file systems), ``NAME`` is cut
  and a hash of the whole name appended, so any legal output name can be written.
- Non-regular targets: an existing target that is not a regular file (``/dev/null``, a
  terminal, a FIFO, a socket) is refused with one line; it is never replaced by a regular file
  (as root, replacing ``/dev/null`` would break the machine) and never written into (a FIFO
  without a reader would block). Write to a regular file, or to ``-`` where a command offers it.
- Concurrent writers: :func:`write_lock` serialises read-modify-write updates of files in one
  folder (an advisory ``flock`` on the folder), so two processes adding schedules to one results
  file both keep theirs.
- Failures (no space left, read-only file system, permission denied...) are one line,
  :class:`OutputError`, naming the target; the temporary file is removed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from solver.model.errors import ForestCollError, TopologyError

TEMP_SUFFIX = ".fctmp"


class OutputError(ForestCollError, OSError):
    """An output file could not be written (one line naming the file and the reason).

    It is an :class:`OSError` too, whose ``strerror`` is the reason alone, so callers that
    format ``f"{path}: cannot write: {exc.strerror}"`` keep working.
    """

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.strerror = reason or message


def _reason(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "no space left on the device (the old file, if any, is unchanged)"
    return exc.strerror or str(exc)


# ------------------------------------------------------------------------------ reading


def check_input_file(
    path: str | os.PathLike,
    max_bytes: int,
    kind: str,
    error: type[ForestCollError] = TopologyError,
) -> int:
    """Check that ``path`` is a readable regular file of at most ``max_bytes``; return its size.

    ``kind`` names the file in the size message ("a fabric file", "a results file").
    """
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except OSError as exc:
        raise error(f"{path}: cannot read: {_reason(exc)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{path}: is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{path}: not a regular file (device, pipe or socket)")
    if st.st_size > max_bytes:
        raise error(
            f"{path}: file is {_size(st.st_size)}, larger than the {_size(max_bytes)} limit "
            f"for {kind}"
        )
    return st.st_size


def _size(n: int) -> str:
    if n >= 2**20:
        return f"{n / 2**20:.0f} MB"
    if n >= 2**10:
        return f"{n / 2**10:.0f} KB"
    return f"{n} bytes"


def read_bytes(
    path: str | os.PathLike,
    max_bytes: int,
    kind: str,
    error: type[ForestCollError] = TopologyError,
) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (checked before and while reading)."""
    check_input_file(path, max_bytes, kind, error)
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read: {_reason(exc)}") from None
    if len(data) > max_bytes:
        raise error(f"{path}: file is larger than the {_size(max_bytes)} limit for {kind}")
    return data


def read_text(
    path: str | os.PathLike,
    max_bytes: int,
    kind: str,
    error: type[ForestCollError] = TopologyError,
) -> str:
    """A UTF-8 text file (BOM dropped) of at most ``max_bytes``; bad bytes name their offset."""
    data = read_bytes(path, max_bytes, kind, error)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start})") from None


@contextlib.contextmanager
def memory_headroom(extra_bytes: int) -> Iterator[None]:
    """Cap this process's address space at its current size plus ``extra_bytes`` while a
    library that trusts sizes in a file (HDF5: a forged string length makes it allocate up to
    4 GiB before it notices the damage) reads it; the allocation then fails and becomes an
    ordinary error.

    Address-space limits are per process, so the cap is applied only when this is the only
    thread (the command line); with other threads running (the designer) it does nothing.
    """
    import resource
    import threading

    if threading.active_count() != 1 or not os.path.exists("/proc/self/statm"):
        yield
        return
    with open("/proc/self/statm") as fh:
        current = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = current + extra_bytes
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft != resource.RLIM_INFINITY and soft <= cap:
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


# ------------------------------------------------------------------------------ writing


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists but belongs to someone else
    return True


def _name_max(folder: Path) -> int:
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError):
        return 255


def temp_stem(folder: Path, name: str) -> str:
    """The ``NAME`` part of the temporary names of ``name`` in ``folder``: ``name`` itself, or,
    when ``.NAME.PID.RANDOM.fctmp`` would not fit ``NAME_MAX``, a prefix of it plus ``~`` and 12
    hex digits of its hash."""
    limit = _name_max(folder) - len(f"..{2**22}.{'0' * 8}{TEMP_SUFFIX}")  # PIDs up to 2^22
    encoded = os.fsencode(name)
    if len(encoded) <= limit:
        return name
    digest = hashlib.sha256(encoded).hexdigest()[:12]
    cut = encoded[: max(0, limit - 13)].decode("utf-8", "ignore") if limit > 13 else ""
    return f"{cut}~{digest}"


def clean_stale_temps(folder: Path, name: str) -> int:
    """Remove ``.NAME.PID.*.fctmp`` files in ``folder`` whose process no longer runs."""
    removed = 0
    prefix = f".{temp_stem(folder, name)}."
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        fname = entry.name
        if not (fname.startswith(prefix) and fname.endswith(TEMP_SUFFIX)):
            continue
        middle = fname[len(prefix) : -len(TEMP_SUFFIX)].split(".")
        if len(middle) != 2 or not middle[0].isdigit():
            continue
        pid = int(middle[0])
        if pid == os.getpid() or _pid_running(pid):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed += 1
    return removed


def _resolve_target(path: str | os.PathLike) -> Path:
    target = Path(path)
    if target.is_symlink():
        resolved = Path(os.path.realpath(target))
        if not resolved.parent.is_dir():
            raise OutputError(
                f"{target}: is a symbolic link to {resolved}, whose folder is missing"
            )
        return resolved
    return target


def _new_temp(folder: Path, name: str) -> Path:
    stem = temp_stem(folder, name)
    for _ in range(100):
        tmp = folder / f".{stem}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise OutputError(f"{folder / name}: cannot create a temporary file")  # pragma: no cover


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block ends normally, rename it over
    ``path`` (see the module docstring for modes, symlinks and folders).

    On any exception the temporary file is removed and ``path`` is left untouched; an
    :class:`OSError` from writing becomes one-line :class:`OutputError`.
    """
    target = _resolve_target(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise OutputError(f"{path}: is a folder; give a file name")
    try:
        mode = os.stat(target).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        reason = "not a regular file (a device, pipe or socket); write to a regular file"
        raise OutputError(f"{path}: {reason}", reason)
    blocker = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        reason = f"{blocker} is a file, not a folder"
        raise OutputError(f"{path}: cannot write: {reason}", reason)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        clean_stale_temps(folder, target.name)
        tmp = _new_temp(folder, target.name)
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {_reason(exc)}", _reason(exc)) from None
    try:
        yield tmp
        _finish(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OutputError):
            raise
        raise OutputError(f"{path}: cannot write: {_reason(exc)}", _reason(exc)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _finish(tmp: Path, target: Path) -> None:
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)  # a full disk or a quota shows up here, before the old file is replaced
    finally:
        os.close(fd)
    try:
        old_mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        old_mode = None
    if old_mode is not None:
        os.chmod(tmp, old_mode)
    os.replace(tmp, target)


LOCK_TIMEOUT_S = 60.0  # how long a writer waits for another one before giving up


@contextlib.contextmanager
def write_lock(path: str | os.PathLike, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive advisory lock (``flock``) on the folder of ``path`` while a
    read-modify-write update of ``path`` runs; other writers wait for it.

    After ``timeout`` seconds of waiting: :class:`OutputError` naming the folder. A folder that
    does not exist yet (the write creates it) or cannot be opened for reading (permission
    ``-wx``) is written without the lock.
    """
    import fcntl

    target = _resolve_target(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield  # the write itself reports what is wrong with the folder
        return
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise OutputError(
                        f"{path}: another program has been writing to {folder} for "
                        f"{timeout:g} s; try again when it has finished"
                    ) from None
                time.sleep(0.05)
            except OSError:  # a file system without flock: write unlocked
                break
        yield
    finally:
        os.close(fd)  # releases the lock


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically (a lone surrogate is an OutputError)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise OutputError(
            f"{path}: cannot write: the text holds U+{ord(exc.object[exc.start]):04X}, "
            "which UTF-8 cannot encode"
        ) from None
    atomic_write_bytes(path, data)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)


__all__ = [
    "OutputError",
    "TEMP_SUFFIX",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_input_file",
    "clean_stale_temps",
    "temp_stem",
    "write_lock",
    "memory_headroom",
    "read_bytes",
    "read_text",
]
