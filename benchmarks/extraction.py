"""Extraction throughput against grep -E with the same patterns, on a large generated syslog.

Usage: python benchmarks/extraction.py [--size-mb 1024] [--repeat 3]
Prints lines/s and MB/s for slurm-attr's extractor (one core) and for `grep -E` over the same file
with the same keyword alternation, the ratio, and peak memory at two file sizes (it must stay flat).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from slurm_attr.extract.extractor import Extractor, FileScan
from slurm_attr.extract.timestamps import Clock
from slurm_attr.model import Coverage, Observations, Workload
from slurm_attr.ruleset import load

NOISE = [
    "systemd[1]: Started Session {n} of User root.",
    "CRON[{n}]: (root) CMD (/usr/lib/sa/sa1 1 1)",
    "sshd[{n}]: Accepted publickey for svc from 10.1.2.3 port {n} ssh2",
    "kernel: [{n}.000000] IPv4: martian source 10.12.1.255 from 10.12.1.7, on dev ib0",
    "slurmd[{n}]: launch task StepId={n}.0 request from UID:1000 GID:1000 HOST:10.1.2.3",
    "chronyd[{n}]: Selected source 10.12.0.1 (ntp1.cluster.local)",
    "telegraf[{n}]: [outputs.influxdb] wrote batch of {n} metrics in 12.1ms",
]
HITS = [
    "kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=python, GPU has fallen off the bus.",
    "kernel: mlx5_core 0000:9a:00.0 ibp154s0: Link down",
    "kernel: nfs: server data01 not responding, timed out",
]


LOG_START = datetime(2026, 11, 20, tzinfo=UTC)


def make_log(path: Path, size_mb: int) -> int:
    """A syslog with a line every 3 ms from LOG_START (about 10 hours per GB)."""
    rng = random.Random(7)
    t = LOG_START
    lines = 0
    target = size_mb << 20
    chunk: list[str] = []
    written = 0
    with open(path, "w") as fh:
        while written < target:
            for _ in range(20000):
                t += timedelta(milliseconds=3)
                text = rng.choice(HITS) if rng.random() < 1e-5 else rng.choice(NOISE)
                chunk.append(f"{t:%b %d %H:%M:%S} gpu-01 {text.format(n=rng.randint(100, 99999))}\n")
            block = "".join(chunk)
            fh.write(block)
            written += len(block)
            lines += len(chunk)
            chunk.clear()
    return lines


def run_extractor(path: Path, start: datetime = LOG_START,
                  length: timedelta = timedelta(days=2)) -> tuple[float, int, int]:
    """Seconds, events found and bytes read for a job that ran from `start` for `length`."""
    w = Workload("b", "1", 0, "b", "u", "p", "gpu-01", ["gpu-01"], start, start + length,
                 "FAILED", "1:0")
    obs = Observations()
    cov = Coverage("node_syslog", "gpu-01")
    t0 = time.perf_counter()
    Extractor(load(), w).scan(path, FileScan("x", "node", "gpu-01", Clock(w.end, UTC), cov), obs)
    return time.perf_counter() - t0, len(obs.events), cov.bytes


def run_grep(path: Path) -> float:
    words = sorted({k for p in load().for_origin("node") for k in p.keywords})
    pattern = "|".join(w.replace("\\", "\\\\").replace(".", "\\.").replace("(", "\\(")
                       .replace(")", "\\)").replace("[", "\\[").replace("*", "\\*") for w in words)
    t0 = time.perf_counter()
    subprocess.run(["grep", "-E", "-c", pattern, str(path)], check=False, capture_output=True)
    return time.perf_counter() - t0


def peak_rss_mb(path: Path) -> float:
    code = ("import resource,sys;sys.path.insert(0,'benchmarks');import extraction as e;"
            f"e.run_extractor(__import__('pathlib').Path({str(path)!r}));"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="slurm-attr-bench-"))
    try:
        big = tmp / "syslog"
        lines = make_log(big, args.size_mb)
        mb = big.stat().st_size / 1e6
        ours, theirs = [], []
        for _ in range(args.repeat):
            ours.append(run_extractor(big)[0])
            theirs.append(run_grep(big))
        o, g = statistics.median(ours), statistics.median(theirs)
        print(f"file: {mb:.0f} MB, {lines} lines")
        print(f"slurm-attr extractor: median {o:.2f} s  {lines / o / 1e6:.2f} M lines/s  {mb / o:.0f} MB/s")
        print(f"grep -E (same patterns): median {g:.2f} s  {lines / g / 1e6:.2f} M lines/s  "
              f"{mb / g:.0f} MB/s")
        print(f"ratio (slurm-attr throughput / grep throughput): {g / o:.2f}")
        # A one-hour job in the middle of the log: only its window (plus margins) is read.
        middle = LOG_START + timedelta(milliseconds=3 * lines / 2)
        windowed = [run_extractor(big, middle, timedelta(hours=1)) for _ in range(args.repeat)]
        w = statistics.median(t for t, _, _ in windowed)
        print(f"one-hour job in the middle of it: median {w:.2f} s, {windowed[0][2] / 1e6:.0f} MB read "
              f"({o / w:.1f}x faster than reading it all)")
        small = tmp / "small"
        make_log(small, max(16, args.size_mb // 16))
        print(f"peak RSS: {peak_rss_mb(small):.0f} MB at {small.stat().st_size / 1e6:.0f} MB input, "
              f"{peak_rss_mb(big):.0f} MB at {mb:.0f} MB input")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
