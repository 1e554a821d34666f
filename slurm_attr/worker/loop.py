"""The worker: spool -> database queue -> sacct -> collect -> diagnose -> store.

Every step can be interrupted: spool files are deleted only once the queue holds them, a claimed
job whose worker dies is claimed again when its lease runs out, and the diagnosis and the closing
of its queue entry are one transaction, so a job ends up diagnosed exactly once.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.exc import (
    DataError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    SQLAlchemyError,
    StatementError,
)

from slurm_attr.analyze import diagnose_attempt, minimal_env
from slurm_attr.config import Settings
from slurm_attr.connectors.slurm import pick_attempt
from slurm_attr.model import AttemptFacts
from slurm_attr.scope.slurm import FAILURE_STATES, SlurmClient, SlurmCommands, SlurmError
from slurm_attr.store import queue
from slurm_attr.store.repository import Store
from slurm_attr.worker.remote import Refused, Rejected, Remote, Unreachable
from slurm_attr.worker.spool import SpoolEntry, read_entries, set_aside
from slurm_attr.worker.watch import SpoolWatcher

log = logging.getLogger("slurm_attr.worker")

# Attempt states that mean sacct has not caught up with the end of the job yet.
_NOT_ENDED = {"RUNNING", "PENDING", "COMPLETING", "SUSPENDED", "CONFIGURING", "RESIZING"}
# The shortest sleep between rounds while a job waits to come due.
_MIN_IDLE_S = 0.05


class Transient(Exception):
    """Worth retrying later: slurmdbd lag, a command that failed, a file still being written."""


class Worker:
    def __init__(self, store: Store, settings: Settings, client: SlurmClient | None = None,
                 name: str | None = None, force: bool = False, remote: Remote | None = None) -> None:
        self.store, self.settings = store, settings
        self.remote = remote  # set: a service diagnoses and stores; this store only queues
        self.outage_s = self.settings.backoff_s  # how long to wait out the service, doubling
        self.client: SlurmClient = client or SlurmCommands(settings)
        self.name = name or f"{socket.gethostname()}:{os.getpid()}"
        self.stopping = False
        self.force = force  # replace stored diagnoses even by ones that saw less evidence
        self._cluster: str | None = settings.cluster

    # ------------------------------------------------------------------ lifecycle
    def handle_signals(self) -> None:
        """SIGTERM/SIGINT: finish the job in hand, then stop."""
        def stop(signum: int, _frame: Any) -> None:
            log.info("signal %d: stopping after the current job", signum)
            self.stopping = True
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)

    def run(self, poll_s: float = 5.0, once: bool = False, batch: int = 20) -> int:
        """Drain the queue; with once, return when nothing is due. Returns jobs handled.

        Between rounds the worker sleeps until a spool entry lands, the earliest queued job comes
        due, or `poll_s` passes (the net for what inotify cannot see: another worker's queue
        rows, a spool on NFS)."""
        handled = 0
        with SpoolWatcher(Path(self.settings.spool)) as watcher:
            while not self.stopping:
                try:
                    self.ingest()
                    n = self.drain(batch)
                    idle = 0.0 if n else self._idle_for(0.5 if once else poll_s)
                except SQLAlchemyError as exc:  # the database is down: the spool keeps every job
                    log.error("database unavailable, retrying in %.0fs: %s", poll_s,
                              str(exc).splitlines()[0])
                    self._sleep(poll_s)
                    continue
                handled += n
                if once and n == 0 and not self._due_soon():
                    break
                if n == 0:
                    self._sleep(idle, watcher)
        return handled

    def _idle_for(self, poll_s: float) -> float:
        """Seconds to sleep: until the earliest queued job is due, at most `poll_s`."""
        due = queue.seconds_until_due(self.store)
        if due is None:
            return poll_s
        # A little past the due time (claims compare with the clock); never 0, which would spin
        # on a due row another worker holds locked for a moment.
        return min(poll_s, max(_MIN_IDLE_S, due + 0.01))

    def _sleep(self, seconds: float, watcher: SpoolWatcher | None = None) -> None:
        """Sleep, waking early on SIGTERM and, with a watcher, when a spool entry lands."""
        if watcher is not None:
            watcher.wait(seconds, lambda: self.stopping)
            return
        end = time.monotonic() + seconds
        while not self.stopping and time.monotonic() < end:
            time.sleep(min(0.2, seconds))

    def _due_soon(self) -> bool:
        """With --once, wait for jobs still settling (not for long backoffs)."""
        return queue.settling(self.store, self.settings.settle_s + 1)

    # ------------------------------------------------------------------ spool -> queue
    def ingest(self, chunk: int = 1000) -> int:
        """Move complete spool entries into the queue; returns how many were new."""
        spool = Path(self.settings.spool)
        added, entries = 0, []
        for item in read_entries(spool):
            if isinstance(item, tuple):
                path, reason = item
                log.warning("spool entry %s set aside: %s", path.name, reason)
                set_aside(spool, path)
                continue
            entries.append(item)
            if len(entries) == chunk:
                added += self._enqueue(entries)
                entries = []
        return added + self._enqueue(entries)

    def _enqueue(self, entries: list[SpoolEntry]) -> int:
        """Queue a chunk; if the database refuses it (not: is down), queue the entries one by one
        so that the one it refuses is set aside and the others go in."""
        try:
            added = queue.enqueue(self.store, [self._queue_row(e) for e in entries])
        except (OperationalError, InterfaceError):
            raise  # the database is down (these are StatementErrors too): the spool keeps them all
        except (DataError, IntegrityError, StatementError, ValueError) as exc:
            if len(entries) == 1:
                log.warning("spool entry %s set aside: the database refused it: %s",
                            entries[0].path.name, str(exc).splitlines()[0])
                set_aside(Path(self.settings.spool), entries[0].path)
                return 0
            return sum(self._enqueue([e]) for e in entries)
        for e in entries:  # only now that the database holds them
            e.path.unlink(missing_ok=True)
        return added

    def _queue_row(self, entry: SpoolEntry) -> dict[str, Any]:
        ended = datetime.fromtimestamp(entry.written, tz=UTC)
        return {"cluster": entry.env.get("SLURM_CLUSTER_NAME") or self.cluster(),
                "entry": entry.path.name, "job_id": entry.job_id, "attempt": entry.attempt,
                "ended_at": ended, "payload": entry.env, "source": "epilog",
                "not_before": ended + timedelta(seconds=self.settings.settle_s)}

    def cluster(self) -> str:
        if self._cluster is None:
            try:
                self._cluster = self.client.cluster_name()
            except SlurmError:
                return "default"
        return self._cluster

    # ------------------------------------------------------------------ queue -> diagnoses
    def drain(self, batch: int = 20, progress: Callable[[int], None] | None = None) -> int:
        handled = 0
        if self.remote is not None:  # a post may take minutes: leases must not run out in a batch
            batch = 1
        while not self.stopping:
            claims = queue.claim(self.store, self.name, batch, self.settings.lease_s)
            if not claims:
                break
            try:
                facts = self.client.sacct(sorted({c.job_id for c in claims}))
            except SlurmError as exc:
                for c in claims:
                    self._retry(c, f"sacct failed: {exc}")
                break
            for i, c in enumerate(claims):
                if self.stopping:
                    queue.release(self.store, c)
                    continue
                try:
                    self.handle(c, facts.get(c.job_id, []))
                except Refused:  # the token is wrong: keep every job for when it is fixed
                    for rest in claims[i:]:
                        queue.release(self.store, rest)
                    raise
                if self.remote is not None and self.remote.down:  # do not queue up timeouts
                    for rest in claims[i + 1:]:
                        self._wait_out(rest, "not sent: the service was unreachable")
                    self.outage_s = min(queue.MAX_BACKOFF_S, self.outage_s * 2)
                    return handled  # not counted: the loop sleeps until the outage delay ends
                handled += 1
                if progress:
                    progress(1)
        return handled

    def handle(self, c: queue.Claim, attempts: list[AttemptFacts]) -> None:
        started = time.monotonic()
        try:
            outcome = self._diagnose(c, attempts)
        except queue.LeaseLost as exc:  # the worker that took over stores the diagnosis
            log.warning("%s", exc)
        except Transient as exc:
            self._retry(c, str(exc))
        except Unreachable as exc:
            self._wait_out(c, str(exc))
        except Rejected as exc:  # the service will never take this bundle: a dead letter now
            queue.retry(self.store, c, str(exc), max_tries=c.tries, backoff_s=self.settings.backoff_s)
            log.error("job %s.%s: %s (dead)", c.job_id, c.attempt, exc)
        except Refused:
            raise
        except Exception as exc:  # a bug or a broken input must not stop the worker
            log.exception("job %s.%s failed", c.job_id, c.attempt)
            self._retry(c, f"{type(exc).__name__}: {exc}")
        else:
            self.outage_s = self.settings.backoff_s  # the service answers again
            log.info("job %s.%s: %s (%.2fs)", c.job_id, c.attempt, outcome,
                     time.monotonic() - started)

    def _diagnose(self, c: queue.Claim, attempts: list[AttemptFacts]) -> str:
        target = self._attempt_of(c, attempts)
        if target.state in _NOT_ENDED or target.end is None:
            raise Transient(f"sacct shows job {c.job_id} as {target.state}: not ended yet")
        # Earlier failed attempts nobody diagnosed (an epilog run lost before the hook was
        # installed, say) come along: a requeued job gets one diagnosis per attempt.
        todo = [a for a in attempts[:target.attempt]
                if a.state in FAILURE_STATES and a.end
                and not self.has_diagnosis(c.cluster, c.job_id, a.attempt)]
        skip = target.state == "COMPLETED" and self.settings.skip_completed
        if not skip:
            todo.append(target)
        try:
            found = [self._diagnose_one(a, c.cluster, c.payload if a is target else
                                        minimal_env(a, c.cluster)) for a in todo]
        except SlurmError as exc:
            raise Transient(str(exc)) from exc
        stored_here = found if self.remote is None else []  # remote: the service stored them
        queue.finish(self.store, c, stored_here, state="skipped" if skip else "done",
                     note="COMPLETED" if skip else None,
                     keep_history=self.settings.keep_history, force=self.force)
        return ", ".join(f"attempt {d['workload']['attempt']}: {d['outcome']}/{d['sub_domain']}"
                         for d in found) or "completed, skipped"

    def _diagnose_one(self, facts: AttemptFacts, cluster: str, env: dict[str, str]) -> dict[str, Any]:
        if self.remote is not None:  # the service diagnoses it and stores it
            return self.remote.submit(facts, cluster, env, self.client)
        return diagnose_attempt(facts, cluster, env, self.settings, self.client)

    def has_diagnosis(self, cluster: str, job_id: str, attempt: int) -> bool:
        if self.remote is not None:
            return self.remote.has_diagnosis(cluster, job_id, attempt)
        return self.store.has_diagnosis(cluster, job_id, attempt)

    @staticmethod
    def _attempt_of(c: queue.Claim, attempts: list[AttemptFacts]) -> AttemptFacts:
        """The attempt a queue row is about: by index for backfill, else the one whose end is
        when the epilog ran."""
        by_time = c.source == "epilog" and c.ended_at is not None
        found = pick_attempt(attempts, ended_at=c.ended_at) if by_time else \
            pick_attempt(attempts, index=c.attempt)
        if found is not None:
            return found
        raise Transient(f"sacct does not show the attempt of job {c.job_id} that ended at "
                        f"{c.ended_at:%H:%M:%S} yet (slurmdbd may lag the controller)"
                        if by_time and c.ended_at else
                        f"sacct does not show job {c.job_id} attempt {c.attempt} yet")

    def _wait_out(self, c: queue.Claim, error: str) -> None:
        """The service is down: try again later, without spending the job's try; the wait doubles
        while the outage lasts (up to the longest backoff), so an outage costs no busy loop."""
        queue.wait_out(self.store, c, error, delay_s=self.outage_s)
        log.warning("job %s.%s: %s (waiting %ds for the service)", c.job_id, c.attempt, error,
                    self.outage_s)

    def _retry(self, c: queue.Claim, error: str) -> None:
        state = queue.retry(self.store, c, error, max_tries=self.settings.max_tries,
                            backoff_s=self.settings.backoff_s)
        log.warning("job %s.%s: %s (%s, try %d)", c.job_id, c.attempt, error, state, c.tries)
