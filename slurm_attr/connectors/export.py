"""A live attempt as a static bundle: what the `slurm` context would read, written in the bundle
format (README, "The static bundle"), so that a service on another host gives the same diagnosis.

The observation sources run as for an in-process diagnosis; their files are then copied into the
bundle, system logs cut to the window the extractor reads (the attempt, the rules' context before
it and margin after it, the collector's `margin_s`, and the extractor's slack), so a multi-GB
syslog costs only its minutes around the job. Binary journals become the text lines the journald
converter makes of them, and `sacctmgr show event`'s answer becomes `events.json`. What goes in is
bounded by the read caps and by `max_bytes` for the whole bundle.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any

from slurm_attr.collect.collector import SourceFile, Sources, log_clock, opened_source
from slurm_attr.collect.files import (
    ReadBudget,
    ReadLimits,
    ReadStats,
    iter_blocks,
)
from slurm_attr.collect.window import Window, head_time, line_time, tail_time, until_past, window_start
from slurm_attr.config import Settings
from slurm_attr.connectors.slurm import gather_sources
from slurm_attr.extract.extractor import Extractor
from slurm_attr.extract.timestamps import Clock
from slurm_attr.model import AttemptFacts, Coverage, Workload
from slurm_attr.ruleset import Ruleset
from slurm_attr.scope.slurm import NodeEvent, SlurmClient, SlurmError
from slurm_attr.scope.static import COVERAGE, EVENTS, MAX_EVENT_TEXT, MAX_EVENTS

log = logging.getLogger("slurm_attr.export")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")
JSON_ROOM = 8 << 20  # kept from the logs' share of the cap for workload.json and events.json
_TEXT = MAX_EVENT_TEXT


class RecordingClient:
    """The Slurm client, keeping what `sacctmgr show event` answered for `events.json`."""

    def __init__(self, client: SlurmClient) -> None:
        self.client = client
        self.history: list[NodeEvent] | None = None
        self.error: str | None = None

    def sacct(self, job_ids: list[str]) -> dict[str, list[AttemptFacts]]:
        return self.client.sacct(job_ids)

    def failed_job_ids(self, since: datetime, until: datetime) -> list[str]:
        return self.client.failed_job_ids(since, until)

    def node_events(self, nodes: list[str], start: datetime, end: datetime) -> list[NodeEvent]:
        try:
            self.history = self.client.node_events(nodes, start, end)
        except SlurmError as exc:
            self.error = str(exc)
            raise
        return self.history

    def cluster_name(self) -> str:
        return self.client.cluster_name()

    def job_streams(self, job_id: str) -> dict[str, str]:
        return self.client.job_streams(job_id)


@dataclass
class Exported:
    """What went into a bundle, and what could not (for the worker's log)."""

    files: int = 0
    bytes: int = 0
    notes: list[str] = field(default_factory=list)


def gather(workload: Workload, settings: Settings, env: dict[str, str],
           client: SlurmClient) -> tuple[Sources, RecordingClient]:
    """The attempt's sources, found exactly as `connectors.slurm.collect` finds them."""
    recorder = RecordingClient(client)
    found = gather_sources(workload, settings, env, recorder)
    # each origin's zone travels with the bundle, so the service reads every line as here
    workload.log_timezones = {k: v for k, v in found.timezones.items() if v != workload.timezone}
    return found, recorder


def read_window(workload: Workload, ruleset: Ruleset, settings: Settings) -> Window:
    """Everything the extractor reads of a system log, and what the collector's margin asks for."""
    wide = Extractor(ruleset, workload).window
    margin = timedelta(seconds=settings.margin_s)
    return min(wide[0], workload.start - margin), max(wide[1], workload.end + margin)


def write_bundle(dest: Path, workload: Workload, ruleset: Ruleset, settings: Settings,
                 env: dict[str, str], client: SlurmClient, max_bytes: int) -> Exported:
    """Write the bundle of one ended attempt into the empty directory `dest`."""
    found, recorder = gather(workload, settings, env, client)
    writer = _BundleWriter(dest, workload, settings, read_window(workload, ruleset, settings),
                           max_bytes)
    writer.copy_all(found)
    if recorder.history is not None or recorder.error is not None:
        writer.json(EVENTS, events_document(recorder.history, recorder.error, settings.margin_s))
    dropped = [c for c in found.extra_events if c.rule != "sacctmgr.node_event"]
    if dropped:  # a site's own source that makes events, not files: the format has no place
        writer.done.notes.append(f"{len(dropped)} events of other sources are not in the bundle")
    writer.json(COVERAGE, coverage_document(found))
    writer.json("workload.json", workload_document(workload))  # last: sources may add facts
    return writer.done


def workload_document(w: Workload) -> dict[str, Any]:
    """`workload.json` for an attempt (the format `scope.static.load_workload` reads): the
    diagnosis' workload, with the node list as written and the zones of the logs."""
    doc: dict[str, Any] = {k: v for k, v in w.to_dict().items() if k not in ("nodelist", "elapsed_s")}
    return {**doc, "nodes": w.nodelist, "timezone": w.timezone, "log_timezones": w.log_timezones}


def coverage_document(found: Sources) -> dict[str, Any]:
    """`coverage.json`: what the sources found and could not pack (refused files, a source that
    failed, why a log is missing), so the service's coverage says what this host's would."""
    def entry(c: Coverage) -> dict[str, Any]:
        return {"collector": c.collector, "node": c.node, "status": c.status,
                "reason": (c.reason or "")[:_TEXT] or None}

    # node_state comes with events.json (add_history makes its coverage on both sides)
    return {"missing": {k: v[:_TEXT] for k, v in found.missing.items()},
            "unread": [entry(c) for c in found.unread],
            "sources": [entry(c) for c in found.extra_coverage if c.collector != "node_state"]}


def events_document(history: list[NodeEvent] | None, error: str | None, margin_s: int) -> dict[str, Any]:
    """`events.json`: the node state history, or why sacctmgr could not give it."""
    doc: dict[str, Any] = {"source": "sacctmgr show event", "margin_s": margin_s, "events": []}
    if history is None:
        doc["error"] = error or "no node state history"
        return doc
    # within what the bundle reader accepts (scope.static), so the service never refuses it
    doc["events"] = [{"node": e.node, "start": e.start.isoformat(),
                      "end": e.end.isoformat() if e.end else None, "state": e.state[:_TEXT],
                      "reason": e.reason[:_TEXT], "user": e.user[:_TEXT]}
                     for e in history[-MAX_EVENTS:]]
    return doc


class _BundleWriter:
    def __init__(self, dest: Path, workload: Workload, settings: Settings, window: Window,
                 max_bytes: int) -> None:
        self.dest, self.workload, self.window = dest, workload, window
        self.zones = settings.source_zones()
        self.limits: ReadLimits = settings.read_limits()
        self.budget = ReadBudget(self.limits)
        # the logs leave room for workload.json and events.json, written after them
        self.left = max(0, max_bytes - min(JSON_ROOM, max_bytes // 4))
        self.done = Exported()
        self.names: set[str] = set()

    def json(self, rel: str, doc: dict[str, Any]) -> None:
        (self.dest / rel).write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")

    def copy_all(self, found: Sources) -> None:
        for source in found.app:  # job output is read whole, as the collector reads it
            self._copy(source, "app", None)
        for node, files in found.nodes.items():
            for source in files:
                self._copy(source, f"nodes/{node}", "node")
        for source in found.controller:
            self._copy(source, "controller", "controller")

    def _target(self, folder: str, source: SourceFile) -> Path:
        """A file name in the bundle: the original's, made safe and unique; `.gz` dropped (the
        copy is plain text), `.log` added to a converted journal (it is text lines now)."""
        name = _SAFE_NAME.sub("_", Path(source.name).name).lstrip(".") or "log"
        name = name.removesuffix(".gz") + (".log" if source.convert else "")
        rel, n = f"{folder}/{name}", 1
        while rel in self.names:
            n += 1
            rel = f"{folder}/{n}-{name}"
        self.names.add(rel)
        path = self.dest / rel
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return path

    def _copy(self, source: SourceFile, folder: str, origin: str | None) -> None:
        target = self._target(folder, source)
        try:
            with opened_source(source) as path, target.open("wb") as out:
                problems = self._write(source, path, out, origin)
        except Exception as exc:  # as in the collector: a file it cannot read is a note, never the job
            target.unlink(missing_ok=True)
            self.done.notes.append(f"{source.name}: could not be read ({exc})")
            return
        self.done.files += 1
        self.done.notes += [f"{source.name}: {p}" for p in problems]

    def _write(self, source: SourceFile, path: Path, out: IO[bytes], origin: str | None) -> list[str]:
        if source.convert is not None:  # a binary journal: the text the collector would read
            capped = _Capped(out, self)
            problems = source.convert(path, capped, self.limits, self.window)  # type: ignore[arg-type]
            return problems + capped.problems
        stats = ReadStats(budget=self.budget)
        clock = None if origin is None else log_clock(self.workload, self.zones, origin)
        blocks = _whole(path, stats) if clock is None else cut(path, stats, clock, self.window)
        capped = _Capped(out, self)
        for block in blocks:
            if not capped.write(block):
                break
        return stats.problems + capped.problems


class _Capped:
    """Writes until the bundle's size cap, then drops the rest with one note."""

    def __init__(self, out: IO[bytes], writer: _BundleWriter) -> None:
        self.out, self.writer = out, writer
        self.problems: list[str] = []

    def write(self, data: bytes) -> bool:
        w = self.writer
        if self.problems:
            return False
        if len(data) > w.left:
            data = data[: data.rfind(b"\n", 0, w.left) + 1]  # whole lines only
            self.problems.append("cut at the bundle's size cap; the rest was not sent")
        self.out.write(data)
        w.left -= len(data)
        w.done.bytes += len(data)
        return not self.problems


def _whole(path: Path, stats: ReadStats) -> Iterator[bytes]:
    yield from iter_blocks(path, stats)


def cut(path: Path, stats: ReadStats, clock: Clock, window: Window) -> Iterator[bytes]:
    """The lines of a log inside `window`, from the windowed reader's blocks (collect.window):
    blocks wholly inside are kept whole and only the blocks at the window's edges are cut line
    by line; a line without a time of its own goes with the line before it, and a file without
    times (raw dmesg, say) is kept whole."""
    keep = True
    blocks = iter_blocks(path, stats, window_start(path, clock, window))
    for block in until_past(blocks, clock, window[1]):
        first, last = head_time(block, clock), tail_time(block, clock)
        if last is not None and last < window[0]:
            keep = False
            continue
        if first is not None and first > window[1]:
            return
        if first is not None and last is not None and first >= window[0] and last <= window[1]:
            keep = True
            yield block
            continue
        kept, keep, past = _lines_inside(block, clock, window, keep)
        yield kept
        if past:
            return


def _lines_inside(block: bytes, clock: Clock, window: Window, keep: bool) -> tuple[bytes, bool, bool]:
    out, past = [], False
    for line in block[:-1].split(b"\n"):  # a block is whole lines, each ending with a newline
        when = line_time(line, clock)
        if when is not None:
            keep = window[0] <= when <= window[1]
            past = past or when > window[1]
        if keep:
            out.append(line + b"\n")
    return b"".join(out), keep, past
