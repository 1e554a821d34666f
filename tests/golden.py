"""Comparing a diagnosis with a sample job's expected.json (the fields a reviewer checked)."""

from __future__ import annotations

from typing import Any


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
