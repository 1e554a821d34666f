"""What hostile inputs cost: a bundle whose job output is a decompression bomb, one gigantic
line, a flood of lines every one of which a rule matches (beside the same number of lines no
rule matches), or long lines built to make the rules' regexes backtrack (a run a greedy class
accepts, or one keyword repeated end to end), beside the same bundle without it (the baseline,
measured in the same run).

Each analysis runs in a fresh process; the figures are medians of --repeat runs of wall time
and peak RSS.

    python benchmarks/hostile_inputs.py --repeat 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

XID = b"Nov 20 10:30:00 gpu-01 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.\n"
WORKLOAD = {"cluster": "bench", "job_id": "4242", "nodes": "gpu-[01-02]", "state": "FAILED",
            "start": "2026-11-20T10:00:00+00:00", "end": "2026-11-20T11:00:00+00:00", "exit_code": "1:0"}
# Peak RSS from VmHWM: ru_maxrss would keep the high-water mark of the process we were forked from.
PROBE = """
import json, re, sys, time
from slurm_attr.analyze import analyze_bundle
t = time.monotonic()
d = analyze_bundle(sys.argv[1])
cov = next(c for c in d["coverage"] if c["collector"] == "job_output")
hwm = int(re.search(r"VmHWM:\\s*(\\d+)", open("/proc/self/status").read()).group(1))
print(json.dumps({"s": time.monotonic() - t, "rss": hwm / 1024,
                  "status": cov["status"], "read_mb": cov["bytes"] / 2**20, "verdict": d["sub_domain"]}))
"""


def bundle(root: Path, job_output: Path | None) -> Path:
    (root / "nodes" / "gpu-01").mkdir(parents=True)
    (root / "workload.json").write_text(json.dumps(WORKLOAD))
    (root / "nodes" / "gpu-01" / "syslog").write_bytes(XID)
    if job_output is not None:
        (root / "app").mkdir()
        shutil.copy(job_output, root / "app" / job_output.name)
    return root


def zero_bomb(path: Path, gib: int) -> Path:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = packer.compress(b"\0" * (64 << 20)) + packer.flush()
    with path.open("wb") as fh:
        for _ in range(gib * 16):
            fh.write(member)
    return path


def one_line(path: Path, mib: int) -> Path:
    with path.open("wb") as fh:
        for _ in range(mib):
            fh.write(b"A" * (1 << 20))
    return path


WARN = (b"gpu-01:1234:5678 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1234> with error 12, "
        b"opcode 0, len 0, vendor err 129\n")
FILLER = b"x" * (len(WARN) - 1) + b"\n"  # as long as WARN, matched by no rule
# A keyword followed by a long run a leading greedy class accepts: quadratic for a naive search.
BACKTRACK = b"NCCL WARN" + b"1" * (64 << 10) + b"\n"
# A keyword repeated end to end: a regex with a class on both sides of it tries every pair of them.
REPEATED_KEYWORD = b"nvls" * (16 << 10) + b" NCCL WARN\n"


def many_lines(path: Path, count: int, line: bytes) -> Path:
    with path.open("wb") as fh:
        for _ in range(count // 1000):
            fh.write(line * 1000)
    return path


def measure(root: Path, repeat: int) -> dict:
    runs = [json.loads(subprocess.run([sys.executable, "-c", PROBE, str(root)], capture_output=True,
                                      text=True, check=True).stdout) for _ in range(repeat)]
    return {"s": statistics.median(r["s"] for r in runs), "rss": statistics.median(r["rss"] for r in runs),
            **{k: runs[0][k] for k in ("status", "read_mb", "verdict")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bomb-gib", type=int, default=2)
    parser.add_argument("--line-mib", type=int, default=1024)
    parser.add_argument("--matching-lines", type=int, default=200_000)
    parser.add_argument("--backtrack-lines", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="slurm-attr-hostile-") as tmp:
        work = Path(tmp)
        cases = {
            "baseline (no job output)": bundle(work / "base", None),
            f"{args.bomb_gib} GiB of zeros as .gz": bundle(work / "bomb",
                                                           zero_bomb(work / "out.gz", args.bomb_gib)),
            f"one {args.line_mib} MiB line": bundle(work / "line", one_line(work / "out.log", args.line_mib)),
            f"{args.matching_lines} unmatched lines": bundle(
                work / "filler", many_lines(work / "filler.log", args.matching_lines, FILLER)),
            f"{args.matching_lines} matching lines": bundle(
                work / "warns", many_lines(work / "warns.log", args.matching_lines, WARN)),
            f"{args.backtrack_lines} 64 KiB backtrack lines": bundle(
                work / "backtrack", many_lines(work / "backtrack.log", args.backtrack_lines, BACKTRACK)),
            f"{args.backtrack_lines} 64 KiB keyword-run lines": bundle(
                work / "keywords", many_lines(work / "keywords.log", args.backtrack_lines, REPEATED_KEYWORD)),
        }
        base = None
        print(f"{'case':<30} {'median s':>9} {'x base':>7} {'RSS MB':>7} {'read MB':>8}  job_output")
        for name, root in cases.items():
            m = measure(root, args.repeat)
            base = base or m
            print(f"{name:<30} {m['s']:>9.2f} {m['s'] / base['s']:>7.1f} {m['rss']:>7.0f} "
                  f"{m['read_mb']:>8.0f}  {m['status']} (verdict {m['verdict']})")


if __name__ == "__main__":
    main()
