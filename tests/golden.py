"""Comparing a diagnosis with what a reviewer checked: a sample's expected.json (the verdict's
key fields) and its diagnosis.json (the whole canonical document: explanation, evidence trail,
demoted symptoms, coverage, summary sentence).

`SLURM_ATTR_UPDATE_GOLDEN=1 pytest tests/test_samples.py` rewrites the diagnosis.json files;
review their diff before committing it."""

from __future__ import annotations

import copy
import difflib
import os
from pathlib import Path
from typing import Any

from slurm_attr.output.diagnosis import dumps

# Versions of the rules change with every rule edit, not with what a diagnosis says.
VOLATILE = ("ruleset_version",)
UPDATE = os.environ.get("SLURM_ATTR_UPDATE_GOLDEN") == "1"


def canonical(d: dict[str, Any]) -> str:
    d = copy.deepcopy(d)
    for key in VOLATILE:
        if key in d:
            d[key] = "(any)"
    return dumps(d)


def document_diff(golden: Path, d: dict[str, Any]) -> str | None:
    """None when the diagnosis is the reviewed document, else a unified diff (or a rewrite of the
    golden file when updating)."""
    got = canonical(d)
    if UPDATE:
        golden.write_text(got, encoding="utf-8")
        return None
    want = golden.read_text(encoding="utf-8") if golden.exists() else ""
    if got == want:
        return None
    lines = difflib.unified_diff(want.splitlines(), got.splitlines(), str(golden), "now", lineterm="")
    return "\n".join(list(lines)[:80])


def mismatches(expected: dict[str, Any], d: dict[str, Any]) -> list[str]:
    problems = []
    for key in ("outcome", "sub_domain", "affected_nodes"):
        if key in expected and d[key] != expected[key]:
            problems.append(f"{key}: expected {expected[key]!r}, got {d[key]!r}")
    root = d.get("root_cause") or {}
    for key, want in (expected.get("root_cause") or {}).items():
        if root.get(key) != want:
            problems.append(f"root_cause.{key}: expected {want!r}, got {root.get(key)!r}")
    if "candidates" in expected:
        got = [{"sub_domain": c["sub_domain"], "node": c["node"]} for c in d["candidates"]]
        if sorted(got, key=str) != sorted(expected["candidates"], key=str):
            problems.append(f"candidates: expected {expected['candidates']}, got {got}")
    for kind, least in (expected.get("demoted_kinds_at_least") or {}).items():
        n = sum(s["count"] for s in d["symptoms"] if s["kind"] == kind and s["role"] == "interesting")
        if n < least:
            problems.append(f"demoted {kind}: expected at least {least}, got {n}")
    for key, want in (expected.get("workload") or {}).items():
        if d["workload"].get(key) != want:
            problems.append(f"workload.{key}: expected {want!r}, got {d['workload'].get(key)!r}")
    missing = {f"{c['collector']}/{c['node']}" if c["node"] else c["collector"]
               for c in d["coverage"] if c["status"] == "missing"}
    for source in expected.get("coverage_missing", []):
        if source not in missing:
            problems.append(f"coverage: {source} should be reported missing")
    return problems
