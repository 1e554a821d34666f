"""SQLite: times stored before 0006 from a non-UTC offset are put into UTC

SQLite keeps a datetime's wall clock and drops its offset, so an attempt that ended at
14:10-06:00 was stored as 14:10 and read back as 14:10 UTC, six hours early. The store now
converts every time to UTC on the way in (models.UTCDateTime); this rewrites the times already
stored from each diagnosis document, which holds them with their offsets. PostgreSQL's
timestamptz was always right and is left alone.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_STORED = "%Y-%m-%d %H:%M:%S.%f"  # SQLAlchemy's SQLite datetime format


def _utc(value: str | None) -> str | None:
    """The stored form of a document's time when its offset is not UTC's (else it was right)."""
    when = datetime.fromisoformat(value) if value else None
    if when is None or when.utcoffset() in (None, timedelta(0)):
        return None
    return when.astimezone(UTC).strftime(_STORED)


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    # Only documents whose times carry another offset were stored wrong (a document writes all
    # its times in the workload's zone); a UTC cluster's rows are left as they are.
    rows = bind.execute(sa.text(
        "SELECT d.id, d.attempt_id, dd.document FROM diagnoses d "
        "JOIN diagnosis_documents dd ON dd.diagnosis_id = d.id "
        "WHERE json_extract(dd.document, '$.workload.end') NOT LIKE '%+00:00'")).all()
    attempts, roots, events = [], [], []
    for diag_id, attempt_id, document in rows:
        doc = json.loads(document) if isinstance(document, str) else document
        w = doc.get("workload") or {}
        start, end = _utc(w.get("start")), _utc(w.get("end"))
        if start and end:  # both carry the workload's zone
            attempts.append({"s": start, "e": end, "i": attempt_id})
        root = _utc((doc.get("root_cause") or {}).get("time"))
        if root:
            roots.append({"t": root, "i": diag_id})
        events += [{"t": when, "d": diag_id, "p": e.get("id")}
                   for e in doc.get("symptoms") or [] if (when := _utc(e.get("time")))]
    for sql, params in (
            ("UPDATE attempts SET start_time = :s, end_time = :e WHERE id = :i", attempts),
            ("UPDATE diagnoses SET root_time = :t WHERE id = :i", roots),
            ("UPDATE events SET time = :t WHERE diagnosis_id = :d AND position = :p", events)):
        if params:
            bind.execute(sa.text(sql), params)


def downgrade() -> None:
    pass  # the times were wrong before; nothing to restore
