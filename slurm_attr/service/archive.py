"""Unpacking posted bundles (a gzip'd tar, or inline JSON) into a private directory.

An archive is untrusted. Members are taken one at a time from the stream (never by the sizes
their headers claim): only directories and regular files with relative names free of `..` are
written, anything else (links of either kind, devices, FIFOs) refuses the whole archive, and the
bytes actually written and the number of members are counted while unpacking, stopping as soon
as a cap is passed. Headers count too: every byte inflated from the gzip stream is counted, so a
bomb made of giant pax headers stops at the cap as well. The directory is removed afterwards in
every case; the diagnosis then reads it through `collect.confine` like any bundle.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, cast

from slurm_attr.collect.confine import valid_hostname

_CHUNK = 1 << 16
_HEADER_SLACK = 3 * 512  # tar header, pax/longname header and padding per member
_SUBDIRS = ("app", "controller", "metrics")


class ArchiveError(ValueError):
    """The upload cannot be used; the message is one line for the caller (HTTP 4xx)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Caps:
    max_bytes: int = 256 << 20  # unpacked file contents
    max_members: int = 20000


def safe_parts(name: str) -> list[str]:
    """The components of a member name, or ArchiveError: relative, no `..`, no NUL or control
    characters, no empty or over-long component."""
    if not name or "\0" in name or any(ord(c) < 32 for c in name):
        raise ArchiveError(f"member name {name!r} is not allowed")
    if name.startswith("/") or "\\" in name:
        raise ArchiveError(f"member {name!r}: absolute or backslash names are not allowed")
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ArchiveError(f"member {name!r}: '..' is not allowed")
    if any(len(p.encode()) > 255 for p in parts) or len(parts) > 32:
        raise ArchiveError(f"member {name[:80]!r}...: name too long or too deep")
    return parts


class _Counted:
    """A read-only stream that fails once more than `limit` bytes have come out of it."""

    def __init__(self, raw: IO[bytes], limit: int, what: str) -> None:
        self.raw, self.limit, self.what, self.seen = raw, limit, what, 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n if n is not None and n >= 0 else _CHUNK)
        self.seen += len(data)
        if self.seen > self.limit:
            raise ArchiveError(f"the archive inflates past {self.what}", 413)
        return data


class _Writer:
    """Creates the tree below `dest` without following anything: directories are made by us, and
    files are created with O_EXCL|O_NOFOLLOW (a name given twice is refused)."""

    def __init__(self, dest: Path, caps: Caps) -> None:
        self.dest, self.caps, self.written, self.members = dest, caps, 0, 0
        self.made: set[tuple[str, ...]] = set()  # directories this writer created

    def count_member(self) -> None:
        self.members += 1
        if self.members > self.caps.max_members:
            raise ArchiveError(f"more than {self.caps.max_members} members", 413)

    def mkdir(self, parts: list[str]) -> Path:
        path = self.dest
        for depth, part in enumerate(parts, 1):
            path = path / part
            if tuple(parts[:depth]) in self.made:  # saves two system calls per level and file
                continue
            try:
                path.mkdir(mode=0o700)
            except FileExistsError:
                raise ArchiveError(f"{'/'.join(parts)}: a file and a directory share a name") from None
            self.made.add(tuple(parts[:depth]))
        return path

    def write(self, parts: list[str], chunks: Iterator[bytes]) -> None:
        parent = self.mkdir(parts[:-1])
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(parent / parts[-1], flags, 0o600)
        except FileExistsError:
            raise ArchiveError(f"{'/'.join(parts)}: given twice") from None
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                self.written += len(chunk)
                if self.written > self.caps.max_bytes:
                    raise ArchiveError(f"the bundle unpacks past {self.caps.max_bytes >> 20} MB", 413)
                out.write(chunk)


def _chunks(fh: IO[bytes]) -> Iterator[bytes]:
    while chunk := fh.read(_CHUNK):
        yield chunk


def extract_tar_gz(upload: IO[bytes], dest: Path, caps: Caps) -> None:
    """Unpack a gzip'd tar from `upload` into the empty directory `dest`."""
    writer = _Writer(dest, caps)
    inflate_cap = caps.max_bytes + caps.max_members * _HEADER_SLACK + (1 << 20)
    stream = _Counted(cast(IO[bytes], gzip.GzipFile(fileobj=upload, mode="rb")), inflate_cap,
                      f"{caps.max_bytes >> 20} MB")
    try:
        # "r|" reads strictly forward from the stream: no seeking, one member at a time.
        with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]
            for member in tar:
                writer.count_member()
                _extract_member(tar, member, writer)
    except (tarfile.TarError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ArchiveError(f"not a readable gzip'd tar: {exc}") from exc
    if writer.members == 0:
        raise ArchiveError("the archive is empty")


def _extract_member(tar: tarfile.TarFile, member: tarfile.TarInfo, writer: _Writer) -> None:
    parts = safe_parts(member.name)
    if member.isdir():
        writer.mkdir(parts)
        return
    if not member.isreg():  # symlink, hard link, device, FIFO, sparse or unknown: refuse all
        kind = ("link" if member.issym() or member.islnk() else "FIFO" if member.isfifo() else
                "device" if member.isdev() else "special file")
        raise ArchiveError(f"member {member.name!r} is a {kind}; only files and directories are allowed")
    if not parts:
        raise ArchiveError(f"member {member.name!r} has no name")
    # tarfile's "data" filter is not applied: it refuses a subset of the above (absolute names,
    # `..`, links out, devices) and its realpath() of every member cost a third of the unpacking
    # time; modes are not taken from the archive (files are created 0600, directories 0700).
    fh = tar.extractfile(member)
    if fh is None:
        raise ArchiveError(f"member {member.name!r} cannot be read")
    writer.write(parts, _chunks(fh))


def write_inline(doc: Any, dest: Path, caps: Caps) -> None:
    """A bundle given as JSON: {"workload": {...}, "app": {name: text}, "nodes": {node: {name:
    text}}, "controller": {name: text}, "metrics": {name: text or JSON}}."""
    if not isinstance(doc, dict) or not isinstance(doc.get("workload"), dict):
        raise ArchiveError("expected a JSON object with a 'workload' object")
    unknown = set(doc) - {"workload", "nodes", *_SUBDIRS}
    if unknown:
        raise ArchiveError(f"unknown keys: {', '.join(sorted(map(str, unknown)))[:200]}")
    writer = _Writer(dest, caps)
    writer.count_member()
    writer.write(["workload.json"], iter([json.dumps(doc["workload"]).encode()]))
    for folder in _SUBDIRS:
        _write_texts(writer, [folder], doc.get(folder) or {}, folder)
    nodes = doc.get("nodes") or {}
    if not isinstance(nodes, dict):
        raise ArchiveError("'nodes' must map node names to {file name: text}")
    for node, files in nodes.items():
        if not valid_hostname(str(node)):
            raise ArchiveError(f"node name {str(node)[:80]!r} is not a hostname")
        _write_texts(writer, ["nodes", node], files, f"nodes.{node}")


def _write_texts(writer: _Writer, prefix: list[str], files: Any, where: str) -> None:
    if not isinstance(files, dict):
        raise ArchiveError(f"'{where}' must map file names to text")
    for name, content in files.items():
        writer.count_member()
        if not isinstance(content, str):
            if prefix[0] != "metrics":
                raise ArchiveError(f"'{where}.{str(name)[:80]}' must be text")
            content = json.dumps(content)
        writer.write(prefix + safe_parts(str(name)), iter([content.encode("utf-8", "surrogatepass")]))


def bundle_root(dest: Path) -> Path:
    """The directory holding workload.json: the top, or the one folder a `tar czf x.tgz dir/` made."""
    if (dest / "workload.json").is_file():
        return dest
    entries = list(dest.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() \
            and (entries[0] / "workload.json").is_file():
        return entries[0]
    raise ArchiveError("no workload.json at the top of the archive (or in its one folder)", 422)


@contextmanager
def private_dir(parent: str | None = None) -> Iterator[Path]:
    """A mode-700 temporary directory, removed however the block ends."""
    path = Path(tempfile.mkdtemp(prefix="slurm-attr-upload-", dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
