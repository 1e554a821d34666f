"""Backfill: queue the failed attempts sacct remembers, for clusters that ran without the hook."""

from __future__ import annotations

from datetime import datetime

from slurm_attr.analyze import minimal_env
from slurm_attr.scope.slurm import FAILURE_STATES
from slurm_attr.store import queue
from slurm_attr.worker.loop import Worker

_CHUNK = 200  # job ids per sacct call


def enqueue_failed(worker: Worker, since: datetime, until: datetime) -> int:
    """Queue every failed attempt that ended in the window; returns how many were new."""
    ids = worker.client.failed_job_ids(since, until)
    rows = []
    for i in range(0, len(ids), _CHUNK):
        for job_id, attempts in worker.client.sacct(ids[i:i + _CHUNK]).items():
            for facts in attempts:
                if facts["state"] not in FAILURE_STATES or not facts["end"]:
                    continue
                if not since <= facts["end"] <= until:
                    continue
                cluster = facts["cluster"] or worker.cluster()
                rows.append({"cluster": cluster, "entry": f"backfill:{job_id}.{facts['attempt']}",
                             "job_id": job_id, "attempt": facts["attempt"], "ended_at": facts["end"],
                             "payload": minimal_env(facts, cluster), "source": "backfill",
                             "not_before": queue.now()})
    return queue.enqueue(worker.store, rows)
