"""End to end on a real Slurm cluster (tools/slurm-cluster): real jobs, the real EpilogSlurmctld
hook, the worker as its own process against a private PostgreSQL server it can lose, and the
stored diagnoses. No queue entry is made by hand.

Needs root and Debian's slurm-wlm, slurmdbd, munge and postgresql packages; skipped when they are
missing unless SLURM_ATTR_REQUIRE_CLUSTER=1 (CI sets it, so there it fails instead).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parent.parent
# Everything this run owns is its own: the directory (state, logs, munge socket, PostgreSQL), the
# cluster name (and so its accounting database slurm_acct_<name>) and, picked at start, every
# port. Two checkouts can run this module on one host at once.
RUN_ID = f"{os.getpid()}{secrets.token_hex(3)}"
DIR = Path(tempfile.gettempdir()) / f"slurm-attr-e2e-{RUN_ID}"
CLUSTER = f"e2e{RUN_ID}"
# The lock tools/slurm-cluster takes while it picks ports and starts daemons; PostgreSQL's port is
# picked and taken under it too.
LOCK = Path(tempfile.gettempdir()) / "slurm-attr-cluster.lock"
PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"))), None) \
    if Path("/usr/lib/postgresql").is_dir() else None

pytestmark = pytest.mark.slurm


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root (slurmd, munge)"
    for tool in ("slurmctld", "slurmd", "slurmdbd", "munged", "mysql"):
        if not shutil.which(tool) and not Path(f"/usr/sbin/{tool}").exists():
            return f"{tool} is not installed"
    if PG_BIN is None:
        return "PostgreSQL server binaries are not installed"
    return None


def _sh(*argv: str, check: bool = True, env: dict | None = None, timeout: int = 120) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, env=env or ENV, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {result.returncode}: {result.stderr}")
    return result.stdout


ENV = dict(os.environ, SLURM_ATTR_CLUSTER_DIR=str(DIR), SLURM_ATTR_CLUSTER_NAME=CLUSTER,
           SLURM_ATTR_CLUSTER_LOCK=str(LOCK), SLURM_CONF=str(DIR / "etc/slurm.conf"),
           SLURM_ATTR_CONFIG=str(DIR / "e2e.toml"), PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
ENV.pop("SLURM_ATTR_CLUSTER_PORT_BASE", None)  # free ports, never a fixed base


@contextlib.contextmanager
def _port_lock() -> Iterator[None]:
    with open(LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


class PrivatePostgres:
    """A PostgreSQL server of our own, so a test can take the worker's database away for real."""

    def __init__(self, root: Path) -> None:
        self.data = root / "pgdata"
        self.port = 0

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/attr"

    def _pg(self, *args: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(self.data),
                        "-w", "-l", str(self.data.parent / "pg.log"), *args],
                       check=True, capture_output=True, timeout=60)

    def create(self) -> None:
        self.data.parent.mkdir(parents=True, exist_ok=True)
        shutil.chown(self.data.parent, "postgres")
        subprocess.run(["runuser", "-u", "postgres", "--", str(PG_BIN / "initdb"), "-D", str(self.data),
                        "-A", "trust", "-U", "postgres"], check=True, capture_output=True, timeout=120)
        with _port_lock():  # no other run picks the port between our choice and the server's bind
            self.port = int(_sh(str(ROOT / "tools/slurm-cluster"), "ports", "1"))
            self.start()
        admin = create_engine(self.url.removesuffix("/attr") + "/postgres", isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text("CREATE DATABASE attr"))
        admin.dispose()

    def start(self) -> None:
        # The socket goes beside the data, not in /tmp where another run's server could sit.
        self._pg("-o", f"-p {self.port} -k {self.data.parent} -c listen_addresses=127.0.0.1", "start")

    def stop(self) -> None:
        self._pg("-m", "fast", "stop")

    def kill(self) -> None:
        """Whatever state it is in (a test may have left it stopped)."""
        subprocess.run(["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(self.data),
                        "-m", "immediate", "stop"], capture_output=True, timeout=60)


PG = PrivatePostgres(DIR / "pg")
NODE_ZONE = "America/Chicago"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    reason = _missing()
    if reason:
        if os.environ.get("SLURM_ATTR_REQUIRE_CLUSTER") == "1":
            pytest.fail(f"the Slurm cluster is required here: {reason}")
        pytest.skip(reason)
    DIR.mkdir(mode=0o755)  # the name is ours: it did not exist
    try:
        _sh(str(ROOT / "tools/slurm-cluster"), "start", timeout=900)  # may wait for another run's start
        PG.create()
        (DIR / "e2e.toml").write_text(
            f'db = "{PG.url}"\nspool = "{DIR}/attr-spool"\n'
            f'node_logs = ["{DIR}/nodelogs/{{node}}/syslog*"]\n'
            f'controller_logs = ["{DIR}/log/slurmctld.log*"]\njob_output_roots = ["{DIR}/jobs"]\n'
            "settle_s = 1\nlease_s = 6\nbackoff_s = 1\nmax_tries = 30\n"
            # The nodes log classic syslog lines (no UTC offset) in Chicago time; the ISO lines
            # the other tests append carry their offset, which always wins.
            f'node_log_timezone = "{NODE_ZONE}"\n')
        yield PG
    finally:
        _teardown(tmp_path_factory.mktemp("e2e-logs"))


def _teardown(logs: Path) -> None:
    """Keep the logs (pytest's temporary directory, rotated), then leave nothing behind: no daemon,
    no slurmstepd, no accounting database, no directory."""
    PG.kill()
    for name in ("log", "worker.log", "pg/pg.log", "munge/munged.log"):
        source = DIR / name
        if source.is_dir():
            shutil.copytree(source, logs / name)
        elif source.exists():
            (logs / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, logs / name)
    _sh(str(ROOT / "tools/slurm-cluster"), "destroy", check=False)
    print(f"e2e logs: {logs}")


def _worker(*extra: str) -> subprocess.Popen:
    log = open(DIR / "worker.log", "a")  # noqa: SIM115 - the process owns it
    # The default poll interval: the worker must wake on the spool and on due jobs by itself.
    return subprocess.Popen([sys.executable, "-m", "slurm_attr.cli", "worker", "-v", *extra], env=ENV, stdout=log, stderr=subprocess.STDOUT)


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0, "the worker must stop cleanly on SIGTERM"


def sbatch(*args: str) -> str:
    return _sh("sbatch", "--parsable", f"--chdir={DIR}/jobs", *args).strip().split(";")[0]


def squeue_state(job: str) -> str:
    return _sh("squeue", "-h", "-j", job, "-o", "%T", check=False).strip()


def wait_until(predicate, timeout: float, what: str, step: float = 0.3):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def rows(sql: str, **params) -> list:
    engine = create_engine(PG.url)
    try:
        with engine.connect() as conn:
            return list(conn.execute(text(sql), params))
    finally:
        engine.dispose()


def diagnoses(job: str) -> list:
    return rows("SELECT a.attempt, d.sub_domain, d.outcome, b.document, d.created_at, a.end_time "
                "FROM diagnoses d JOIN attempts a ON a.id = d.attempt_id "
                "JOIN diagnosis_documents b ON b.diagnosis_id = d.id "
                "WHERE a.job_id = :job ORDER BY a.attempt", job=job)


def queue_state(job: str) -> list:
    return rows("SELECT attempt, state, tries FROM queue WHERE job_id = :job ORDER BY attempt", job=job)


def append_syslog(node: str, line: str) -> None:
    stamp = datetime.now(UTC).isoformat(timespec="microseconds")
    with open(DIR / "nodelogs" / node / "syslog", "a") as fh:
        fh.write(f"{stamp} {node} {line}\n")


GPU_JOB = r"""#!/bin/sh
srun -N2 -n2 sh -c '
if [ "$SLURM_PROCID" = 1 ]; then
  sleep 5
  ts=$(date -u +"%m%d %H:%M:%S")
  echo "[rank1]:[E$ts.000000123 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=48211, OpType=ALLREDUCE, NumelIn=524288, NumelOut=524288, Timeout(ms)=600000) ran for 600041 milliseconds before timing out." >&2
  echo "[rank1]: RuntimeError: NCCL communicator was aborted on rank 1." >&2
  exit 1
fi
sleep 7'
"""

REQUEUE_JOB = """#!/bin/sh
if [ "${SLURM_RESTART_COUNT:-0}" -ge 1 ]; then
  echo 'Traceback (most recent call last):' >&2
  echo '  File "/opt/train.py", line 12, in <module>' >&2
  echo '    main()' >&2
  echo 'ValueError: learning rate must be positive, got -0.001' >&2
  exit 2
fi
sleep 300
"""


@pytest.fixture(scope="module")
def scenario(cluster):
    """Run the failure scenarios at once, with the worker diagnosing them as they end."""
    for node in ("node01", "node02", "node03", "node04"):
        append_syslog(node, "systemd[1]: Started Session 1 of user root.")
    worker = _worker()
    try:
        return _run_scenario(worker)
    finally:
        if worker.poll() is None:
            worker.kill()


def _run_scenario(worker: subprocess.Popen) -> dict[str, str]:
    jobs = {
        "gpu": sbatch("-N2", "-w", "node[01-02]", "-o", "gpu-%j.out", "--wrap", GPU_JOB),
        "timeout": sbatch("--time=1", "-w", "node04", "-o", "timeout-%j.out", "--wrap", "sleep 600"),
        "node_fail": sbatch("-w", "node03", "-o", "nodefail-%j.out", "--no-requeue", "--wrap", "sleep 600"),
        "cancel": sbatch("-w", "node04", "-o", "cancel-%j.out", "--wrap", "sleep 600"),
        "requeue": sbatch("--requeue", "-w", "node01", "-o", "requeue-%j.out", "--wrap", REQUEUE_JOB),
        "success": sbatch("-w", "node04", "-o", "ok-%j.out", "--wrap", "echo fine"),
    }
    for name in ("gpu", "node_fail", "cancel", "requeue"):
        wait_until(lambda j=jobs[name]: squeue_state(j) == "RUNNING", 60, f"{name} job to run")
    time.sleep(1)
    append_syslog("node02", "kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, "
                  "GPU has fallen off the bus.")
    _sh("scontrol", "update", "nodename=node03", "state=down", "reason=e2e: PSU failure")
    _sh("scancel", jobs["cancel"])
    _sh("scontrol", "requeue", jobs["requeue"])
    for name, job in jobs.items():
        # a requeued job waits two minutes (BeginTime) before its next attempt
        wait_until(lambda j=job: squeue_state(j) == "", 240, f"{name} job to end", step=1)
    _sh("scontrol", "update", "nodename=node03", "state=resume", check=False)  # may be back already
    expected = {"gpu": 1, "timeout": 1, "node_fail": 1, "cancel": 1, "requeue": 2}
    for name, n in expected.items():
        wait_until(lambda j=jobs[name], n=n: len(diagnoses(j)) == n, 90, f"diagnosis of {name}")
    wait_until(lambda: queue_state(jobs["success"]) and queue_state(jobs["success"])[0][1] == "skipped",
               60, "the successful job to be skipped")
    _stop(worker)
    return jobs


def _one(job: str) -> dict:
    (found,) = diagnoses(job)
    return found[3]


def test_gpu_fault_on_one_node_explains_nccl_errors_elsewhere(scenario):
    d = _one(scenario["gpu"])
    assert d["sub_domain"] == "gpu", d["verdict"]
    assert d["root_cause"]["code"] == "XID 79"
    assert d["affected_nodes"] == ["node02"]
    nccl = [s for s in d["symptoms"] if "NCCL" in s["source"]["text"] or "Watchdog" in s["source"]["text"]]
    assert nccl and all(s["role"] == "interesting" and s["demoted_by"] for s in nccl)
    syslog = next(c for c in d["coverage"] if c["collector"] == "node_syslog" and c["node"] == "node02")
    assert syslog["status"] == "ok"


def test_time_limit(scenario):
    d = _one(scenario["timeout"])
    assert (d["terminal_state"], d["sub_domain"]) == ("TIMEOUT", "time_limit")


def test_node_set_down_is_a_node_failure_on_that_node(scenario):
    d = _one(scenario["node_fail"])
    assert d["terminal_state"] == "NODE_FAIL"
    assert d["sub_domain"] == "host"
    assert d["affected_nodes"] == ["node03"]
    assert any("PSU failure" in s["source"]["text"] for s in d["symptoms"])


def test_cancelled_by_user(scenario):
    d = _one(scenario["cancel"])
    assert (d["terminal_state"], d["sub_domain"]) == ("CANCELLED", "cancelled")
    assert "uid 0" in d["root_cause"]["explanation"]  # who cancelled it (the test runs as root)


def test_requeued_job_gets_one_diagnosis_per_attempt(scenario):
    first, second = diagnoses(scenario["requeue"])
    assert (first[0], second[0]) == (0, 1)
    assert first[3]["terminal_state"] == "REQUEUED"
    # `scontrol requeue` by an admin: the scheduler's own doing, not a preemption
    assert (first[3]["sub_domain"], first[3]["outcome"]) == ("requeued", "scheduler"), first[3]["verdict"]
    assert second[3]["sub_domain"] == "application", second[3]["verdict"]
    assert "ValueError" in second[3]["root_cause"]["code"] + second[3]["root_cause"]["explanation"]


def test_successful_job_costs_nothing_beyond_the_queue(scenario):
    assert diagnoses(scenario["success"]) == []
    assert [q[1] for q in queue_state(scenario["success"])] == ["skipped"]


def test_every_queued_job_is_handled_once(scenario):
    states = rows("SELECT job_id, attempt, state FROM queue")
    assert all(s[2] in ("done", "skipped") for s in states), states
    per_attempt = rows("SELECT attempt_id, count(*) FROM diagnoses GROUP BY attempt_id HAVING count(*) > 1")
    assert per_attempt == []


def test_worker_killed_mid_job_is_retaken_once(cluster, scenario):
    # A big node log keeps the worker busy long enough to kill it while it holds the lease.
    big = DIR / "nodelogs" / "node01" / "syslog"
    with open(big, "a") as fh:
        chunk = "".join(f"{datetime.now(UTC).isoformat()} node01 systemd[1]: noise line {i}\n"
                        for i in range(20000))
        for _ in range(150):
            fh.write(chunk)
    job = sbatch("-w", "node01", "-o", "kill-%j.out", "--wrap", "echo 'Segmentation fault (core dumped)'; exit 139")
    wait_until(lambda: squeue_state(job) == "", 60, "job to end")
    worker = _worker()
    wait_until(lambda: queue_state(job) and queue_state(job)[0][1] == "leased", 60, "the worker to claim it",
               step=0.02)
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    assert diagnoses(job) == []
    worker = _worker()
    wait_until(lambda: len(diagnoses(job)) == 1, 120, "the job to be diagnosed after the restart")
    _stop(worker)
    assert len(diagnoses(job)) == 1
    ((_, state, tries),) = queue_state(job)
    assert state == "done" and tries == 2


def test_database_down_while_jobs_finish(cluster, scenario):
    cluster.stop()
    try:
        job = sbatch("-w", "node02", "-o", "dbdown-%j.out", "--wrap", "echo 'CUDA error: out of memory' >&2; exit 1")
        wait_until(lambda: squeue_state(job) == "", 60, "job to end")
        spool = DIR / "attr-spool" / "new"
        assert any(p.name.startswith(f"{job}.0.") for p in spool.iterdir()), "the epilog must queue it"
        worker = _worker()  # starts while the database is down: it must wait, not die
        time.sleep(3)
        assert worker.poll() is None
    finally:
        cluster.start()
    wait_until(lambda: len(diagnoses(job)) == 1, 120, "the job to be diagnosed once the database is back")
    _stop(worker)
    assert not any(p.name.startswith(f"{job}.0.") for p in spool.iterdir())


def test_analyze_job_on_demand_matches_the_worker(scenario):
    out = _sh(sys.executable, "-m", "slurm_attr.cli", "analyze", "--job", scenario["gpu"], "--format", "json")
    d = json.loads(out)
    stored = _one(scenario["gpu"])
    assert (d["sub_domain"], d["root_cause"]["code"]) == (stored["sub_domain"], stored["root_cause"]["code"])
    # the hook's environment (from the queue) named the job's output file, so it was read
    assert next(c for c in d["coverage"] if c["collector"] == "job_output")["status"] == "ok"


def test_backfill_finds_the_failed_attempts_in_sacct_history(scenario, tmp_path):
    db = f"sqlite:///{tmp_path}/backfill.db"
    result = subprocess.run([sys.executable, "-m", "slurm_attr.cli", "backfill", "--since", "2h", "--db", db],
                            env=ENV, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    engine = create_engine(db)
    with engine.connect() as conn:
        found = {(j, a) for j, a in conn.execute(text(
            "SELECT a.job_id, a.attempt FROM diagnoses d JOIN attempts a ON a.id = d.attempt_id"))}
    engine.dispose()
    expected = {(scenario[k], 0) for k in ("gpu", "timeout", "node_fail", "cancel", "requeue")}
    assert expected | {(scenario["requeue"], 1)} <= found
    assert all(j != scenario["success"] for j, _ in found)


def test_backfill_leaves_diagnosed_attempts_alone_and_redo_never_makes_them_worse(scenario):
    before = {(j, a): (sub, out) for j in scenario.values() for a, sub, out, *_ in diagnoses(j)}
    backfill = [sys.executable, "-m", "slurm_attr.cli", "backfill", "--since", "2h", "--wait", "60"]
    result = subprocess.run(backfill, env=ENV, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "already diagnosed were left alone" in result.stderr and "queued 0 failed" in result.stderr
    result = subprocess.run([*backfill, "--redo"], env=ENV, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "still queued" not in result.stderr  # --wait saw every attempt through
    current = rows("SELECT a.job_id, a.attempt, d.sub_domain, d.outcome FROM diagnoses d "
                   "JOIN attempts a ON a.id = d.attempt_id WHERE d.is_current")
    after = {(j, a): (sub, out) for j, a, sub, out in current if (j, a) in before}
    assert after == before  # the hook's output names were reused: the job output was read again
    (second,) = [r[0] for r in rows(
        "SELECT b.document FROM diagnoses d JOIN attempts a ON a.id = d.attempt_id "
        "JOIN diagnosis_documents b ON b.diagnosis_id = d.id "
        "WHERE a.job_id = :job AND a.attempt = 1 AND d.is_current", job=scenario["requeue"])]
    assert "ValueError" in second["root_cause"]["code"] + second["root_cause"]["explanation"]


CHICAGO_XID = "kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."


def test_node_logs_in_a_local_zone_are_placed_on_the_job_timeline(cluster, scenario, tmp_path):
    """The node writes classic syslog in Chicago time: read as UTC the Xid would land hours
    before the job; with node_log_timezone it is the root cause."""
    from zoneinfo import ZoneInfo

    job = sbatch("-w", "node04", "-o", "tz-%j.out", "--wrap", "sleep 6; exit 1")
    wait_until(lambda: squeue_state(job) == "RUNNING", 60, "the job to run")
    time.sleep(2)
    stamp = datetime.now(ZoneInfo(NODE_ZONE)).strftime("%b %e %H:%M:%S")
    with open(DIR / "nodelogs" / "node04" / "syslog", "a") as fh:
        fh.write(f"{stamp} node04 {CHICAGO_XID}\n")
    worker = _worker()
    try:
        wait_until(lambda: len(diagnoses(job)) == 1, 120, "the job to be diagnosed")
    finally:
        _stop(worker)
    d = _one(job)
    assert (d["sub_domain"], d["affected_nodes"]) == ("gpu", ["node04"]), d["verdict"]
    # The same line read as UTC (a config without the zone) is hours before the job: not the cause.
    utc_config = tmp_path / "utc.toml"
    utc_config.write_text((DIR / "e2e.toml").read_text().replace(f'node_log_timezone = "{NODE_ZONE}"', ""))
    out = _sh(sys.executable, "-m", "slurm_attr.cli", "analyze", "--job", job, "--format", "json",
              env={**ENV, "SLURM_ATTR_CONFIG": str(utc_config), "TZ": "UTC"})
    assert json.loads(out)["sub_domain"] != "gpu"


def test_a_syslog_servers_shared_file_gives_each_line_to_the_node_that_wrote_it(cluster, tmp_path):
    """node_logs without {node}: one file every machine logs to, read once. node04's Xid during
    its job is the cause; the same Xid from node01, which the job did not use, is not evidence."""
    job = sbatch("-w", "node04", "-o", "shared-%j.out", "--wrap", "sleep 6; exit 1")
    wait_until(lambda: squeue_state(job) == "RUNNING", 60, "the job to run")
    time.sleep(2)
    shared = DIR / "central" / "messages"
    shared.parent.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).isoformat(timespec="microseconds")
    shared.write_text("".join(f"{stamp} {host} {CHICAGO_XID}\n" for host in ("node01", "node04")))
    wait_until(lambda: squeue_state(job) == "", 60, "the job to end")
    config = tmp_path / "shared.toml"
    config.write_text((DIR / "e2e.toml").read_text().replace(
        f'node_logs = ["{DIR}/nodelogs/{{node}}/syslog*"]', f'node_logs = ["{shared}"]'))
    out = _sh(sys.executable, "-m", "slurm_attr.cli", "analyze", "--job", job, "--format", "json",
              env={**ENV, "SLURM_ATTR_CONFIG": str(config)})
    d = json.loads(out)
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu", ["node04"]), d["verdict"]
    xids = [s for s in d["symptoms"] if s["kind"] == "gpu_xid"]
    assert [s["node"] for s in xids] == ["node04"] and d["affected_nodes"] == ["node04"]


RANK_JOB = r"""#!/bin/sh
srun -n4 --distribution=cyclic sh -c '
if [ "$SLURM_PROCID" = 2 ]; then
  echo "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
  exit 1
fi' 2>/dev/null
"""


def test_a_rank_is_placed_by_the_steps_task_layout_and_the_output_found_without_the_hook(cluster, scenario):
    """Four tasks round-robin over node01-02: rank 2 ran on node01, where a guess of consecutive
    ranks per node would not put it. srun's own `node01: task 2: Exited` line would name the node
    by itself, so it is kept out (2>/dev/null): only the step's layout from sacct places the rank.
    No worker runs, so no queued hook environment names `ranks-%j.out`: slurmctld still does."""
    job = sbatch("-N2", "-n4", "-w", "node[01-02]", "-o", "ranks-%j.out", "--wrap", RANK_JOB)
    wait_until(lambda: squeue_state(job) == "", 60, "the job to end")
    d = json.loads(_sh(sys.executable, "-m", "slurm_attr.cli", "analyze", "--job", job, "--format", "json"))
    assert next(c for c in d["coverage"] if c["collector"] == "job_output")["status"] == "ok"
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu_oom", ["node01"]), d["verdict"]
