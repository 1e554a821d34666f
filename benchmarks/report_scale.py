"""Report speed at fleet scale: N diagnoses over 30 days on 2,000 nodes (default N = 100,000).

Usage: python benchmarks/report_scale.py [--n 100000] [--repeat 3]
Fills a fresh SQLite store through the save path the worker uses (the sample diagnoses,
re-stamped onto random jobs, nodes and times, stored 500 per transaction), then times
`report --format html` for 30 days and for 1 day, and a plain `report --format csv` over 30 days
as the baseline measured in the same run. The first HTML run of a window renders the job-page
bodies into the site's page cache (cold); the later runs find them there (warm, the median).
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from slurm_attr.analyze import analyze_bundle
from slurm_attr.report.query import Filters, load_frame
from slurm_attr.report.site import write_site
from slurm_attr.report.tables import render_csv
from slurm_attr.store.repository import Store

SAMPLES = Path(__file__).resolve().parent.parent / "sample_jobs"


def fill(store: Store, n: int, now: datetime) -> None:
    """N diagnoses over 30 days on 2,000 nodes, stored through the worker's save path."""
    rng = random.Random(1)
    templates = [analyze_bundle(b) for b in sorted(SAMPLES.iterdir()) if (b / "workload.json").exists()]
    nodes = [f"gpu-{i:04d}" for i in range(2000)]
    batch = []
    for i in range(n):
        d = copy.deepcopy(rng.choice(templates))
        end = now - timedelta(seconds=rng.uniform(0, 30 * 86400))
        w = d["workload"]
        w.update(job_id=str(1_000_000 + i), attempt=0, end=end.isoformat(),
                 start=(end - timedelta(seconds=w["elapsed_s"])).isoformat(),
                 user=f"user{rng.randint(1, 300)}", cluster="bench")
        picked = sorted(rng.sample(nodes, k=min(len(w["nodes"]), 8)))
        w["nodes"], w["nodelist"] = picked, ",".join(picked)
        d["affected_nodes"] = picked[:1] if d["affected_nodes"] else []
        batch.append(d)
        if len(batch) == 500 or i == n - 1:
            store.save_many(batch)
            batch = []


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp, Store.open(f"sqlite:///{tmp}/bench.db") as store:
        t_fill = timed(lambda: fill(store, args.n, now))
        print(f"filled {args.n} diagnoses in {t_fill:.0f} s ({args.n / t_fill:.0f}/s)")
        month, day = Filters(now - timedelta(days=30), now), Filters(now - timedelta(days=1), now)
        results: dict[str, float] = {}
        cold: dict[str, float] = {}
        for label, f in (("30d html", month), ("1d html", day)):
            runs = [timed(lambda f=f, label=label: write_site(
                store, load_frame(store, f), f, Path(tmp) / label.replace(" ", "_")))
                for _ in range(args.repeat)]
            results[label] = statistics.median(runs[1:] or runs)
            cold[label] = runs[0]
        base = statistics.median(timed(lambda: render_csv(load_frame(store, month)))
                                 for _ in range(args.repeat))
        size = (Path(tmp) / "30d_html" / "index.html").stat().st_size / 1e6
        for label, secs in results.items():
            print(f"report {label}: median {secs:.2f} s ({secs / base:.1f}x the 30d csv baseline), "
                  f"first run with a cold page cache {cold[label]:.2f} s ({cold[label] / base:.1f}x)")
        print(f"baseline report 30d csv: median {base:.2f} s")
        print(f"overview page: {size:.2f} MB")


if __name__ == "__main__":
    main()
