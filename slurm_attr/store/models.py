"""SQLAlchemy 2.x models: clusters, job attempts, diagnoses, events, coverage and the work queue."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """A time stored in UTC. SQLite keeps a datetime's wall clock and drops its offset, so an end
    of 14:10-06:00 would come back as 14:10 UTC; converting on the way in keeps both databases
    (and every comparison with a bound time) right."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if isinstance(value, datetime) and value.tzinfo is not None:
            return value.astimezone(UTC)
        return value


class Base(DeclarativeBase):
    pass


class Cluster(Base):
    __tablename__ = "clusters"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)


class Attempt(Base):
    """One attempt of one job (requeues are separate attempts)."""

    __tablename__ = "attempts"
    __table_args__ = (
        UniqueConstraint("cluster_id", "job_id", "attempt", name="uq_attempt"),
        Index("ix_attempts_end", "end_time"),
        # A user's or a partition's newest attempts straight from the index, already in order.
        Index("ix_attempts_user_end", "user_name", "end_time"),
        Index("ix_attempts_partition_end", "partition", "end_time"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    cluster_id: Mapped[int] = mapped_column(ForeignKey("clusters.id"))
    job_id: Mapped[str] = mapped_column(String(64))
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    name: Mapped[str] = mapped_column(String(256), default="")
    user_name: Mapped[str] = mapped_column(String(128), default="")
    partition: Mapped[str] = mapped_column(String(128), default="")
    nodelist: Mapped[str] = mapped_column(Text, default="")
    n_nodes: Mapped[int] = mapped_column(Integer, default=0)
    gpus_per_node: Mapped[int] = mapped_column(Integer, default=0)
    start_time: Mapped[datetime] = mapped_column(UTCDateTime())
    end_time: Mapped[datetime] = mapped_column(UTCDateTime())
    elapsed_s: Mapped[float] = mapped_column(Float, default=0.0)
    state: Mapped[str] = mapped_column(String(32))
    exit_code: Mapped[str] = mapped_column(String(32), default="")
    cluster: Mapped[Cluster] = relationship()
    diagnoses: Mapped[list[Diagnosis]] = relationship(back_populates="attempt",
                                                      cascade="all, delete-orphan")


class Diagnosis(Base):
    __tablename__ = "diagnoses"
    __table_args__ = (
        Index("ix_diagnoses_current", "attempt_id", "is_current"),
        Index("ix_diagnoses_sub_domain", "sub_domain"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    attempt_id: Mapped[int] = mapped_column(ForeignKey("attempts.id", ondelete="CASCADE"))
    is_current: Mapped[bool] = mapped_column(Boolean, default=True)
    ruleset_version: Mapped[str] = mapped_column(String(32))
    document_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    outcome: Mapped[str] = mapped_column(String(32))
    sub_domain: Mapped[str] = mapped_column(String(32))
    evidence_status: Mapped[str] = mapped_column(String(32))
    verdict: Mapped[str] = mapped_column(Text)
    root_code: Mapped[str | None] = mapped_column(String(128))
    root_kind: Mapped[str | None] = mapped_column(String(64))
    root_time: Mapped[datetime | None] = mapped_column(UTCDateTime())
    action: Mapped[str | None] = mapped_column(Text)  # the suggested next step, for the reports
    coverage_ok: Mapped[float] = mapped_column(Float, default=1.0)
    attempt: Mapped[Attempt] = relationship(back_populates="diagnoses")
    body: Mapped[DiagnosisDocument] = relationship(cascade="all, delete-orphan")
    events: Mapped[list[EventRow]] = relationship(cascade="all, delete-orphan")
    nodes: Mapped[list[DiagnosisNode]] = relationship(cascade="all, delete-orphan")
    coverage: Mapped[list[CoverageRow]] = relationship(cascade="all, delete-orphan")


class DiagnosisDocument(Base):
    """The full diagnosis document, apart from the diagnoses table so that report queries over many
    diagnoses scan small rows."""

    __tablename__ = "diagnosis_documents"
    diagnosis_id: Mapped[int] = mapped_column(ForeignKey("diagnoses.id", ondelete="CASCADE"),
                                              primary_key=True)
    document: Mapped[dict] = mapped_column(JSON)


class DiagnosisNode(Base):
    """Nodes a diagnosis implicates (root cause or candidates): the per-node history index."""

    __tablename__ = "diagnosis_nodes"
    __table_args__ = (Index("ix_diagnosis_nodes_node", "node"),)
    diagnosis_id: Mapped[int] = mapped_column(ForeignKey("diagnoses.id", ondelete="CASCADE"),
                                              primary_key=True)
    node: Mapped[str] = mapped_column(String(128), primary_key=True)


class EventRow(Base):
    __tablename__ = "events"
    __table_args__ = (Index("ix_events_diagnosis", "diagnosis_id"), Index("ix_events_node", "node"))
    id: Mapped[int] = mapped_column(primary_key=True)
    diagnosis_id: Mapped[int] = mapped_column(ForeignKey("diagnoses.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(64))
    code: Mapped[str | None] = mapped_column(String(128))
    node: Mapped[str | None] = mapped_column(String(128))
    time: Mapped[datetime | None] = mapped_column(UTCDateTime())
    role: Mapped[str] = mapped_column(String(16))
    demoted_by: Mapped[str | None] = mapped_column(String(64))
    sub_domain: Mapped[str | None] = mapped_column(String(32))
    count: Mapped[int] = mapped_column(Integer, default=1)
    summary: Mapped[str] = mapped_column(Text)
    source_file: Mapped[str] = mapped_column(Text)
    source_line: Mapped[int] = mapped_column(Integer)
    source_text: Mapped[str] = mapped_column(Text)


class CoverageRow(Base):
    __tablename__ = "coverage"
    id: Mapped[int] = mapped_column(primary_key=True)
    diagnosis_id: Mapped[int] = mapped_column(ForeignKey("diagnoses.id", ondelete="CASCADE"))
    collector: Mapped[str] = mapped_column(String(32))
    node: Mapped[str | None] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(Text)
    lines: Mapped[int] = mapped_column(Integer, default=0)
    bytes: Mapped[int] = mapped_column(Integer, default=0)


class QueueEntry(Base):
    """A job end to diagnose; leases let a crashed worker's job be taken again.

    One row per epilog run (`entry` is its spool file name) or per backfilled attempt. The
    attempt an epilog run is about is found by its end time, not by SLURM_JOB_RESTART_COUNT: on
    22.05 the epilog of a requeued attempt already reports the next attempt's count."""

    __tablename__ = "queue"
    __table_args__ = (
        UniqueConstraint("cluster", "entry", name="uq_queue_entry"),
        Index("ix_queue_state", "state", "not_before"),
        Index("ix_queue_job", "cluster", "job_id"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    cluster: Mapped[str] = mapped_column(String(128))
    entry: Mapped[str] = mapped_column(String(128))
    job_id: Mapped[str] = mapped_column(String(64))
    attempt: Mapped[int] = mapped_column(Integer, default=0)  # restart count as reported
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())  # when the epilog ran
    state: Mapped[str] = mapped_column(String(16), default="pending")  # pending|leased|done|dead
    payload: Mapped[dict] = mapped_column(JSON)
    tries: Mapped[int] = mapped_column(Integer, default=0)
    not_before: Mapped[datetime] = mapped_column(UTCDateTime())
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    lease_owner: Mapped[str | None] = mapped_column(String(128))  # host:pid of the worker
    source: Mapped[str] = mapped_column(String(16), default="epilog")  # epilog|backfill|manual
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
