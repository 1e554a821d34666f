"""The one way to read a directory tree that someone else wrote (a bundle, an uploaded archive).

Paths are walked one component at a time from an open directory descriptor with O_NOFOLLOW, so
no symbolic link is ever followed (in or out of the root), `..` and absolute names are refused
before they touch the file system, and only regular files are opened (O_NONBLOCK, so a FIFO
cannot hang the open). Whatever is opened is the inode that was checked: callers read it through
the descriptor (or `/proc/self/fd/N`), never through the name again.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
# A node name becomes a directory name: letters, digits, '.', '_' and '-', not starting with a dot.
_HOSTNAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
MAX_ENTRIES = 100_000  # files looked at below one directory; a bundle is not a file system


class ConfinementError(OSError):
    """A path that must not be read: outside the root, a link, a special file, too big."""


def valid_hostname(name: str) -> bool:
    return bool(_HOSTNAME.fullmatch(name))


def _parts(rel: str | PurePosixPath) -> list[str]:
    text = str(rel)
    if "\0" in text:
        raise ConfinementError(f"{text!r}: NUL in a path")
    path = PurePosixPath(text)
    if path.is_absolute():
        raise ConfinementError(f"{text}: absolute paths are not allowed")
    parts = [p for p in path.parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ConfinementError(f"{text}: '..' is not allowed")
    return parts


@dataclass(frozen=True)
class Entry:
    """A regular file found below the root: its root-relative name, size and identity."""

    rel: str
    size: int
    identity: tuple[int, int]


@dataclass
class Listing:
    files: list[Entry] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "rel: why" for links, devices, FIFOs


class Root:
    """A directory whose contents are untrusted. The root itself is the caller's choice (a path an
    admin named), so links on the way to it are followed, once; nothing below it is."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd = -1
        try:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except NotADirectoryError as exc:
            raise ConfinementError(f"{path} is not a directory") from exc

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Root:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    # ------------------------------------------------------------------ opening
    def _open_dir(self, parts: list[str]) -> int:
        fd = os.dup(self._fd)
        try:
            for part in parts:
                try:
                    nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise _explained(exc, "/".join(parts), _is_link(fd, part)) from exc
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_fd(self, rel: str | PurePosixPath) -> int:
        """A descriptor on the regular file `rel`; ConfinementError (or FileNotFoundError) else."""
        parts = _parts(rel)
        if not parts:
            raise ConfinementError(f"{rel!s}: not a file")
        parent = self._open_dir(parts[:-1])
        try:
            try:
                fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=parent)
            except OSError as exc:
                raise _explained(exc, str(rel), _is_link(parent, parts[-1])) from exc
        finally:
            os.close(parent)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise ConfinementError(f"{rel!s}: not a regular file")
        return fd

    @contextmanager
    def opened(self, rel: str | PurePosixPath, identity: tuple[int, int] | None = None
               ) -> Iterator[Path]:
        """A path to read `rel` by (the open descriptor's /proc entry), valid inside the block.
        With `identity`, the file must still be the inode that was listed."""
        fd = self.open_fd(rel)
        try:
            if identity is not None:
                st = os.fstat(fd)
                if (st.st_dev, st.st_ino) != identity:
                    raise ConfinementError(f"{rel!s}: the file was replaced while being read")
            yield Path(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)

    def read_bytes(self, rel: str | PurePosixPath, limit: int) -> bytes:
        """The whole file, refusing one larger than `limit` bytes (never reading past it)."""
        fd = self.open_fd(rel)
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise ConfinementError(f"{rel!s}: larger than {limit >> 20} MiB")
        return data

    def is_dir(self, rel: str | PurePosixPath) -> bool:
        try:
            os.close(self._open_dir(_parts(rel)))
        except OSError:
            return False
        return True

    # ------------------------------------------------------------------ listing
    def files_under(self, rel: str | PurePosixPath) -> Listing:
        """Regular files below `rel`, sorted by name; links and special files are listed as skipped.
        A missing directory gives an empty listing."""
        listing = Listing()
        try:
            fd = self._open_dir(_parts(rel))
        except FileNotFoundError:
            return listing
        except OSError as exc:
            listing.skipped.append(str(exc) if isinstance(exc, ConfinementError)
                                   else f"{rel}: {exc.strerror or exc}")
            return listing
        self._walk(fd, PurePosixPath(str(rel)), listing)
        listing.files.sort(key=lambda e: e.rel)
        return listing

    def _walk(self, fd: int, rel: PurePosixPath, listing: Listing) -> None:
        try:  # stat while the directory is open: the entries are looked up relative to it
            with os.scandir(fd) as items:
                entries = sorted(((e.name, e.stat(follow_symlinks=False)) for e in items),
                                 key=lambda pair: pair[0])
        except OSError as exc:
            listing.skipped.append(f"{rel}: {exc.strerror or exc}")
            return
        finally:
            os.close(fd)
        for name, st in entries:
            if len(listing.files) + len(listing.skipped) >= MAX_ENTRIES:
                listing.skipped.append(f"{rel}: more than {MAX_ENTRIES} entries, the rest not read")
                return
            path = (rel / name).as_posix()
            if stat.S_ISDIR(st.st_mode):
                self._walk_dir(rel, name, listing)
            elif stat.S_ISREG(st.st_mode):
                listing.files.append(Entry(path, st.st_size, (st.st_dev, st.st_ino)))
            elif stat.S_ISLNK(st.st_mode):
                listing.skipped.append(f"{path}: a symbolic link, not followed")
            else:
                listing.skipped.append(f"{path}: not a regular file")

    def _walk_dir(self, rel: PurePosixPath, name: str, listing: Listing) -> None:
        try:
            fd = self._open_dir(_parts(rel / name))
        except OSError as exc:
            listing.skipped.append(str(exc) if isinstance(exc, ConfinementError)
                                   else f"{(rel / name).as_posix()}: {exc.strerror or exc}")
            return
        self._walk(fd, rel / name, listing)


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _explained(exc: OSError, what: str, is_link: bool) -> OSError:
    """O_NOFOLLOW answers ELOOP for a link and O_DIRECTORY ENOTDIR: say which it was."""
    if is_link:
        return ConfinementError(f"{what}: a symbolic link, not followed")
    if exc.errno == errno.ENOTDIR:
        return ConfinementError(f"{what}: not a directory")
    if isinstance(exc, FileNotFoundError):
        return exc
    return ConfinementError(f"{what}: {exc.strerror or exc}")
