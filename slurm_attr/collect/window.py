"""Reading a system log for a time window: the one windowed reader behind the extractor and the
bundle writer. A big plain file is entered a little before the window (bisecting on its line
times, files.seek_before) and read block by block until a block ends past the window, so a
multi-GB syslog costs only its minutes around the job."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path

from slurm_attr.collect.files import seek_before
from slurm_attr.extract.timestamps import Clock

Window = tuple[datetime, datetime]
STAMP_LINES = 30  # lines looked at for a block's first or last time
_EDGE_BYTES = 1 << 16


def line_time(line: bytes, clock: Clock) -> datetime | None:
    """A line's own wall-clock time; None without one (or with only a boot-relative one)."""
    stamp = clock.parse(line[:200].decode("utf-8", "replace"))
    return stamp.when if stamp.quality not in ("none", "boot_relative") else None


def first_time(lines: Iterable[bytes], clock: Clock) -> datetime | None:
    """The first time among the first STAMP_LINES lines."""
    for n, line in enumerate(lines):
        if n >= STAMP_LINES:
            break
        when = line_time(line, clock)
        if when is not None:
            return when
    return None


def head_time(block: bytes, clock: Clock) -> datetime | None:
    return first_time(block[:_EDGE_BYTES].split(b"\n"), clock)


def tail_time(block: bytes, clock: Clock) -> datetime | None:
    return first_time(reversed(block[-_EDGE_BYTES:].split(b"\n")[-STAMP_LINES:]), clock)


def window_start(path: Path, clock: Clock, window: Window) -> int:
    """A line start at or a little before the window's start (0 for a small or gzip'd file)."""
    return seek_before(path, window[0], lambda lines: first_time(lines, clock))


def until_past(blocks: Iterable[bytes], clock: Clock, end: datetime) -> Iterator[bytes]:
    """The blocks up to and including the first one whose last line is past `end`."""
    for block in blocks:
        yield block
        when = tail_time(block, clock)
        if when is not None and when > end:
            return
