"""How fast the command line starts, beside the cost of starting Python and importing click
(the baseline, measured in the same run, alternating with the commands).

    python benchmarks/startup.py --runs 15

The package's bytecode is compiled first, as installing a wheel does and as click's already is:
without it (an editable install under PYTHONDONTWRITEBYTECODE) every run would compile the
package's sources again and time the compiler, not the start-up.
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--bundle", default=str(ROOT / "sample_jobs" / "cuda-oom"))
    args = parser.parse_args()
    command = shutil.which("slurm-attr") or sys.exit("slurm-attr is not installed (pip install .)")
    cases = {
        "python -c 'import click' (baseline)": [sys.executable, "-c", "import click"],
        "slurm-attr --help": [command, "--help"],
        "slurm-attr --version": [command, "--version"],
        "slurm-attr analyze <small sample>": [command, "analyze", args.bundle],
    }
    import slurm_attr  # where the installed package is, to compile its bytecode like pip would

    compileall.compile_dir(str(Path(slurm_attr.__file__).parent), quiet=1)
    for argv in cases.values():  # warm the page cache
        timed(argv)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, argv in cases.items():
            times[name].append(timed(argv))
    base = statistics.median(next(iter(times.values())))
    print(f"{'command':<38} {'median ms':>9} {'p90 ms':>7} {'x baseline':>10}")
    for name, samples in times.items():
        median = statistics.median(samples)
        p90 = sorted(samples)[int(0.9 * (len(samples) - 1))]
        print(f"{name:<38} {median * 1000:>9.0f} {p90 * 1000:>7.0f} {median / base:>10.2f}")


if __name__ == "__main__":
    main()
