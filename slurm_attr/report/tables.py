"""Reports over stored diagnoses for terminals and scripts: text, JSON and CSV."""

from __future__ import annotations

import csv
import json
from typing import Any

import pandas as pd

from slurm_attr.sanitize import clean, clean_lines, csv_cell

TABLE_FIELDS = ["cluster", "job_id", "attempt", "name", "user", "partition", "nodelist", "root_node",
                "end", "state", "exit_code", "outcome", "sub_domain", "evidence_status", "root_code",
                "gpu_hours", "node_hours", "verdict", "action", "recovered"]


def _table(df: pd.DataFrame) -> pd.DataFrame:
    """The report columns as scripts get them: ISO times, GPU-hours to two decimals."""
    out = df[TABLE_FIELDS].copy()
    out["end"] = out["end"].map(pd.Timestamp.isoformat)
    out["gpu_hours"] = out["gpu_hours"].astype(float).round(2)
    out["node_hours"] = out["node_hours"].astype(float).round(2)
    out["attempt"] = out["attempt"].astype(int)
    return out


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return _table(df).to_dict("records")


def render_json(df: pd.DataFrame) -> str:
    """The rows and the query they answer (load_frame keeps it in the frame's attrs)."""
    return json.dumps({"query": df.attrs.get("query"), "count": len(df),
                       "diagnoses": records(df) if not df.empty else []}, indent=2) + "\n"


def render_csv(df: pd.DataFrame) -> str:
    """CSV for spreadsheets: text cells quoted, cleaned of controls, and never a formula."""
    if df.empty:
        return ",".join(TABLE_FIELDS) + "\n"
    table = _table(df)
    for column in table.columns:
        if not pd.api.types.is_numeric_dtype(table[column]):
            table[column] = table[column].map(csv_cell)
    return table.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")


def render_text(df: pd.DataFrame, width: int = 160) -> str:
    if df.empty:
        return "No diagnosed failures in this window.\n"
    failed = df[~df["recovered"]]
    lines = [f"{len(failed)} failed attempts, {_lost_text(failed)}"]
    if len(failed) < len(df):
        lines.append(f"({len(df) - len(failed)} more were requeued and their job then completed: "
                     "listed below, not counted)")
    lines.append("")
    by = failed.groupby(["outcome", "sub_domain"]).size().sort_values(ascending=False)
    # What to do, per cause: the action most of that sub_domain's diagnoses suggest.
    todo = failed[failed["action"] != ""].groupby("sub_domain")["action"].agg(
        lambda a: a.value_counts().index[0]) if "action" in failed else pd.Series(dtype=str)
    lines += [f"  {o:<15} {s:<12} {n:>6}  {todo.get(s, '')}" for (o, s), n in by.items()] + [""]
    header = (f"{'END (UTC)':<17} {'JOB':<12} {'ATT':>3} {'NAME':<16} {'USER':<10} {'STATE':<13} "
              f"{'EXIT':<6} {'SUB_DOMAIN':<12} {'ROOT NODE':<12} {'EVIDENCE':<12} ROOT CAUSE")
    lines.append(header)
    for row in df.head(500).itertuples():
        text = (f"{row.end:%Y-%m-%d %H:%M} {clean(str(row.job_id))[:12]:<12} {row.attempt:>3} "
                f"{clean(row.name or '')[:16]:<16} {clean(row.user)[:10]:<10} {row.state:<13} "
                f"{clean(row.exit_code or '')[:6]:<6} {row.sub_domain:<12} "
                f"{clean(row.root_node or '-')[:12]:<12} {clean(row.evidence_status or '')[:12]:<12} "
                f"{clean(row.root_code or '-')}")
        lines.append(text[:width])
    if len(df) > 500:
        lines.append(f"... {len(df) - 500} more (use --format csv or json)")
    return clean_lines("\n".join(lines)) + "\n"


def _lost_text(df: pd.DataFrame) -> str:
    gpu, node = float(df["gpu_hours"].sum()), float(df["node_hours"].sum())
    if gpu == 0 and node > 0:
        return f"{node:.0f} node-hours lost (no GPUs recorded)"
    return f"{gpu:.0f} GPU-hours lost"
