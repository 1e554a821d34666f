"""Execution context: one ended attempt of a job on a live Slurm cluster.

Which attempt a request means is decided here, once, for the worker, backfill and `analyze --job`:
by its index, or by the time the hook ran (the epilog runs as an attempt ends; on 22.05 its
SLURM_JOB_RESTART_COUNT already names the next attempt, so the count cannot be trusted). Its
evidence comes from the observation sources the `sources` setting names.
"""

from __future__ import annotations

from datetime import datetime

from slurm_attr.collect.collector import LogCollector, Sources
from slurm_attr.config import Settings
from slurm_attr.connectors import AttemptContext, observation_sources
from slurm_attr.model import AttemptFacts, Coverage, Observations, Workload
from slurm_attr.ruleset import Ruleset
from slurm_attr.scope.slurm import SlurmClient

END_SLACK_S = 120  # the epilog runs within seconds of the end sacct records; allow a slow controller


def pick_attempt(attempts: list[AttemptFacts], *, ended_at: datetime | None = None,
                 index: int | None = None) -> AttemptFacts | None:
    """The attempt that ended at `ended_at` (within END_SLACK_S), else the one at `index`, else
    the last; None when sacct does not show it (yet)."""
    if ended_at is not None:
        ended = [(abs((a.end - ended_at).total_seconds()), a) for a in attempts if a.end]
        return min((pair for pair in ended if pair[0] <= END_SLACK_S), key=lambda pair: pair[0],
                   default=(0.0, None))[1]
    if index is not None:
        return attempts[index] if 0 <= index < len(attempts) else None
    return attempts[-1] if attempts else None


def gather_sources(workload: Workload, settings: Settings, env: dict[str, str],
                   client: SlurmClient) -> Sources:
    """Where the attempt's evidence is, from every configured source (what an in-process
    diagnosis reads, and what a remote worker's bundle carries)."""
    ctx = AttemptContext(workload, settings, env, client)
    workload.timezone = workload.timezone or settings.log_zone()
    found = Sources(missing={"metrics": "no metrics connector configured"},
                    timezones=settings.source_zones())
    for source in observation_sources(settings.sources):
        try:
            source.gather(ctx, found)
        except Exception as exc:  # a broken source is a coverage problem, never a lost job
            found.extra_coverage.append(Coverage(source.name, None, "error",
                                                 f"{type(exc).__name__}: {exc}"))
    return found


def collect(workload: Workload, ruleset: Ruleset, settings: Settings, env: dict[str, str],
            client: SlurmClient) -> Observations:
    """Gather the attempt's evidence from every configured source, then read it."""
    found = gather_sources(workload, settings, env, client)
    return LogCollector(workload, ruleset, found, settings.read_limits()).collect()
