"""Bearer tokens: a file of `<token> <scope>` lines, compared in constant time, never logged.

`read` lets a caller query diagnoses and browse the dashboard; `submit` also lets it POST
attempts to diagnose. The dashboard keeps the token in an HttpOnly cookie, accepted for reading
only (a cookie is sent by the browser on its own, so it must not authorise a write).
"""

from __future__ import annotations

import hmac
import os
import stat
from dataclasses import dataclass
from pathlib import Path

SCOPES = ("read", "submit")
COOKIE = "slurm_attr_token"
MIN_TOKEN_LEN = 16  # a short token is guessable over HTTP


class TokenFileError(ValueError):
    """The token file cannot be used; the message names the line, never the token."""


@dataclass(frozen=True)
class Tokens:
    entries: tuple[tuple[bytes, str], ...]

    @classmethod
    def load(cls, path: Path) -> Tokens:
        try:
            text = path.read_text(encoding="utf-8")
            mode = path.stat().st_mode
        except (OSError, UnicodeDecodeError) as exc:
            raise TokenFileError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc
        if mode & (stat.S_IROTH | stat.S_IWOTH):
            raise TokenFileError(f"{path}: readable or writable by others; chmod 600 it")
        return cls(tuple(_parse(path, text)))

    def scope_of(self, presented: str | None) -> str | None:
        """The scope of a presented token, or None. Every entry is compared (no early exit), each
        in constant time, so the time taken says nothing about which prefix matched."""
        if not presented:
            return None
        given = presented.encode("utf-8", "surrogateescape")
        found = None
        for token, scope in self.entries:
            if hmac.compare_digest(token, given) and found is None:
                found = scope
        return found


def _parse(path: Path, text: str) -> list[tuple[bytes, str]]:
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 2 or fields[1] not in SCOPES:
            raise TokenFileError(f"{path}:{number}: expected '<token> read' or '<token> submit'")
        if len(fields[0]) < MIN_TOKEN_LEN:
            raise TokenFileError(f"{path}:{number}: token shorter than {MIN_TOKEN_LEN} characters")
        entries.append((fields[0].encode(), fields[1]))
    if not entries:
        raise TokenFileError(f"{path}: no tokens")
    return entries


def allows(scope: str | None, needed: str) -> bool:
    """submit implies read."""
    return scope == "submit" or (scope == "read" and needed == "read")


def new_token() -> str:
    return os.urandom(24).hex()
