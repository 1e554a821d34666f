"""From job end to stored diagnosis, on the real single-host cluster (tools/slurm-cluster).

Usage: python benchmarks/e2e_latency.py [--jobs 12]   (root; starts the cluster if needed)
The worker runs as its own process with the cluster's config (settle delay 2 s there; the
built-in default is 10 s). A job's end is when its EpilogSlurmctld hook ran (the spool file's
time). The baseline, measured in the same run, is when sacct first shows the job as ended: no
diagnosis can come before it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parent.parent
DIR = Path(os.environ.get("SLURM_ATTR_CLUSTER_DIR", "/tmp/slurm-attr-cluster"))


def sh(*argv: str, env: dict) -> str:
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=12)
    args = ap.parse_args()
    env = dict(os.environ, SLURM_ATTR_CLUSTER_DIR=str(DIR),
               PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    subprocess.run([str(ROOT / "tools/slurm-cluster"), "start"], env=env, check=True)
    env.update(SLURM_CONF=str(DIR / "etc/slurm.conf"), SLURM_ATTR_CONFIG=str(DIR / "slurm-attr.toml"))
    db = f"sqlite:///{DIR}/latency.db"
    worker = subprocess.Popen([sys.executable, "-m", "slurm_attr.cli", "worker", "--poll", "0.5",
                               "--db", db], env=env, stderr=subprocess.DEVNULL)
    try:
        jobs = [sh("sbatch", "--parsable", f"--chdir={DIR}/jobs", "-o", "lat-%j.out", "--wrap",
                   "echo 'RuntimeError: CUDA error: an illegal memory access was encountered' >&2; exit 1",
                   env=env).strip() for _ in range(args.jobs)]
        visible = _accounting_visible(jobs, env)
        engine = create_engine(db)
        done = _wait_for_diagnoses(engine, jobs)
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    ends = {job: ended for job, ended, _ in done}
    diag = [(created - ends[job]).total_seconds() for job, _, created in done]
    acct = [(visible[job] - ends[job]).total_seconds() for job in jobs]
    print(f"{len(jobs)} failed jobs; from the hook running at job end:")
    print(f"  sacct shows the end (baseline): median {statistics.median(acct):.2f} s, max {max(acct):.2f} s")
    print(f"  diagnosis stored:               median {statistics.median(diag):.2f} s, max {max(diag):.2f} s "
          f"({statistics.median(diag) / max(statistics.median(acct), 0.01):.1f}x the baseline)")


def _accounting_visible(jobs: list[str], env: dict) -> dict[str, datetime]:
    seen: dict[str, datetime] = {}
    deadline = time.monotonic() + 300
    while len(seen) < len(jobs) and time.monotonic() < deadline:
        out = sh("sacct", "-n", "-X", "-P", "-o", "JobIDRaw,End", "-j", ",".join(jobs), env=env)
        now = datetime.now(UTC)
        for line in out.splitlines():
            job, _, end = line.partition("|")
            if job in jobs and end not in ("", "Unknown") and job not in seen:
                seen[job] = now
        time.sleep(0.1)
    return seen


def _wait_for_diagnoses(engine, jobs: list[str]) -> list[tuple[str, datetime, datetime]]:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            with engine.connect() as conn:
                rows = conn.execute(text(
                    "SELECT q.job_id, q.ended_at, d.created_at FROM queue q "
                    "JOIN attempts a ON a.job_id = q.job_id JOIN diagnoses d ON d.attempt_id = a.id "
                    "WHERE q.state = 'done'")).all()
        except Exception:  # the worker has not created the schema yet
            rows = []
        found = [(j, _utc(e), _utc(c)) for j, e, c in rows if j in jobs]
        if len(found) == len(jobs):
            return found
        time.sleep(0.2)
    raise SystemExit("timed out waiting for the diagnoses")


def _utc(value) -> datetime:
    when = datetime.fromisoformat(value) if isinstance(value, str) else value
    return when if when.tzinfo else when.replace(tzinfo=UTC)


if __name__ == "__main__":
    main()
