"""Class 6 and 10 (store): user-chosen text never loses a job on either back-end and is stored the
same on both; processes opening a fresh database at once all succeed; a worker whose lease was
taken over cannot store its result."""

from __future__ import annotations

import copy
import multiprocessing
from datetime import timedelta

import pytest
from conftest import _postgres_url, sample_dirs
from sqlalchemy import select

from slurm_attr.analyze import analyze_bundle
from slurm_attr.store import queue
from slurm_attr.store.models import Attempt, Cluster, DiagnosisNode, QueueEntry
from slurm_attr.store.repository import CUT_MARK, Store

SAMPLE = analyze_bundle(sample_dirs()[0])


def _hostile(doc: dict, n: int = 300) -> dict:
    d = copy.deepcopy(doc)
    w = d["workload"]
    w.update(name="n" * n, user="u" * n, partition="p" * n, cluster="c" * n)
    d["affected_nodes"] = ["x" * n]
    if d.get("root_cause"):
        d["root_cause"]["code"] = "E" * n
    return d


def test_long_user_text_is_stored_cut_with_a_marker_identically(store):
    d = _hostile(SAMPLE)
    assert store.save_diagnosis(d)
    with store.sessions() as s:
        name, user = s.execute(select(Attempt.name, Attempt.user_name)).one()
        cluster = s.scalar(select(Cluster.name))
        node = s.scalar(select(DiagnosisNode.node))
    assert name == "n" * 255 + CUT_MARK and len(user) == 128 and user.endswith(CUT_MARK)
    assert cluster == "c" * 127 + CUT_MARK and node == "x" * 127 + CUT_MARK
    assert store.save_diagnosis(d) is False  # a re-save finds the same attempt, nothing doubles


def test_a_long_name_in_the_queue_is_queued_and_finished(store):
    rows = [{"cluster": "k" * 400, "entry": "e" * 400, "job_id": "1", "attempt": 0,
             "ended_at": queue.now(), "payload": {"SLURM_JOB_NAME": "j" * 5000}, "source": "epilog",
             "not_before": queue.now() - timedelta(seconds=1)}]
    assert queue.enqueue(store, rows) == 1
    assert queue.enqueue(store, rows) == 0  # the same entry again is recognised
    (claim,) = queue.claim(store, "w", 5, 60)
    queue.finish(store, claim, [_hostile(SAMPLE)])
    with store.sessions() as s:
        assert s.scalar(select(QueueEntry.state)) == "done"


def test_a_worker_whose_lease_was_taken_over_stores_nothing(store):
    queue.enqueue(store, [{"cluster": "t", "entry": "1.0.1.job", "job_id": "1", "attempt": 0,
                           "ended_at": queue.now(), "payload": {}, "source": "epilog",
                           "not_before": queue.now() - timedelta(seconds=1)}])
    (slow,) = queue.claim(store, "slow", 1, lease_s=-1)  # its lease has already run out
    (fast,) = queue.claim(store, "fast", 1, lease_s=60)
    assert slow.id == fast.id and slow.owner != fast.owner
    with pytest.raises(queue.LeaseLost):
        queue.finish(store, slow, [SAMPLE])
    assert store.has_diagnosis(*_key(SAMPLE)) is False
    queue.finish(store, fast, [SAMPLE])
    assert store.has_diagnosis(*_key(SAMPLE)) is True


def _key(d: dict) -> tuple[str, str, int]:
    w = d["workload"]
    return w["cluster"], w["job_id"], w["attempt"]


def _open_and_save(url: str, barrier, results) -> None:
    try:
        barrier.wait(30)
        with Store.open(url) as store:
            store.save_diagnosis(SAMPLE)
        results.put("ok")
    except Exception as exc:  # reported to the test
        results.put(f"{type(exc).__name__}: {exc}")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_processes_opening_a_fresh_database_at_once_all_succeed(tmp_path, backend):
    gen = _postgres_url() if backend == "postgres" else None
    url = next(gen) if gen else f"sqlite:///{tmp_path / 'fresh.db'}"
    ctx = multiprocessing.get_context("spawn")
    n = 4
    barrier, results = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_open_and_save, args=(url, barrier, results)) for _ in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    outcomes = [results.get(timeout=5) for _ in procs]
    try:
        assert outcomes == ["ok"] * n
        with Store.open(url) as store, store.sessions() as s:
            assert len(s.scalars(select(Cluster.id)).all()) == 1
            assert store.has_diagnosis(*_key(SAMPLE))
    finally:
        if gen:
            next(gen, None)
