"""Latency of the EpilogSlurmctld hook per job, beside /bin/true measured in the same run.

Usage: python benchmarks/epilog_latency.py [--runs 2000]
Both are started the way slurmctld starts them (fork and exec, with a job's SLURM_* environment
of the size slurmctld passes); runs alternate so machine noise hits both alike. The spool keeps
filling, as it does while the worker is down.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from slurm_attr.hook import script_text

ENV = {
    "SLURM_JOB_ID": "0", "SLURM_JOBID": "0", "SLURM_JOB_RESTART_COUNT": "0",
    "SLURM_JOB_EXIT_CODE": "256", "SLURM_JOB_EXIT_CODE2": "1:0", "SLURM_JOB_DERIVED_EC": "256",
    "SLURM_JOB_NODELIST": "gpu-[001-064]", "SLURM_JOB_NUM_NODES": "64",
    "SLURM_JOB_CPUS_PER_NODE": "128(x64)", "SLURM_JOB_PARTITION": "train", "SLURM_JOB_USER": "alice",
    "SLURM_JOB_UID": "1001", "SLURM_JOB_GID": "1001", "SLURM_JOB_GROUP": "alice",
    "SLURM_JOB_ACCOUNT": "ml", "SLURM_JOB_NAME": "llm-pretrain-70b",
    "SLURM_JOB_WORK_DIR": "/scratch/alice/runs/70b", "SLURM_JOB_STDOUT": "/scratch/alice/logs/%x-%j.out",
    "SLURM_JOB_STDERR": "/scratch/alice/logs/%x-%j.err", "SLURM_JOB_STDIN": "/dev/null",
    "SLURM_SCRIPT_CONTEXT": "epilog_slurmctld", "SLURM_CLUSTER_NAME": "bench",
    "SLURM_JOB_CONSTRAINTS": "", "SLURM_JOB_GPUS": "0,1,2,3,4,5,6,7",
    "PATH": "/usr/bin:/bin",
}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        spool = Path(tmp) / "spool"
        hook = Path(tmp) / "slurm-attr-epilog"
        hook.write_text(script_text(str(spool)))
        hook.chmod(0o755)
        times: dict[str, list[float]] = {"/bin/true": [], "hook": []}
        for i in range(args.runs):
            env = dict(ENV, SLURM_JOB_ID=str(100000 + i), SLURM_JOBID=str(100000 + i))
            for label, argv in (("/bin/true", ["/bin/true"]), ("hook", [str(hook)])):
                t0 = time.perf_counter()
                rc = subprocess.run(argv, env=env, check=False).returncode
                times[label].append((time.perf_counter() - t0) * 1000)
                assert rc == 0, f"{label} exited {rc}"
        queued = len(list((spool / "new").iterdir()))
        assert queued == args.runs, f"{queued} entries for {args.runs} runs"
    for label, values in times.items():
        median, p99 = statistics.median(values), percentile(values, 0.99)
        print(f"{label:>10}: median {median:.2f} ms, p99 {p99:.2f} ms over {len(values)} runs")
    base, mine = statistics.median(times["/bin/true"]), statistics.median(times["hook"])
    print(f"hook cost over /bin/true: {mine - base:.2f} ms median ({mine / base:.1f}x); "
          f"{queued} jobs queued, none lost")


if __name__ == "__main__":
    main()
