"""Reading stored diagnoses into pandas frames for the reports."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pandas as pd
from sqlalchemy import select

from slurm_attr.store.models import (
    Attempt,
    Cluster,
    Diagnosis,
    DiagnosisDocument,
    DiagnosisNode,
    QueueEntry,
)
from slurm_attr.store.repository import Store

_RELATIVE = re.compile(r"^(?P<n>\d+)\s*(?P<unit>[mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_when(value: str, now: datetime | None = None) -> datetime:
    """`1d`, `12h`, `30m`, `2w` (before now) or an ISO date/time (UTC when no offset is given),
    between 1970 and 2200."""
    now = now or datetime.now(UTC)
    m = _RELATIVE.match(value.strip())
    try:
        if m:
            when = now - timedelta(**{_UNITS[m["unit"]]: int(m["n"])})
        else:
            when = datetime.fromisoformat(value.strip())
            when = when if when.tzinfo else when.replace(tzinfo=UTC)
    except OverflowError as exc:
        raise ValueError(f"{value!r} reaches before the year 1") from exc
    except ValueError as exc:
        raise ValueError(f"not a duration (1d, 12h, 30m, 2w) or ISO date: {value!r}") from exc
    if not _EARLIEST <= when <= _LATEST:
        raise ValueError(f"{value!r} is outside {_EARLIEST.year}-{_LATEST.year}")
    return when


_EARLIEST, _LATEST = datetime(1970, 1, 1, tzinfo=UTC), datetime(2200, 1, 1, tzinfo=UTC)


@dataclass
class Filters:
    since: datetime
    until: datetime
    cluster: str | None = None
    partition: str | None = None
    user: str | None = None
    node: str | None = None
    sub_domain: str | None = None


COLUMNS = ["diagnosis_id", "cluster", "job_id", "attempt", "name", "user", "partition", "nodelist",
           "n_nodes", "gpus_per_node", "start", "end", "elapsed_s", "state", "exit_code", "outcome",
           "sub_domain", "evidence_status", "root_code", "verdict", "coverage_ok"]


def load_frame(store: Store, f: Filters) -> pd.DataFrame:
    q = (select(Diagnosis.id, Cluster.name, Attempt.job_id, Attempt.attempt, Attempt.name,
                Attempt.user_name, Attempt.partition, Attempt.nodelist, Attempt.n_nodes,
                Attempt.gpus_per_node, Attempt.start_time, Attempt.end_time, Attempt.elapsed_s,
                Attempt.state, Attempt.exit_code, Diagnosis.outcome, Diagnosis.sub_domain,
                Diagnosis.evidence_status, Diagnosis.root_code, Diagnosis.verdict,
                Diagnosis.coverage_ok)
         .join(Attempt, Diagnosis.attempt_id == Attempt.id)
         .join(Cluster, Attempt.cluster_id == Cluster.id)
         .where(Diagnosis.is_current.is_(True), Attempt.end_time >= f.since,
                Attempt.end_time <= f.until))
    for column, value in ((Cluster.name, f.cluster), (Attempt.partition, f.partition),
                          (Attempt.user_name, f.user), (Diagnosis.sub_domain, f.sub_domain)):
        if value:
            q = q.where(column == value)
    if f.node:
        q = q.where(Diagnosis.id.in_(select(DiagnosisNode.diagnosis_id)
                                     .where(DiagnosisNode.node == f.node)))
    with store.engine.connect() as conn:
        rows = [tuple(row) for row in conn.execute(q)]
    df = pd.DataFrame.from_records(rows, columns=COLUMNS)
    if df.empty:
        return df
    for col in ("start", "end"):
        df[col] = pd.to_datetime(df[col], utc=True)
    df["root_code"] = df["root_code"].fillna("")
    df["gpu_hours"] = df["n_nodes"] * df["gpus_per_node"] * df["elapsed_s"] / 3600.0
    return df.sort_values(["end", "cluster", "job_id", "attempt"], ascending=[False, True, True, True])


def load_nodes(store: Store, ids: list[int]) -> pd.DataFrame:
    if not ids:
        return pd.DataFrame(columns=["diagnosis_id", "node"])
    rows: list[tuple[int, str]] = []
    with store.engine.connect() as conn:
        for i in range(0, len(ids), 20000):
            q = select(DiagnosisNode.diagnosis_id, DiagnosisNode.node).where(
                DiagnosisNode.diagnosis_id.in_(ids[i:i + 20000]))
            rows += conn.execute(q).all()
    return pd.DataFrame(rows, columns=["diagnosis_id", "node"])


def load_documents(store: Store, ids: list[int]) -> dict[int, dict]:
    docs: dict[int, dict] = {}
    with store.engine.connect() as conn:
        for i in range(0, len(ids), 2000):
            q = select(DiagnosisDocument.diagnosis_id, DiagnosisDocument.document).where(
                DiagnosisDocument.diagnosis_id.in_(ids[i:i + 2000]))
            docs.update({row[0]: row[1] for row in conn.execute(q)})
    return docs


def load_pages(store: Store, ids: list[int]) -> dict[int, tuple[str | None, str | None]]:
    """Cached job-page bodies: diagnosis id -> (template version, html)."""
    pages: dict[int, tuple[str | None, str | None]] = {}
    with store.engine.connect() as conn:
        for i in range(0, len(ids), 2000):
            q = select(DiagnosisDocument.diagnosis_id, DiagnosisDocument.page_version,
                       DiagnosisDocument.page_html).where(DiagnosisDocument.diagnosis_id.in_(ids[i:i + 2000]))
            pages.update({row[0]: (row[1], row[2]) for row in conn.execute(q)})
    return pages


def load_dead_letters(store: Store) -> pd.DataFrame:
    q = select(QueueEntry.cluster, QueueEntry.job_id, QueueEntry.attempt, QueueEntry.tries,
               QueueEntry.last_error, QueueEntry.updated_at).where(QueueEntry.state == "dead")
    with store.engine.connect() as conn:
        rows = conn.execute(q).all()
    return pd.DataFrame(rows, columns=["cluster", "job_id", "attempt", "tries", "last_error",
                                       "updated_at"])
