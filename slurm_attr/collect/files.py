"""Reading untrusted log files as a stream of byte blocks that end on line boundaries.

Logs are huge, rotated, gzipped, truncated and not always UTF-8. Nothing here loads a whole file,
and nothing raises on bad content: problems are returned as notes for the coverage and errors.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

BLOCK = 4 << 20  # bytes read at a time
MAX_LINE = 1 << 20  # longer lines are cut here; the rest is skipped
_ROTATION = re.compile(r"^(?P<base>.*?)(?:[.-](?P<num>\d{1,4}|\d{8}))?(?P<gz>\.gz)?$")


@dataclass
class ReadStats:
    bytes: int = 0
    lines: int = 0
    problems: list[str] = field(default_factory=list)


def rotation_order(paths: list[Path]) -> list[Path]:
    """Oldest first: `syslog.3.gz`, `syslog.2.gz`, `syslog.1`, `syslog`; dated suffixes ascend."""

    def key(p: Path) -> tuple:
        m = _ROTATION.match(p.name)
        base, num = (m["base"], m["num"]) if m else (p.name, None)
        if num is None:
            rank = 0
        elif len(num) == 8:  # dateext: older dates first, all before the live file
            rank = -100_000_000 + int(num)
        else:
            rank = int(num)
        return (base, -rank if len(num or "") != 8 else rank, p.name)

    return sorted(paths, key=key)


class _GzipStream:
    """Streaming gunzip that keeps every byte decoded before a truncation or corruption."""

    def __init__(self, path: Path, stats: ReadStats) -> None:
        self.fh = open(path, "rb")  # noqa: SIM115 - closed in close()
        self.stats = stats
        self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def read(self, size: int) -> bytes:
        out = b""
        while len(out) < size:
            raw = self.fh.read(1 << 20)
            if not raw:
                if not self.inflater.eof:
                    self.stats.problems.append("truncated compressed data: the archive ends early")
                return out + self.inflater.flush()
            try:
                out += self.inflater.decompress(raw)
                while self.inflater.eof and self.inflater.unused_data:  # concatenated members
                    rest = self.inflater.unused_data
                    self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    out += self.inflater.decompress(rest)
            except zlib.error as exc:
                self.stats.problems.append(f"corrupt compressed data: {exc}")
                self.fh.seek(0, 2)
                return out
        return out

    def close(self) -> None:
        self.fh.close()

    def __enter__(self) -> _GzipStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open(path: Path, stats: ReadStats):
    return _GzipStream(path, stats) if is_gzip(path) else open(path, "rb")


def is_gzip(path: Path) -> bool:
    with open(path, "rb") as probe:
        return probe.read(2) == b"\x1f\x8b"


def count_lines(path: Path, end: int) -> int:
    """Newlines in the first `end` bytes of a plain file (cheap: no decoding, no matching)."""
    count, left = 0, end
    with open(path, "rb") as fh:
        while left > 0:
            data = fh.read(min(BLOCK, left))
            if not data:
                break
            count += data.count(b"\n")
            left -= len(data)
    return count


def iter_blocks(path: Path, stats: ReadStats, start: int = 0) -> Iterator[bytes]:
    """Yield blocks of whole lines from byte `start` (a line start) of a plain file, or from the
    beginning of a gzipped one. Cuts gigantic lines and survives truncated archives."""
    carry = b""
    try:
        with _open(path, stats) as fh:
            if start:
                fh.seek(start)
            while True:
                data = fh.read(BLOCK)
                if not data:
                    break
                stats.bytes += len(data)
                buf = carry + data
                cut = buf.rfind(b"\n")
                if cut < 0:
                    if len(buf) > MAX_LINE:
                        stats.problems.append(f"line longer than {MAX_LINE} bytes was cut")
                        carry = b""
                        yield _cut_line(buf) + b"\n"
                    else:
                        carry = buf
                    continue
                carry = buf[cut + 1:]
                if len(carry) > MAX_LINE:
                    stats.problems.append(f"line longer than {MAX_LINE} bytes was cut")
                    carry = b""
                yield buf[: cut + 1]
    except OSError as exc:
        stats.problems.append(f"read failed: {exc.strerror or exc}")
    if carry:
        stats.problems.append("last line has no newline (file still being written or truncated)")
        yield carry + b"\n"


def _cut_line(line: bytes) -> bytes:
    return line[:MAX_LINE]


def decode(raw: bytes) -> tuple[str, bool]:
    """Text for a line; the flag says bytes were not valid UTF-8 and were replaced."""
    if raw.isascii():
        return raw.decode("ascii"), False
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), True


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")


def clean(text: str) -> str:
    """Printable text: control characters (terminal escapes included) become U+FFFD."""
    return _CONTROL.sub("\ufffd", text.rstrip("\r\n"))
