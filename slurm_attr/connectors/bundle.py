"""Execution context: a static bundle (see README), its files described as `Sources` for the
shared collector; journals below `nodes/<node>/` are converted by the journald source, and an
`events.json` (node state history) becomes events as the live `sacctmgr_events` source makes them.

Every file is listed and later opened through `confine.Root`: nothing below the bundle's own
directory is followed through a link, and only regular files are read."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path, PurePosixPath

from slurm_attr.collect.collector import LogCollector, SourceFile, Sources
from slurm_attr.collect.confine import Root
from slurm_attr.collect.files import ReadLimits
from slurm_attr.connectors.journald import mark_journals
from slurm_attr.model import Coverage, Observations, Workload
from slurm_attr.ruleset import Ruleset
from slurm_attr.scope.static import (
    COVERAGE,
    EVENTS,
    BundleError,
    load_coverage,
    load_events,
    open_bundle,
)

_MISSING = {"job_output": "no job output (app/) in the bundle",
            "node_syslog": "no system logs for {node} in the bundle",
            "controller": "no slurmctld log in the bundle",
            "metrics": "no metrics in the bundle"}


def bundle_sources(root: Root, workload: Workload) -> Sources:
    sources = Sources(missing=dict(_MISSING), timezones=dict(workload.log_timezones))

    def described(folder: str, collector: str, node: str | None = None) -> list[SourceFile]:
        listing = root.files_under(folder)
        sources.unread += [Coverage(collector, node, "refused", why) for why in listing.skipped]
        out = []
        for entry in listing.files:
            parts = PurePosixPath(entry.rel).parts
            named = next((p for p in parts[1:-1] if p in workload.nodes), None)
            out.append(SourceFile(root.path / entry.rel, entry.rel, node or named,
                                  identity=entry.identity, root=root))
        return out

    sources.app = described("app", "job_output")
    sources.nodes = {n: mark_journals(described(f"nodes/{n}", "node_syslog", n)) for n in workload.nodes}
    # A file directly in nodes/ is a log several machines wrote (a syslog server's).
    sources.shared_nodes = mark_journals([f for f in described("nodes", "node_syslog")
                                          if len(PurePosixPath(f.name).parts) == 2])
    sources.controller = described("controller", "controller")
    sources.metrics = [f for f in described("metrics", "metrics") if f.name.endswith(".json")]
    _node_history(root, workload, sources)
    _coverage_there(root, sources)
    return sources


def _coverage_there(root: Root, sources: Sources) -> None:
    """`coverage.json`, when the bundle has one: what could not be packed where it was made."""
    try:
        found = load_coverage(root)
    except BundleError as exc:  # optional: a broken file is a note, never the diagnosis
        sources.extra_coverage.append(Coverage("bundle", None, "error", f"{COVERAGE} unusable: {exc}"))
        return
    if found is None:
        return
    sources.missing.update(found.missing)
    sources.unread += [Coverage(c, n, s, r) for c, n, s, r in found.unread]
    sources.extra_coverage += [Coverage(c, n, s, r) for c, n, s, r in found.sources]


def _node_history(root: Root, workload: Workload, sources: Sources) -> None:
    """`events.json`, when the bundle has one: the node state history, read as the live
    `sacctmgr_events` source reads sacctmgr's answer."""
    from slurm_attr.connectors.sacctmgr_events import add_history  # only bundles that have one

    try:
        history = load_events(root)
    except BundleError as exc:  # optional evidence: a broken file costs its coverage, not the job
        add_history(sources, workload, timedelta(0), None, f"{EVENTS} unusable: {exc}", EVENTS)
        return
    if history is None:
        return
    add_history(sources, workload, timedelta(seconds=history.margin_s),
                history.events if history.error is None else None, history.error, EVENTS)


class BundleCollector:
    def __init__(self, bundle: Path | Root, workload: Workload, ruleset: Ruleset,
                 limits: ReadLimits | None = None) -> None:
        root = bundle if isinstance(bundle, Root) else open_bundle(bundle)
        self.collector = LogCollector(workload, ruleset, bundle_sources(root, workload), limits)

    def collect(self) -> Observations:
        return self.collector.collect()
