"""The worker's decisions, fast: which attempt an epilog run is about, skipping completed jobs,
retries with exponential backoff, dead letters, releasing claims, backfill. The Slurm client is
the real one replaying sacct output recorded on the test cluster (tests/slurm_replay.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from slurm_replay import replayed_client
from sqlalchemy import select

from slurm_attr.config import Settings
from slurm_attr.store import queue
from slurm_attr.store.models import QueueEntry
from slurm_attr.store.repository import Store
from slurm_attr.worker.backfill import enqueue_failed
from slurm_attr.worker.loop import Worker

REQUEUED_END = datetime(2026, 11, 30, 3, 13, 31, tzinfo=UTC)
FAILED_END = datetime(2026, 11, 30, 3, 15, 39, tzinfo=UTC)


@pytest.fixture
def db(tmp_path):
    with Store.open(f"sqlite:///{tmp_path / 'q.db'}") as store:
        yield store


def _worker(db, tmp_path, **settings) -> tuple[Worker, object]:
    conf = Settings(spool=str(tmp_path / "spool"), node_logs=(str(tmp_path / "none-{node}"),),
                    controller_logs=(str(tmp_path / "none"),), job_output_roots=(str(tmp_path),),
                    settle_s=0, **settings)
    client, replay = replayed_client(conf)
    return Worker(db, conf, client=client, name="test"), replay


def _epilog(job_id: str, ended: datetime, restart: str = "0") -> dict:
    """A queue row as the hook's spool entry makes it (22.05 reports the next restart count)."""
    return {"cluster": "attrtest", "entry": f"{job_id}.{restart}.{ended:%H%M%S}.job", "job_id": job_id,
            "attempt": int(restart), "ended_at": ended, "source": "epilog",
            "payload": {"SLURM_JOB_ID": job_id, "SLURM_JOB_USER": "root",
                        "SLURM_JOB_RESTART_COUNT": restart},
            "not_before": queue.now() - timedelta(seconds=1)}


def _states(db) -> dict[str, tuple[str, int]]:
    with db.sessions() as s:
        return {r.entry: (r.state, r.tries) for r in s.scalars(select(QueueEntry))}


def test_each_epilog_run_is_matched_to_the_attempt_that_ended_then(db, tmp_path):
    worker, _ = _worker(db, tmp_path)
    queue.enqueue(db, [_epilog("4", REQUEUED_END + timedelta(seconds=1), restart="1"),
                       _epilog("4", FAILED_END + timedelta(seconds=2), restart="1")])
    assert worker.drain() == 2
    assert db.has_diagnosis("attrtest", "4", 0) and db.has_diagnosis("attrtest", "4", 1)
    from slurm_attr.report.query import Filters, load_frame
    frame = load_frame(db, Filters(REQUEUED_END - timedelta(days=1), FAILED_END + timedelta(days=1)))
    assert dict(zip(frame["attempt"], frame["state"], strict=True)) == {0: "REQUEUED", 1: "FAILED"}


def test_completed_jobs_are_skipped_unless_asked(db, tmp_path):
    worker, _ = _worker(db, tmp_path)
    ended = datetime(2026, 11, 30, 2, 59, 55, tzinfo=UTC)
    queue.enqueue(db, [_epilog("2", ended)])
    worker.drain()
    assert list(_states(db).values()) == [("skipped", 1)]
    assert not db.has_diagnosis("attrtest", "2", 0)
    keen, _ = _worker(db, tmp_path, skip_completed=False)
    queue.enqueue(db, [{**_epilog("2", ended), "entry": "again"}])
    keen.drain()
    assert db.has_diagnosis("attrtest", "2", 0)


def test_a_job_not_ended_in_sacct_is_retried_with_exponential_backoff_then_dead(db, tmp_path):
    worker, _ = _worker(db, tmp_path, backoff_s=100, max_tries=3)
    queue.enqueue(db, [_epilog("8", datetime(2026, 11, 30, 4, 0, tzinfo=UTC))])
    delays = []
    for _ in range(3):
        before = queue.now()
        worker.drain()
        with db.sessions.begin() as s:
            row = s.scalars(select(QueueEntry)).one()
            delays.append(round((queue.aware(row.not_before) - before).total_seconds(), -1))
            row.not_before = queue.now() - timedelta(seconds=1)  # time passes
    assert delays[:2] == [100, 200]
    (state, tries), = _states(db).values()
    assert (state, tries) == ("dead", 3)
    with db.sessions() as s:
        assert "sacct does not show the attempt of job 8" in s.scalar(select(QueueEntry.last_error))


def test_a_failing_sacct_retries_every_claimed_job_and_loses_none(db, tmp_path):
    worker, replay = _worker(db, tmp_path)
    replay.failing = True
    queue.enqueue(db, [_epilog("1", datetime(2026, 11, 30, 2, 59, 55, tzinfo=UTC)),
                       _epilog("7", datetime(2026, 11, 30, 4, 10, tzinfo=UTC))])
    worker.drain()
    assert sorted(_states(db).values()) == [("pending", 1), ("pending", 1)]
    replay.failing = False
    with db.sessions.begin() as s:
        s.query(QueueEntry).update({"not_before": queue.now() - timedelta(seconds=1)})
    worker.drain()
    assert sorted(_states(db).values()) == [("done", 2), ("done", 2)]


def test_a_released_claim_gives_its_try_back(db, tmp_path):
    queue.enqueue(db, [_epilog("1", datetime(2026, 11, 30, 2, 59, 55, tzinfo=UTC))])
    (claim,) = queue.claim(db, "w", 1, lease_s=60)
    queue.release(db, claim)
    assert list(_states(db).values()) == [("pending", 0)]


def test_backfill_queues_every_failed_attempt_once_and_leaves_diagnosed_ones(db, tmp_path):
    worker, _ = _worker(db, tmp_path)
    since, until = datetime(2026, 11, 29, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC)
    plan = enqueue_failed(worker, since, until)
    assert (plan.queued, plan.already_diagnosed) == (4, 0)  # 1, 4 (requeued and failed), 7
    worker.drain()
    for job_id, attempt in (("1", 0), ("4", 0), ("4", 1), ("7", 0)):
        assert db.has_diagnosis("attrtest", job_id, attempt)
    assert not db.has_diagnosis("attrtest", "2", 0)
    again = enqueue_failed(worker, since, until)
    assert (again.queued, again.already_diagnosed) == (0, 4)
    redo = enqueue_failed(worker, since, until, redo=True)
    assert (redo.queued, redo.already_diagnosed) == (4, 0)
    worker.drain()
    assert queue.states_of(db, redo.keys) == {"done": 4}


def test_backfill_names_the_output_files_the_hook_saw(db, tmp_path):
    worker, _ = _worker(db, tmp_path)
    hook_env = {"SLURM_JOB_ID": "1", "SLURM_JOB_USER": "root", "SLURM_JOB_STDOUT": "/data/run/%j.log"}
    ended = datetime(2026, 11, 30, 2, 59, 56, tzinfo=UTC)
    queue.enqueue(db, [{**_epilog("1", ended), "payload": hook_env,
                        "not_before": queue.now() + timedelta(hours=1)}])
    plan = enqueue_failed(worker, datetime(2026, 11, 29, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC))
    with db.sessions() as s:
        payloads = {r.job_id: r.payload for r in s.scalars(select(QueueEntry).where(
            QueueEntry.source == "backfill"))}
    assert plan.queued == 4 and payloads["1"] == hook_env
    assert payloads["7"]["SLURM_JOB_WORK_DIR"] == "/home/alice"  # no hook run: sacct's facts


def test_a_diagnosis_that_saw_less_never_replaces_a_better_one_unless_forced(db, tmp_path):
    import copy

    from conftest import sample_dirs

    from slurm_attr.analyze import analyze_bundle
    good = analyze_bundle(sample_dirs()[0])
    worse = copy.deepcopy(good)
    worse["ruleset_version"] = "newer"
    for c in worse["coverage"]:
        if c["collector"] == "node_syslog":
            c["status"], c["reason"] = "missing", "rotated away"
    key = (good["workload"]["cluster"], good["workload"]["job_id"], good["workload"]["attempt"])
    db.save_diagnosis(good)
    db.save_diagnosis(worse)
    from slurm_attr.store.models import Diagnosis
    with db.sessions() as s:
        rows = dict(s.execute(select(Diagnosis.ruleset_version, Diagnosis.is_current)).all())
    assert rows == {good["ruleset_version"]: True, "newer": False}  # both kept, the better current
    db.save_many([worse], force=True)
    with db.sessions() as s:
        assert s.scalars(select(Diagnosis.ruleset_version).where(Diagnosis.is_current)).all() == ["newer"]
    assert db.has_diagnosis(*key)
