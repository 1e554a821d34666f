"""The attribution service: the engine and the store over HTTP (`slurm-attr serve`).

JSON endpoints live under /v1; the live dashboard (same templates as the static report) at /.
Every route but /healthz needs a bearer token (service.auth). A POSTed bundle is unpacked into
a private directory (service.archive), diagnosed by the same code as `slurm-attr analyze`, and
answered with the very bytes `analyze --format json` prints.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import anyio
import orjson
from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from sqlalchemy import text
from starlette.concurrency import run_in_threadpool

from slurm_attr.analyze import analyze_bundle
from slurm_attr.config import Settings
from slurm_attr.output.diagnosis import dumps
from slurm_attr.report.query import (
    MAX_FILTER_VALUES,
    Filters,
    find_document,
    list_diagnoses,
    metric_counts,
    node_causes,
    parse_when,
    summary_counts,
    too_many_values,
)
from slurm_attr.scope.static import BundleError
from slurm_attr.service import metrics
from slurm_attr.service.archive import (
    ArchiveError,
    Caps,
    bundle_root,
    extract_tar_gz,
    private_dir,
    write_inline,
)
from slurm_attr.service.auth import COOKIE, Tokens, allows
from slurm_attr.service.nodes import NodeStates, valid_node
from slurm_attr.store import queue
from slurm_attr.store.repository import Store, make_engine

log = logging.getLogger("slurm_attr.service")
GZIP_TYPES = {"application/gzip", "application/x-gzip", "application/x-tar+gzip",
              "application/x-compressed-tar"}
JSON_TYPE = "application/json"
_bearer = HTTPBearer(auto_error=False, description="A token from the service's token file.")


class Unauthorized(HTTPException):
    def __init__(self) -> None:
        super().__init__(401, "a bearer token is needed (Authorization: Bearer <token>)",
                         headers={"WWW-Authenticate": "Bearer"})


def need(scope: str) -> Callable[..., Awaitable[str]]:
    """A dependency that admits a token of `scope` (submit implies read). The dashboard's cookie
    counts for GET only: a browser sends it by itself, so it must never authorise a write."""

    # async: a plain def dependency would cost a thread hop on every request.
    async def check(request: Request,
                    cred: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> str:
        tokens: Tokens = request.app.state.tokens
        presented = cred.credentials if cred else None
        if presented is None and request.method in ("GET", "HEAD"):
            presented = request.cookies.get(COOKIE)
        found = tokens.scope_of(presented)
        if found is None:
            raise Unauthorized()
        if not allows(found, scope):
            raise HTTPException(403, f"this token's scope is '{found}'; '{scope}' is needed")
        return found

    return check


class SlurmJob(BaseModel):
    cluster: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
    job_id: str = Field(pattern=r"^[0-9]{1,18}(_[0-9]{1,9})?$")
    attempt: int | None = Field(default=None, ge=0, le=100_000)


def _window(since: str, until: str | None) -> tuple[datetime, datetime]:
    try:
        return parse_when(since), parse_when(until) if until else datetime.now(UTC)
    except ValueError as exc:
        raise HTTPException(400, f"since/until: {exc}") from exc


def _cursor_out(key: tuple[datetime, int] | None) -> str | None:
    if key is None:
        return None
    raw = json.dumps([key[0].isoformat(), key[1]]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _cursor_in(cursor: str | None) -> tuple[datetime, int] | None:
    if not cursor:
        return None
    try:
        end, row = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        return datetime.fromisoformat(end), int(row)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise HTTPException(400, "cursor: not one this service gave out") from exc


def _row_json(r: dict[str, Any], base: str) -> dict[str, Any]:
    r["url"] = f"{base}/v1/diagnoses/{r['cluster']}/{r['job_id']}/{r['attempt']}"
    return r


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


def _json(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """JSON with orjson: encoding a page of rows cost more than reading it from the database."""
    body = orjson.dumps(payload, default=_iso, option=orjson.OPT_NON_STR_KEYS)
    return Response(body, status_code=status, media_type=JSON_TYPE, headers=headers)


# Concurrent short reads on PostgreSQL, and the connections kept open for them. More clients
# than this wait in the process for a connection instead of overflowing the pool: an overflow
# connection is closed when it comes back, and the next one costs a new server process (7% of
# the list requests at 8 clients) and loses its prepared statements.
READ_CONNECTIONS = 8


class Reads:
    """The engine the read-only endpoints use. On PostgreSQL it has its own pool, in autocommit
    mode: a lone SELECT then costs one round trip, not three (BEGIN, the query, ROLLBACK when the
    connection goes back to the pool); 20% of the list endpoint's time."""

    def __init__(self, store: Store) -> None:
        self.engine = store.engine
        self.limiter: anyio.CapacityLimiter | None = None
        if store.engine.dialect.name == "postgresql":
            self.engine = make_engine(store.engine.url.render_as_string(hide_password=False),
                                      pool_size=READ_CONNECTIONS, max_overflow=0,
                                      isolation_level="AUTOCOMMIT")
            self.limiter = anyio.CapacityLimiter(READ_CONNECTIONS)

    def dispose(self) -> None:
        if self.limiter is not None:  # the engine is ours, not the store's
            self.engine.dispose()


class Drainer:
    """Runs the worker's drain on a thread when `serve --drain` is on and work was queued."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store, self.settings = store, settings
        self.lock, self.again = threading.Lock(), False
        self.thread: threading.Thread | None = None

    def kick(self) -> None:
        with self.lock:
            self.again = True
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="drain", daemon=True)
                self.thread.start()

    def _run(self) -> None:
        from slurm_attr.worker.loop import Worker  # imports the Slurm client only when used

        while True:
            with self.lock:
                if not self.again:
                    return
                self.again = False
            try:
                Worker(self.store, self.settings).drain()
            except Exception:  # the queue keeps the job; a worker or the next kick retries it
                log.exception("in-process drain failed")


def refresh_statistics(store: Store) -> None:
    """Give the query planner fresh table statistics. Without them SQLite reads a filtered page
    through the sub-domain index and sorts the whole window (4x slower than walking the end-time
    index); PostgreSQL's autovacuum gets there too, but only some time after a bulk load."""
    try:
        with store.engine.begin() as conn:
            conn.execute(text("ANALYZE"))
    except Exception as exc:  # statistics only speed queries up; never fail over them
        log.warning("could not refresh planner statistics: %s", str(exc).splitlines()[0])


class Statistics:
    """Refreshes the planner statistics now and then while the service runs (the store grows)."""

    def __init__(self, store: Store, every_s: float = 3600.0) -> None:
        self.store, self.every_s, self.stop = store, every_s, threading.Event()
        self.thread = threading.Thread(target=self._run, name="statistics", daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(self.every_s):
            refresh_statistics(self.store)


SERVE_ENV = "SLURM_ATTR_SERVE"  # how `serve --workers N` tells each worker process its arguments


def from_environment() -> FastAPI:
    """The app for one of several uvicorn worker processes (`serve --workers N`): each process
    builds its own from the arguments `serve` left in the environment."""
    from slurm_attr import config

    args = json.loads(os.environ[SERVE_ENV])
    return create_app(config.load(), args["db"], Tokens.load(Path(args["tokens"])), drain=args["drain"])


def create_app(settings: Settings, db: str | None, tokens: Tokens, *, drain: bool = False) -> FastAPI:
    store = Store.open(db or settings.db)
    refresh_statistics(store)
    statistics = Statistics(store)
    reads = Reads(store)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        statistics.thread.start()
        yield
        statistics.stop.set()
        reads.dispose()
        store.engine.dispose()

    app = FastAPI(title="slurm-attr", version="1", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None,
                  description="Failure attribution for Slurm jobs: one root cause, with its evidence.")
    app.state.store, app.state.settings, app.state.tokens = store, settings, tokens
    app.state.reads = reads
    app.state.caps = Caps(settings.api_max_upload_mb << 20, settings.api_max_upload_files)
    # Attributions are CPU-bound and unpack to disk: a few at a time, the rest wait their turn.
    app.state.attributions = anyio.CapacityLimiter(2)
    app.state.drainer = Drainer(store, settings) if drain else None
    app.state.node_states = NodeStates(settings, store)
    app.state.latency = metrics.Latency()
    app.add_middleware(metrics.LatencyMiddleware, latency=app.state.latency)
    _errors(app)
    _api_routes(app)
    from slurm_attr.service.dashboard import install  # the pages: their own module

    install(app)
    return app


def _errors(app: FastAPI) -> None:
    @app.exception_handler(ArchiveError)
    async def archive_error(_: Request, exc: ArchiveError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)

    @app.exception_handler(Exception)
    async def internal(_: Request, exc: Exception) -> JSONResponse:
        log.error("internal error: %s: %s", type(exc).__name__, exc)
        return JSONResponse({"detail": "internal error; the service log has the cause"}, status_code=500)


def _api_routes(app: FastAPI) -> None:
    read, submit = [Depends(need("read"))], [Depends(need("submit"))]

    @app.get("/healthz", tags=["service"], summary="Liveness and database check (no token)")
    def healthz(request: Request) -> Response:
        try:
            with request.app.state.store.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        except Exception as exc:  # any database failure means unhealthy
            log.error("health check: database unavailable: %s", str(exc).splitlines()[0])
            return _json({"status": "unavailable", "database": "down"}, 503)
        return _json({"status": "ok", "database": "ok"})

    @app.get("/v1/openapi.json", dependencies=read, include_in_schema=False)
    def openapi(request: Request) -> Response:
        return _json(request.app.openapi())

    @app.get("/docs", dependencies=read, include_in_schema=False, response_class=HTMLResponse)
    def docs(request: Request) -> HTMLResponse:
        from slurm_attr.service.dashboard import api_docs

        return HTMLResponse(api_docs(request.app.openapi()))

    @app.get("/metrics", dependencies=read, tags=["service"], summary="Prometheus metrics")
    def prometheus(request: Request) -> Response:
        counts = metric_counts(request.app.state.store)
        return Response(metrics.exposition(counts, request.app.state.latency),
                        media_type="text/plain; version=0.0.4; charset=utf-8")

    _attribution_routes(app, submit)
    _query_routes(app, read)


_BUNDLE_BODY = {"requestBody": {"required": True, "content": {
    "application/gzip": {"schema": {"type": "string", "format": "binary"},
                         "description": "A static bundle (workload.json, app/, nodes/...) as a tar.gz."},
    "application/json": {"schema": {"type": "object", "required": ["workload"], "properties": {
        "workload": {"type": "object", "description": "What workload.json holds."},
        "app": {"type": "object", "additionalProperties": {"type": "string"},
                "description": "Job output: file name -> text."},
        "nodes": {"type": "object", "additionalProperties": {
            "type": "object", "additionalProperties": {"type": "string"}},
            "description": "node -> {log file name -> text} (syslog, dmesg, Fabric Manager)."},
        "controller": {"type": "object", "additionalProperties": {"type": "string"}},
        "metrics": {"type": "object", "description": "file name -> Prometheus query_range JSON."}}}}}}}


def _attribution_routes(app: FastAPI, submit: list[Any]) -> None:
    @app.post("/v1/attributions", dependencies=submit, tags=["attribution"],
              summary="Diagnose one attempt given as a bundle", openapi_extra=_BUNDLE_BODY,
              responses={200: {"description": "The diagnosis document (schema slurm-attr/diagnosis/v1)"},
                         400: {"description": "Unusable archive"}, 413: {"description": "Over a cap"},
                         415: {"description": "Neither gzip nor JSON"},
                         422: {"description": "Unusable bundle (workload.json)"}})
    async def attribute(request: Request, save: bool = Query(False, description="Also store it")) -> Response:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind not in GZIP_TYPES and kind != JSON_TYPE:
            raise HTTPException(415, "send application/gzip (a tar.gz bundle) or application/json")
        caps: Caps = request.app.state.caps
        with private_dir() as tmp:
            upload = tmp / "upload"
            await _receive(request, upload, caps.max_bytes + (1 << 20))
            async with request.app.state.attributions:
                body = await run_in_threadpool(_attribute, request.app, kind, upload, tmp / "bundle", save)
        headers = {}
        if save:
            w = json.loads(body)["workload"]
            headers["Location"] = (f"{request.scope.get('root_path', '')}/v1/diagnoses/"
                                   f"{w['cluster']}/{w['job_id']}/{w['attempt']}")
        return Response(body, media_type=JSON_TYPE, headers=headers)

    @app.post("/v1/attributions/slurm", dependencies=submit, tags=["attribution"], status_code=202,
              summary="Queue the diagnosis of a job of the cluster this service runs on",
              responses={202: {"description": "Queued; the diagnosis will be at `location`"},
                         404: {"description": "sacct knows no such job or attempt"},
                         409: {"description": "The job has not ended"},
                         502: {"description": "sacct failed"}})
    async def attribute_slurm(job: SlurmJob, request: Request) -> Response:
        answer = await run_in_threadpool(_queue_live, request.app, job)
        location = (f"{request.scope.get('root_path', '')}/v1/diagnoses/"
                    f"{answer['cluster']}/{answer['job_id']}/{answer['attempt']}")
        if request.app.state.drainer is not None:
            request.app.state.drainer.kick()
        return _json({**answer, "location": location}, 202, {"Location": location})


async def _receive(request: Request, target: Path, limit: int) -> None:
    """Stream the body to a file, stopping once it passes `limit` (a Content-Length saying more
    is refused before anything is read)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ArchiveError(f"the upload is larger than {limit >> 20} MB", 413)
    size = 0
    with target.open("wb") as out:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ArchiveError(f"the upload is larger than {limit >> 20} MB", 413)
            out.write(chunk)
    if size == 0:
        raise ArchiveError("the request has no body")


def _attribute(app: FastAPI, kind: str, upload: Path, dest: Path, save: bool) -> str:
    dest.mkdir(mode=0o700)
    caps: Caps = app.state.caps
    if kind == JSON_TYPE:
        try:
            doc = json.loads(upload.read_bytes())
        except (ValueError, UnicodeDecodeError) as exc:
            raise ArchiveError(f"not JSON: {exc}") from exc
        write_inline(doc, dest, caps)
    else:
        with upload.open("rb") as fh:
            extract_tar_gz(fh, dest, caps)
    settings: Settings = app.state.settings
    try:
        d = analyze_bundle(bundle_root(dest), settings.rules, settings.read_limits())
    except BundleError as exc:
        # The message may name our private directory; the caller only needs the reason.
        raise ArchiveError(str(exc).replace(str(dest), "bundle"), 422) from exc
    if save:
        app.state.store.save_diagnosis(d, keep_history=settings.keep_history)
    return dumps(d)


def _queue_live(app: FastAPI, job: SlurmJob) -> dict[str, Any]:
    """Ask sacct about the job (it must have ended), then queue its attempt for the worker with
    the environment the epilog would have given (or did give, when the queue has it)."""
    from slurm_attr.analyze import minimal_env
    from slurm_attr.scope.slurm import SlurmCommands, SlurmError

    settings: Settings = app.state.settings
    client = SlurmCommands(settings)
    try:
        attempts = client.sacct([job.job_id]).get(job.job_id, [])
        here = settings.cluster or client.cluster_name()
    except SlurmError as exc:
        raise HTTPException(502, f"sacct: {str(exc)[:500]}") from exc
    if not attempts:
        raise HTTPException(404, f"sacct knows no job {job.job_id}")
    if job.attempt is not None and not 0 <= job.attempt < len(attempts):
        raise HTTPException(404, f"job {job.job_id} has attempts 0..{len(attempts) - 1}")
    facts = attempts[-1 if job.attempt is None else job.attempt]
    cluster = facts.cluster or here
    if cluster != job.cluster:
        raise HTTPException(404, f"this service diagnoses cluster {cluster!r}, not {job.cluster!r}")
    if facts.end is None:
        raise HTTPException(409, f"job {job.job_id} has not ended ({facts.state})")
    store: Store = app.state.store
    env = queue.epilog_env(store, cluster, job.job_id, facts.end) or minimal_env(facts, cluster)
    entry = f"api:{job.job_id}.{facts.attempt}"
    added = queue.enqueue(store, [{"cluster": cluster, "entry": entry, "job_id": job.job_id,
                                   "attempt": facts.attempt, "ended_at": facts.end,
                                   "payload": env, "source": "manual", "not_before": queue.now()}])
    return {"status": "queued" if added else "already queued", "cluster": cluster,
            "job_id": job.job_id, "attempt": facts.attempt, "state": facts.state}


async def _quick(app: FastAPI, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a short indexed query. On SQLite it runs on the event loop: the query is in-process
    CPU work, and a thread hop with its GIL handover cost more than the query (the list endpoint
    served 60% more requests/s so). On PostgreSQL it goes to the thread pool, where the network
    wait of one query overlaps the work of others."""
    reads: Reads = app.state.reads
    if reads.limiter is None:
        return fn(*args, **kwargs)
    return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs), limiter=reads.limiter)


def _query_routes(app: FastAPI, read: list[Any]) -> None:
    # The list and the document are short indexed queries, the service's busiest calls (see
    # _quick). Everything that may scan a window (summary, node, metrics, pages) runs in the
    # thread pool.
    @app.get("/v1/diagnoses", dependencies=read, tags=["diagnoses"],
             summary="Stored diagnoses, newest first, a page at a time")
    async def diagnoses(request: Request, since: str = "1d", until: str | None = None,
                  cluster: str | None = None, partition: str | None = None, user: str | None = None,
                  node: str | None = None, sub_domain: str | None = None, outcome: str | None = None,
                  q: str | None = Query(None, description="job id, user, node or root-cause text"),
                  limit: int = Query(100, ge=1, le=1000), cursor: str | None = None) -> Response:
        crowded = too_many_values(cluster=cluster, partition=partition, user=user, node=node,
                                  sub_domain=sub_domain, outcome=outcome)
        if crowded:
            raise HTTPException(400, f"{crowded}: at most {MAX_FILTER_VALUES} comma-separated values")
        f = Filters(*_window(since, until), cluster, partition, user, node, sub_domain)
        rows, key = await _quick(request.app, list_diagnoses, request.app.state.reads, f,
                                 outcome=outcome, limit=limit, after=_cursor_in(cursor), q=q)
        base = request.scope.get("root_path", "")
        nxt = _cursor_out(key)
        query = {"since": f.since.isoformat(), "until": f.until.isoformat(), "cluster": cluster,
                 "partition": partition, "user": user, "node": node, "sub_domain": sub_domain,
                 "outcome": outcome, "q": q, "limit": limit}
        return _json({"query": query, "diagnoses": [_row_json(r, base) for r in rows],
                      "next_cursor": nxt})

    @app.get("/v1/diagnoses/{cluster}/{job_id}/{attempt}", dependencies=read, tags=["diagnoses"],
             summary="One attempt's full diagnosis document", responses={404: {"description": "None stored"}})
    async def diagnosis(request: Request, cluster: str, job_id: str, attempt: int) -> Response:
        doc = await _quick(request.app, find_document, request.app.state.reads, cluster, job_id, attempt)
        if doc is None:
            raise HTTPException(404, f"no diagnosis stored for {cluster} job {job_id} attempt {attempt}")
        return Response(dumps(doc), media_type=JSON_TYPE)

    @app.get("/v1/nodes/{node}", dependencies=read, tags=["diagnoses"],
             summary="The failures that implicate a node, by root cause, and its state now",
             responses={400: {"description": "Not a node name"}})
    def node(request: Request, node: str, since: str = "7d", until: str | None = None) -> Response:
        if not valid_node(node):
            raise HTTPException(400, "node: a node name is letters, digits, '.', '_' and '-'")
        f = Filters(*_window(since, until))
        found = node_causes(request.app.state.reads, node, f)
        base = request.scope.get("root_path", "")
        found["recent"] = [_row_json(r, base) for r in found["recent"]]
        state = request.app.state.node_states.state(node)  # scontrol now, else the last recorded
        return _json({"since": f.since.isoformat(), "until": f.until.isoformat(), **found,
                      "state": state})

    @app.get("/v1/summary", dependencies=read, tags=["diagnoses"],
             summary="The counts of the overview page")
    def summary(request: Request, since: str = "1d", until: str | None = None,
                cluster: str | None = None) -> Response:
        f = Filters(*_window(since, until), cluster)
        counts = summary_counts(request.app.state.reads, f)
        queue_states = queue.counts(request.app.state.store)
        return _json({"since": f.since.isoformat(), "until": f.until.isoformat(), **counts,
                      "queue": queue_states})
