"""Reports over stored diagnoses: terminal text, JSON, CSV and a static HTML site."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from slurm_attr.collect.files import clean
from slurm_attr.report.query import (
    Filters,
    load_dead_letters,
    load_documents,
    load_nodes,
    load_pages,
)
from slurm_attr.store.repository import Store

TABLE_FIELDS = ["cluster", "job_id", "attempt", "user", "partition", "nodelist", "end", "state",
                "outcome", "sub_domain", "root_code", "gpu_hours", "verdict"]
PALETTE = {"gpu": "#e4572e", "gpu_memory": "#f3a712", "nvlink": "#a8c686", "network": "#29335c",
           "storage": "#669bbc", "host": "#8f2d56", "application": "#2a9d8f", "gpu_oom": "#76c893",
           "host_oom": "#168aad", "time_limit": "#b5838d", "preemption": "#6d6875",
           "cancelled": "#adb5bd", "ambiguous": "#ffb4a2", "unknown": "#495057"}
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def page_name(cluster: str, job_id: str, attempt: int) -> str:
    return _SAFE_NAME.sub("_", f"{cluster}-{job_id}-{attempt}") + ".html"


def node_page(node: str) -> str:
    return _SAFE_NAME.sub("_", node) + ".html"


# ---------------------------------------------------------------------------- text / json / csv
def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for row in df[TABLE_FIELDS].itertuples(index=False):
        rec = dict(zip(TABLE_FIELDS, row, strict=True))
        rec["end"] = rec["end"].isoformat()
        rec["gpu_hours"] = round(float(rec["gpu_hours"]), 2)
        rec["attempt"] = int(rec["attempt"])
        out.append(rec)
    return out


def render_json(df: pd.DataFrame) -> str:
    return json.dumps({"diagnoses": _records(df) if not df.empty else []}, indent=2) + "\n"


def render_csv(df: pd.DataFrame) -> str:
    if df.empty:
        return ",".join(TABLE_FIELDS) + "\n"
    out = df[TABLE_FIELDS].copy()
    out["end"] = out["end"].map(lambda t: t.isoformat())
    out["gpu_hours"] = out["gpu_hours"].round(2)
    return out.to_csv(index=False)


def render_text(df: pd.DataFrame, width: int = 160) -> str:
    if df.empty:
        return "No diagnosed failures in this window.\n"
    lines = [f"{len(df)} failed attempts, {df['gpu_hours'].sum():.0f} GPU-hours lost", ""]
    by = df.groupby(["outcome", "sub_domain"]).size().sort_values(ascending=False)
    lines += [f"  {o:<15} {s:<12} {n:>6}" for (o, s), n in by.items()] + [""]
    header = f"{'END (UTC)':<17} {'JOB':<14} {'USER':<10} {'STATE':<13} {'SUB_DOMAIN':<12} ROOT CAUSE"
    lines.append(header)
    for row in df.head(500).itertuples():
        job = f"{row.job_id}.{row.attempt}" if row.attempt else str(row.job_id)
        text = (f"{row.end:%Y-%m-%d %H:%M} {clean(job)[:14]:<14} {clean(row.user)[:10]:<10} "
                f"{row.state:<13} {row.sub_domain:<12} {clean(row.root_code or '-')}")
        lines.append(text[:width])
    if len(df) > 500:
        lines.append(f"... {len(df) - 500} more (use --format csv or json)")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- html
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


def _env() -> Environment:
    env = Environment(loader=FileSystemLoader(str(resources.files("slurm_attr.templates"))),
                      autoescape=select_autoescape(["html"], default=True),
                      trim_blocks=True, lstrip_blocks=True,
                      finalize=_printable)
    env.filters["highlight"] = _highlight
    env.filters["page_name"] = lambda r: page_name(r["cluster"], r["job_id"], r["attempt"])
    env.filters["node_page"] = node_page
    env.filters["demoted_by_node"] = _demoted_by_node
    env.globals["palette"] = PALETTE
    return env


@cache
def _job_env_and_version() -> tuple[Environment, str]:
    env = _env()
    sources = b"".join((resources.files("slurm_attr.templates") / name).read_bytes()
                       for name in ("job_body.html", "_macros.html"))
    # PALETTE and the filters shape the body too; bump the suffix when they change.
    return env, hashlib.sha256(sources + json.dumps(PALETTE).encode() + b"1").hexdigest()[:16]


def job_page_body(d: dict[str, Any]) -> tuple[str, str]:
    """The body of a job page, which depends only on the diagnosis: (template version, html)."""
    env, version = _job_env_and_version()
    return version, env.get_template("job_body.html").render(d=d)


def _job_bodies(store: Store, ids: list[int]) -> dict[int, str]:
    """Cached page bodies; stale or missing ones are rendered now and cached for the next report."""
    _, version = _job_env_and_version()
    cached = load_pages(store, ids)
    bodies = {i: html for i, (v, html) in cached.items() if v == version and html is not None}
    stale = [i for i in ids if i not in bodies]
    for start in range(0, len(stale), 1000):
        docs = load_documents(store, stale[start:start + 1000])
        fresh = [(i, *job_page_body(docs[i])) for i in docs]
        store.cache_pages(fresh)
        bodies.update({i: html for i, _, html in fresh})
    return bodies


def _chart(df: pd.DataFrame) -> dict[str, Any]:
    """Failures per hour or day, stacked by sub_domain, as data for an inline SVG."""
    span = (df["end"].max() - df["end"].min()) if not df.empty else pd.Timedelta(0)
    freq = "h" if span <= pd.Timedelta(days=2) else "D"
    if df.empty:
        return {"bars": [], "max": 0, "freq": freq, "domains": []}
    bucket = df["end"].dt.floor(freq)
    table = df.assign(bucket=bucket).pivot_table(index="bucket", columns="sub_domain",
                                                   values="job_id", aggfunc="count", fill_value=0)
    domains = [d for d in PALETTE if d in table.columns]
    bars = []
    for when, row in table.iterrows():
        y, stack = 0, []
        for d in domains:
            if row[d]:
                stack.append({"domain": d, "y": y, "n": int(row[d])})
                y += int(row[d])
        bars.append({"label": when.strftime("%m-%d %H:00" if freq == "h" else "%Y-%m-%d"),
                     "total": y, "stack": stack})
    return {"bars": bars, "max": max(b["total"] for b in bars), "freq": freq, "domains": domains}


def _overview(df: pd.DataFrame, nodes: pd.DataFrame, store: Store) -> dict[str, Any]:
    if df.empty:
        return {"total": 0, "gpu_hours": 0, "by_outcome": [], "by_sub_domain": [], "nodes": [],
                "causes": [], "lost": [], "poor": [], "dead": load_dead_letters(store).to_dict("records"),
                "chart": _chart(df)}
    by_node = nodes.merge(df[["diagnosis_id", "sub_domain"]], on="diagnosis_id")
    top_nodes = (by_node.groupby("node").agg(failures=("diagnosis_id", "count"),
                                             top=("sub_domain", lambda s: s.mode().iloc[0]))
                 .sort_values(["failures"], ascending=False).head(25).reset_index())
    causes = (df.groupby(["sub_domain", "root_code"], dropna=False).size().rename("n")
              .sort_values(ascending=False).head(15).reset_index())
    lost = df.groupby("sub_domain")["gpu_hours"].sum().sort_values(ascending=False).reset_index()
    poor = df[df["coverage_ok"] < 0.5].head(50)
    return {
        "total": len(df), "gpu_hours": float(df["gpu_hours"].sum()),
        "by_outcome": df["outcome"].value_counts().reset_index().values.tolist(),
        "by_sub_domain": df["sub_domain"].value_counts().reset_index().values.tolist(),
        "nodes": top_nodes.to_dict("records"), "causes": causes.fillna("-").to_dict("records"),
        "lost": lost.to_dict("records"), "poor": _records(poor) if not poor.empty else [],
        "dead": load_dead_letters(store).to_dict("records"), "chart": _chart(df),
    }


def write_site(store: Store, df: pd.DataFrame, f: Filters, out: Path, *,
               max_job_pages: int = 5000, rows_per_page: int = 2000) -> dict[str, int]:
    """Write the static site; returns counts of what was written."""
    env = _env()
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("jobs", "nodes", "static"):
        (out / sub).mkdir(exist_ok=True)
    static = resources.files("slurm_attr.templates") / "static"
    for name in ("style.css", "app.js"):
        shutil.copyfile(str(static / name), out / "static" / name)
    nodes = load_nodes(store, df["diagnosis_id"].tolist() if not df.empty else [])
    ctx = {"filters": f, "generated_window": (f.since, f.until)}
    records = _records(df) if not df.empty else []
    job_pages = {r["cluster"] + "/" + r["job_id"] + "/" + str(r["attempt"]) for r in records[:max_job_pages]}
    for rec in records:
        rec["has_page"] = (rec["cluster"] + "/" + rec["job_id"] + "/" + str(rec["attempt"])) in job_pages
    pages = [records[i:i + rows_per_page] for i in range(0, len(records), rows_per_page)] or [[]]
    (out / "index.html").write_text(env.get_template("index.html").render(
        root="", overview=_overview(df, nodes, store), recent=records[:20], n_pages=len(pages), **ctx))
    for i, rows in enumerate(pages, 1):
        name = "jobs.html" if i == 1 else f"jobs-{i}.html"
        (out / name).write_text(env.get_template("jobs.html").render(
            root="", rows=rows, page=i, n_pages=len(pages), total=len(records), **ctx))
    job_rows = df.head(max_job_pages) if not df.empty else df
    _write_job_pages(env, store, job_rows, out, ctx)
    node_pages = _write_node_pages(env, df, nodes, out, ctx)
    return {"job_pages": len(job_rows), "table_pages": len(pages), "node_pages": node_pages,
            "rows": len(records)}


def _write_job_pages(env: Environment, store: Store, rows: pd.DataFrame, out: Path,
                     ctx: dict[str, Any]) -> None:
    if rows.empty:
        return
    bodies = _job_bodies(store, rows["diagnosis_id"].tolist())
    # The layout around the body is the same on every page but for the title: render it once.
    shell = env.get_template("job.html").render(root="../", job_id="\ue000", body=Markup("\ue001"), **ctx)
    head, tail = shell.split("\ue001")
    title_at = head.index("\ue000")
    for row in rows.itertuples(index=False):
        title = str(escape(clean(row.job_id)))
        page = head[:title_at] + title + head[title_at + 1:] + bodies[row.diagnosis_id] + tail
        (out / "jobs" / page_name(row.cluster, row.job_id, row.attempt)).write_text(page)


def _write_node_pages(env: Environment, df: pd.DataFrame, nodes: pd.DataFrame, out: Path,
                      ctx: dict[str, Any]) -> int:
    if df.empty or nodes.empty:
        return 0
    # Aggregate once for all nodes: a pandas groupby per node costs milliseconds each.
    joined = nodes.merge(df, on="diagnosis_id").sort_values(["node", "end"], ascending=[True, False])
    rows: dict[str, list[dict[str, Any]]] = {}
    for node, rec in zip(joined["node"], _records(joined), strict=True):
        rows.setdefault(node, []).append(rec)
    counts = (joined.groupby(["node", "sub_domain", "root_code"], dropna=False).size().rename("n")
              .reset_index().sort_values(["node", "n"], ascending=[True, False]).fillna("-"))
    recurring: dict[str, list[dict[str, Any]]] = {}
    for rec in counts.to_dict("records"):
        recurring.setdefault(rec["node"], []).append(rec)
    template = env.get_template("node.html")
    for node, history in rows.items():
        (out / "nodes" / node_page(str(node))).write_text(template.render(
            root="../", node=node, rows=history, recurring=recurring[node], **ctx))
    return len(rows)
