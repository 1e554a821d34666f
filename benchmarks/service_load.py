"""Load on the attribution service: the list and document endpoints with N stored diagnoses, and
the cost of a bundle attribution over HTTP beside the in-process `analyze_bundle` in the same run.

Usage: python benchmarks/service_load.py [--n 20000] [--requests 2000] [--concurrency 4] [--workers 1,2]
                                         [--db sqlite|postgres] [--bundle sample_jobs/xid79-gpu-off-bus]
Fills a fresh store (SQLite file, or a throw-away PostgreSQL database on 127.0.0.1:5432) with N
diagnoses re-stamped from the samples, starts `slurm-attr serve` on a free loopback port, sends a
fixed number of requests per endpoint from `--concurrency` keep-alive connections, prints p50/p99
latency and requests/s, and stops the server. Nothing leaves the loopback interface.
"""

from __future__ import annotations

import argparse
import http.client
import io
import os
import random
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path

import report_scale  # beside this script: the same fabricated fleet

from slurm_attr.analyze import analyze_bundle
from slurm_attr.output.diagnosis import dumps
from slurm_attr.service.app import refresh_statistics
from slurm_attr.store.repository import Store

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_jobs"
TOKEN = uuid.uuid4().hex


def fill(store: Store, n: int, now: datetime) -> None:
    """The report benchmark's fleet, without rendering page bodies (the service never reads them)."""
    report_scale.fill(store, n, now)


@contextmanager
def database(kind: str, folder: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'bench.db'}"
        return
    from sqlalchemy import create_engine, text

    admin = create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
                          isolation_level="AUTOCOMMIT")
    name = f"slurm_attr_bench_{uuid.uuid4().hex[:8]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process and its children: on a machine shared
    with other work, server CPU per request says more than requests/s."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            todo += [int(c) for c in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total


SERVER_PID: list[int] = []  # the running server's process id, for tree_cpu_s


@contextmanager
def server(db: str, folder: Path, tmpdir: str | None = None, workers: int = 1) -> Iterator[int]:
    tokens = folder / "tokens"
    tokens.write_text(f"{TOKEN} submit\n")
    tokens.chmod(0o600)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "slurm_attr.cli", "serve", "--host", "127.0.0.1",
                             "--port", str(port), "--token-file", str(tokens), "--db", db,
                             "--no-access-log", "--workers", str(workers)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "SLURM_ATTR_CONFIG": str(folder / "none.toml"),
                                 **({"TMPDIR": tmpdir} if tmpdir else {})})
    SERVER_PID[:] = [proc.pid]
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if request(port, "GET", "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def request(port: int, method: str, path: str, body: bytes | None = None,
            conn: http.client.HTTPConnection | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request(method, path, body=body, headers={"Authorization": f"Bearer {TOKEN}", **(headers or {})})
    r = c.getresponse()
    data = r.read()
    if conn is None:
        c.close()
    return r.status, data


def hammer(port: int, paths: Callable[[int], str], total: int, concurrency: int) -> dict[str, float]:
    """`total` GETs from `concurrency` keep-alive connections; latency percentiles and rate."""
    latencies: list[float] = []
    lock, counter, failures = threading.Lock(), iter(range(total)), []

    def run() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine = []
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                break
            t0 = time.perf_counter()
            status, _ = request(port, "GET", paths(i), conn=conn)
            mine.append(time.perf_counter() - t0)
            if status != 200:
                failures.append(status)
        conn.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=run) for _ in range(concurrency)]
    cpu0 = tree_cpu_s(SERVER_PID[0]) if SERVER_PID else 0.0
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    cpu = (tree_cpu_s(SERVER_PID[0]) if SERVER_PID else 0.0) - cpu0
    if failures:
        raise SystemExit(f"{len(failures)} requests failed, e.g. HTTP {failures[0]}")
    latencies.sort()
    return {"p50_ms": 1000 * latencies[len(latencies) // 2],
            "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
            "rps": total / wall, "cpu_ms": 1000 * cpu / total}


def attribution(port: int, bundle: Path, repeat: int) -> tuple[float, float]:
    """Median seconds for the bundle over HTTP and in-process; the answers must be identical."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(bundle, arcname=".")
    body = buf.getvalue()
    expected = dumps(analyze_bundle(bundle)).encode()
    http_s, local_s = [], []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    for _ in range(repeat):
        t0 = time.perf_counter()
        status, data = request(port, "POST", "/v1/attributions", body, conn,
                               {"Content-Type": "application/gzip"})
        http_s.append(time.perf_counter() - t0)
        if status != 200 or data != expected:
            raise SystemExit(f"attribution over HTTP differs from the CLI's (HTTP {status})")
        t0 = time.perf_counter()
        dumps(analyze_bundle(bundle))  # what `analyze --format json` does in-process
        local_s.append(time.perf_counter() - t0)
    conn.close()
    return statistics.median(http_s), statistics.median(local_s)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000, help="stored diagnoses (100000 for the target)")
    ap.add_argument("--requests", type=int, default=2000, help="requests per endpoint")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--workers", type=lambda v: [int(x) for x in v.split(",")], default=[1, 2],
                    help="the server's worker processes; a comma list runs the load once for each")
    ap.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--bundle", type=Path, default=SAMPLES / "xid79-gpu-off-bus")
    ap.add_argument("--repeat", type=int, default=9, help="attributions timed")
    ap.add_argument("--tmpdir", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                    help="the server's TMPDIR, where uploads are unpacked (a tmpfs, as in the "
                         "systemd unit; default /dev/shm)")
    ap.add_argument("--reuse", metavar="URL",
                    help="a store this script filled before (with the same --n, less than a day "
                         "ago): skip the fill, e.g. to compare server settings on 100k rows")
    args = ap.parse_args()
    now = datetime.now(UTC)
    rng = random.Random(2)
    with tempfile.TemporaryDirectory() as tmp, \
            (nullcontext(args.reuse) if args.reuse else database(args.db, Path(tmp))) as db:
        with Store.open(db) as store:
            t0 = time.perf_counter()
            if not args.reuse:
                fill(store, args.n, now)
            took = time.perf_counter() - t0
            print(f"{store.engine.dialect.name}: {args.n} diagnoses, filled in {took:.0f} s")
            refresh_statistics(store)  # as the service does when it starts
        for workers in args.workers:
            with server(db, Path(tmp), args.tmpdir, workers) as port:
                print(f"server with {workers} worker process(es):")
                load(port, args, rng)


def load(port: int, args: argparse.Namespace, rng: random.Random) -> None:
    lists = ["/v1/diagnoses?since=30d&limit=50", "/v1/diagnoses?since=7d&limit=100",
             "/v1/diagnoses?since=30d&limit=50&sub_domain=gpu", "/v1/diagnoses?since=30d&limit=50&user=user7"]
    cases = {"list": lambda i: lists[i % len(lists)],
             "document": lambda i: f"/v1/diagnoses/bench/{1_000_000 + rng.randrange(args.n)}/0"}
    for name, paths in cases.items():
        hammer(port, paths, min(200, args.requests), args.concurrency)  # warm up
        r = hammer(port, paths, args.requests, args.concurrency)
        print(f"  {name:<9} {args.requests} requests x{args.concurrency}: p50 {r['p50_ms']:.1f} ms, "
              f"p99 {r['p99_ms']:.1f} ms, {r['rps']:.0f} requests/s, server CPU {r['cpu_ms']:.2f} ms/request")
    over_http, local = attribution(port, args.bundle, args.repeat)
    print(f"  attribution of {args.bundle.name}: {1000 * over_http:.0f} ms over HTTP, "
          f"{1000 * local:.0f} ms in-process (overhead {1000 * (over_http - local):+.0f} ms)")


if __name__ == "__main__":
    main()
