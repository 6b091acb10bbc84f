"""Reading an input module and writing an output file, the same way for every command.

MLIR reads its input as bytes: a comment may hold any of them, and only the tokens must be
valid. We read UTF-8 with ``surrogateescape``, so bytes that are not UTF-8 survive as lone
surrogates (which no token matches) instead of stopping the read.
"""
from __future__ import annotations

import errno
import io
import os
import stat
import sys
from contextlib import suppress


def read_source(path: str, stdin=None) -> tuple[str, str]:
    """The text of ``path`` (``-``: standard input) and the name diagnostics give it;
    raises ``OSError`` for a file that cannot be read."""
    if path == "-":
        stdin = stdin or sys.stdin
        buffer = getattr(stdin, "buffer", None)
        if buffer is None:  # a text stream without bytes underneath (tests use StringIO)
            return stdin.read(), "<stdin>"
        return io.TextIOWrapper(buffer, encoding="utf-8", errors="surrogateescape").read(), \
            "<stdin>"
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read(), path


class OutputError(OSError):
    """Writing an output file failed at ``stage`` (``open`` or ``write``)."""

    def __init__(self, stage: str, error: OSError):
        super().__init__(error.errno, error.strerror)
        self.stage = stage


_SPECIAL_DIRS = ("/dev/", "/proc/")  # /dev/stdout may name a regular file: write, not replace


def replace_file(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a failure keeps the file's previous content: into
    a temporary file beside it, renamed over it once complete, keeping its permissions (a
    device or pipe such as ``/dev/null`` is written in place). Raises
    :class:`OutputError`."""
    stage = "open"
    try:
        kind = _file_kind(path)
        if kind == stat.S_IFDIR:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if kind not in (None, stat.S_IFREG) or path.startswith(_SPECIAL_DIRS):
            with open(path, "wb") as f:
                stage = "write"
                f.write(data)
            return
        import tempfile  # here, not at the top: it costs every tool's start-up ~3 ms

        target = os.path.realpath(path)  # through a symlink: replace its target
        mode = _new_file_mode(target)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp",
                                   dir=os.path.dirname(target))
        stage = "write"
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        finally:
            with suppress(OSError):
                os.unlink(tmp)
    except OSError as e:
        raise OutputError(stage, e) from None


def _file_kind(path: str) -> int | None:
    """``stat.S_IFREG``, ``S_IFDIR``, ... of what ``path`` names (symlinks followed), or
    None when nothing exists there yet."""
    try:
        return stat.S_IFMT(os.stat(path).st_mode)
    except FileNotFoundError:
        return None


def _new_file_mode(target: str) -> int:
    """The permissions the output file keeps (or, new, gets from the umask)."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
