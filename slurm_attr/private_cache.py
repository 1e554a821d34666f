"""A directory of cached files that only this user can have written.

slurm-attr runs as root, and what it reads back from a cache it trusts (parsed rules, rendered
job pages that go into a site as they are). So a cache is used only when every directory of it
is a real directory owned by this user and writable by no one else; files are opened without
following links, must be regular files owned by this user, and are written under a temporary
name and renamed, so a reader never sees half a file. When any of that does not hold, the
cache is not used: the caller renders or parses again, which is always correct.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
TMP_SUFFIX = ".tmp"


def _mine(st: os.stat_result) -> bool:
    return st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


class PrivateCache:
    """Files in `root / *parts`, which are created (mode 0700) and checked on first use."""

    def __init__(self, root: Path, *parts: str) -> None:
        self.root, self.parts = root, parts
        self.dir = root.joinpath(*parts)
        self._usable: bool | None = None

    @property
    def usable(self) -> bool:
        if self._usable is None:
            self._usable = self._prepare()
        return self._usable

    def _prepare(self) -> bool:
        path = self.root
        try:
            for part in self.parts:
                path = path / part
                if not path.exists():
                    path.mkdir(mode=0o700)
                st = os.lstat(path)
                if not (stat.S_ISDIR(st.st_mode) and _mine(st)):
                    return False
        except OSError:
            return False
        return True

    def read(self, name: str, limit: int = 64 << 20) -> bytes | None:
        if not self.usable or "/" in name:
            return None
        try:
            fd = os.open(self.dir / name, _READ)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not (stat.S_ISREG(st.st_mode) and _mine(st)) or st.st_size > limit:
                return None
            with os.fdopen(fd, "rb", closefd=False) as fh:
                return fh.read(limit + 1)[:limit]
        except OSError:
            return None
        finally:
            os.close(fd)

    def write(self, name: str, data: bytes) -> None:
        if not self.usable or "/" in name:
            return
        tmp = self.dir / f"{name}.{os.getpid()}{TMP_SUFFIX}"
        try:
            fd = os.open(tmp, _WRITE, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, self.dir / name)
        except OSError:
            tmp.unlink(missing_ok=True)

    def names(self) -> list[str]:
        """The cached names (temporary files of writers in progress left out)."""
        if not self.usable:
            return []
        try:
            return [e.name for e in os.scandir(self.dir) if not e.name.endswith(TMP_SUFFIX)]
        except OSError:
            return []

    def remove(self, name: str) -> None:
        if self.usable and "/" not in name:
            (self.dir / name).unlink(missing_ok=True)
