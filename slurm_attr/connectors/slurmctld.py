"""Observation source: the controller's log (`controller_logs` templates), for what slurmctld
said about the job and its nodes."""

from __future__ import annotations

from datetime import timedelta

from slurm_attr.collect.collector import Sources
from slurm_attr.connectors import AttemptContext, register_source
from slurm_attr.connectors.node_logs import recent_files


@register_source("slurmctld")
class SlurmctldLog:
    name = "slurmctld"

    def gather(self, ctx: AttemptContext, found: Sources) -> None:
        since = ctx.workload.start - timedelta(seconds=ctx.settings.margin_s)
        found.controller.extend(recent_files(ctx.settings.controller_logs, since))
        found.missing["controller"] = ("no slurmctld log matches "
                                       f"{', '.join(ctx.settings.controller_logs)}")
