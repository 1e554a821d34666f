"""Opening the store, migrating it, and writing diagnoses in one transaction each."""

from __future__ import annotations

import fcntl
import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any

import orjson
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, String, create_engine, delete, event, insert, make_url, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, sessionmaker

from slurm_attr import config
from slurm_attr.store.models import (
    Attempt,
    Base,
    Cluster,
    CoverageRow,
    Diagnosis,
    DiagnosisDocument,
    DiagnosisNode,
    EventRow,
)

# Renders the cached job-page body of a diagnosis: returns (template version, html).


def fit(model: type[Base], values: dict[str, Any]) -> dict[str, Any]:
    """Values that fit the model's columns on every back-end: text longer than a sized column is
    cut with a marker (users choose job names; PostgreSQL would refuse the row, SQLite keep it)."""
    sizes = _column_sizes(model)
    out = dict(values)
    for key, limit in sizes.items():
        value = out.get(key)
        if isinstance(value, str) and len(value) > limit:
            out[key] = value[: limit - len(CUT_MARK)] + CUT_MARK
    return out


CUT_MARK = "…"


@cache
def _column_sizes(model: type[Base]) -> dict[str, int]:
    return {c.key: c.type.length for c in model.__table__.columns
            if isinstance(c.type, String) and c.type.length}


def resolve_url(url: str | None) -> str:
    return url or config.load().db


def make_engine(url: str, *, foreign_keys: bool = True, **options: Any) -> Engine:
    """foreign_keys=False is for migrations: SQLite rebuilds a table to alter it, and dropping the
    old copy with foreign keys on would cascade-delete the rows that refer to it. `options` go to
    create_engine (a pool's size, an isolation level)."""
    if make_url(url).get_backend_name() == "postgresql":
        # Times come back in the session's zone: UTC, as SQLite gives them, whatever the
        # server's TimeZone, so every reader and every API answer says +00:00.
        options.setdefault("connect_args", {"options": "-c TimeZone=UTC"})
    # Documents are read far more often than written (the service, the reports): orjson parses
    # them in a third of json's time, into the same objects.
    engine = create_engine(url, future=True, json_deserializer=orjson.loads, **options)
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA busy_timeout=10000")  # first: the next pragma may wait for a lock
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
            cur.close()

    return engine


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("slurm_attr.store.migrations")))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str) -> None:
    """Migrate to the latest schema; processes starting at once take turns (the first migrates,
    the others find it done)."""
    with _migration_lock(url):
        command.upgrade(alembic_config(url), "head")


_LOCK_KEY = 0x51A77A77  # pg_advisory_lock key of slurm-attr's migrations


@contextmanager
def _migration_lock(url: str) -> Iterator[None]:
    """A PostgreSQL advisory lock, or an flock beside an SQLite file, held while migrating."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        engine = create_engine(url)
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _LOCK_KEY})
                try:
                    yield
                finally:
                    conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _LOCK_KEY})
                    conn.commit()
        finally:
            engine.dispose()
    elif parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        with open(f"{parsed.database}.migrate-lock", "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            yield
    else:
        yield


def _parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _document_hash(d: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()


class Store:
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    @classmethod
    def open(cls, url: str | None = None, *, migrate: bool = True) -> Store:
        url = resolve_url(url)
        if migrate:
            upgrade(url)
        return cls(url)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------ writing
    def save_diagnosis(self, d: dict[str, Any], *, keep_history: bool = False) -> bool:
        """Store one diagnosis atomically. Returns False when an identical one is already stored."""
        return self.save_many([d], keep_history=keep_history) == 1

    def save_many(self, diagnoses: Sequence[dict[str, Any]], *, keep_history: bool = False,
                  chunk: int = 500, force: bool = False) -> int:
        """Store diagnoses, `chunk` per transaction; returns how many were new or changed.

        A diagnosis is all-or-nothing: a crash loses at most the uncommitted chunk, which a retry
        stores again (writes are idempotent). Rows go in with one executemany per table."""
        stored = 0
        for i in range(0, len(diagnoses), chunk):
            with self.sessions.begin() as s:
                stored += self.save_in(s, diagnoses[i:i + chunk], keep_history=keep_history,
                                       force=force)
        return stored

    def save_in(self, s: Session, docs: Sequence[dict[str, Any]], *, keep_history: bool,
                force: bool = False) -> int:
        """Store diagnoses inside the caller's transaction (the queue closes its entry in it too).

        A new diagnosis of an attempt replaces the current one (or, with keep_history, demotes it
        to history), unless it saw less of the evidence (a lower share of readable sources: a
        re-analysis after logs rotated away, say): then it is kept as history and the better one
        stays current. `force` replaces regardless."""
        docs = list({_attempt_key(d["workload"]): d for d in docs}.values())  # last one wins
        attempts = self._upsert_attempts(s, [d["workload"] for d in docs])
        current: dict[int, list[tuple[int, str, float]]] = {}
        for diag_id, attempt_id, digest, seen in s.execute(
                select(Diagnosis.id, Diagnosis.attempt_id, Diagnosis.document_hash, Diagnosis.coverage_ok)
                .where(Diagnosis.attempt_id.in_(list(attempts.values())),
                       Diagnosis.is_current.is_(True))):
            current.setdefault(attempt_id, []).append((diag_id, digest, seen))
        new, replaced = [], []
        for d in docs:
            attempt_id, digest = attempts[_attempt_key(d["workload"])], _document_hash(d)
            old = current.get(attempt_id, [])
            if any(h == digest for _, h, _ in old):
                continue
            worse = not force and any(coverage_share(d) < seen - 1e-9 for _, _, seen in old)
            if not worse:
                replaced += [i for i, _, _ in old]
            new.append((attempt_id, digest, d, not worse))
        if replaced:
            stmt = (update(Diagnosis).where(Diagnosis.id.in_(replaced)).values(is_current=False)
                    if keep_history else delete(Diagnosis).where(Diagnosis.id.in_(replaced)))
            s.execute(stmt)
        if new:
            self._insert_diagnoses(s, new)
        return len(new)

    def _upsert_attempts(self, s: Session, workloads: list[dict[str, Any]]) -> dict[tuple, int]:
        """Insert or refresh the attempts; returns (cluster, job_id, attempt) -> attempt id."""
        clusters = {name: self._cluster_id(s, name) for name in {w["cluster"] for w in workloads}}
        ids: dict[tuple, int] = {}
        for name, cluster_id in clusters.items():
            job_ids = [w["job_id"] for w in workloads if w["cluster"] == name]
            for i in range(0, len(job_ids), 500):
                for row_id, job_id, attempt in s.execute(
                        select(Attempt.id, Attempt.job_id, Attempt.attempt)
                        .where(Attempt.cluster_id == cluster_id, Attempt.job_id.in_(job_ids[i:i + 500]))):
                    ids[(name, job_id, attempt)] = row_id
        known, fresh = [], []
        for w in workloads:
            values = _attempt_values(w, clusters[w["cluster"]])
            if _attempt_key(w) in ids:
                known.append({"id": ids[_attempt_key(w)], **values})
            else:
                fresh.append((_attempt_key(w), values))
        if known:
            s.execute(update(Attempt), known)
        if fresh:
            returned = s.execute(insert(Attempt).returning(Attempt.id, sort_by_parameter_order=True),
                                 [values for _, values in fresh]).scalars().all()
            ids.update(zip([key for key, _ in fresh], returned, strict=True))
        return ids

    @staticmethod
    def _cluster_id(s: Session, name: str) -> int:
        """The cluster's row, created if new; two processes creating it at once both get it."""
        name = fit(Cluster, {"name": name})["name"]
        cluster_id = s.scalar(select(Cluster.id).where(Cluster.name == name))
        if cluster_id is None:
            dialect = postgresql if s.get_bind().dialect.name == "postgresql" else sqlite
            s.execute(dialect.insert(Cluster).values(name=name).on_conflict_do_nothing())
            cluster_id = s.scalars(select(Cluster.id).where(Cluster.name == name)).one()
        return cluster_id

    @staticmethod
    def _insert_diagnoses(s: Session, new: list[tuple[int, str, dict[str, Any], bool]]) -> None:
        now = datetime.now(UTC)
        rows = [{**_diagnosis_values(attempt_id, d, digest, now), "is_current": is_current}
                for attempt_id, digest, d, is_current in new]
        ids = s.execute(insert(Diagnosis).returning(Diagnosis.id, sort_by_parameter_order=True),
                        rows).scalars().all()
        documents, nodes, events, coverage = [], [], [], []
        for diag_id, (_, _, d, _) in zip(ids, new, strict=True):
            documents.append({"diagnosis_id": diag_id, "document": d})
            implicated = set(d["affected_nodes"]) | {c["node"] for c in d["candidates"] if c["node"]}
            fitted = {fit(DiagnosisNode, {"node": n})["node"] for n in implicated}
            nodes += [{"diagnosis_id": diag_id, "node": n} for n in sorted(fitted)]
            events += [_event_values(diag_id, e) for e in d["symptoms"]]
            coverage += [fit(CoverageRow, {"diagnosis_id": diag_id, "collector": c["collector"],
                                           "node": c["node"], "status": c["status"],
                                           "reason": c["reason"], "lines": c["lines"],
                                           "bytes": c["bytes"]}) for c in d["coverage"]]
        for model, values in ((DiagnosisDocument, documents), (DiagnosisNode, nodes),
                              (EventRow, events), (CoverageRow, coverage)):
            if values:
                s.execute(insert(model), values)

    def has_diagnosis(self, cluster: str, job_id: str, attempt: int) -> bool:
        with self.sessions() as s:
            return s.scalar(
                select(Diagnosis.id).join(Attempt, Diagnosis.attempt_id == Attempt.id)
                .join(Cluster, Attempt.cluster_id == Cluster.id)
                .where(Cluster.name == cluster, Attempt.job_id == job_id, Attempt.attempt == attempt,
                       Diagnosis.is_current.is_(True)).limit(1)) is not None


def _attempt_key(w: dict[str, Any]) -> tuple[str, str, int]:
    return (w["cluster"], w["job_id"], w["attempt"])


def _attempt_values(w: dict[str, Any], cluster_id: int) -> dict[str, Any]:
    return fit(Attempt, {"cluster_id": cluster_id, "job_id": w["job_id"], "attempt": w["attempt"],
            "name": w["name"], "user_name": w["user"], "partition": w["partition"],
            "nodelist": w["nodelist"], "n_nodes": len(w["nodes"]),
            "gpus_per_node": w.get("gpus_per_node", 0), "start_time": _parse_time(w["start"]),
            "end_time": _parse_time(w["end"]), "elapsed_s": w["elapsed_s"], "state": w["state"],
            "exit_code": w["exit_code"]})


def coverage_share(d: dict[str, Any]) -> float:
    """The share of the sources that decide most diagnoses (job output, node logs) read fine."""
    usable = [c for c in d["coverage"] if c["collector"] in ("job_output", "node_syslog")]
    return sum(c["status"] == "ok" for c in usable) / len(usable) if usable else 0.0


def _candidates_action(d: dict[str, Any]) -> str | None:
    """Without a root cause, what to do is to look at each candidate (or at the coverage)."""
    if d.get("candidates"):
        return "Check each candidate cause; the evidence fits more than one."
    return None


def _diagnosis_values(attempt_id: int, d: dict[str, Any], digest: str, now: datetime) -> dict[str, Any]:
    rc = d.get("root_cause") or {}
    ok = coverage_share(d)
    return fit(Diagnosis, {"attempt_id": attempt_id, "is_current": True,
                           "ruleset_version": d["ruleset_version"],
            "document_hash": digest, "created_at": now, "outcome": d["outcome"],
            "sub_domain": d["sub_domain"], "evidence_status": d["evidence_status"],
            "verdict": d["verdict"], "root_code": rc.get("code"), "root_kind": rc.get("kind"),
            "root_time": _parse_time(rc.get("time")), "coverage_ok": ok,
            "action": rc.get("action") or _candidates_action(d)})


def _event_values(diag_id: int, e: dict[str, Any]) -> dict[str, Any]:
    return fit(EventRow, {"diagnosis_id": diag_id, "position": e["id"], "kind": e["kind"],
                          "code": e["code"],
            "node": e["node"], "time": _parse_time(e["time"]), "role": e["role"],
            "demoted_by": e["demoted_by"], "sub_domain": e["sub_domain"], "count": e["count"],
            "summary": e["summary"], "source_file": e["source"]["file"],
            "source_line": e["source"]["line"], "source_text": e["source"]["text"]})
