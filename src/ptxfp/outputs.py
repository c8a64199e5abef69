"""Every file a ptxfp command writes goes through here, so that all of them treat the place the
user names the same way:

* ``-``: standard output (never closed);
* an existing regular file (or a new name in an existing folder) is written under a temporary
  name in the same folder, flushed to disk (fsync) and renamed over the target at the end:
  readers see the old file or the whole new one, never half of one, and an error leaves the old
  file as it was (the temporary file is removed);
* a symbolic link is followed: the link stays a link, the file it points at gets the data;
* anything else that exists (a FIFO, a character device such as ``/dev/null`` or
  ``/dev/stdout``, a file under ``/proc``) is opened and written to, never replaced;
* a missing folder, a folder as the target, a file no one may write (mode 0444, as
  ``/proc/version``), permission denied, a full disk, any other file-system error: one
  :class:`~ptxfp.errors.OutputError` naming the path and the reason (the CLI prints it as one
  line and exits 2).

``output_dir`` makes (or checks) a folder that a command fills with files of its own
(``sweep --checkpoint``, ``verify --record``).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
import tempfile
from typing import IO, Any, BinaryIO, Callable, Iterator, cast

from .errors import OutputError

__all__ = ["OutputError", "open_output", "write_output", "write_text", "output_dir",
           "output_error"]


def _reason(e: OSError) -> str:
    """A short lower-case reason for an OSError ('no space left on device')."""
    if e.errno == errno.ENOSPC:
        return "no space left on device"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if e.errno == errno.EROFS:
        return "read-only file system"
    text = e.strerror or str(e) or type(e).__name__
    return text[:1].lower() + text[1:]


def output_error(path: str | os.PathLike[str], e: OSError | str, what: str = "output"
                 ) -> OutputError:
    """The OutputError for ``path`` (``what`` names the option or role, e.g. ``-o``)."""
    reason = e if isinstance(e, str) else _reason(e)
    p = os.fspath(path)
    return OutputError(f"{what} {p}: {reason}" if what else f"{p}: {reason}", path=p,
                       reason=reason)


def _ours(e: OSError, names: tuple[str, ...]) -> bool:
    """Is this OSError about writing our file (no file name, or one of ours)?"""
    fn = getattr(e, "filename", None)
    return fn is None or os.fspath(fn) in names


def _in_place(path: str, st: os.stat_result) -> bool:
    """Write into the existing thing rather than replace it: anything but a regular file, and
    the files of the kernel (/proc, /sys, /dev/fd...)."""
    if not stat.S_ISREG(st.st_mode):
        return True
    real = os.path.realpath(path)
    ab = os.path.abspath(path)
    return any(x.startswith(("/proc/", "/sys/", "/dev/")) for x in (real, ab))


@contextlib.contextmanager
def open_output(path: str | os.PathLike[str], what: str = "output", *, text: bool = False,
                encoding: str = "utf-8") -> Iterator[IO[Any]]:
    """A stream to write ``path`` with (binary; ``text=True``: text in ``encoding``), under the
    rules of this module.  The data lands in ``path`` only when the ``with`` block ends without
    an exception; a file-system error in the block or at the end is an OutputError.

        >>> import os, tempfile
        >>> from ptxfp.outputs import open_output
        >>> p = os.path.join(tempfile.mkdtemp(), "out.txt")
        >>> with open_output(p, "-o", text=True) as f:
        ...     _ = f.write("hello\\n")
        >>> open(p).read()
        'hello\\n'
    """
    p = os.fspath(path)
    if p == "":
        raise OutputError(f"{what}: an empty path", path=p, reason="an empty path")
    if p == "-":
        s: IO[Any] = sys.stdout if text else sys.stdout.buffer
        yield s
        s.flush()
        return
    try:
        st: os.stat_result | None = os.stat(p)        # follows symbolic links
    except FileNotFoundError:
        st = None
    except OSError as e:                               # ENOTDIR, ELOOP, EACCES on a folder ...
        raise output_error(p, e, what) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise output_error(p, "is a folder (give a file name)", what)
    if st is not None and not st.st_mode & 0o222:
        raise output_error(p, f"not writable (mode {stat.S_IMODE(st.st_mode):04o})", what)
    if st is not None and _in_place(p, st):
        try:
            raw = open(p, "wb", buffering=0)
        except OSError as e:
            raise output_error(p, e, what) from None
        f: IO[Any] = raw
        if text:
            f = io.TextIOWrapper(io.BufferedWriter(raw), encoding=encoding, newline="")
        try:
            yield f
            f.flush()
        except OSError as e:
            with contextlib.suppress(OSError):
                f.close()
            if _ours(e, (p,)):
                raise output_error(p, e, what) from None
            raise
        try:
            f.close()
        except OSError as e:
            raise output_error(p, e, what) from None
        return
    # a new file, or an existing regular one: a temporary file beside it, renamed at the end
    target = os.path.realpath(p)                       # a symbolic link stays one
    folder = os.path.dirname(target) or "."
    if not os.path.isdir(folder):
        shown = os.path.dirname(p) or folder
        raise output_error(p, f"no such folder {shown}", what)
    if st is not None and not os.access(target, os.W_OK):
        raise output_error(p, "permission denied", what)
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp",
                                   dir=folder)
    except OSError as e:
        raise output_error(p, e, what) from None
    try:
        try:
            if st is not None:
                os.fchmod(fd, stat.S_IMODE(st.st_mode))
                with contextlib.suppress(OSError):
                    os.fchown(fd, st.st_uid, st.st_gid)
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.fchmod(fd, 0o666 & ~umask)          # mkstemp made it 0600: as open() would
            tf: BinaryIO = os.fdopen(fd, "wb")
        except OSError as e:
            os.close(fd)
            raise output_error(p, e, what) from None
        with tf:
            wrapper = io.TextIOWrapper(tf, encoding=encoding, newline="") if text else None
            try:
                yield wrapper if wrapper is not None else tf
                if wrapper is not None:
                    wrapper.flush()
                tf.flush()
                os.fsync(tf.fileno())
            except OSError as e:
                if _ours(e, (p, tmp, target)):
                    raise output_error(p, e, what) from None
                raise
            if wrapper is not None:
                wrapper.detach()
        try:
            os.replace(tmp, target)
        except OSError as e:
            raise output_error(p, e, what) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_output(path: str | os.PathLike[str], write: Callable[[BinaryIO], Any], *,
                 what: str = "output") -> None:
    """Call ``write(stream)`` with a binary stream for ``path`` (see :func:`open_output`)."""
    with open_output(path, what) as f:
        write(cast(BinaryIO, f))


def write_text(path: str | os.PathLike[str], text: str, *, what: str = "output",
               encoding: str = "utf-8") -> None:
    """Write the string ``text`` to ``path`` (see :func:`open_output`)."""
    with open_output(path, what) as f:
        f.write(text.encode(encoding))


def output_dir(path: str | os.PathLike[str], what: str = "output folder") -> str:
    """Make the folder ``path`` (and its missing parents) or check the existing one is a
    folder this process can write in; returns the path.  Anything else is an OutputError."""
    p = os.fspath(path)
    if p == "":
        raise OutputError(f"{what}: an empty path", path=p, reason="an empty path")
    if os.path.exists(p) and not os.path.isdir(p):
        raise output_error(p, "exists and is not a folder", what)
    try:
        os.makedirs(p, exist_ok=True)
    except FileExistsError:
        raise output_error(p, "exists and is not a folder", what) from None
    except OSError as e:
        if e.errno == errno.ENOENT and os.path.abspath(p).startswith(("/proc/", "/sys/")):
            raise output_error(p, "cannot make a folder under /proc or /sys", what) from None
        raise output_error(p, e, what) from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise output_error(p, "permission denied", what)
    return p
