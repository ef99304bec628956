"""Bytes on disk <-> text for the engine, without losing anything: encoding
(PEP 263 cookie, BOM), line endings and file mode survive a rewrite, and a
write is atomic and refused when the file changed since it was read."""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple

MAX_BYTES = 8 * 1024 * 1024


class Unreadable(Exception):
    """A file that cannot be processed; the message is the one-line reason."""


@dataclass(eq=False, repr=False)
class SourceFile:
    path: Path
    raw: bytes
    text: str  # decoded, newlines normalised to "\n"
    encoding: str
    bom: bool
    newline: str
    mode: int
    mtime_ns: int

    def encode(self, text: str) -> bytes:
        """``text`` (with "\\n") back to bytes in this file's conventions."""
        if self.newline != "\n":
            text = text.replace("\n", self.newline)
        data = text.encode(self.encoding)
        return (codecs.BOM_UTF8 + data) if self.bom else data


def decode(raw: bytes, name: str = "<stdin>") -> Tuple[str, str, bool, str]:
    """(text, encoding, bom, newline) of Python source bytes; raises Unreadable."""
    if b"\0" in raw:
        raise Unreadable(f"{name}: contains a NUL byte, not a Python source file")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as err:
        if "invalid or missing encoding declaration" not in str(err):
            raise Unreadable(f"{name}: {err}") from None
        encoding = "utf-8"  # no cookie: decoding below names the offending byte
    bom = raw.startswith(codecs.BOM_UTF8)
    body = raw[len(codecs.BOM_UTF8):] if bom else raw
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as err:
        raise Unreadable(
            f"{name}: not valid {encoding} (byte {body[err.start]:#04x} at offset {err.start}); "
            "add a PEP 263 coding cookie or re-encode the file"
        ) from None
    except LookupError:
        raise Unreadable(f"{name}: unknown encoding {encoding!r} in its coding cookie") from None
    newline = "\r\n" if "\r\n" in text else ("\r" if "\r" in text else "\n")
    if newline != "\n":
        text = text.replace(newline, "\n")
    return text, encoding, bom, newline


def read(path: Path) -> SourceFile:
    """Read and decode ``path``; raises Unreadable with a one-line reason."""
    try:
        info = path.stat()
        if info.st_size > MAX_BYTES:
            raise Unreadable(f"{path}: {info.st_size} bytes is over the {MAX_BYTES}-byte limit")
        raw = path.read_bytes()
    except OSError as err:
        raise Unreadable(f"{path}: cannot read ({err.strerror or err})") from None
    text, encoding, bom, newline = decode(raw, str(path))
    return SourceFile(path, raw, text, encoding, bom, newline, stat.S_IMODE(info.st_mode),
                      info.st_mtime_ns)


class WriteRefused(Exception):
    """The rewrite was not written; the message says why."""


def write(source: SourceFile, text: str) -> None:
    """Replace ``source.path`` by ``text`` in its own conventions and mode,
    with ``atomic_write``; refused when the file is read-only or its bytes
    changed since ``source`` was read."""
    path = Path(os.path.realpath(source.path))  # a symlink stays a link; its target is rewritten
    data = source.encode(text)
    if not source.mode & 0o222 or not os.access(path, os.W_OK):
        # a rename would replace it anyway (and root may write anything): respect the intent
        raise WriteRefused(f"{source.path}: read-only file (mode {source.mode:o}); not overwritten")
    try:
        if path.read_bytes() != source.raw:
            raise WriteRefused(f"{source.path}: changed on disk since it was read; not overwritten")
        atomic_write(path, data, source.mode)
    except OSError as err:
        raise WriteRefused(f"{source.path}: cannot write ({err.strerror or err})") from None


TEMP_SUFFIX = ".tf-migrate"  # a temporary file's name: hidden, never a .py, never discovered


def atomic_write(path: Path, data: bytes, mode: Optional[int] = None, durable: bool = True) -> None:
    """Replace ``path`` by ``data`` so that a reader, or a crash, finds the old
    bytes or the new ones, never a mix.

    The data goes to a temporary file in the same folder (a rename is atomic
    only within one file system), gets ``mode`` (None: the temporary file's
    private 0o600) and is renamed over ``path``. ``durable`` also fsyncs the
    file before the rename and the folder after it (where the platform
    allows), so that after a power cut the file is not found empty; it costs
    a few milliseconds a file. Raises OSError; no temporary file is left.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable; a no-op where folders cannot be
    opened (Windows) or fsynced (some network file systems)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def text_of(path: Optional[Path], raw: bytes) -> SourceFile:
    """A SourceFile for bytes that did not come from disk (stdin)."""
    text, encoding, bom, newline = decode(raw, str(path or "<stdin>"))
    return SourceFile(path or Path("<stdin>"), raw, text, encoding, bom, newline, 0o644, 0)
