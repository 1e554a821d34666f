"""Backfill: queue the failed attempts sacct remembers, for clusters that ran without the hook
(or to diagnose again with new rules, `redo`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from slurm_attr.analyze import minimal_env
from slurm_attr.model import AttemptFacts
from slurm_attr.scope.slurm import FAILURE_STATES
from slurm_attr.store import queue
from slurm_attr.worker.loop import Worker

_CHUNK = 200  # job ids per sacct call


@dataclass
class Plan:
    """What one backfill run put in the queue, so it can say how much of it is done."""

    keys: list[tuple[str, str]] = field(default_factory=list)  # (cluster, queue entry)
    queued: int = 0
    already_diagnosed: int = 0


def enqueue_failed(worker: Worker, since: datetime, until: datetime, *, redo: bool = False) -> Plan:
    """Queue every failed attempt that ended in the window and has no diagnosis yet (with redo,
    every one: a new diagnosis replaces the old only if it saw at least as much)."""
    plan = Plan()
    ids = worker.client.failed_job_ids(since, until)
    rows = []
    stamp = f":redo@{queue.now():%Y%m%dT%H%M%S}" if redo else ""
    for i in range(0, len(ids), _CHUNK):
        for job_id, attempts in worker.client.sacct(ids[i:i + _CHUNK]).items():
            for facts in attempts:
                if facts.state not in FAILURE_STATES or facts.end is None:
                    continue
                if not since <= facts.end <= until:
                    continue
                cluster = facts.cluster or worker.cluster()
                if not redo and worker.has_diagnosis(cluster, job_id, facts.attempt):
                    plan.already_diagnosed += 1
                    continue
                entry = f"backfill:{job_id}.{facts.attempt}{stamp}"
                rows.append({"cluster": cluster, "entry": entry, "job_id": job_id,
                             "attempt": facts.attempt, "ended_at": facts.end,
                             "payload": job_env(worker, facts, cluster), "source": "backfill",
                             "not_before": queue.now()})
                plan.keys.append((cluster, entry))
    plan.queued = queue.enqueue(worker.store, rows)
    return plan


def job_env(worker: Worker, facts: AttemptFacts, cluster: str) -> dict[str, str]:
    """The job's environment as the hook saw it when the queue has it (it names the real output
    files), else what slurmctld still knows of the job's output names, else sbatch's defaults."""
    env = queue.epilog_env(worker.store, cluster, facts.job_id, facts.end) if facts.end else None
    if env:
        return env
    return {**minimal_env(facts, cluster), **worker.client.job_streams(facts.job_id)}
