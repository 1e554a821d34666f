"""Reading stored diagnoses into pandas frames for the reports."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

import pandas as pd
from sqlalchemy import (
    Connection,
    Dialect,
    Float,
    Integer,
    Numeric,
    Select,
    and_,
    bindparam,
    cast,
    func,
    or_,
    select,
)

from slurm_attr.store.models import (
    Attempt,
    Cluster,
    CoverageRow,
    Diagnosis,
    DiagnosisDocument,
    DiagnosisNode,
    EventRow,
    QueueEntry,
    UTCDateTime,
)
from slurm_attr.store.queue import aware
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
           "sub_domain", "evidence_status", "root_code", "verdict", "coverage_ok", "action",
           "root_node", "recovered", "document_hash"]


def _root_node():
    """The node of the root-cause event (None for a job-level cause), one index lookup a row."""
    return (select(EventRow.node).where(EventRow.diagnosis_id == Diagnosis.id, EventRow.role == "root")
            .order_by(EventRow.position).limit(1).scalar_subquery())


def _recovered():
    """A requeued attempt whose job ran again and completed (the hook's later run was skipped as
    COMPLETED): listed in reports, but not counted as a failed job."""
    return (Attempt.state == "REQUEUED") & select(QueueEntry.id).where(
        QueueEntry.cluster == Cluster.name, QueueEntry.job_id == Attempt.job_id,
        QueueEntry.state == "skipped", QueueEntry.last_error == "COMPLETED",
        QueueEntry.ended_at > Attempt.end_time).exists()


def load_frame(store: Store, f: Filters) -> pd.DataFrame:
    q = (select(Diagnosis.id, Cluster.name, Attempt.job_id, Attempt.attempt, Attempt.name,
                Attempt.user_name, Attempt.partition, Attempt.nodelist, Attempt.n_nodes,
                Attempt.gpus_per_node, Attempt.start_time, Attempt.end_time, Attempt.elapsed_s,
                Attempt.state, Attempt.exit_code, Diagnosis.outcome, Diagnosis.sub_domain,
                Diagnosis.evidence_status, Diagnosis.root_code, Diagnosis.verdict,
                Diagnosis.coverage_ok, Diagnosis.action, _root_node(), _recovered(),
                Diagnosis.document_hash)
         .join(Attempt, Diagnosis.attempt_id == Attempt.id)
         .join(Cluster, Attempt.cluster_id == Cluster.id)
         .where(Diagnosis.is_current.is_(True), Attempt.end_time >= f.since,
                Attempt.end_time <= f.until))
    # Each filter may name several values, "gpu,host" (it silently matched nothing before).
    for name, values in _filter_values(f, None).items():
        if values:
            q = q.where(_filter(name, values))
    with store.engine.connect() as conn:
        rows = [tuple(row) for row in conn.execute(q)]
    df = pd.DataFrame.from_records(rows, columns=COLUMNS)
    query = {"since": f.since.isoformat(), "until": f.until.isoformat(), "cluster": f.cluster,
             "partition": f.partition, "user": f.user, "node": f.node, "sub_domain": f.sub_domain}
    df.attrs["query"] = query  # the reports say what they answer
    if df.empty:
        return df
    for col in ("start", "end"):
        df[col] = pd.to_datetime(df[col], utc=True)
    df["root_code"] = df["root_code"].fillna("")
    df["action"] = df["action"].fillna("")
    df["gpu_hours"] = df["n_nodes"] * df["gpus_per_node"] * df["elapsed_s"] / 3600.0
    # Clusters without GPUs lose node-hours: the reports fall back to them (and say so).
    df["node_hours"] = df["n_nodes"] * df["elapsed_s"] / 3600.0
    df["root_node"] = df["root_node"].fillna("")
    df["recovered"] = df["recovered"].fillna(False).astype(bool)
    df = df.sort_values(["end", "cluster", "job_id", "attempt"], ascending=[False, True, True, True])
    df.attrs["query"] = query
    return df


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


def coverage_gaps(store: Store, ids: list[int], top: int = 10) -> list[dict[str, Any]]:
    """What the diagnoses could not see, per source and status (missing, error, refused,
    truncated), with the nodes it happened on most: a collector broken fleet-wide shows here
    before anyone trusts its verdicts."""
    counts: dict[tuple[str, str], int] = {}
    nodes: dict[tuple[str, str], dict[str, int]] = {}
    with store.engine.connect() as conn:
        for i in range(0, len(ids), 20000):
            q = (select(CoverageRow.collector, CoverageRow.status, CoverageRow.node)
                 .where(CoverageRow.diagnosis_id.in_(ids[i:i + 20000]), CoverageRow.status != "ok"))
            for collector, status, node in conn.execute(q):
                key = (collector, status)
                counts[key] = counts.get(key, 0) + 1
                if node:
                    per = nodes.setdefault(key, {})
                    per[node] = per.get(node, 0) + 1
    gaps = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return [{"collector": c, "status": st, "n": n,
             "nodes": sorted(nodes.get((c, st), {}).items(), key=lambda kv: (-kv[1], kv[0]))[:5]}
            for (c, st), n in gaps]


def load_dead_letters(store: Store) -> pd.DataFrame:
    q = select(QueueEntry.cluster, QueueEntry.job_id, QueueEntry.attempt, QueueEntry.tries,
               QueueEntry.last_error, QueueEntry.updated_at).where(QueueEntry.state == "dead")
    with store.engine.connect() as conn:
        rows = conn.execute(q).all()
    return pd.DataFrame(rows, columns=["cluster", "job_id", "attempt", "tries", "last_error",
                                       "updated_at"])


# ---------------------------------------------------------------------------- service queries
# Small, indexed queries for the HTTP service and the live dashboard: one page of rows, one
# document, one node, counts. Unlike load_frame they never read a whole window into memory.
MAX_FILTER_VALUES = 100  # values one filter may list (each is a parameter of the statement)


def _list_of(value: str | None) -> list[str]:
    """A filter value that may name several: "gpu,host" (the command line and the API); each
    value once, in the order given."""
    return list(dict.fromkeys(v.strip() for v in (value or "").split(",") if v.strip()))


def too_many_values(**filters: str | None) -> str | None:
    """The first filter listing more than MAX_FILTER_VALUES values, named; None when all fit."""
    return next((name for name, value in filters.items() if len(_list_of(value)) > MAX_FILTER_VALUES),
                None)


def _base_rows(f: Filters, outcome: str | None = None, q: str | None = None, *,
               root_node: bool = False) -> Select:
    """Current diagnoses in the window with the filters applied, as small rows (with the root
    node only when asked: it is a lookup per row, wasted on counts over a whole window)."""
    stmt = _rows(root_node).where(Attempt.end_time >= f.since, Attempt.end_time <= f.until)
    for name, values in _filter_values(f, outcome).items():
        if values:
            stmt = stmt.where(_filter(name, values))
    if q and q.strip():
        stmt = stmt.where(_search()).params(**_search_params(q.strip()))
    return stmt


def _filter_values(f: Filters, outcome: str | None) -> dict[str, list[str]]:
    """Each filter's values (a comma list or one), by name; empty when not filtered."""
    return {"cluster": _list_of(f.cluster), "partition": _list_of(f.partition),
            "user": _list_of(f.user), "sub_domain": _list_of(f.sub_domain),
            "outcome": _list_of(outcome), "node": _list_of(f.node)}


def _filter(name: str, values: Any) -> Any:
    """The condition of one filter; `values` are the values or bound parameters."""
    if name == "node":
        return Diagnosis.id.in_(select(DiagnosisNode.diagnosis_id).where(DiagnosisNode.node.in_(values)))
    column = {"cluster": Cluster.name, "partition": Attempt.partition, "user": Attempt.user_name,
              "sub_domain": Diagnosis.sub_domain, "outcome": Diagnosis.outcome}[name]
    return column.in_(values)


def _rows(root_node: bool) -> Select:
    """The small rows of current diagnoses, before any filter."""
    gpu_hours = (Attempt.n_nodes * Attempt.gpus_per_node * Attempt.elapsed_s / 3600.0).label("gpu_hours")
    node_hours = (Attempt.n_nodes * Attempt.elapsed_s / 3600.0).label("node_hours")
    stmt = (select(Attempt.id.label("attempt_row"), Diagnosis.id.label("diagnosis_id"),
                   Cluster.name.label("cluster"), Attempt.job_id, Attempt.attempt, Attempt.name,
                   Attempt.user_name.label("user"), Attempt.partition, Attempt.nodelist,
                   Attempt.n_nodes, Attempt.gpus_per_node, Attempt.start_time.label("start"),
                   Attempt.end_time.label("end"), Attempt.elapsed_s, Attempt.state, Attempt.exit_code,
                   Diagnosis.outcome, Diagnosis.sub_domain, Diagnosis.evidence_status,
                   Diagnosis.root_code, Diagnosis.verdict, Diagnosis.coverage_ok, gpu_hours,
                   node_hours)
            .join(Attempt, Diagnosis.attempt_id == Attempt.id)
            .join(Cluster, Attempt.cluster_id == Cluster.id)
            .where(Diagnosis.is_current.is_(True)))
    return stmt.add_columns(_root_node().label("root_node")) if root_node else stmt


def _search():
    """Job id (or its start), user, node, or root-cause text; the text is bound as q, q_prefix and
    q_like (_search_params)."""
    q, prefix, like = bindparam("q"), bindparam("q_prefix"), bindparam("q_like")
    return or_(Attempt.job_id == q, Attempt.job_id.like(prefix, escape="\\"),
               Attempt.user_name == q, Attempt.name.ilike(like, escape="\\"),
               Diagnosis.root_code.ilike(like, escape="\\"), Diagnosis.verdict.ilike(like, escape="\\"),
               Diagnosis.sub_domain == q,
               Diagnosis.id.in_(select(DiagnosisNode.diagnosis_id).where(DiagnosisNode.node == q)))


def _search_params(q: str) -> dict[str, str]:
    plain = q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return {"q": q, "q_prefix": f"{plain}%", "q_like": f"%{plain}%"}


def _utc(when: datetime | str | None) -> datetime | None:
    """A stored time as an aware one: SQLite hands back naive UTC times, and text from max()."""
    return aware(datetime.fromisoformat(when) if isinstance(when, str) else when)


def _row(m) -> dict:
    row = dict(m)
    row["start"], row["end"] = _utc(row["start"]), _utc(row["end"])
    return row


_LIST = ("cluster", "job_id", "attempt", "name", "user", "partition", "nodelist", "n_nodes", "start",
         "end", "elapsed_s", "state", "exit_code", "outcome", "sub_domain", "evidence_status",
         "root_code", "verdict", "gpu_hours", "node_hours")


def list_diagnoses(store: Store, f: Filters, *, outcome: str | None = None, limit: int = 100,
                   after: tuple[datetime, int] | None = None, q: str | None = None,
                   ) -> tuple[list[dict], tuple[datetime, int] | None]:
    """A page of current diagnoses as rows (times aware, in UTC; orjson writes them as ISO 8601
    faster than isoformat()), newest first, and the key to continue after it (None at the end).
    Keyset paging on (end time, attempt row) follows the end-time index, so page 1000 costs what
    page 1 does. This is the service's busiest query and per-row overhead was most of its time:
    the statement is built once per request shape, rows are plain tuples, and on PostgreSQL they
    come straight from the driver's binary cursor."""
    q = q.strip() if q else None
    lists = {name: values for name, values in _filter_values(f, outcome).items() if values}
    shape = (tuple((name, len(values)) for name, values in lists.items()), bool(q), after is not None)
    params: dict[str, Any] = {"since": f.since, "until": f.until, "limit": limit + 1}
    for name, values in lists.items():
        params.update({f"{name}_{i}": v for i, v in enumerate(values)})
    if q:
        params.update(_search_params(q))
    if after is not None:
        params.update(after_end=after[0], after_id=after[1])
    with store.engine.connect() as conn:
        if conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg":
            raw: Sequence[Sequence[Any]] = _fetch_psycopg(conn, shape, params)
        else:
            raw = conn.execute(_list_statement(*shape), params).all()
    key = (raw[limit - 1][_LIST.index("end")], raw[limit - 1][-1]) if len(raw) > limit else None
    rows = [dict(zip(_LIST, r, strict=False)) for r in raw[:limit]]
    if store.engine.dialect.name != "postgresql":  # its times come back aware, in UTC
        for row in rows:
            row["start"], row["end"] = _utc(row["start"]), _utc(row["end"])
    return rows, key


def _fetch_psycopg(conn: Connection, shape: tuple, params: dict[str, Any]) -> list[tuple]:
    """The list statement's rows from psycopg's binary cursor, prepared on the server: a third
    of the client time SQLAlchemy's result rows took for the same tuples."""
    sql, constants = _psycopg_text(conn.dialect, *shape)
    cursor = conn.connection.driver_connection.cursor(binary=True)  # type: ignore[union-attr]
    try:
        cursor.execute(sql, {**constants, **params}, prepare=True)
        return cursor.fetchall()
    finally:
        cursor.close()


@lru_cache(maxsize=256)
def _psycopg_text(dialect: Dialect, filtered: tuple[tuple[str, int], ...], searched: bool, paged: bool
                  ) -> tuple[str, dict[str, Any]]:
    """The list statement of one shape as psycopg's SQL text and its constant parameters."""
    compiled = _list_statement(filtered, searched, paged).compile(dialect=dialect)
    return str(compiled), {k: v for k, v in compiled.params.items() if v is not None}


_WHEN = UTCDateTime()


def _rounded(hours: Any) -> Any:
    """Hours to 3 decimals, 0.0 when unknown, by the database (per row in Python it cost more)."""
    return cast(func.round(cast(func.coalesce(hours, 0.0), Numeric), 3), Float).label(hours.name)


@lru_cache(maxsize=256)
def _list_statement(filtered: tuple[tuple[str, int], ...], searched: bool, paged: bool) -> Select:
    """The list query for one shape of request (which filters with how many values, a search, a
    page key), built once with bound parameters: building the statement cost more than running
    it. Each filter value is a parameter of its own (`user_0`, `user_1`), so the text is fixed
    for the shape and one value reads as `= $1` to the planner (an index in end-time order)."""
    stmt = _rows(False).where(Attempt.end_time >= bindparam("since", type_=_WHEN),
                              Attempt.end_time <= bindparam("until", type_=_WHEN))
    for name, count in filtered:
        stmt = stmt.where(_filter(name, [bindparam(f"{name}_{i}") for i in range(count)]))
    if searched:
        stmt = stmt.where(_search())
    columns = [_rounded(stmt.selected_columns[k]) if k.endswith("_hours") else stmt.selected_columns[k]
               for k in _LIST] + [Attempt.id]
    stmt = stmt.with_only_columns(*columns, maintain_column_froms=True)
    if paged:
        end, row_id = bindparam("after_end", type_=_WHEN), bindparam("after_id", type_=Integer)
        stmt = stmt.where(or_(Attempt.end_time < end, and_(Attempt.end_time == end, Attempt.id < row_id)))
    order_end: Any = Attempt.end_time
    if any(name == "node" for name, _ in filtered):
        # A node has few rows: read them by its own index and sort them. Ordered by the bare
        # column, PostgreSQL walks the end-time index instead and filters ~15,000 rows to find 50
        # of one node's among 100,000; coalesce() hides it. (A user or a partition has an index
        # by end time of its own.)
        order_end = func.coalesce(Attempt.end_time, Attempt.end_time)
    return stmt.order_by(order_end.desc(), Attempt.id.desc()).limit(bindparam("limit"))


SORTABLE = {"job": Attempt.job_id, "cluster": Cluster.name, "user": Attempt.user_name,
            "partition": Attempt.partition, "end": Attempt.end_time, "state": Attempt.state,
            "outcome": Diagnosis.outcome, "sub_domain": Diagnosis.sub_domain,
            "root_code": Diagnosis.root_code, "name": Attempt.name, "attempt": Attempt.attempt}


def table_page(store: Store, f: Filters, *, outcome: str | None = None, q: str | None = None,
               sort: str = "end", descending: bool = True, offset: int = 0, limit: int = 100,
               ) -> tuple[list[dict], int]:
    """One page of the dashboard's table, sorted by a column, and how many rows match."""
    base = _base_rows(f, outcome, q, root_node=True)
    column = SORTABLE.get(sort)
    key: Any = base.selected_columns.gpu_hours if sort == "gpu_hours" else \
        (column if column is not None else Attempt.end_time)
    order = [key.desc() if descending else key.asc(), Attempt.id.desc()]
    with store.engine.connect() as conn:
        counted = _base_rows(f, outcome, q).subquery()
        total = conn.execute(select(func.count()).select_from(counted)).scalar_one()
        raw = conn.execute(base.order_by(*order).offset(offset).limit(limit)).mappings().all()
    return [_row(m) for m in raw], total


def find_attempts(store: Store, job_ids: list[str], attempt: int) -> list[tuple[int, str, str, int]]:
    """Current diagnoses of these job ids' attempt: (diagnosis id, cluster, job id, attempt)."""
    stmt = (select(Diagnosis.id, Cluster.name, Attempt.job_id, Attempt.attempt)
            .join(Attempt, Diagnosis.attempt_id == Attempt.id)
            .join(Cluster, Attempt.cluster_id == Cluster.id)
            .where(Attempt.job_id.in_(job_ids), Attempt.attempt == attempt,
                   Diagnosis.is_current.is_(True)).order_by(Diagnosis.id.desc()))
    with store.engine.connect() as conn:
        return [(r[0], r[1], r[2], r[3]) for r in conn.execute(stmt)]


def find_document(store: Store, cluster: str, job_id: str, attempt: int) -> dict | None:
    """The current diagnosis document of one attempt."""
    stmt = (select(DiagnosisDocument.document)
            .join(Diagnosis, DiagnosisDocument.diagnosis_id == Diagnosis.id)
            .join(Attempt, Diagnosis.attempt_id == Attempt.id)
            .join(Cluster, Attempt.cluster_id == Cluster.id)
            .where(Cluster.name == cluster, Attempt.job_id == job_id, Attempt.attempt == attempt,
                   Diagnosis.is_current.is_(True))
            .order_by(Diagnosis.id.desc()).limit(1))
    with store.engine.connect() as conn:
        return conn.execute(stmt).scalar()


def node_causes(store: Store, node: str, f: Filters, recent: int = 50) -> dict:
    """The failures that implicate a node, grouped by root cause, and the most recent ones."""
    g = Filters(f.since, f.until, f.cluster, f.partition, f.user, node, f.sub_domain)
    rows = _base_rows(g).subquery()
    grouped = (select(rows.c.sub_domain, rows.c.root_code, func.count().label("failures"),
                      func.max(rows.c.end).label("last_end"))
               .group_by(rows.c.sub_domain, rows.c.root_code)
               .order_by(func.count().desc(), rows.c.sub_domain, rows.c.root_code))
    with store.engine.connect() as conn:
        causes = [dict(m) for m in conn.execute(grouped).mappings().all()]
    for c in causes:
        c["last_end"] = _utc(c["last_end"])
    latest = list_diagnoses(store, g, limit=recent)[0] if recent else []
    return {"node": node, "failures": sum(c["failures"] for c in causes), "causes": causes,
            "recent": latest}


def summary_counts(store: Store, f: Filters, top: int = 25) -> dict:
    """What the overview page counts, done in the database."""
    rows = _base_rows(f).subquery()
    with store.engine.connect() as conn:
        total, hours = conn.execute(select(func.count(),
                                           func.coalesce(func.sum(rows.c.gpu_hours), 0.0))).one()
        by: dict[str, dict[str, int]] = {}
        for key in ("outcome", "sub_domain", "cluster"):
            col = rows.c[key]
            by[key] = dict(conn.execute(select(col, func.count()).group_by(col)
                                        .order_by(func.count().desc(), col)).all())
        lost = dict(conn.execute(select(rows.c.sub_domain, func.sum(rows.c.gpu_hours))
                                 .group_by(rows.c.sub_domain)
                                 .order_by(func.sum(rows.c.gpu_hours).desc())).all())
        causes = [dict(m) for m in conn.execute(
            select(rows.c.sub_domain, rows.c.root_code, func.count().label("n"))
            .group_by(rows.c.sub_domain, rows.c.root_code)
            .order_by(func.count().desc(), rows.c.sub_domain).limit(15)).mappings()]
        nodes = [dict(m) for m in conn.execute(
            select(DiagnosisNode.node, func.count().label("failures"))
            .join(rows, rows.c.diagnosis_id == DiagnosisNode.diagnosis_id)
            .group_by(DiagnosisNode.node).order_by(func.count().desc(), DiagnosisNode.node)
            .limit(top)).mappings()]
        dead = conn.execute(select(func.count()).select_from(QueueEntry)
                            .where(QueueEntry.state == "dead")).scalar_one()
    return {"total": total, "gpu_hours": float(hours or 0.0), "by_outcome": by["outcome"],
            "by_sub_domain": by["sub_domain"], "by_cluster": by["cluster"],
            "gpu_hours_by_sub_domain": {k: float(v or 0.0) for k, v in lost.items()},
            "causes": causes, "nodes": nodes, "dead_letters": dead}


def metric_counts(store: Store) -> dict:
    """Current diagnoses by (outcome, sub_domain, cluster) and queue rows by state."""
    with store.engine.connect() as conn:
        diagnoses = conn.execute(
            select(Diagnosis.outcome, Diagnosis.sub_domain, Cluster.name, func.count())
            .join(Attempt, Diagnosis.attempt_id == Attempt.id)
            .join(Cluster, Attempt.cluster_id == Cluster.id)
            .where(Diagnosis.is_current.is_(True))
            .group_by(Diagnosis.outcome, Diagnosis.sub_domain, Cluster.name)).all()
        queue = conn.execute(select(QueueEntry.state, func.count()).group_by(QueueEntry.state)).all()
    return {"diagnoses": [tuple(r) for r in diagnoses], "queue": dict(queue)}


def list_nodes(store: Store, f: Filters, limit: int | None = 5000) -> list[dict]:
    """Every node implicated in the window: failures, the most common sub-domain (ties go to the
    first name), the last one; most failures first. The static site and the dashboard both list
    nodes with this."""
    rows = _base_rows(f).subquery()
    pairs = (select(DiagnosisNode.node, rows.c.sub_domain, func.count().label("n"),
                    func.max(rows.c.end).label("last_end"))
             .join(rows, rows.c.diagnosis_id == DiagnosisNode.diagnosis_id)
             .group_by(DiagnosisNode.node, rows.c.sub_domain))
    with store.engine.connect() as conn:
        found = conn.execute(pairs).all()
    nodes: dict[str, dict] = {}
    for node, sub_domain, n, last in found:
        last = _utc(last)
        entry = nodes.setdefault(node, {"node": node, "failures": 0, "top": sub_domain, "top_n": 0,
                                        "last_end": last})
        entry["failures"] += n
        if n > entry["top_n"] or (n == entry["top_n"] and (sub_domain or "") < (entry["top"] or "")):
            entry["top"], entry["top_n"] = sub_domain, n
        if last is not None and (entry["last_end"] is None or last > entry["last_end"]):
            entry["last_end"] = last
    ordered = sorted(nodes.values(), key=lambda e: (-e["failures"], e["node"]))
    return ordered if limit is None else ordered[:limit]


def node_timelines(store: Store, nodes: list[str], f: Filters, per_node: int = 100) -> dict[str, dict]:
    """What happened on these nodes in the window, newest first: the root-cause events of the
    failures they had, and the state changes (DOWN/DRAIN with the reason) diagnoses recorded.
    Returns node -> {"events": [...], "state": the latest state change or None}."""
    if not nodes:
        return {}
    stmt = (select(EventRow.node, EventRow.time, EventRow.role, EventRow.kind, EventRow.code,
                   EventRow.summary, EventRow.sub_domain, Cluster.name, Attempt.job_id, Attempt.attempt,
                   Attempt.end_time)
            .join(Diagnosis, EventRow.diagnosis_id == Diagnosis.id)
            .join(Attempt, Diagnosis.attempt_id == Attempt.id)
            .join(Cluster, Attempt.cluster_id == Cluster.id)
            .where(Diagnosis.is_current.is_(True), Attempt.end_time >= f.since,
                   Attempt.end_time <= f.until,
                   or_(EventRow.role == "root", EventRow.kind == "node_state_change")))
    out: dict[str, dict] = {}
    with store.engine.connect() as conn:
        for i in range(0, len(nodes), 500):
            for r in conn.execute(stmt.where(EventRow.node.in_(nodes[i:i + 500]))).mappings():
                row = dict(r)
                row["time"] = _utc(row["time"] or row["end_time"])
                out.setdefault(row["node"], {"events": [], "state": None})["events"].append(row)
    for entry in out.values():
        entry["events"].sort(key=lambda e: e["time"] or datetime.min.replace(tzinfo=UTC), reverse=True)
        entry["state"] = next((e for e in entry["events"] if e["kind"] == "node_state_change"), None)
        entry["events"] = entry["events"][:per_node]
    return out
