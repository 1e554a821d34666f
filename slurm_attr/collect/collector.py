"""Collecting the observations of one attempt from files: job output, node logs, controller log,
metrics. Where the files come from (a static bundle, or a live cluster's log paths) is described by
`Sources`; reading, coverage and extraction are the same for both.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from slurm_attr.collect.confine import Root
from slurm_attr.collect.files import ReadBudget, ReadLimits, rotation_base, rotation_order
from slurm_attr.extract.extractor import Extractor, FileScan
from slurm_attr.extract.timestamps import Clock, zone_for
from slurm_attr.model import Coverage, Event, Observations, SourceRef, Workload
from slurm_attr.ruleset import Ruleset

MAX_METRICS_BYTES = 256 << 20
# Sample times outside this range (seconds since the epoch) are not real: 1970 to 2200.
_SANE_EPOCH = (0.0, 7_258_118_400.0)
# Raw `dmesg` (seconds since boot) is read last on a node, once its syslog has given a boot time.
_RAW_DMESG_NAMES = ("dmesg",)


# (file to convert, where to write text lines, read caps, the window to keep) -> problems met
Converter = Callable[[Path, IO[bytes], ReadLimits, "tuple[datetime, datetime] | None"], list[str]]


@dataclass
class SourceFile:
    path: Path
    name: str  # how evidence names it: bundle-relative, or the path on the cluster
    node: str | None = None  # a node the file belongs to (a path component naming one)
    identity: tuple[int, int] | None = None  # (st_dev, st_ino) checked for permission; see opened_source
    root: Root | None = None  # a bundle's files are opened through it, relative to it
    # Turns a file that is not text (a binary journal, say) into log lines before extraction.
    convert: Converter | None = None


@dataclass
class Sources:
    """The files to read for one attempt, and why a collector has none."""

    app: list[SourceFile] = field(default_factory=list)
    nodes: dict[str, list[SourceFile]] = field(default_factory=dict)
    # System logs several machines write to (a syslog server's file): read once, each line being
    # the node its header names; lines of machines outside the job are not its evidence.
    shared_nodes: list[SourceFile] = field(default_factory=list)
    controller: list[SourceFile] = field(default_factory=list)
    metrics: list[SourceFile] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)  # collector -> reason ({node} allowed)
    # Files named for a collector that were not read: status "missing" or "refused", with why.
    unread: list[Coverage] = field(default_factory=list)
    extra_events: list[Event] = field(default_factory=list)  # e.g. node state history
    extra_coverage: list[Coverage] = field(default_factory=list)
    # IANA zone per origin (node, app, controller) for lines that carry no UTC offset.
    timezones: dict[str, str] = field(default_factory=dict)


def settle(cov: Coverage, files: int, unreadable: int, missing_reason: str,
           unread: Sequence[Coverage] = ()) -> None:
    """The coverage status once a collector's files were read (or not): unread ones (links,
    special files, refused by owner checks) are notes, or the reason when nothing was read."""
    refused = [c.reason or "" for c in unread]
    if not files:
        cov.status = "refused" if any(c.status == "refused" for c in unread) else "missing"
        cov.reason = "; ".join(refused) or missing_reason
        return
    cov.notes += refused
    if unreadable == files:
        cov.status, cov.reason = "error", "unreadable: " + "; ".join(cov.notes[:3])
    elif cov.truncated:
        cov.status, cov.reason = "truncated", "; ".join(cov.truncated)
    elif cov.lines == 0 and cov.bytes == 0:
        cov.status, cov.reason = "empty", "the files are empty"
    elif cov.notes:
        cov.status, cov.reason = "ok", "read with problems (see notes)"
    else:
        cov.status = "ok"


@contextmanager
def opened_source(source: SourceFile) -> Iterator[Path]:
    """The path to read. A bundle file is opened through its root (no link followed, regular
    files only). A file whose permissions were checked is opened without following a link and
    must still be the inode that was checked, so swapping it afterwards gains nothing."""
    if source.root is not None:
        with source.root.opened(source.name, source.identity) as path:
            yield path
        return
    if source.identity is None:
        yield source.path
        return
    fd = os.open(source.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != source.identity or not stat.S_ISREG(st.st_mode):
            raise PermissionError("the file changed after its permission check")
        yield Path(f"/proc/self/fd/{fd}")
    finally:
        os.close(fd)


def log_clock(workload: Workload, zones: dict[str, str], origin: str) -> Clock:
    """A clock for an origin's lines without a UTC offset: in that source's own zone where one
    is set, else the attempt's (its `timezone`, else the offset of its start)."""
    default = zone_for(workload.timezone, workload.start.tzinfo or UTC)
    return Clock(workload.end, zone_for(zones.get(origin), default))


class LogCollector:
    def __init__(self, workload: Workload, ruleset: Ruleset, sources: Sources,
                 limits: ReadLimits | None = None) -> None:
        self.workload = workload
        self.sources = sources
        self.budget = ReadBudget(limits)
        self.extractor = Extractor(ruleset, workload, self.budget.limits.max_events_per_rule)

    def collect(self) -> Observations:
        obs = Observations()
        self._app(obs)
        shared = self._shared_nodes(obs)
        for node in self.workload.nodes:
            self._node(node, obs, shared)
        self._controller(obs)
        self._metrics(obs)
        obs.events.extend(self.sources.extra_events)
        obs.coverage.extend(self.sources.extra_coverage)
        return obs

    def _clock(self, origin: str = "node") -> Clock:
        return log_clock(self.workload, self.sources.timezones, origin)

    def _missing(self, collector: str, node: str | None = None) -> str:
        return self.sources.missing.get(collector, "nothing to read").replace("{node}", node or "")

    @contextmanager
    def _readable(self, source: SourceFile, scan: FileScan) -> Iterator[Path]:
        """The file as text lines: itself, or what its converter made of it (in a private
        temporary file that is removed afterwards)."""
        with opened_source(source) as path:
            if source.convert is None:
                yield path
                return
            import tempfile  # only converted sources need it

            with tempfile.TemporaryDirectory(prefix="slurm-attr-") as tmp:
                text = Path(tmp) / "converted.log"
                with text.open("wb") as out:
                    problems = source.convert(path, out, self.budget.limits, self.extractor.window)
                scan.problems += problems
                scan.coverage.truncated += [f"{source.name}: {p.removeprefix('truncated: ')}"
                                            for p in problems if p.startswith("truncated:")]
                yield text

    def _unread(self, collector: str, node: str | None = None) -> list[Coverage]:
        return [c for c in self.sources.unread if c.collector == collector and c.node == node]

    def _scan_all(self, files: list[SourceFile], origin: str, node: str | None, cov: Coverage,
                  obs: Observations, clock: Clock | None = None) -> int:
        """Scan the files into obs; returns how many could not be read at all."""
        clock = clock or self._clock(origin)
        unreadable = 0
        carried, log = b"", None  # the last lines of the previous file, and the rotated log it belongs to
        for source in files:
            cov.files.append(source.name)
            scan = FileScan(source.name, origin, node, clock if origin == "node" else self._clock(origin),
                            cov, path_nodes=source.node, budget=self.budget)
            base = rotation_base(Path(source.name))
            try:
                with self._readable(source, scan) as path:
                    carried, log = self.extractor.scan(path, scan, obs, carried if base == log else b""), base
            except Exception as exc:  # a broken file must never stop the diagnosis
                carried, log = b"", None
                unreadable += 1
                obs.error(cov.collector, f"{type(exc).__name__}: {exc}", source.name)
                cov.notes.append(f"{source.name}: could not be read ({exc})")
        return unreadable

    def _app(self, obs: Observations) -> None:
        cov = Coverage("job_output", None)
        files = self.sources.app
        unreadable = self._scan_all(files, "app", None, cov, obs)
        settle(cov, len(files), unreadable, self._missing("job_output"), self._unread("job_output"))
        obs.coverage.append(cov)

    def _shared_nodes(self, obs: Observations) -> tuple[Coverage, int] | None:
        """Read the logs several nodes share, once: what was read (for each node's coverage),
        and how many files could not be read."""
        files = self.sources.shared_nodes
        if not files:
            return None
        cov = Coverage("node_syslog", None)
        by_path = {f.path: f for f in files}
        unreadable = self._scan_all([by_path[p] for p in rotation_order(list(by_path))],
                                    "node", None, cov, obs, self._clock())
        return cov, unreadable

    def _node(self, node: str, obs: Observations, read: tuple[Coverage, int] | None = None) -> None:
        cov = Coverage("node_syslog", node)
        shared, shared_unreadable = read or (Coverage("node_syslog", None), 0)
        if read is not None:  # the shared logs hold this node's lines among others'
            cov.files += shared.files
            cov.lines, cov.bytes = shared.lines, shared.bytes
            cov.saw(shared.first_time)
            cov.saw(shared.last_time)
            cov.notes += shared.notes + [f"{name}: shared with other machines; the lines whose header "
                                         f"names {node} are its" for name in shared.files]
            cov.truncated += shared.truncated
            cov.written += shared.written
        files = self.sources.nodes.get(node, [])
        raw = [f for f in files if Path(f.name).name.startswith(_RAW_DMESG_NAMES)]
        by_path = {f.path: f for f in files}
        ordered = [by_path[p] for p in rotation_order([f.path for f in files if f not in raw])]
        ordered += [by_path[p] for p in rotation_order([f.path for f in raw])]
        clock = self._clock()
        unreadable = self._scan_all(ordered, "node", node, cov, obs, clock)
        if clock.unplaced:
            cov.notes.append("dmesg timestamps are seconds since boot and no boot time was found: "
                             "those events are placed by order only")
        settle(cov, len(files) + len(shared.files), unreadable + shared_unreadable,
               self._missing("node_syslog", node), self._unread("node_syslog", node))
        obs.coverage.append(cov)

    def _controller(self, obs: Observations) -> None:
        cov = Coverage("controller", None)
        by_path = {f.path: f for f in self.sources.controller}
        files = [by_path[p] for p in rotation_order(list(by_path))]
        unreadable = self._scan_all(files, "controller", None, cov, obs)
        settle(cov, len(files), unreadable, self._missing("controller"), self._unread("controller"))
        obs.coverage.append(cov)

    def _metrics(self, obs: Observations) -> None:
        cov = Coverage("metrics", None)
        unreadable = 0
        for source in self.sources.metrics:
            cov.files.append(source.name)
            try:
                with opened_source(source) as path, open(path, "rb") as fh:
                    data = fh.read(MAX_METRICS_BYTES + 1)
                if len(data) > MAX_METRICS_BYTES:
                    raise ValueError(f"larger than {MAX_METRICS_BYTES >> 20} MiB")
                self._prometheus(data, source.name, cov, obs)
            except Exception as exc:  # one bad file is a coverage note, never a lost diagnosis
                unreadable += 1
                obs.error("metrics", f"not a Prometheus query_range response: {exc}", source.name)
                cov.notes.append(f"{source.name}: unreadable ({exc})")
        settle(cov, len(self.sources.metrics), unreadable, self._missing("metrics"),
               self._unread("metrics"))
        obs.coverage.append(cov)

    def _prometheus(self, data: bytes, rel: str, cov: Coverage, obs: Observations) -> None:
        """DCGM exporter series: a non-zero DCGM_FI_DEV_XID_ERRORS sample is an Xid event."""
        doc = json.loads(data.decode("utf-8", errors="replace"))
        if not isinstance(doc, dict) or doc.get("status") != "success":
            raise ValueError(f"status {doc.get('status') if isinstance(doc, dict) else None!r}")
        skipped = 0
        for series in doc["data"]["result"]:
            metric = series.get("metric", {})
            node = str(metric.get("Hostname") or metric.get("instance", "")).split(":")[0]
            for pair in series.get("values", []):
                cov.lines += 1
                sample = _sample(pair)
                if sample is None:
                    skipped += 1
                    continue
                when, number = sample
                cov.saw(when)
                if metric.get("__name__") == "DCGM_FI_DEV_XID_ERRORS" and number > 0:
                    self._metric_xid(int(number), node, when, rel, metric, obs)
        if skipped:
            cov.notes.append(f"{rel}: {skipped} samples with an impossible time or value skipped")

    def _metric_xid(self, xid: int, node: str, when: datetime, rel: str, metric: dict,
                    obs: Observations) -> None:
        entry = self.extractor.ruleset.xid_catalog.get(xid)
        if entry is None or node not in self.workload.nodes:
            return
        gpu = metric.get("gpu", "?")
        priority = entry["priority"] + self.extractor.ruleset.policy["metrics"]["dcgm_xid_priority_delta"]
        obs.events.append(Event(
            kind="gpu_xid", rule="metrics.dcgm_xid", node=node, time=when, time_quality="exact",
            source=SourceRef(rel, 0, f"DCGM_FI_DEV_XID_ERRORS{{gpu={gpu}}} = {xid}"),
            sub_domain=entry["sub_domain"], base_role=entry["role"], priority=max(0, min(100, priority)),
            summary=f"DCGM reported Xid {xid} ({entry['description']}) on GPU {gpu}.",
            code=f"XID {xid}", fields={"xid": str(xid), "gpu": str(gpu)},
        ))


def _sample(pair: object) -> tuple[datetime, float] | None:
    """A [time, value] sample, or None when it is not a pair of finite, plausible numbers."""
    if not isinstance(pair, list | tuple) or len(pair) != 2:
        return None
    try:
        seconds, number = float(pair[0]), float(pair[1])
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(number) and math.isfinite(seconds)
            and _SANE_EPOCH[0] < seconds < _SANE_EPOCH[1] and abs(number) < 2**31):
        return None
    return datetime.fromtimestamp(seconds, tz=UTC), number
