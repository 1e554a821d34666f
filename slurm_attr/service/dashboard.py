"""The live dashboard: the static report's pages, served from the store with the same templates.

The URLs are the static site's (index.html, jobs.html, jobs/<page>.html, nodes.html,
nodes/<node>.html, static/...), so every relative link in the templates works unchanged, also
behind a proxy's prefix. The failed-jobs table is filtered, sorted and paged by the database.
A browser signs in once (login.html) and keeps the token in an HttpOnly cookie good for reading.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from markupsafe import Markup, escape

from slurm_attr.report import site, tables
from slurm_attr.report.query import (
    Filters,
    find_attempts,
    list_nodes,
    load_documents,
    load_frame,
    load_nodes,
    node_causes,
    node_timelines,
    parse_when,
    table_page,
)
from slurm_attr.service.auth import COOKIE, Tokens
from slurm_attr.service.nodes import valid_node

router = APIRouter(include_in_schema=False)
PAGE_ROWS = 100
SESSION_S = 8 * 3600
_NEXT = re.compile(r"[A-Za-z0-9._~/?&=%+,:-]{0,500}")  # a path below the service, with a query
_JOB_PAGE = re.compile(r"(?P<rest>.+)-(?P<attempt>\d{1,6})\.html")
_STATIC = {"style.css": "text/css", "app.js": "text/javascript", "login.js": "text/javascript"}


class SignIn(Exception):
    """A browser without a valid cookie: send it to the sign-in page."""

    def __init__(self, target: str) -> None:
        self.target = target


async def reader(request: Request) -> str:
    """Pages need a read token, from the cookie or a bearer header; browsers are sent to sign in,
    other clients get 401 like the API."""
    tokens: Tokens = request.app.state.tokens
    header = request.headers.get("authorization", "")
    presented = header[7:].strip() if header[:7].lower() == "bearer " else request.cookies.get(COOKIE)
    if tokens.scope_of(presented) is not None:
        return "read"
    if "text/html" in request.headers.get("accept", ""):
        path = request.url.path.removeprefix(request.scope.get("root_path", "")).lstrip("/")
        query = f"?{request.url.query}" if request.url.query else ""
        raise SignIn(f"login.html?{urlencode({'next': path + query})}")
    raise HTTPException(401, "a bearer token is needed (Authorization: Bearer <token>)",
                        headers={"WWW-Authenticate": "Bearer"})


def install(app: Any) -> None:
    @app.exception_handler(SignIn)
    async def sign_in(request: Request, exc: SignIn) -> RedirectResponse:
        return RedirectResponse(f"{request.scope.get('root_path', '')}/{exc.target}", 303)

    app.include_router(router)


def _base(request: Request) -> str:
    return request.scope.get("root_path", "")


def _window(request: Request, default: str = "7d") -> Filters:
    p = request.query_params
    try:
        since = parse_when(p.get("since") or default)
        until = parse_when(p["until"]) if p.get("until") else datetime.now(UTC)
    except ValueError as exc:
        raise HTTPException(400, f"since/until: {exc}") from exc
    return Filters(since, until, p.get("cluster") or None, p.get("partition") or None,
                   p.get("user") or None, p.get("node") or None, p.get("sub_domain") or None)


# Pages show text jobs printed: beyond escaping, the browser runs no script but ours, loads
# nothing from elsewhere and is never framed. (Inline style attributes colour the badges.)
PAGE_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer",
                "Content-Security-Policy": "default-src 'self'; script-src 'self'; "
                                           "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                                           "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"}


def _html(text: str) -> HTMLResponse:
    return HTMLResponse(text, headers=PAGE_HEADERS)


def _ctx(f: Filters) -> dict[str, Any]:
    return {"filters": f, "generated_window": (f.since, f.until)}


# ---------------------------------------------------------------------------- sign-in
def _safe_next(target: str) -> str:
    """Where to go after signing in: a page of this service (no scheme, host or absolute path)."""
    path = target.split("?", 1)[0]
    if _NEXT.fullmatch(target) and not target.startswith("/") and ":" not in path:
        return target
    return "index.html"


@router.get("/login.html")
def login_page(request: Request, next: str = "index.html", error: str | None = None) -> HTMLResponse:
    env = site.environment()
    safe = _safe_next(next)
    return _html(env.get_template("login.html").render(root="", next=safe, error=error))


@router.post("/session")
async def session(request: Request) -> Response:
    """The sign-in form: checks the token, keeps it in a cookie, goes where the user was going."""
    body = await request.body()
    if len(body) > 8192:
        raise HTTPException(413, "form too large")
    form = parse_qs(body.decode("utf-8", "replace"))
    token, nxt = (form.get("token") or [""])[0], (form.get("next") or ["index.html"])[0]
    nxt = _safe_next(nxt)
    if request.app.state.tokens.scope_of(token) is None:
        return RedirectResponse(f"{_base(request)}/login.html?"
                                f"{urlencode({'next': nxt, 'error': 'That token is not valid here.'})}", 303)
    response = RedirectResponse(f"{_base(request)}/{nxt}", 303)
    response.set_cookie(COOKIE, token, max_age=SESSION_S, path=f"{_base(request)}/", httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")
    return response


@router.get("/logout")
def logout(request: Request) -> RedirectResponse:
    response = RedirectResponse(f"{_base(request)}/login.html", 303)
    response.delete_cookie(COOKIE, path=f"{_base(request)}/")
    return response


@router.get("/static/{name}")
def static(name: str) -> Response:
    if name not in _STATIC:  # a fixed list: nothing else of the package is served
        raise HTTPException(404, "no such file")
    path = resources.files("slurm_attr.templates") / "static" / name
    return FileResponse(str(path), media_type=_STATIC[name], headers={"Cache-Control": "max-age=300"})


# ---------------------------------------------------------------------------- pages
@router.get("/", dependencies=[Depends(reader)])
@router.get("/index.html", dependencies=[Depends(reader)])
def overview(request: Request) -> HTMLResponse:
    f = _window(request, "1d")
    store = request.app.state.store
    df = load_frame(store, f)
    ids = df["diagnosis_id"].tolist() if not df.empty else []
    nodes = load_nodes(store, ids)
    records = tables.records(df) if not df.empty else []
    html = [site.row_html(r, True) for r in records[:20]]
    poor_ids = set(df[df["coverage_ok"] < 0.5].head(50)["diagnosis_id"]) if not df.empty else set()
    poor = [site.row_html(r, True) for i, r in zip(ids, records, strict=True) if i in poor_ids]
    page = site.environment().get_template("index.html").render(
        root="", overview=site.overview(df, nodes, store, (f.since, f.until)),
        recent=site.rows_markup(html, ""), poor=site.rows_markup(poor, "") if poor else None,
        n_pages=1, **_ctx(f))
    return _html(page)


_HEADERS = [("Job", "job", False), ("Attempt", "attempt", True), ("Name", "name", False),
            ("Cluster", "cluster", False), ("User", "user", False), ("Partition", "partition", False),
            ("Nodes", None, False), ("Root node", None, False), ("End (UTC)", "end", False),
            ("State", "state", False), ("Outcome", "outcome", False), ("Sub-domain", "sub_domain", False),
            ("GPU-h", "gpu_hours", True), ("Root cause", "root_code", False)]
_KEEP = ("since", "until", "cluster", "partition", "user", "node", "sub_domain", "outcome")


def _table_rows(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in rows:
        r = {**r, "end": r["end"].isoformat() if r["end"] else "", "gpu_hours": float(r["gpu_hours"] or 0),
             "node_hours": float(r["node_hours"] or 0)}
        out.append(site.row_html(r, True))
    return out


@router.get("/jobs.html", dependencies=[Depends(reader)])
def jobs(request: Request) -> HTMLResponse:
    p = request.query_params
    f = _window(request, "7d")
    sort = p.get("sort", "end")
    descending = p.get("dir", "desc" if sort in ("end", "gpu_hours") else "asc") == "desc"
    q = (p.get("q") or "").strip()[:200]
    page = int(p["page"]) if p.get("page", "").isdigit() and int(p["page"]) > 0 else 1
    rows, total = table_page(request.app.state.store, f, outcome=p.get("outcome") or None, q=q or None,
                             sort=sort, descending=descending, offset=(page - 1) * PAGE_ROWS,
                             limit=PAGE_ROWS)
    kept = {k: p[k] for k in _KEEP if p.get(k)}
    n_pages = max(1, -(-total // PAGE_ROWS))

    def link(**change: Any) -> str:
        merged = {**kept, **({"q": q} if q else {}), "sort": sort, "dir": "desc" if descending else "asc",
                  **change}
        return "jobs.html?" + urlencode({k: v for k, v in merged.items() if v not in (None, "")})

    headers: list[tuple[str, str | None, str | None, bool]] = []
    for label, key, num in _HEADERS:
        if key is None:
            headers.append((label, None, None, num))
            continue
        active = key == sort
        first = "desc" if num or key == "end" else "asc"  # newest and largest first
        flip = ("asc" if descending else "desc") if active else first
        aria = ("descending" if descending else "ascending") if active else None
        headers.append((label, link(sort=key, dir=flip, page=None), aria, num))
    live = {"q": q, "hidden": sorted({**kept, "sort": sort, "dir": "desc" if descending else "asc"}.items()),
            "headers": headers, "first": min(total, (page - 1) * PAGE_ROWS + 1),
            "last": min(total, page * PAGE_ROWS),
            "prev": link(page=page - 1) if page > 1 else None,
            "next": link(page=page + 1) if page < n_pages else None}
    html = site.environment().get_template("jobs.html").render(
        root="", rows=site.rows_markup(_table_rows(rows), ""), page=page, n_pages=n_pages, total=total,
        live=live, **_ctx(f))
    return _html(html)


@router.get("/jobs/{name}", dependencies=[Depends(reader)])
def job(request: Request, name: str) -> HTMLResponse:
    m = _JOB_PAGE.fullmatch(name)
    if not m:
        raise HTTPException(404, "no such job page")
    rest, attempt = m["rest"], int(m["attempt"])
    job_part = rest.rsplit("-", 1)[-1]
    candidates = find_attempts(request.app.state.store, [job_part, job_part.replace("_", "+")], attempt)
    found = [c for c in candidates if site.page_name(c[1], c[2], c[3]) == name]
    if not found:
        raise HTTPException(404, "no diagnosis stored for this job page")
    diag_id, _, job_id, _ = found[0]
    body = site.job_body(load_documents(request.app.state.store, [diag_id])[diag_id])
    f = _window(request, "7d")
    shell = site.Shell(site.environment(), "page.html", {"root": "../", **_ctx(f)})
    return _html(shell.page(f"Job {job_id}", body))


@router.get("/nodes.html", dependencies=[Depends(reader)])
def nodes(request: Request) -> HTMLResponse:
    f = _window(request, "7d")
    listed = list_nodes(request.app.state.store, f)
    return _html(site.environment().get_template("nodes.html").render(root="", nodes=listed, **_ctx(f)))


@router.get("/nodes/{name}", dependencies=[Depends(reader)])
def node(request: Request, name: str) -> HTMLResponse:
    if not name.endswith(".html"):
        raise HTTPException(404, "no such node page")
    node_name = name[:-5]
    if not valid_node(node_name):  # user-visible text and scontrol's argument: a hostname only
        raise HTTPException(404, "no such node page")
    f = _window(request, "7d")
    found = node_causes(request.app.state.store, node_name, f, recent=0)
    g = Filters(f.since, f.until, node=node_name)
    rows, total = table_page(request.app.state.store, g, limit=500)
    recurring = [{"sub_domain": c["sub_domain"], "root_code": c["root_code"] or "-", "n": c["failures"]}
                 for c in found["causes"]]
    timeline = node_timelines(request.app.state.store, [node_name], f).get(node_name)
    body = site.environment().get_template("node_body.html").render(
        node=node_name, n=total, rows=site.rows_markup(_table_rows(rows), "../"), recurring=recurring,
        timeline=timeline, state_now=state_now(request.app.state.node_states.state(node_name)))
    shell = site.Shell(site.environment(), "page.html", {"root": "../", **_ctx(f)})
    return _html(shell.page(node_name, body))


def state_now(state: dict[str, Any]) -> Markup:
    """The node's state now (scontrol), or why it is not known and what was recorded last."""
    if state["source"] == "scontrol":
        why = Markup(" · {}").format(state["reason"]) if state["reason"] else ""
        return Markup('<p class="verdict"><strong>State now:</strong> {}{} <span class="muted">'
                      "(scontrol, {})</span></p>").format(state["state"], why, state["as_of"][:19])
    last = (Markup("; last recorded: {}{}").format(
        state["state"], Markup(" · {}").format(state["reason"]) if state["reason"] else "")
        if state["state"] else "")
    return Markup('<p class="verdict"><strong>State now:</strong> <span class="muted">not known '
                  "({}){}</span></p>").format(state["unavailable"], last)


def api_docs(spec: dict[str, Any]) -> str:
    """A plain HTML page listing the API from its OpenAPI document (no script, no CDN)."""
    items = []
    for path, ops in sorted(spec.get("paths", {}).items()):
        for method, op in ops.items():
            params = ", ".join(str(escape(p["name"])) for p in op.get("parameters", []))
            items.append(f"<tr><td><code>{escape(method.upper())}</code></td><td><code>{escape(path)}"
                         f"</code></td><td>{escape(op.get('summary', ''))}</td><td>{params}</td></tr>")
    return str(Markup(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>slurm-attr API</title>"
        "<link rel=\"stylesheet\" href=\"static/style.css\"></head><body><main><h1>slurm-attr API</h1>"
        "<p>OpenAPI document: <a href=\"v1/openapi.json\">v1/openapi.json</a>. Send "
        "<code>Authorization: Bearer &lt;token&gt;</code>.</p><table class=\"data\"><thead><tr>"
        "<th>Method</th><th>Path</th><th>What</th><th>Parameters</th></tr></thead>"
        f"<tbody>{''.join(items)}</tbody></table></main></body></html>"))
