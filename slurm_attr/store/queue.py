"""The work queue in the database: claim with a lease, finish, retry with backoff, dead letters.

A claim takes rows that are pending and due, or leased by a worker whose lease ran out (it
crashed). On PostgreSQL the claiming SELECT uses FOR UPDATE SKIP LOCKED so concurrent workers
take different rows; on SQLite writers are serialised, and the UPDATE re-checks the condition, so
a row is never claimed twice either. The lease owner is unique per claim.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, and_, func, or_, select, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite

from slurm_attr.store.models import QueueEntry
from slurm_attr.store.repository import Store, fit

MAX_BACKOFF_S = 3600


@dataclass
class Claim:
    """A claimed queue row. `ended_at` is when the epilog ran (UTC), or the attempt's end."""

    id: int
    cluster: str
    job_id: str
    attempt: int
    ended_at: datetime | None
    source: str
    payload: dict[str, Any]
    tries: int
    owner: str

    def __post_init__(self) -> None:
        self.ended_at = aware(self.ended_at)


def now() -> datetime:
    return datetime.now(UTC)


def enqueue(store: Store, rows: list[dict[str, Any]]) -> int:
    """Add job ends (cluster, entry, job_id, attempt, ended_at, payload, source, not_before);
    an entry already known is ignored, so reading the same spool file twice is harmless."""
    if not rows:
        return 0
    dialect = postgresql if store.engine.dialect.name == "postgresql" else sqlite
    stamp = now()
    values = [fit(QueueEntry, {"state": "pending", "tries": 0, "created_at": stamp,
                               "updated_at": stamp, **r}) for r in rows]
    stmt = dialect.insert(QueueEntry).on_conflict_do_nothing(
        index_elements=["cluster", "entry"])
    keys = {(r["cluster"], r["entry"]) for r in values}
    with store.sessions.begin() as s:
        known = s.scalars(select(func.count()).select_from(QueueEntry).where(
            tuple_(QueueEntry.cluster, QueueEntry.entry).in_(keys))).one()
        s.execute(stmt, values)
    return len(keys) - known


def _claimable(at: datetime):
    return or_(and_(QueueEntry.state == "pending", QueueEntry.not_before <= at),
               and_(QueueEntry.state == "leased", QueueEntry.lease_until < at))


def claim(store: Store, worker: str, limit: int, lease_s: int) -> list[Claim]:
    at = now()
    owner = f"{worker}:{uuid.uuid4().hex[:8]}"
    pick = select(QueueEntry.id).where(_claimable(at)).order_by(QueueEntry.not_before,
                                                                QueueEntry.id).limit(limit)
    if store.engine.dialect.name == "postgresql":
        pick = pick.with_for_update(skip_locked=True)
    with store.sessions.begin() as s:
        ids = s.scalars(pick).all()
        if not ids:
            return []
        s.execute(update(QueueEntry).where(QueueEntry.id.in_(ids), _claimable(at))
                  .values(state="leased", lease_owner=owner, lease_until=at + timedelta(seconds=lease_s),
                          tries=QueueEntry.tries + 1, updated_at=at))
        rows = s.execute(select(QueueEntry.id, QueueEntry.cluster, QueueEntry.job_id,
                                QueueEntry.attempt, QueueEntry.ended_at, QueueEntry.source,
                                QueueEntry.payload, QueueEntry.tries)
                         .where(QueueEntry.id.in_(ids), QueueEntry.lease_owner == owner)).all()
    return [Claim(row.id, row.cluster, row.job_id, row.attempt, row.ended_at, row.source, row.payload,
                  row.tries, owner=owner) for row in rows]


def aware(when: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; everything stored is UTC."""
    return when.replace(tzinfo=UTC) if when is not None and when.tzinfo is None else when


def _mine(c: Claim):
    return and_(QueueEntry.id == c.id, QueueEntry.lease_owner == c.owner)


class LeaseLost(Exception):
    """Another worker took the job over (this worker's lease ran out): its result is not stored."""


def finish(store: Store, c: Claim, diagnoses: list[dict[str, Any]], *, state: str = "done",
           note: str | None = None, keep_history: bool = False, force: bool = False) -> None:
    """Close the queue entry and store the diagnoses in one transaction, fenced by the lease: if
    another worker has claimed the job since, nothing is written and LeaseLost is raised."""
    with store.sessions.begin() as s:
        close = update(QueueEntry).where(_mine(c), QueueEntry.state == "leased").values(
            state=state, last_error=note, lease_until=None, updated_at=now())
        closed = cast(CursorResult, s.execute(close))
        if closed.rowcount != 1:
            raise LeaseLost(f"job {c.job_id}: the lease {c.owner} was taken over; result dropped")
        store.save_in(s, diagnoses, keep_history=keep_history, force=force)


def retry(store: Store, c: Claim, error: str, *, max_tries: int, backoff_s: int) -> str:
    """Put the job back with exponential backoff, or into the dead letters; returns the state."""
    state = "dead" if c.tries >= max_tries else "pending"
    delay = min(MAX_BACKOFF_S, backoff_s * 2 ** max(0, c.tries - 1))
    with store.sessions.begin() as s:
        s.execute(update(QueueEntry).where(_mine(c)).values(
            state=state, last_error=error[-2000:], lease_until=None, updated_at=now(),
            not_before=now() + timedelta(seconds=delay)))
    return state


def wait_out(store: Store, c: Claim, error: str, *, delay_s: int) -> None:
    """Put the job back for later without spending its try: what failed is not the job but a
    system it needs (the remote service is down), and an outage must not make dead letters."""
    _give_back(store, c, last_error=error[-2000:], not_before=now() + timedelta(seconds=delay_s))


def release(store: Store, c: Claim) -> None:
    """Give a claimed job back untouched (the worker is stopping); the try does not count."""
    _give_back(store, c)


def _give_back(store: Store, c: Claim, **values: Any) -> None:
    """The claim ends and its try is given back: pending again, as if never claimed."""
    with store.sessions.begin() as s:
        s.execute(update(QueueEntry).where(_mine(c)).values(
            state="pending", tries=QueueEntry.tries - 1, lease_until=None, updated_at=now(), **values))


def settling(store: Store, within_s: float) -> bool:
    """Whether a never-tried job becomes due within `within_s` (it is waiting out the settle delay)."""
    horizon = now() + timedelta(seconds=within_s)
    with store.sessions() as s:
        return s.scalar(select(QueueEntry.id).where(
            QueueEntry.state == "pending", QueueEntry.tries == 0,
            QueueEntry.not_before <= horizon).limit(1)) is not None


def epilog_env(store: Store, cluster: str, job_id: str, end: datetime) -> dict[str, str] | None:
    """The environment the epilog queued for the attempt of this job that ended at `end`."""
    with store.sessions() as s:
        found = s.execute(select(QueueEntry.ended_at, QueueEntry.payload).where(
            QueueEntry.cluster == cluster, QueueEntry.job_id == job_id,
            QueueEntry.source == "epilog")).all()
    near = sorted((abs((t.replace(tzinfo=t.tzinfo or UTC) - end).total_seconds()), i)
                  for i, (t, _) in enumerate(found) if t)
    return found[near[0][1]][1] if near and near[0][0] <= 120 else None


def revive_dead(store: Store) -> int:
    """Give dead letters a fresh set of tries (after the cause, e.g. a broken collector, is fixed)."""
    with store.sessions.begin() as s:
        revive = update(QueueEntry).where(QueueEntry.state == "dead").values(
            state="pending", tries=0, not_before=now(), updated_at=now())
        result = cast(CursorResult, s.execute(revive.execution_options(synchronize_session=False)))
        return result.rowcount


def states_of(store: Store, keys: list[tuple[str, str]]) -> dict[str, int]:
    """How many of these (cluster, entry) queue rows are in each state."""
    found: dict[str, int] = {}
    with store.sessions() as s:
        for i in range(0, len(keys), 500):
            rows = s.execute(select(QueueEntry.state, func.count()).where(
                tuple_(QueueEntry.cluster, QueueEntry.entry).in_(keys[i:i + 500]))
                .group_by(QueueEntry.state)).all()
            for state, n in rows:
                found[state] = found.get(state, 0) + n
    return found


def counts(store: Store) -> dict[str, int]:
    with store.sessions() as s:
        return dict(s.execute(select(QueueEntry.state, func.count()).group_by(QueueEntry.state)).all())


def seconds_until_due(store: Store) -> float | None:
    """Seconds until the earliest queued job can be claimed: a pending job's `not_before` (the
    settle delay, a retry's backoff) or a lease running out (its worker died). None: nothing
    waits. Negative: one is due already."""
    with store.sessions() as s:
        pending = s.scalar(select(func.min(QueueEntry.not_before)).where(QueueEntry.state == "pending"))
        leased = s.scalar(select(func.min(QueueEntry.lease_until)).where(QueueEntry.state == "leased"))
    due = [t for t in (aware(pending), aware(leased)) if t is not None]
    return (min(due) - datetime.now(UTC)).total_seconds() if due else None
