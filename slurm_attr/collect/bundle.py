"""Collecting the observations of a static bundle: job output, node logs, controller log, metrics."""

from __future__ import annotations

import json
from datetime import UTC, datetime, tzinfo
from pathlib import Path

from slurm_attr.collect.files import rotation_order
from slurm_attr.extract.extractor import Extractor, FileScan
from slurm_attr.extract.timestamps import Clock, zone_for
from slurm_attr.model import Coverage, Event, Observations, SourceRef, Workload
from slurm_attr.ruleset import Ruleset

# Raw `dmesg` (seconds since boot) is read last on a node, once its syslog has given a boot time.
_RAW_DMESG_NAMES = ("dmesg",)


def _files_under(root: Path) -> list[Path]:
    """Regular files below root, never following a link out of it, in a stable order."""
    top = root.resolve()
    found = []
    for path in sorted(root.rglob("*")):
        try:
            real = path.resolve()
        except OSError:
            continue
        if real.is_file() and real.is_relative_to(top):
            found.append(path)
    return found


def _finish(cov: Coverage, had_files: bool, missing_reason: str) -> None:
    if not had_files:
        cov.status, cov.reason = "missing", missing_reason
    elif cov.lines == 0 and cov.bytes == 0:
        cov.status, cov.reason = "empty", "the files are empty"
    elif cov.notes:
        cov.status, cov.reason = "ok", "read with problems (see notes)"
    else:
        cov.status = "ok"


class BundleCollector:
    def __init__(self, bundle: Path, workload: Workload, ruleset: Ruleset) -> None:
        self.bundle = bundle
        self.workload = workload
        self.extractor = Extractor(ruleset, workload)
        self.tz: tzinfo = zone_for(workload.timezone, workload.start.tzinfo or UTC)

    def collect(self) -> Observations:
        obs = Observations()
        self._app(obs)
        for node in self.workload.nodes:
            self._node(node, obs)
        self._controller(obs)
        self._metrics(obs)
        return obs

    def _clock(self) -> Clock:
        return Clock(self.workload.end, self.tz)

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.bundle).as_posix()

    def _scan_all(self, files: list[Path], origin: str, node: str | None, cov: Coverage,
                  obs: Observations, clock: Clock | None = None) -> None:
        clock = clock or self._clock()
        for path in files:
            rel = self._rel(path)
            cov.files.append(rel)
            path_node = next((p for p in path.relative_to(self.bundle).parts[1:-1]
                              if p in self.workload.nodes), None)
            scan = FileScan(rel, origin, node, clock if origin == "node" else self._clock(), cov,
                            path_nodes=path_node)
            try:
                self.extractor.scan(path, scan, obs)
            except Exception as exc:  # a broken file must never stop the diagnosis
                obs.error(cov.collector, f"{type(exc).__name__}: {exc}", rel)
                cov.notes.append(f"{rel}: could not be read ({type(exc).__name__})")

    def _app(self, obs: Observations) -> None:
        cov = Coverage("job_output", None)
        files = _files_under(self.bundle / "app") if (self.bundle / "app").is_dir() else []
        self._scan_all(files, "app", None, cov, obs)
        _finish(cov, bool(files), "no job output (app/) in the bundle")
        obs.coverage.append(cov)

    def _node(self, node: str, obs: Observations) -> None:
        cov = Coverage("node_syslog", node)
        root = self.bundle / "nodes" / node
        files = _files_under(root) if root.is_dir() else []
        raw = [f for f in files if f.name.startswith(_RAW_DMESG_NAMES)]
        ordered = rotation_order([f for f in files if f not in raw]) + rotation_order(raw)
        clock = self._clock()
        self._scan_all(ordered, "node", node, cov, obs, clock)
        if raw and clock.boot_time is None:
            cov.notes.append("dmesg timestamps are seconds since boot and no boot time was found: "
                             "those events are placed by order only")
        _finish(cov, bool(files), f"no system logs for {node} in the bundle")
        obs.coverage.append(cov)

    def _controller(self, obs: Observations) -> None:
        cov = Coverage("controller", None)
        root = self.bundle / "controller"
        files = rotation_order(_files_under(root)) if root.is_dir() else []
        self._scan_all(files, "controller", None, cov, obs)
        _finish(cov, bool(files), "no slurmctld log in the bundle")
        obs.coverage.append(cov)

    def _metrics(self, obs: Observations) -> None:
        cov = Coverage("metrics", None)
        root = self.bundle / "metrics"
        files = [f for f in _files_under(root) if f.suffix == ".json"] if root.is_dir() else []
        for path in files:
            rel = self._rel(path)
            cov.files.append(rel)
            try:
                self._prometheus(path, rel, cov, obs)
            except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
                obs.error("metrics", f"not a Prometheus query_range response: {exc}", rel)
                cov.notes.append(f"{rel}: unreadable")
        _finish(cov, bool(files), "no metrics in the bundle")
        obs.coverage.append(cov)

    def _prometheus(self, path: Path, rel: str, cov: Coverage, obs: Observations) -> None:
        """DCGM exporter series: a non-zero DCGM_FI_DEV_XID_ERRORS sample is an Xid event."""
        doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
        if doc.get("status") != "success":
            raise ValueError(f"status {doc.get('status')!r}")
        for series in doc["data"]["result"]:
            metric = series.get("metric", {})
            node = str(metric.get("Hostname") or metric.get("instance", "")).split(":")[0]
            for ts, value in series.get("values", []):
                cov.lines += 1
                when = datetime.fromtimestamp(float(ts), tz=UTC)
                cov.saw(when)
                if metric.get("__name__") == "DCGM_FI_DEV_XID_ERRORS" and float(value) > 0:
                    self._metric_xid(int(float(value)), node, when, rel, metric, obs)

    def _metric_xid(self, xid: int, node: str, when: datetime, rel: str, metric: dict,
                    obs: Observations) -> None:
        entry = self.extractor.ruleset.xid_catalog.get(xid)
        if entry is None or node not in self.workload.nodes:
            return
        gpu = metric.get("gpu", "?")
        obs.events.append(Event(
            kind="gpu_xid", rule="metrics.dcgm_xid", node=node, time=when, time_quality="exact",
            source=SourceRef(rel, 0, f"DCGM_FI_DEV_XID_ERRORS{{gpu={gpu}}} = {xid}"),
            sub_domain=entry["sub_domain"], base_role=entry["role"], priority=entry["priority"] - 5,
            summary=f"DCGM reported Xid {xid} ({entry['description']}) on GPU {gpu}.",
            code=f"XID {xid}", fields={"xid": str(xid), "gpu": str(gpu)},
        ))
