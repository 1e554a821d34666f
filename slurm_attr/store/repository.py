"""Opening the store, migrating it, and writing diagnoses in one transaction each."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, select
from sqlalchemy.orm import Session, sessionmaker

from slurm_attr.store.models import (
    Attempt,
    Cluster,
    CoverageRow,
    Diagnosis,
    DiagnosisNode,
    EventRow,
)

DEFAULT_URL = "sqlite:///slurm-attr.db"


def resolve_url(url: str | None) -> str:
    return url or os.environ.get("SLURM_ATTR_DB") or DEFAULT_URL


def make_engine(url: str) -> Engine:
    engine = create_engine(url, future=True)
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=10000")
            cur.close()

    return engine


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("slurm_attr.store.migrations")))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str) -> None:
    command.upgrade(alembic_config(url), "head")


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
    def _cluster(self, s: Session, name: str) -> Cluster:
        cluster = s.scalar(select(Cluster).where(Cluster.name == name))
        if cluster is None:
            cluster = Cluster(name=name)
            s.add(cluster)
            s.flush()
        return cluster

    def _attempt(self, s: Session, w: dict[str, Any]) -> Attempt:
        cluster = self._cluster(s, w["cluster"])
        row = s.scalar(select(Attempt).where(Attempt.cluster_id == cluster.id,
                                             Attempt.job_id == w["job_id"],
                                             Attempt.attempt == w["attempt"]))
        if row is None:
            row = Attempt(cluster_id=cluster.id, job_id=w["job_id"], attempt=w["attempt"])
            s.add(row)
        row.name, row.user_name, row.partition = w["name"], w["user"], w["partition"]
        row.nodelist, row.n_nodes = w["nodelist"], len(w["nodes"])
        row.gpus_per_node = w.get("gpus_per_node", 0)
        row.start_time, row.end_time = _parse_time(w["start"]), _parse_time(w["end"])
        row.elapsed_s, row.state, row.exit_code = w["elapsed_s"], w["state"], w["exit_code"]
        s.flush()
        return row

    def save_diagnosis(self, d: dict[str, Any], *, keep_history: bool = False) -> bool:
        """Store one diagnosis atomically. Returns False when an identical one is already stored."""
        digest = _document_hash(d)
        with self.sessions.begin() as s:
            attempt = self._attempt(s, d["workload"])
            current = s.scalars(select(Diagnosis).where(Diagnosis.attempt_id == attempt.id,
                                                        Diagnosis.is_current.is_(True))).all()
            if any(c.document_hash == digest for c in current):
                return False
            for old in current:
                if keep_history:
                    old.is_current = False
                else:
                    s.delete(old)
            s.add(self._diagnosis_row(attempt, d, digest))
        return True

    def save_many(self, diagnoses: list[dict[str, Any]]) -> int:
        return sum(self.save_diagnosis(d) for d in diagnoses)

    @staticmethod
    def _diagnosis_row(attempt: Attempt, d: dict[str, Any], digest: str) -> Diagnosis:
        rc = d.get("root_cause") or {}
        cov = d["coverage"]
        usable = [c for c in cov if c["collector"] in ("job_output", "node_syslog")]
        ok = sum(c["status"] == "ok" for c in usable) / len(usable) if usable else 0.0
        implicated = set(d["affected_nodes"]) | {c["node"] for c in d["candidates"] if c["node"]}
        return Diagnosis(
            attempt_id=attempt.id, is_current=True, ruleset_version=d["ruleset_version"],
            document_hash=digest, created_at=datetime.now(UTC), outcome=d["outcome"],
            sub_domain=d["sub_domain"], evidence_status=d["evidence_status"], verdict=d["verdict"],
            root_code=rc.get("code"), root_kind=rc.get("kind"), root_time=_parse_time(rc.get("time")),
            coverage_ok=ok, document=d,
            nodes=[DiagnosisNode(node=n) for n in sorted(implicated)],
            events=[EventRow(
                position=e["id"], kind=e["kind"], code=e["code"], node=e["node"],
                time=_parse_time(e["time"]), role=e["role"], demoted_by=e["demoted_by"],
                sub_domain=e["sub_domain"], count=e["count"], summary=e["summary"],
                source_file=e["source"]["file"], source_line=e["source"]["line"],
                source_text=e["source"]["text"]) for e in d["symptoms"]],
            coverage=[CoverageRow(collector=c["collector"], node=c["node"], status=c["status"],
                                  reason=c["reason"], lines=c["lines"], bytes=c["bytes"])
                      for c in cov],
        )
