"""Reading untrusted log files as a stream of byte blocks that end on line boundaries.

Logs are huge, rotated, gzipped, truncated and not always UTF-8. Nothing here loads a whole file,
and nothing raises on bad content: problems are returned as notes for the coverage and errors.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

BLOCK = 4 << 20  # bytes read at a time
MAX_LINE = 1 << 20  # longer lines are cut here; the rest is skipped
_ROTATION = re.compile(r"^(?P<base>.*?)(?:[.-](?P<num>\d{1,4}|\d{8}))?(?P<gz>\.gz)?$")


@dataclass(frozen=True)
class ReadLimits:
    """Caps on what one attempt's files may cost. Past a cap the file is recorded as truncated
    and what was read before it is kept."""

    max_file_bytes: int = 4 << 30  # bytes taken from one file (after decompression)
    max_attempt_bytes: int = 16 << 30  # all files of one attempt together
    max_inflate_ratio: int = 200  # decompressed / compressed, judged past inflate_ratio_floor
    inflate_ratio_floor: int = 64 << 20
    # Events kept per rule and node; past it a matching line adds to the count of the kept
    # event of its burst (or is kept while the rule has room for new kinds), so a log of
    # millions of identical warnings costs counts, not memory.
    max_events_per_rule: int = 5000


class ReadBudget:
    """The bytes one attempt may still read, shared by all its files."""

    def __init__(self, limits: ReadLimits | None = None) -> None:
        self.limits = limits or ReadLimits()
        self.left = self.limits.max_attempt_bytes

    def take(self, n: int) -> None:
        self.left -= n


@dataclass
class ReadStats:
    bytes: int = 0
    lines: int = 0
    problems: list[str] = field(default_factory=list)
    budget: ReadBudget = field(default_factory=ReadBudget)
    capped: str | None = None  # why reading stopped at a cap (the file is then "truncated")

    @property
    def limits(self) -> ReadLimits:
        return self.budget.limits

    def cap(self, why: str) -> None:
        if self.capped is None:
            self.capped = why
            self.problems.append(f"truncated: {why}; the rest was not read")


def _generation(path: Path) -> tuple[str, str | None]:
    """A rotated file's log name and generation: ("syslog", "2") for `syslog.2.gz`."""
    m = _ROTATION.match(path.name)
    return (m["base"], m["num"]) if m else (path.name, None)


def rotation_base(path: Path) -> Path:
    """The log a file is a generation of: `nodes/n1/syslog` for `nodes/n1/syslog.2.gz`,
    `nodes/n1/syslog-20261120` and `nodes/n1/syslog`."""
    return path.with_name(_generation(path)[0])


def rotation_order(paths: list[Path]) -> list[Path]:
    """Oldest first: `syslog.3.gz`, `syslog.2.gz`, `syslog.1`, `syslog`; dated suffixes ascend."""

    def key(p: Path) -> tuple:
        base, num = _generation(p)
        if num is None:
            rank = 0
        elif len(num) == 8:  # dateext: older dates first, all before the live file
            rank = -100_000_000 + int(num)
        else:
            rank = int(num)
        return (base, -rank if len(num or "") != 8 else rank, p.name)

    return sorted(paths, key=key)


class _GzipStream:
    """Streaming gunzip in bounded memory that keeps every byte decoded before a truncation or
    corruption, and stops at the size and ratio caps (a small archive can inflate to terabytes)."""

    def __init__(self, path: Path, stats: ReadStats) -> None:
        self.fh = open(path, "rb")  # noqa: SIM115 - closed in close()
        self.stats = stats
        self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.pending = b""  # compressed input not yet inflated
        self.in_member = False
        self.compressed = 0
        self.inflated = 0
        self.done = False

    def read(self, size: int) -> bytes:
        parts: list[bytes] = []
        got = 0
        while got < size and not self.done:
            if not self.pending and not self._refill():
                parts.append(self.inflater.flush())
                break
            try:
                chunk = self.inflater.decompress(self.pending, size - got)
            except zlib.error as exc:
                self.stats.problems.append(f"corrupt compressed data: {exc}")
                self.done = True
                break
            self.in_member = True
            if self.inflater.eof:  # a member ended: concatenated members follow
                self.pending = self.inflater.unused_data
                self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                self.in_member = False
            else:
                self.pending = self.inflater.unconsumed_tail
            parts.append(chunk)
            got += len(chunk)
            self.inflated += len(chunk)
            self._check_ratio()
        return b"".join(parts)

    def _refill(self) -> bool:
        self.pending = self.fh.read(1 << 16)
        self.compressed += len(self.pending)
        if not self.pending:
            if self.in_member:
                self.stats.problems.append("truncated compressed data: the archive ends early")
            self.done = True
        return bool(self.pending)

    def _check_ratio(self) -> None:
        limits = self.stats.limits
        if (self.inflated > limits.inflate_ratio_floor
                and self.inflated > limits.max_inflate_ratio * max(1, self.compressed)):
            self.stats.cap(f"decompresses more than {limits.max_inflate_ratio} times its size "
                           f"(a decompression bomb?) after {self.inflated >> 20} MiB")
            self.done = True

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
    beginning of a gzipped one. A gigantic line is cut (the cut keeps its one newline, so line
    numbers stay right); truncated archives and the read caps end the file early, keeping the
    whole lines read before."""
    carry, skipping = b"", False
    try:
        with _open(path, stats) as fh:
            if start:
                fh.seek(start)
            while True:
                data = fh.read(BLOCK)
                allowed = _allowance(stats, len(data))
                capped, data = allowed < len(data), data[:allowed]
                if not data:
                    break
                if skipping:  # the rest of a line that was cut: drop it up to its newline
                    newline = data.find(b"\n")
                    if newline < 0:
                        continue
                    data, skipping = data[newline + 1:], False
                buf = carry + data
                cut = buf.rfind(b"\n")
                head, carry = (b"", buf) if cut < 0 else (buf[: cut + 1], buf[cut + 1:])
                if len(carry) > MAX_LINE:
                    stats.problems.append(f"line longer than {MAX_LINE} bytes was cut")
                    head, carry, skipping = head + _cut_line(carry) + b"\n", b"", True
                if head:
                    yield head
                if capped:
                    carry = b""  # a line the cap cut in two is not evidence
                    break
    except OSError as exc:
        stats.problems.append(f"read failed: {exc.strerror or exc}")
    if carry:
        stats.problems.append("last line has no newline (file still being written or truncated)")
        yield carry + b"\n"


def _allowance(stats: ReadStats, n: int) -> int:
    """How many of the next n bytes the caps let us read (all of them, or what is left)."""
    limits = stats.limits
    allowed = max(0, min(n, limits.max_file_bytes - stats.bytes, stats.budget.left))
    stats.bytes += allowed
    stats.budget.take(allowed)
    if allowed < n:
        stats.cap(f"read cap of {limits.max_file_bytes >> 20} MiB per file reached"
                  if stats.bytes >= limits.max_file_bytes else
                  f"the attempt's read budget of {limits.max_attempt_bytes >> 20} MiB is spent")
    return allowed


def _cut_line(line: bytes) -> bytes:
    return line[:MAX_LINE]


def text_of(raw: bytes) -> tuple[str, bool]:
    """Text for a line; the flag says bytes were not valid UTF-8 and were replaced."""
    if raw.isascii():
        return raw.decode("ascii"), False
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), True


SEEK_MIN_BYTES = 64 << 20  # a plain file bigger than this is entered by bisecting its times


def seek_before(path: Path, start: datetime,
                first_time: Callable[[list[bytes]], datetime | None]) -> int:
    """A line start at or a little before `start` in a big plain log, found by bisecting on the
    times of its lines (`first_time` reads the first usable one of some lines); 0 when the file
    is small, compressed, or its lines carry no usable time: then it is read from the start."""
    try:
        size = path.stat().st_size
        if size < SEEK_MIN_BYTES or is_gzip(path):
            return 0
        lo, hi = 0, size
        with open(path, "rb") as fh:
            while hi - lo > (1 << 20):
                mid = (lo + hi) // 2
                fh.seek(mid)
                when = first_time(fh.read(1 << 16).split(b"\n")[1:])  # the first piece is partial
                if when is None:
                    return 0
                lo, hi = (mid, hi) if when < start else (lo, mid)
            fh.seek(lo)
            newline = fh.read(MAX_LINE).find(b"\n") if lo else -1
            return lo + newline + 1 if newline >= 0 else 0
    except OSError:
        return 0
