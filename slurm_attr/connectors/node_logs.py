"""Observation source: each node's system logs, found by the `node_logs` path templates (a node
name is substituted for {node}; globs allowed). A template without {node} names a log several
machines write to (a syslog server's file): it is read once, each line going to the node its
header names. Rotated files last written before the attempt's window are skipped."""

from __future__ import annotations

import glob
import os
import stat
from datetime import datetime, timedelta
from pathlib import Path

from slurm_attr.collect.collector import SourceFile, Sources
from slurm_attr.connectors import AttemptContext, register_source


def recent_files(patterns: tuple[str, ...], not_before: datetime, **fields: str) -> list[SourceFile]:
    """Regular files matching any template, skipping those last written before `not_before`."""
    found: dict[str, SourceFile] = {}
    for template in patterns:
        try:
            pattern = template.format(**fields)
        except (KeyError, IndexError, ValueError):
            continue  # a template naming a field this source does not have
        for name in sorted(glob.glob(pattern)):
            try:
                st = os.stat(name)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_mtime >= not_before.timestamp():
                found.setdefault(name, SourceFile(Path(name), name, fields.get("node")))
    return list(found.values())


@register_source("node_logs")
class NodeLogs:
    name = "node_logs"

    def gather(self, ctx: AttemptContext, found: Sources) -> None:
        since = ctx.workload.start - timedelta(seconds=ctx.settings.margin_s)
        per_node = tuple(t for t in ctx.settings.node_logs if "{node}" in t)
        own: set[Path] = set()
        for node in ctx.workload.nodes:
            files = recent_files(per_node, since, node=node)
            own.update(f.path for f in files)
            found.nodes.setdefault(node, []).extend(files)
        # A template without {node} is a log every machine writes to (a syslog server's file).
        shared = tuple(t for t in ctx.settings.node_logs if "{node}" not in t)
        found.shared_nodes += [f for f in recent_files(shared, since) if f.path not in own]
        found.missing["node_syslog"] = ("no file matches the node log templates for {node} "
                                        f"({', '.join(ctx.settings.node_logs)})")
