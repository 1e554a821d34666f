"""Observation source: the node state history from `sacctmgr show event` (a node set DOWN or
DRAIN around the attempt, with its reason: an admin, NHC, the BMC)."""

from __future__ import annotations

from datetime import timedelta

from slurm_attr.collect.collector import Sources
from slurm_attr.connectors import AttemptContext, register_source
from slurm_attr.model import Coverage, Event, SourceRef, Workload
from slurm_attr.scope.slurm import NodeEvent, SlurmError

_DOWN_STATES = ("DOWN", "DRAIN", "FAIL")


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


def add_history(found: Sources, w: Workload, margin: timedelta, history: list[NodeEvent] | None,
                error: str | None, where: str) -> None:
    """The node state history (or why it could not be had) as events and one coverage entry; a
    bundle's `events.json` comes through here too, so both give the same diagnosis."""
    cov = Coverage("node_state", None)
    if history is None:
        cov.status, cov.reason = "error", error or "no node state history"
    else:
        cov.status, cov.lines = "ok", len(history)
        cov.files.append(where)
        found.extra_events += node_state_events(history, w, margin)
    _failed_node(found, w)
    found.extra_coverage.append(cov)


def _failed_node(found: Sources, w: Workload) -> None:
    if w.state == "NODE_FAIL" and not w.failed_node:  # sacct did not say which node failed
        down = [e for e in found.extra_events if e.base_role == "cause"]
        w.failed_node = down[0].node if down else None


@register_source("sacctmgr_events")
class NodeStateHistory:
    name = "sacctmgr_events"

    def gather(self, ctx: AttemptContext, found: Sources) -> None:
        w, margin = ctx.workload, timedelta(seconds=ctx.settings.margin_s)
        if not w.nodes or ctx.client is None:
            why = "the job had no nodes" if not w.nodes else "no Slurm client to ask"
            _failed_node(found, w)
            found.extra_coverage.append(Coverage("node_state", None, "missing", why))
            return
        try:
            history = ctx.client.node_events(w.nodes, w.start - margin, w.end + margin)
        except SlurmError as exc:
            add_history(found, w, margin, None, str(exc), "sacctmgr show event")
            return
        add_history(found, w, margin, history, None, "sacctmgr show event")
