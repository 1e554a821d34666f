"""Shared pieces of the hostile-input suite: building bad bundles and running the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# A line every rule set turns into strong evidence: if it were read from outside a bundle, the
# secret would show up in the diagnosis, the database and the report.
SECRET = "SECRET-7f3a9c-do-not-read"
SECRET_LINE = (f"Nov 20 10:30:00 gpu-01 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, name={SECRET}, "
               "GPU has fallen off the bus.\n")

WORKLOAD = {"cluster": "t", "job_id": "4242", "nodes": "gpu-[01-02]",
            "start": "2026-11-20T10:00:00+00:00", "end": "2026-11-20T11:00:00+00:00",
            "state": "FAILED", "exit_code": "1:0", "user": "u", "partition": "p"}


def plant_secret(where: Path) -> Path:
    """A directory outside any bundle holding files that would be evidence if they were read."""
    where.mkdir(parents=True, exist_ok=True)
    for name in ("syslog", "out.log", "slurmctld.log", "sacct.json", "workload.json"):
        (where / name).write_text(SECRET_LINE * 3)
    return where


def write_bundle(root: Path, files: dict[str, bytes | str] | None = None, **workload: object) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    doc = {**WORKLOAD, **workload}
    (root / "workload.json").write_text(json.dumps({k: v for k, v in doc.items() if v is not ...}))
    for rel, content in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


@dataclass
class Run:
    rc: int
    stdout: str
    stderr: str
    seconds: float


def cli(*args: str, db: Path | None = None, timeout: float = 60) -> Run:
    """The installed command line, as an admin runs it (own process, own database)."""
    env = dict(os.environ, SLURM_ATTR_CONFIG="/nonexistent/slurm-attr.toml")
    if db is not None:
        env["SLURM_ATTR_DB"] = f"sqlite:///{db}"
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "slurm_attr.cli", *args], capture_output=True,
                            text=True, errors="replace", env=env, timeout=timeout)
    return Run(result.returncode, result.stdout, result.stderr, time.monotonic() - started)


def measured_analysis(bundle: Path, timeout: float = 120) -> dict:
    """Analyse a bundle in a fresh process; returns its coverage, peak RSS (MB) and seconds."""
    # VmHWM, not ru_maxrss: the latter keeps the high-water mark of the (big) test process the
    # child was forked from.
    code = (
        "import json, re, sys, time\n"
        "from slurm_attr.analyze import analyze_bundle\n"
        "t = time.monotonic(); d = analyze_bundle(sys.argv[1])\n"
        "hwm = re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read())\n"
        "print(json.dumps({'coverage': d['coverage'], 'sub_domain': d['sub_domain'],\n"
        "  'seconds': time.monotonic() - t, 'rss_mb': int(hwm.group(1)) / 1024}))\n"
    )
    result = subprocess.run([sys.executable, "-c", code, str(bundle)], capture_output=True, text=True,
                            timeout=timeout, check=True)
    return json.loads(result.stdout)
