"""A readable terminal summary of one diagnosis. All job-printed text is stripped of escapes."""

from __future__ import annotations

from typing import Any

from slurm_attr.output.coverage import fold_coverage
from slurm_attr.sanitize import clean

_MAX_SYMPTOMS = 12


def _line(text: Any) -> str:
    return clean(str(text))


def render_summary(d: dict[str, Any]) -> str:
    w = d["workload"]
    out = [
        f"Job {_line(w['job_id'])} attempt {w['attempt']}  {_line(w['name'])}  "
        f"user={_line(w['user'])} partition={_line(w['partition'])}",
        f"  nodes {_line(w['nodelist'])}  {w['start']} -> {w['end']}  "
        f"state {d['terminal_state']} exit {_line(w['exit_code'])}",
        "",
        f"Outcome: {d['outcome']}   sub_domain: {d['sub_domain']}   "
        f"evidence: {d['evidence_status']}",
        f"Verdict: {_line(d['verdict'])}",
    ]
    rc = d.get("root_cause")
    if rc:
        out += ["", "Root cause",
                f"  {_line(rc['code'] or rc['kind'])}"
                + (f" on {', '.join(rc['nodes'])}" if rc["nodes"] else "")
                + (f" at {rc['time']}" if rc["time"] else ""),
                f"  {_line(rc['explanation'])}",
                f"  Next: {_line(rc['action'] or '')}"]
        root = d["symptoms"][rc["event"]]
        out.append(f"  Evidence: {_line(root['source']['file'])}:{root['source']['line']}: "
                   f"{_line(root['source']['text'])[:200]}")
    if d["candidates"]:
        out += ["", "Candidates (ambiguous)"]
        out += [f"  - {c['sub_domain']}: {_line(c['code'])}" + (f" on {c['node']}" if c["node"] else "")
                + f": {_line(c['explanation'])}" for c in d["candidates"]]
    demoted = [s for s in d["symptoms"] if s["role"] == "interesting"]
    if demoted:
        out += ["", f"Demoted symptoms ({len(demoted)})"]
        for s in demoted[:_MAX_SYMPTOMS]:
            count = f" x{s['count']}" if s["count"] > 1 else ""
            where = f" on {s['node']}" if s["node"] else ""
            out.append(f"  - [{s['demoted_by']}] {_line(s['code'] or s['kind'])}{count}{where}: "
                       f"{_line(s['summary'])[:140]}")
        if len(demoted) > _MAX_SYMPTOMS:
            out.append(f"  ... {len(demoted) - _MAX_SYMPTOMS} more (use --format json)")
    out += ["", "Coverage"]
    for c in fold_coverage(d["coverage"]):
        where = f"/{c['node']}" if c["node"] else ""
        where += f" ({c['nodes']} nodes)" if c["nodes"] > 1 else ""
        reason = f" ({_line(c['reason'])})" if c["reason"] else ""
        out.append(f"  {c['collector']}{where}: {c['status']}{reason}, {len(c['files'])} files, "
                   f"{c['lines']} lines")
    if d["errors"]:
        out += ["", f"Read problems ({len(d['errors'])})"]
        out += [f"  - {_line(e['file'] or e['collector'])}: {_line(e['message'])}"
                for e in d["errors"][:8]]
    return "\n".join(out) + "\n"
