"""From job end to stored diagnosis, on the real single-host cluster (tools/slurm-cluster).

Usage: python benchmarks/e2e_latency.py [--jobs 12] [--poll 5]   (root)
With SLURM_ATTR_CLUSTER_DIR set it uses (and starts if needed) that cluster and leaves it running;
otherwise it starts a throw-away cluster of its own (own directory, name, database and ports, so
it can run beside the end-to-end tests) and destroys it afterwards. The worker runs as its own
process with the cluster's config (settle delay 2 s there; the built-in default is 10 s) and the
worker's default poll interval. A job's end is when its EpilogSlurmctld hook ran (the spool
file's time). The baseline, measured in the same run, is when sacct first shows the job as ended:
no diagnosis can come before it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parent.parent
CLUSTER_TOOL = str(ROOT / "tools/slurm-cluster")


def sh(*argv: str, env: dict) -> str:
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout


@contextlib.contextmanager
def cluster_to_measure() -> Iterator[tuple[Path, dict]]:
    """The cluster to measure on, and the environment that points at it."""
    given = os.environ.get("SLURM_ATTR_CLUSTER_DIR")
    run_dir = Path(given or tempfile.mkdtemp(prefix="slurm-attr-latency-"))
    env = dict(os.environ, SLURM_ATTR_CLUSTER_DIR=str(run_dir),
               PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    if not given:
        env["SLURM_ATTR_CLUSTER_NAME"] = f"lat{secrets.token_hex(4)}"
    try:
        subprocess.run([CLUSTER_TOOL, "start"], env=env, check=True)
        env.update(SLURM_CONF=str(run_dir / "etc/slurm.conf"),
                   SLURM_ATTR_CONFIG=str(run_dir / "slurm-attr.toml"))
        yield run_dir, env
    finally:
        if not given:
            subprocess.run([CLUSTER_TOOL, "destroy"], env=env, check=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--poll", type=float, default=None, help="worker --poll (default: the worker's)")
    ap.add_argument("--spacing", type=float, default=0.0,
                    help="seconds between submissions (0: all at once, so they queue for the worker)")
    ap.add_argument("--worker-log", type=Path, help="keep the worker's log (-v) in this file")
    args = ap.parse_args()
    with cluster_to_measure() as (run_dir, env):
        acct, diag = measure(run_dir, env, args)
    poll = args.poll or "default"
    print(f"{args.jobs} failed jobs, {args.spacing:g} s apart (worker poll: {poll}); "
          "from the hook running at job end:")
    print(f"  sacct shows the end (baseline): {_spread(acct)}")
    print(f"  diagnosis stored:               {_spread(diag)} "
          f"({statistics.median(diag) / max(statistics.median(acct), 0.01):.1f}x the baseline)")


def _spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s, min {min(values):.2f} s, max {max(values):.2f} s"


def measure(run_dir: Path, env: dict, args: argparse.Namespace) -> tuple[list[float], list[float]]:
    """Seconds from each job's end until sacct shows it ended, and until its diagnosis is stored."""
    db_file = run_dir / f"latency-{secrets.token_hex(4)}.db"  # job ids restart with the cluster
    db = f"sqlite:///{db_file}"
    log = open(args.worker_log, "w") if args.worker_log else subprocess.DEVNULL  # noqa: SIM115 - the worker's
    worker = subprocess.Popen([sys.executable, "-m", "slurm_attr.cli", "worker", "--db", db, "-v",
                               *(["--poll", str(args.poll)] if args.poll else [])], env=env, stderr=log)
    try:
        time.sleep(2)  # the worker has made its database and is waiting: jobs end after this
        jobs: list[str] = []
        visible: dict[str, datetime] = {}
        # sacct is watched while jobs are still being submitted: spaced jobs end early on.
        watcher = threading.Thread(target=_accounting_visible, args=(jobs, args.jobs, visible, env))
        watcher.start()
        for _ in range(args.jobs):
            jobs.append(sh("sbatch", "--parsable", f"--chdir={run_dir}/jobs", "-o", "lat-%j.out", "--wrap",
                           "echo 'RuntimeError: CUDA error: an illegal memory access was encountered' >&2;"
                           " exit 1", env=env).strip())
            time.sleep(args.spacing)
        watcher.join()
        done = _wait_for_diagnoses(create_engine(db), jobs)
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        db_file.unlink(missing_ok=True)
    ends = {job: ended for job, ended, _ in done}
    diag = [(created - ends[job]).total_seconds() for job, _, created in done]
    acct = [(visible[job] - ends[job]).total_seconds() for job in jobs]
    return acct, diag


def _accounting_visible(jobs: list[str], n_jobs: int, seen: dict[str, datetime], env: dict) -> None:
    """Fill `seen` with when sacct first shows each job of `jobs` (still growing) as ended."""
    deadline = time.monotonic() + 300
    while len(seen) < n_jobs and time.monotonic() < deadline:
        if jobs:
            out = sh("sacct", "-n", "-X", "-P", "-o", "JobIDRaw,End", "-j", ",".join(jobs), env=env)
            now = datetime.now(UTC)
            for line in out.splitlines():
                job, _, end = line.partition("|")
                if job in jobs and end not in ("", "Unknown") and job not in seen:
                    seen[job] = now
        time.sleep(0.1)


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
