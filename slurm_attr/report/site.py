"""The static HTML site over stored diagnoses (the live dashboard serves the same pages).

A job page depends only on its diagnosis, so its body is rendered once and kept beside the site
(`.cache/job-bodies/<template version>/<document hash>.html`): the next report renders only new
or changed diagnoses, and a template upgrade starts afresh. The store holds diagnoses, not pages.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from slurm_attr.output.coverage import fold_coverage
from slurm_attr.private_cache import PrivateCache
from slurm_attr.report.query import (
    Filters,
    coverage_gaps,
    list_nodes,
    load_dead_letters,
    load_documents,
    load_nodes,
    node_timelines,
)
from slurm_attr.report.tables import records
from slurm_attr.sanitize import clean
from slurm_attr.store.repository import Store

PALETTE = {"gpu": "#e4572e", "gpu_memory": "#f3a712", "nvlink": "#a8c686", "network": "#29335c",
           "storage": "#669bbc", "host": "#8f2d56", "application": "#2a9d8f", "gpu_oom": "#76c893",
           "host_oom": "#168aad", "time_limit": "#b5838d", "preemption": "#6d6875",
           "requeued": "#9d8189",
           "cancelled": "#adb5bd", "ambiguous": "#ffb4a2", "unknown": "#495057"}
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
_DIGEST = re.compile(r"[0-9a-f]{16,64}")


def page_name(cluster: str, job_id: str, attempt: int) -> str:
    return _SAFE_NAME.sub("_", f"{cluster}-{job_id}-{attempt}") + ".html"


def node_page(node: str) -> str:
    return _SAFE_NAME.sub("_", node) + ".html"


def _highlight(text: str, match: str) -> Markup:
    """Escape a job-printed line and wrap the matched part in <mark>."""
    if match and match in text:
        before, _, after = text.partition(match)
        return escape(before) + Markup("<mark>") + escape(match) + Markup("</mark>") + escape(after)
    return escape(text)


def _printable(value: Any) -> Any:
    """Every value printed into a page loses control characters (terminal escapes)."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return clean(value)
    return value


def _demoted_by_node(symptoms: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in symptoms:
        if s["role"] == "interesting":
            groups.setdefault(s["node"] or "", []).append(s)
    return sorted(groups.items())


def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(resources.files("slurm_attr.templates"))),
                      autoescape=select_autoescape(["html"], default=True),
                      trim_blocks=True, lstrip_blocks=True,
                      finalize=_printable)
    env.filters["highlight"] = _highlight
    env.filters["node_page"] = node_page
    env.filters["demoted_by_node"] = _demoted_by_node
    env.filters["fold_coverage"] = fold_coverage
    env.globals["palette"] = PALETTE
    return env


@cache
def _job_env_and_version() -> tuple[Environment, str]:
    env = environment()
    sources = b"".join((resources.files("slurm_attr.templates") / name).read_bytes()
                       for name in ("job_body.html", "_macros.html"))
    # PALETTE and the filters shape the body too; bump the suffix when they change.
    return env, hashlib.sha256(sources + json.dumps(PALETTE).encode() + b"2").hexdigest()[:16]


def job_body(d: dict[str, Any]) -> str:
    """The body of a job page, which depends only on the diagnosis."""
    env, _ = _job_env_and_version()
    return env.get_template("job_body.html").render(d=d)


class BodyCache:
    """Job-page bodies kept beside the site, one file per diagnosis content hash, under the
    template version. It mirrors the site: bodies of diagnoses no longer in it are removed. A
    cache another user could have written is not used (private_cache): its files go into pages
    as they are."""

    def __init__(self, out: Path) -> None:
        _, self.version = _job_env_and_version()
        self.root = out / ".cache" / "job-bodies"
        self.files = PrivateCache(out, ".cache", "job-bodies", self.version)
        self.dir = self.files.dir

    def bodies(self, store: Store, wanted: list[tuple[int, str]]) -> dict[int, str]:
        """diagnosis id -> body for (id, document hash) pairs; missing ones are rendered now."""
        found: dict[int, str] = {}
        stale = []
        for diag_id, digest in wanted:
            cached = self.files.read(f"{digest}.html") if _DIGEST.fullmatch(digest) else None
            if cached is None:
                stale.append((diag_id, digest))
            else:
                found[diag_id] = cached.decode("utf-8", errors="replace")
        for start in range(0, len(stale), 1000):
            chunk = stale[start:start + 1000]
            docs = load_documents(store, [i for i, _ in chunk])
            for diag_id, digest in chunk:
                found[diag_id] = job_body(docs[diag_id])
                if _DIGEST.fullmatch(digest):
                    self.files.write(f"{digest}.html", found[diag_id].encode("utf-8"))
        self._prune({f"{digest}.html" for _, digest in wanted})
        return found

    def _prune(self, keep: set[str]) -> None:
        for name in self.files.names():
            if name not in keep:
                self.files.remove(name)
        if self.files.usable:  # bodies of older template versions
            for path in self.root.iterdir():
                if path.name != self.version and path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)


def _chart(df: pd.DataFrame, window: tuple[Any, Any] | None = None) -> dict[str, Any]:
    """Failures per hour, day or week, stacked by sub_domain, as data for an inline SVG. Every
    bucket of the window is a slot, empty or not, so the time axis is even; the y-axis has ticks."""
    if df.empty:
        return {"bars": [], "max": 0, "freq": "h", "domains": [], "ticks": []}
    first, last = df["end"].min(), df["end"].max()
    if window is not None and pd.Timestamp(window[1]) - pd.Timestamp(window[0]) <= pd.Timedelta(days=400):
        first, last = min(first, pd.Timestamp(window[0])), max(last, pd.Timestamp(window[1]))
    span = last - first
    freq = "h" if span <= pd.Timedelta(days=2) else "D" if span <= pd.Timedelta(days=400) else "W"
    step = pd.Timedelta(hours=1) if freq == "h" else pd.Timedelta(days=1 if freq == "D" else 7)
    start = first.floor("D") if freq == "W" else first.floor(freq)
    slots = pd.date_range(start, max(last, start + 23 * step), freq=step)  # 24 slots at least
    bucket = ((df["end"] - start) // step).astype(int)
    table = df.assign(bucket=bucket).pivot_table(index="bucket", columns="sub_domain",
                                                   values="job_id", aggfunc="count", fill_value=0)
    table = table.reindex(range(len(slots)), fill_value=0)
    domains = [d for d in PALETTE if d in table.columns]
    label = "%m-%d %H:00" if freq == "h" else "%Y-%m-%d"
    bars = []
    for when, (_, row) in zip(slots, table.iterrows(), strict=True):
        y, stack = 0, []
        for d in domains:
            if row[d]:
                stack.append({"domain": d, "y": y, "n": int(row[d])})
                y += int(row[d])
        bars.append({"label": when.strftime(label), "total": y, "stack": stack})
    top = _nice(max(b["total"] for b in bars))
    return {"bars": bars, "max": top, "freq": freq, "domains": domains,
            "ticks": [0, top // 2, top] if top >= 2 else [0, top]}


def _nice(n: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... at or above n (the y-axis top)."""
    scale = 1
    while True:
        for m in (1, 2, 5):
            if m * scale >= n:
                return m * scale
        scale *= 10


def overview(df: pd.DataFrame, nodes: pd.DataFrame, store: Store,
              window: tuple[Any, Any] | None = None) -> dict[str, Any]:
    dead = load_dead_letters(store).to_dict("records")
    if "recovered" in df:  # requeued attempts whose job then completed are no failures
        df = df[~df["recovered"]]
    if df.empty:
        return {"total": 0, "gpu_hours": 0, "hours": 0, "unit": "GPU", "by_outcome": [],
                "by_sub_domain": [], "nodes": [], "causes": [], "lost": [], "dead": dead,
                "gaps": [], "chart": _chart(df, window)}
    by_node = nodes.merge(df[["diagnosis_id", "sub_domain"]], on="diagnosis_id")
    pairs = by_node.groupby(["node", "sub_domain"]).size().rename("n").reset_index()
    top = pairs.sort_values(["node", "n", "sub_domain"], ascending=[True, False, True]) \
        .drop_duplicates("node").set_index("node")["sub_domain"]
    failures = by_node.groupby("node").size().rename("failures")
    top_nodes = (failures.to_frame().join(top.rename("top")).reset_index()
                 .sort_values(["failures", "node"], ascending=[False, True]).head(25))
    causes = (df.groupby(["sub_domain", "root_code"], dropna=False).size().rename("n")
              .sort_values(ascending=False).head(15).reset_index())
    # A cluster without GPUs loses node-hours: count those rather than show 0.0 GPU-hours.
    unit = "node" if df["gpu_hours"].sum() == 0 and df["node_hours"].sum() > 0 else "GPU"
    column = "node_hours" if unit == "node" else "gpu_hours"
    lost = (df.groupby("sub_domain")[column].sum().sort_values(ascending=False).rename("hours")
            .reset_index())
    return {
        "total": len(df), "gpu_hours": float(df["gpu_hours"].sum()),
        "hours": float(df[column].sum()), "unit": unit,
        "by_outcome": df["outcome"].value_counts().reset_index().values.tolist(),
        "by_sub_domain": df["sub_domain"].value_counts().reset_index().values.tolist(),
        "nodes": top_nodes.to_dict("records"), "causes": causes.fillna("-").to_dict("records"),
        "lost": lost.to_dict("records"), "dead": dead, "chart": _chart(df, window),
        "gaps": coverage_gaps(store, df["diagnosis_id"].tolist()),
    }


# ---------------------------------------------------------------------------- table rows
# Rows of the job tables are built once per report with plain string operations (a Jinja macro
# per row cost most of a 100k-attempt report) and shared by the table pages and the node pages.
# _ROOT marks where the link prefix goes: "" at the top of the site, "../" one level down.
_ROOT = "\ue002"


def _e(value: Any) -> str:
    return str(escape(clean(str(value))))


def _badge(sub_domain: str) -> str:
    return f'<span class="badge" style="--c: {PALETTE.get(sub_domain, "#777")}">{_e(sub_domain)}</span>'


def row_html(r: dict[str, Any], has_page: bool) -> str:
    label = _e(r["job_id"])
    if has_page:
        label = f'<a href="{_ROOT}jobs/{page_name(r["cluster"], r["job_id"], r["attempt"])}">{label}</a>'
    node = r.get("root_node") or ""
    node_cell = f'<a href="{_ROOT}nodes/{node_page(node)}">{_e(node)}</a>' if node else "—"
    if not r["gpu_hours"] and r.get("node_hours"):  # no GPUs: node-hours, marked as such
        hours = f'<td class="num" title="node-hours: no GPUs recorded">{r["node_hours"]:.1f} n</td>'
    else:
        hours = f'<td class="num">{r["gpu_hours"]:.1f}</td>'
    return (f"<tr><td>{label}</td><td class=\"num\">{int(r['attempt'])}</td>"
            f"<td class=\"clip\" title=\"{_e(r.get('name') or '')}\">{_e(r.get('name') or '')}</td>"
            f"<td>{_e(r['cluster'])}</td><td>{_e(r['user'])}</td>"
            f"<td>{_e(r['partition'])}</td><td class=\"mono\">{_e(r['nodelist'])}</td>"
            f"<td class=\"mono\">{node_cell}</td>"
            f"<td class=\"mono\">{r['end'][:16].replace('T', ' ')}</td><td>{_e(r['state'])}</td>"
            f"<td>{_e(r['outcome'])}</td><td>{_badge(r['sub_domain'])}</td>{hours}"
            f"<td class=\"clip\" title=\"{_e(r['verdict'])}\">{_e(r['root_code'] or '—')}</td></tr>\n")


def rows_markup(html: list[str], root: str) -> Markup:
    return Markup("".join(html).replace(_ROOT, root))


# ---------------------------------------------------------------------------- pages
class Shell:
    """A page layout rendered once, with holes for the title and the body, since the layout is
    the same on every page of a kind (private-use characters mark the holes: no escaping or
    cleaning touches them)."""

    def __init__(self, env: Environment, template: str, ctx: dict[str, Any]) -> None:
        page = env.get_template(template).render(title="\ue000", body=Markup("\ue001"), **ctx)
        self.head, self.tail = page.split("\ue001")

    def page(self, title: str, body: str) -> str:
        return self.head.replace("\ue000", _e(title), 1) + body + self.tail


def write_site(store: Store, df: pd.DataFrame, f: Filters, out: Path, *,
               max_job_pages: int = 5000, rows_per_page: int = 2000) -> dict[str, int]:
    """Write the static site; returns counts of what was written."""
    env = environment()
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("jobs", "nodes", "static"):
        (out / sub).mkdir(exist_ok=True)
    static = resources.files("slurm_attr.templates") / "static"
    for name in ("style.css", "app.js"):
        shutil.copyfile(str(static / name), out / "static" / name)
    nodes = load_nodes(store, df["diagnosis_id"].tolist() if not df.empty else [])
    ctx = {"filters": f, "generated_window": (f.since, f.until)}
    table = records(df) if not df.empty else []
    ids = df["diagnosis_id"].tolist() if not df.empty else []
    rows = {i: row_html(r, n < max_job_pages) for n, (i, r) in enumerate(zip(ids, table, strict=True))}
    html = list(rows.values())
    pages = [html[i:i + rows_per_page] for i in range(0, len(html), rows_per_page)] or [[]]
    poor = df[df["coverage_ok"] < 0.5].head(50)["diagnosis_id"].tolist() if not df.empty else []
    (out / "index.html").write_text(env.get_template("index.html").render(
        root="", overview=overview(df, nodes, store, (f.since, f.until)), recent=rows_markup(html[:20], ""),
        poor=rows_markup([rows[i] for i in poor], "") if poor else None, n_pages=len(pages), **ctx))
    template = env.get_template("jobs.html")
    for i, chunk in enumerate(pages, 1):
        name = "jobs.html" if i == 1 else f"jobs-{i}.html"
        (out / name).write_text(template.render(root="", rows=rows_markup(chunk, ""), page=i,
                                                n_pages=len(pages), total=len(html), **ctx))
    (out / "nodes.html").write_text(env.get_template("nodes.html").render(
        root="", nodes=list_nodes(store, f, limit=None), **ctx))
    job_rows = df.head(max_job_pages) if not df.empty else df
    _write_job_pages(env, store, job_rows, out, ctx)
    node_pages = _write_node_pages(env, store, df, nodes, rows, out, ctx)
    return {"job_pages": len(job_rows), "table_pages": len(pages), "node_pages": node_pages,
            "rows": len(table)}


def _write_job_pages(env: Environment, store: Store, rows: pd.DataFrame, out: Path,
                     ctx: dict[str, Any]) -> None:
    if rows.empty:
        return
    bodies = BodyCache(out).bodies(store, list(zip(rows["diagnosis_id"], rows["document_hash"],
                                                   strict=True)))
    shell = Shell(env, "page.html", {"root": "../", **ctx})
    with _Writer() as write:
        for diag_id, cluster, job_id, attempt in zip(rows["diagnosis_id"], rows["cluster"], rows["job_id"],
                                                     rows["attempt"], strict=True):
            write(out / "jobs" / page_name(cluster, job_id, attempt),
                  shell.page(f"Job {job_id}", bodies[diag_id]))


def _write_node_pages(env: Environment, store: Store, df: pd.DataFrame, nodes: pd.DataFrame,
                      rows: dict[int, str], out: Path, ctx: dict[str, Any]) -> int:
    if df.empty or nodes.empty:
        return 0
    # Aggregate once for all nodes: a pandas groupby per node costs milliseconds each.
    joined = nodes.merge(df[["diagnosis_id", "end", "sub_domain", "root_code"]], on="diagnosis_id") \
        .sort_values(["node", "end"], ascending=[True, False])
    history: dict[str, list[str]] = {}
    for node, diag_id in zip(joined["node"], joined["diagnosis_id"], strict=True):
        history.setdefault(node, []).append(rows[diag_id])
    counts = (joined.groupby(["node", "sub_domain", "root_code"], dropna=False).size().rename("n")
              .reset_index().sort_values(["node", "n"], ascending=[True, False]).fillna("-"))
    recurring: dict[str, list[dict[str, Any]]] = {}
    for rec in counts.to_dict("records"):
        recurring.setdefault(rec["node"], []).append(rec)
    body = env.get_template("node_body.html")
    shell = Shell(env, "page.html", {"root": "../", **ctx})
    timelines = node_timelines(store, [str(n) for n in history], ctx["filters"], per_node=50)
    with _Writer() as write:
        for node, html in history.items():
            write(out / "nodes" / node_page(str(node)), shell.page(node, body.render(
                node=node, n=len(html), rows=rows_markup(html, "../"), recurring=recurring[node],
                timeline=timelines.get(str(node)))))
    return len(history)


class _Writer:
    """Writes many page files on a few threads: the time goes to file system calls, which run
    outside the GIL, while the next page is being built."""

    def __init__(self, threads: int = 4) -> None:
        self.pool = ThreadPoolExecutor(threads)
        self.pending: list[Future] = []

    def __call__(self, path: Path, text: str) -> None:
        self.pending.append(self.pool.submit(path.write_bytes, text.encode()))

    def __enter__(self) -> _Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.pool.shutdown(wait=True)
        for future in self.pending:
            future.result()  # raise the first write error, if any
