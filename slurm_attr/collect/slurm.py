"""Collecting one attempt on a live cluster: node logs by path template, the job's own output
(permission-checked), the slurmctld log and the node state history from `sacctmgr show event`."""

from __future__ import annotations

import glob
import os
import stat
from datetime import datetime, timedelta
from pathlib import Path

from slurm_attr.collect.collector import LogCollector, SourceFile, Sources
from slurm_attr.collect.job_output import JobNames, job_output_sources
from slurm_attr.config import Settings
from slurm_attr.model import Coverage, Event, Observations, SourceRef, Workload
from slurm_attr.ruleset import Ruleset
from slurm_attr.scope.slurm import NodeEvent, SlurmClient, SlurmError

_DOWN_STATES = ("DOWN", "DRAIN", "FAIL")


def _recent_files(patterns: tuple[str, ...], not_before: datetime, **fields: str) -> list[SourceFile]:
    """Files matching any template, skipping rotated ones last written before the window."""
    found: dict[str, SourceFile] = {}
    for template in patterns:
        try:
            pattern = template.format(**fields)
        except (KeyError, IndexError, ValueError):
            continue  # a template naming a field this collector does not have
        for name in sorted(glob.glob(pattern)):
            try:
                st = os.stat(name)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_mtime >= not_before.timestamp():
                found.setdefault(name, SourceFile(Path(name), name, fields.get("node")))
    return list(found.values())


def node_state_events(events: list[NodeEvent], w: Workload, margin: timedelta) -> list[Event]:
    """A node of the job going down or drained around the job is evidence, with its reason."""
    out = []
    for e in events:
        if e.node not in w.nodes or not any(s in e.state.upper() for s in _DOWN_STATES):
            continue
        during = w.start <= e.start <= w.end + margin
        reason = e.reason or "no reason given"
        out.append(Event(
            kind="node_state_change", rule="sacctmgr.node_event", node=e.node, time=e.start,
            time_quality="exact",
            source=SourceRef("sacctmgr show event", 0,
                             f"{e.node}|{e.start.isoformat()}|{e.state}|{reason}|{e.user}",
                             match=e.state),
            sub_domain="host", base_role="cause" if during else "context", priority=50,
            summary=f"{e.node} went {e.state} at {e.start:%H:%M:%S} UTC: {reason} (set by {e.user or '?'}).",
            code=f"node {e.state}",
            action="Read the node's logs for why it went down; keep it drained until that is understood.",
            fields={"state": e.state, "reason": reason, "user": e.user},
        ))
    return out


class SlurmCollector:
    def __init__(self, workload: Workload, ruleset: Ruleset, settings: Settings,
                 env: dict[str, str], client: SlurmClient) -> None:
        self.workload, self.ruleset, self.settings = workload, ruleset, settings
        self.env, self.client = env, client

    def collect(self) -> Observations:
        w, margin = self.workload, timedelta(seconds=self.settings.margin_s)
        since = w.start - margin
        sources = Sources(
            nodes={n: _recent_files(self.settings.node_logs, since, node=n) for n in w.nodes},
            controller=_recent_files(self.settings.controller_logs, since),
            missing={"node_syslog": "no file matches the node log templates for {node} "
                                    f"({', '.join(self.settings.node_logs)})",
                     "controller": "no slurmctld log matches "
                                   f"{', '.join(self.settings.controller_logs)}",
                     "metrics": "no metrics connector configured"})
        names = JobNames(w.job_id, w.user, w.name, w.nodes[0] if w.nodes else "",
                         self.env.get("SLURM_ARRAY_JOB_ID"), self.env.get("SLURM_ARRAY_TASK_ID"))
        sources.app, sources.unread = job_output_sources(self.env, names,
                                                         self.settings.job_output_roots)
        sources.missing["job_output"] = "the job named no output file"
        self._node_history(sources, margin)
        return LogCollector(w, self.ruleset, sources, self.settings.read_limits()).collect()

    def _node_history(self, sources: Sources, margin: timedelta) -> None:
        w = self.workload
        cov = Coverage("node_state", None)
        if not w.nodes:
            cov.status, cov.reason = "missing", "the job had no nodes"
        else:
            try:
                history = self.client.node_events(w.nodes, w.start - margin, w.end + margin)
            except SlurmError as exc:
                cov.status, cov.reason = "error", str(exc)
            else:
                cov.status, cov.lines = "ok", len(history)
                cov.files.append("sacctmgr show event")
                sources.extra_events += node_state_events(history, w, margin)
        if w.state == "NODE_FAIL" and not w.failed_node:
            down = [e for e in sources.extra_events if e.base_role == "cause"]
            w.failed_node = down[0].node if down else None
        sources.extra_coverage.append(cov)
