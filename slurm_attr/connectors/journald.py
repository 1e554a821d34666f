"""Observation source: nodes that keep their kernel and service logs in the systemd journal.

Journal entries become syslog-style text lines (`<ISO time> <host> <identifier>[<pid>]: <message>`,
one per message line) that the extractor reads like any node log, so every rule applies. Two
inputs: binary journal files, read with `journalctl --file` (live mode: the `journal_files`
templates, e.g. a remote journal directory's `remote-{node}*.journal`; bundles: `*.journal` below
`nodes/<node>/`), and exports made with `journalctl -o json` (bundles: `*.journal.json` or
`journal*.json*`). Conversion is capped like any read, and only the attempt's window is asked of
journalctl.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from slurm_attr.collect.collector import SourceFile, Sources
from slurm_attr.collect.files import MAX_LINE, ReadLimits
from slurm_attr.connectors import AttemptContext, register_source

_BINARY = re.compile(r".*\.journal~?$")
_EXPORT = re.compile(r"(?:.*\.journal\.json|journal.*\.jsonl?)$")
_TIMEOUT_S = 300
Window = tuple[datetime, datetime] | None


class JournalError(OSError):
    pass


def journal_kind(name: str) -> str | None:
    """"binary", "export" or None, from a file's name."""
    base = Path(name).name
    if _BINARY.fullmatch(base):
        return "binary"
    if _EXPORT.fullmatch(base):
        return "export"
    return None


def _message(value: Any) -> str:
    """MESSAGE is a string, or an array of bytes when it is not valid UTF-8."""
    if isinstance(value, list) and all(isinstance(b, int) and 0 <= b < 256 for b in value):
        return bytes(value).decode("utf-8", "replace")
    return value if isinstance(value, str) else ""


def entry_lines(entry: dict[str, Any]) -> Iterator[str]:
    """The text lines of one journal entry (a multi-line message gives several)."""
    try:
        micros = int(entry.get("__REALTIME_TIMESTAMP", ""))
        when = datetime.fromtimestamp(micros / 1e6, tz=UTC).isoformat(timespec="microseconds")
    except (TypeError, ValueError, OverflowError, OSError):
        return  # an entry without a usable time cannot be placed on the timeline
    host = str(entry.get("_HOSTNAME") or "-")
    ident = str(entry.get("SYSLOG_IDENTIFIER") or entry.get("_COMM") or "-")
    pid = entry.get("SYSLOG_PID") or entry.get("_PID")
    tag = f"{ident}[{pid}]" if pid and ident != "kernel" else ident
    for text in _message(entry.get("MESSAGE")).splitlines() or [""]:
        yield f"{when} {host} {tag}: {text}"


def write_text(json_lines: Iterable[bytes], out: IO[bytes], limits: ReadLimits) -> list[str]:
    """Convert `journalctl -o json` lines into text; returns the problems met (bad lines, cap)."""
    problems: list[str] = []
    bad = written = 0
    for raw in json_lines:
        try:
            entry = json.loads(raw[:MAX_LINE])
        except (ValueError, RecursionError):
            bad += 1
            continue
        if not isinstance(entry, dict):
            bad += 1
            continue
        for line in entry_lines(entry):
            data = line.encode("utf-8", "replace") + b"\n"
            written += len(data)
            if written > limits.max_file_bytes:
                problems.append(f"truncated: more than {limits.max_file_bytes >> 20} MiB of entries")
                return problems
            out.write(data)
    if bad:
        problems.append(f"{bad} journal lines were not JSON entries")
    return problems


def convert(path: Path, out: IO[bytes], limits: ReadLimits, window: Window) -> list[str]:
    """Text lines from a journal file of either kind (judged by the bytes, not the name)."""
    with open(path, "rb") as probe:
        magic = probe.read(8)
    if magic == b"LPKSHHRH":  # the binary journal's signature
        return _from_journalctl(path, out, limits, window)
    with open(path, "rb") as fh:
        return write_text(fh, out, limits)


def _from_journalctl(path: Path, out: IO[bytes], limits: ReadLimits, window: Window) -> list[str]:
    argv = ["journalctl", f"--file={path}", "--output=json", "--no-pager", "--quiet"]
    if window is not None:
        argv += [f"--since=@{int(window[0].timestamp())}", f"--until=@{int(window[1].timestamp()) + 1}"]
    # A path under /proc/self/fd is our open descriptor: the child gets the same number.
    fds = (int(path.name),) if path.parent == Path("/proc/self/fd") else ()
    import subprocess  # only when a binary journal is read: not every start pays for it

    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=fds)
    except OSError as exc:
        raise JournalError(f"cannot run journalctl to read a binary journal: {exc}") from exc
    assert proc.stdout is not None and proc.stderr is not None
    try:
        problems = write_text(proc.stdout, out, limits)
        if any(p.startswith("truncated:") for p in problems):
            proc.kill()  # we stopped reading at the cap: journalctl must not linger
    except BaseException:
        proc.kill()
        raise
    finally:
        proc.stdout.close()
        try:
            proc.wait(timeout=_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    error = proc.stderr.read(64 << 10).decode("utf-8", "replace").strip()
    proc.stderr.close()
    if proc.returncode not in (0, -9):
        problems.append(f"journalctl exited {proc.returncode}: {error[-300:]}")
    return problems


@register_source("journald")
class Journald:
    """Live mode: binary journals named by the `journal_files` templates ({node} substituted)."""

    name = "journald"

    def gather(self, ctx: AttemptContext, found: Sources) -> None:
        if not ctx.settings.journal_files:
            return
        from slurm_attr.connectors.node_logs import recent_files  # globbing: live mode only

        since = ctx.workload.start - timedelta(seconds=ctx.settings.margin_s)
        for node in ctx.workload.nodes:
            for source in recent_files(ctx.settings.journal_files, since, node=node):
                source.convert = convert
                found.nodes.setdefault(node, []).append(source)


def mark_journals(files: list[SourceFile]) -> list[SourceFile]:
    """Bundle files that are journals get the converter; others are read as text."""
    for source in files:
        if journal_kind(source.name):
            source.convert = convert
    return files
