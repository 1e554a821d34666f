"""Coverage rows folded for reading: a 64-node job whose nodes all lack syslogs is one row, not 64."""

from __future__ import annotations

from typing import Any

import hostlist

# Fewer nodes than this read fine one per row.
_FOLD_FROM = 3


def _fold_key(row: dict[str, Any]) -> tuple[str, str, str] | None:
    """Rows that found nothing, per node, fold when they say the same thing about their node."""
    node = row.get("node")
    if not node or row["files"] or row["lines"]:
        return None
    reason = (row.get("reason") or "").replace(node, "{node}")
    return row["collector"], row["status"], reason


def fold_coverage(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The coverage rows with per-node rows that found nothing, for the same reason, folded into one
    row whose `node` is a hostlist and `nodes` counts them. Order follows each group's first row."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        key = _fold_key(row)
        if key is not None:
            groups.setdefault(key, []).append(row)
    folded: list[dict[str, Any]] = []
    emitted: set[tuple[str, str, str]] = set()
    for row in rows:
        key = _fold_key(row)
        if key is None or len(groups[key]) < _FOLD_FROM:
            folded.append({**row, "nodes": 1 if row.get("node") else 0})
            continue
        if key in emitted:
            continue
        emitted.add(key)
        names = hostlist.collect_hostlist([r["node"] for r in groups[key]])
        folded.append({**row, "node": names, "nodes": len(groups[key]),
                       "reason": key[2].replace("{node}", names) or None})
    return folded
