"""The worker wakes when a spool entry lands and when a queued job comes due, not a poll interval
later: real inotify on a real directory, a real SQLite queue, the worker loop in a thread."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from slurm_attr.config import Settings
from slurm_attr.model import AttemptFacts
from slurm_attr.store import queue
from slurm_attr.store.models import QueueEntry
from slurm_attr.store.queue import seconds_until_due
from slurm_attr.store.repository import Store
from slurm_attr.worker import watch
from slurm_attr.worker.loop import Worker
from slurm_attr.worker.watch import SpoolWatcher

LONG_S = 20.0  # the poll interval in these tests: no wake may come from it
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def _spool(root: Path) -> Path:
    for sub in ("new", "tmp"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    return root


def _drop(spool: Path, name: str, job: str = "42") -> None:
    """What the hook does: write the entry under tmp/, then rename it into new/."""
    tmp = spool / "tmp" / name
    tmp.write_bytes(f"SLURM_JOB_ID={job}\0SLURM_CLUSTER_NAME=test\0".encode())
    os.replace(tmp, spool / "new" / name)


def _later(seconds: float, action: Callable[[], Any]) -> threading.Timer:
    timer = threading.Timer(seconds, action)
    timer.start()
    return timer


def _timed_wait(watcher: SpoolWatcher, timeout: float, stop: Callable[[], bool] = lambda: False
                ) -> tuple[bool, float]:
    started = time.monotonic()
    woke = watcher.wait(timeout, stop)
    return woke, time.monotonic() - started


@linux_only
def test_an_entry_renamed_into_new_wakes_the_watcher_at_once(tmp_path):
    spool = _spool(tmp_path)
    with SpoolWatcher(spool) as watcher:
        assert watcher.watching
        _later(0.3, lambda: _drop(spool, "42.0.1.job"))
        woke, took = _timed_wait(watcher, LONG_S)
    assert woke and 0.25 < took < 1.5, took


@linux_only
def test_what_is_not_an_entry_does_not_wake_it(tmp_path):
    spool = _spool(tmp_path)
    with SpoolWatcher(spool) as watcher:
        (spool / "tmp" / "42.0.1.job").write_text("half written")  # the hook's temporary file
        (spool / "new" / ".partial").write_text("x")  # dot files are not read from the spool
        woke, took = _timed_wait(watcher, 0.6)
    assert not woke and took >= 0.6


@linux_only
def test_a_spool_made_after_the_worker_started_is_watched(tmp_path):
    spool = tmp_path / "spool"
    with SpoolWatcher(spool) as watcher:
        assert not watcher.watching  # the hook makes new/ with its first entry
        _later(0.3, lambda: _spool(spool))
        woke, took = _timed_wait(watcher, LONG_S)  # new/ appearing: entries may already be there
        assert woke and took < 1.5, took
        assert watcher.watching
        _later(0.3, lambda: _drop(spool, "43.0.1.job"))
        woke, took = _timed_wait(watcher, LONG_S)
    assert woke and took < 1.5, took


@linux_only
def test_stop_cuts_a_wait_short(tmp_path):
    stopping = threading.Event()
    with SpoolWatcher(_spool(tmp_path)) as watcher:
        _later(0.3, stopping.set)
        woke, took = _timed_wait(watcher, LONG_S, stopping.is_set)
    assert not woke and took < 1.5, took


def test_without_inotify_the_timeout_alone_ends_a_wait(tmp_path, monkeypatch):
    monkeypatch.setattr(watch, "INotify", None)
    spool = _spool(tmp_path)
    with SpoolWatcher(spool) as watcher:
        assert not watcher.watching
        _later(0.1, lambda: _drop(spool, "42.0.1.job"))
        woke, took = _timed_wait(watcher, 0.8)
    assert not woke and took >= 0.8


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path}/q.db") as s:
        yield s


def _row(job: str, not_before: datetime) -> dict[str, Any]:
    return {"cluster": "test", "entry": f"{job}.0.1.job", "job_id": job, "attempt": 0,
            "ended_at": not_before, "payload": {}, "source": "epilog", "not_before": not_before}


def test_seconds_until_due_is_the_earliest_pending_job_or_lease(store):
    assert seconds_until_due(store) is None
    now = datetime.now(UTC)
    queue.enqueue(store, [_row("1", now + timedelta(seconds=30)), _row("2", now + timedelta(seconds=3))])
    assert 2.5 < _due(store) <= 3
    queue.enqueue(store, [_row("3", now - timedelta(seconds=1))])
    assert _due(store) < 0  # due already
    (claim,) = queue.claim(store, "w", 5, lease_s=2)  # a worker takes job 3, and dies
    assert claim.job_id == "3"
    assert 1.5 < _due(store) <= 2  # its lease runs out before job 2 is due


def _due(store: Store) -> float:
    due = seconds_until_due(store)
    assert due is not None
    return due


class FakeSlurm:
    """sacct shows every job as just ended COMPLETED: the worker drops it without diagnosing."""

    def __init__(self) -> None:
        self.asked: list[tuple[float, list[str]]] = []

    def sacct(self, job_ids: list[str]) -> dict[str, list[AttemptFacts]]:
        self.asked.append((time.monotonic(), job_ids))
        end = datetime.now(UTC)
        return {j: [AttemptFacts("test", j, state="COMPLETED", end=end)] for j in job_ids}

    def cluster_name(self) -> str:
        return "test"


@pytest.fixture
def start_worker(tmp_path, store) -> Iterator[Callable[[], Worker]]:
    """Starts the worker loop in a thread, and leaves it asleep (past its first round)."""
    settings = Settings(db=f"sqlite:///{tmp_path}/q.db", spool=str(_spool(tmp_path / "spool")),
                        settle_s=SETTLE_S, cluster="test")
    w = Worker(store, settings, client=FakeSlurm(), name="test")  # type: ignore[arg-type]
    thread = threading.Thread(target=w.run, kwargs={"poll_s": LONG_S}, daemon=True)

    def start() -> Worker:
        thread.start()
        time.sleep(0.5)
        return w

    yield start
    w.stopping = True
    thread.join(timeout=5)
    assert not thread.is_alive(), "the worker must notice a stop within a moment"


SETTLE_S = 1


def _handled_after(store: Store, job: str) -> float:
    """Seconds until the job's queue row is closed."""
    started = time.monotonic()
    while time.monotonic() - started < LONG_S:
        with store.sessions() as s:
            state = s.scalar(select(QueueEntry.state).where(QueueEntry.job_id == job))
        if state == "skipped":
            return time.monotonic() - started
        time.sleep(0.02)
    raise AssertionError(f"job {job} not handled within the poll interval")


@linux_only
def test_worker_handles_a_job_settle_s_after_its_entry_lands(start_worker):
    worker = start_worker()
    _drop(Path(worker.settings.spool), "42.0.1.job", job="42")
    took = _handled_after(worker.store, "42")
    # Not before the settle delay (slurmdbd needs it), and not a poll interval after it.
    assert SETTLE_S - 0.1 < took < SETTLE_S + 1.5, took


def test_worker_wakes_when_a_queued_job_comes_due(start_worker, store):
    # Waiting out its settle delay (or a retry's backoff) when the worker goes to sleep: nothing
    # lands in the spool, so only the due time can wake it before the poll interval.
    queue.enqueue(store, [_row("7", datetime.now(UTC) + timedelta(seconds=1.5))])
    started = time.monotonic()
    start_worker()
    took = time.monotonic() - started + _handled_after(store, "7")
    assert 1.4 < took < 3, took
