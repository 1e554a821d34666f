"""The Slurm integration's parts without a cluster: sacct parsing, the spool, the hook script,
job output names and permissions (real files, real users), the queue on both databases, config."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from slurm_replay import Replay

from slurm_attr import config, hook
from slurm_attr.connectors.job_output import JobNames, Owner, check, expand_pattern, output_paths
from slurm_attr.extract.layout import rank_layout
from slurm_attr.scope.slurm import SlurmCommands, _node_distribution, parse_parsable, workload_from
from slurm_attr.store import queue
from slurm_attr.worker.spool import SpoolError, parse_env, read_entries

DATA = Path(__file__).parent / "data"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to own files as other users")


@pytest.fixture
def open_dir():
    """A directory other users may enter (pytest's tmp_path lies under a 0700 directory)."""
    path = Path(tempfile.mkdtemp(prefix="slurm-attr-test-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


# ---------------------------------------------------------------------------- sacct
def test_parsable2_from_slurm_22_05():
    """Lines as 22.05.8's `sacct -D -P -n --delimiter=$'\\x1e|' --format=<FIELDS>` printed them."""
    jobs = parse_parsable((DATA / "sacct-22.05.8-parsable2.txt").read_text())
    (failed,) = jobs["1"]
    assert (failed.state, failed.exit_code) == ("FAILED", "3:0")
    assert [s.id for s in failed.steps] == ["batch", "0"]
    first, second = jobs["4"]
    assert (first.attempt, first.state) == (0, "REQUEUED")
    assert (second.attempt, second.state, second.exit_code) == (1, "FAILED", "3:0")
    assert second.start == datetime(2026, 11, 30, 3, 15, 33, tzinfo=UTC)
    (cancelled,) = jobs["7"]
    assert (cancelled.state, cancelled.cancelled_by_uid) == ("CANCELLED", "1001")
    assert cancelled.name == "train|v2"  # user text with the default delimiter in it
    assert cancelled.gpus_per_node == 8
    assert jobs["8"][0].start is None


def test_workload_from_sacct_facts():
    facts = parse_parsable((DATA / "sacct-22.05.8-parsable2.txt").read_text())["7"][0]
    w = workload_from(facts, "fallback")
    assert (w.cluster, w.nodes, w.elapsed_s, w.gpus_per_node) == (
        "attrtest", ["gpu-001", "gpu-002"], 599.0, 8)
    assert "uid 1001" in w.reason  # CANCELLED by 1001: who cancelled it


def test_the_steps_task_layout_from_sacct_columns_places_ranks_without_the_json_plugin():
    """Lines as 22.05.8 printed them with NTasks and Layout: `srun -n4 --distribution=cyclic` (3.0)
    and `--distribution=block` (4.0) over two nodes, each beside its one-task batch step."""
    replay = Replay(recording="sacct-22.05.8-layout.txt", cluster="attrrec")  # no JSON plugin
    jobs = SlurmCommands(config.Settings(), runner=replay).sacct(["3", "4"])
    steps = {f"{j}.{s.id}": s for j in ("3", "4") for s in jobs[j][0].steps}
    assert (steps["3.0"].ntasks, steps["3.0"].distribution) == (4, "cyclic")
    assert (steps["4.0"].ntasks, steps["4.0"].distribution) == (4, "block")
    assert (steps["4.batch"].ntasks, steps["4.batch"].distribution) == (1, "")  # Layout=Unknown
    cyclic = rank_layout(workload_from(jobs["3"][0], "attrrec"))
    block = rank_layout(workload_from(jobs["4"][0], "attrrec"))
    assert [cyclic.host(r) for r in range(4)] == ["node01", "node02", "node01", "node02"]
    assert [block.host(r) for r in range(4)] == ["node03", "node03", "node04", "node04"]


@pytest.mark.parametrize(("layout", "distribution"), [
    ("Block", "block"), ("Cyclic", "cyclic"), ("BCyclic", "block"), ("BFCyclic", "block"),
    ("CBlock", "cyclic"), ("CCyclic", "cyclic"), ("Block,Pack", "block"), ("Plane", "plane"),
    ("Arbitrary", "arbitrary"), ("Unknown", ""), ("", ""), ("Bogus", "")])
def test_sacct_layout_names_give_the_distribution_over_nodes(layout, distribution):
    """slurm_step_layout_type_name's names: the first level of a two-level name is the nodes'."""
    assert _node_distribution(layout) == distribution


def test_the_steps_task_layout_comes_from_sacct_json_where_the_columns_lack_it():
    """Where sacct has its JSON output, each step's task count and distribution join the columns'."""
    class WithJson(Replay):
        def __call__(self, argv: list[str]) -> str:
            if argv[0] == "sacct" and "--json" in argv:
                start = int(datetime(2026, 11, 30, 2, 59, 55, tzinfo=UTC).timestamp())
                return json.dumps({"jobs": [{"job_id": 1, "time": {"start": start}, "steps": [
                    {"step": {"id": "1.0", "name": "sh"}, "tasks": {"count": 16},
                     "task": {"distribution": "cyclic"}}]}]})
            return super().__call__(argv)

    (facts,) = SlurmCommands(config.Settings(), runner=WithJson()).sacct(["1"])["1"]
    step = next(s for s in facts.steps if s.id == "0")
    assert (step.ntasks, step.distribution, step.nodes) == (16, "cyclic", "node[01-02]")
    assert next(s for s in facts.steps if s.id == "batch").ntasks is None


# ---------------------------------------------------------------------------- spool and hook
def _env(**extra: str) -> bytes:
    env = {"SLURM_JOB_ID": "42", "SLURM_JOB_RESTART_COUNT": "0", "HOME": "/root",
           "SLURM_JOB_NAME": "we=ird\nname", **extra}
    return b"\0".join(f"{k}={v}".encode() for k, v in env.items()) + b"\0"


def test_spool_entry_keeps_only_slurm_variables_verbatim():
    env = parse_env(_env())
    assert env["SLURM_JOB_NAME"] == "we=ird\nname"
    assert "HOME" not in env


@pytest.mark.parametrize("bad", [b"", b"SLURM_JOB_ID=abc\0", _env(SLURM_JOB_RESTART_COUNT="x")])
def test_spool_rejects_entries_that_name_no_job(bad):
    with pytest.raises(SpoolError):
        parse_env(bad)


def test_read_entries_reports_garbage_without_stopping(tmp_path):
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "42.0.1.job").write_bytes(_env())
    (tmp_path / "new" / "2.0.1.job").write_bytes(b"\xff\xfe garbage")
    (tmp_path / "new" / ".hidden").write_bytes(_env())
    got = list(read_entries(tmp_path))
    assert [type(g).__name__ for g in got] == ["SpoolEntry", "tuple"]


def _run_hook(script: Path, spool: Path) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "SLURM_JOB_ID": "77", "SLURM_JOB_RESTART_COUNT": "1",
           "SLURM_JOB_EXIT_CODE2": "3:0", "SLURM_JOB_STDOUT": "/home/u/out-%j.txt"}
    return subprocess.run(["sh", str(script)], env={**env, "SLURM_ATTR_SPOOL": str(spool)},
                          capture_output=True, timeout=10)


def test_hook_queues_the_job_environment(tmp_path):
    script = tmp_path / "hook"
    script.write_text(hook.script_text(str(tmp_path / "spool")))
    result = _run_hook(script, tmp_path / "spool")
    assert result.returncode == 0 and result.stderr == b""
    (entry,) = list(read_entries(tmp_path / "spool"))
    assert entry.env["SLURM_JOB_STDOUT"] == "/home/u/out-%j.txt" and entry.attempt == 1
    assert list((tmp_path / "spool" / "tmp").iterdir()) == []


def test_hook_exits_zero_even_when_it_cannot_queue(tmp_path):
    script = tmp_path / "hook"
    script.write_text(hook.script_text("/proc/no-such-spool"))
    result = _run_hook(script, Path("/proc/no-such-spool"))
    assert result.returncode == 0


def test_hook_spool_must_be_a_plain_absolute_path():
    assert "SPOOL=${SLURM_ATTR_SPOOL:-/var/spool/x}" in hook.script_text("/var/spool/x")
    for bad in ("relative", "/a}b", "/a$(reboot)", "/a'b"):
        with pytest.raises(hook.HookError):
            hook.script_text(bad)


@ROOT_ONLY
def test_install_refuses_a_spool_the_slurm_user_cannot_write(tmp_path):
    tmp_path.chmod(0o700)  # nobody cannot even enter it
    with pytest.raises(hook.HookError, match="cannot write"):
        hook.install(tmp_path / "spool", tmp_path / "hook", "nobody")
    assert not (tmp_path / "hook").exists()


@ROOT_ONLY
def test_install_prepares_a_spool_the_slurm_user_can_write(open_dir):
    hook.install(open_dir / "spool", open_dir / "bin" / "hook", "nobody")
    assert os.access(open_dir / "bin" / "hook", os.X_OK)
    assert (open_dir / "spool" / "new").stat().st_uid == pwd.getpwnam("nobody").pw_uid


# ---------------------------------------------------------------------------- job output
JOB = JobNames("1234", "alice", "train", "gpu-007")


@pytest.mark.parametrize("pattern,expected", [
    ("slurm-%j.out", "slurm-1234.out"), ("%x-%u-%N.log", "train-alice-gpu-007.log"),
    ("out-%8j", "out-00001234"), ("100%%-%J", "100%-1234"), ("%A_%a", "1234_4294967294"),
    ("%n.%t.%s", "0.0.batch"), ("%q", "%q"),
])
def test_sbatch_filename_patterns(pattern, expected):
    assert expand_pattern(pattern, JOB) == expected


def test_output_paths_default_and_relative():
    env = {"SLURM_JOB_WORK_DIR": "/home/alice/run", "SLURM_JOB_STDERR": "err-%j"}
    assert output_paths(env, JOB) == [Path("/home/alice/run/slurm-1234.out"),
                                      Path("/home/alice/run/err-1234")]
    assert output_paths({"SLURM_JOB_STDOUT": "/dev/null"}, JOB) == []


@ROOT_ONLY
def test_only_files_the_owner_could_read_are_read(open_dir):
    nobody = pwd.getpwnam("nobody")
    owner = Owner.of("nobody")
    home = open_dir / "home"
    home.mkdir(mode=0o755)
    mine = home / "mine.out"
    mine.write_text("hello\n")
    os.chown(mine, nobody.pw_uid, nobody.pw_gid)
    mine.chmod(0o600)
    secret = home / "shadow-copy"
    secret.write_text("root only\n")
    secret.chmod(0o600)
    link = home / "link.out"
    link.symlink_to("/etc/hostname")
    roots = [open_dir.resolve()]
    assert check(mine, owner, roots).identity is not None
    assert "cannot read" in check(secret, owner, roots)
    assert "outside the allowed output roots" in check(link, owner, roots)
    closed = home / "closed"
    closed.mkdir(mode=0o700)
    inner = closed / "x.out"
    inner.write_text("x")
    os.chown(inner, nobody.pw_uid, nobody.pw_gid)
    assert "cannot enter" in check(inner, owner, roots)


# ---------------------------------------------------------------------------- queue
def _rows(n: int, **extra) -> list[dict]:
    return [{"cluster": "c", "entry": f"{i}.0.1.job", "job_id": str(i), "attempt": 0,
             "ended_at": queue.now(), "payload": {"SLURM_JOB_ID": str(i)}, "source": "epilog",
             "not_before": queue.now() - timedelta(seconds=1), **extra} for i in range(n)]


def test_enqueue_is_idempotent_per_entry(store):
    assert queue.enqueue(store, _rows(3)) == 3
    assert queue.enqueue(store, _rows(4)) == 1


def test_a_lease_that_runs_out_is_claimed_again(store):
    queue.enqueue(store, _rows(1))
    (first,) = queue.claim(store, "w1", 10, lease_s=0)
    assert queue.claim(store, "w2", 10, lease_s=60)[0].id == first.id  # w1's lease ran out
    assert queue.claim(store, "w3", 10, lease_s=60) == []


def test_retries_back_off_then_go_to_dead_letters(store):
    queue.enqueue(store, _rows(1))
    (c,) = queue.claim(store, "w", 1, lease_s=60)
    assert queue.retry(store, c, "sacct lag", max_tries=2, backoff_s=3600) == "pending"
    assert queue.claim(store, "w", 1, lease_s=60) == []  # not due for an hour
    with store.sessions.begin() as s:
        from slurm_attr.store.models import QueueEntry
        s.query(QueueEntry).update({"not_before": queue.now() - timedelta(seconds=1)})
    (c,) = queue.claim(store, "w", 1, lease_s=60)
    assert c.tries == 2
    assert queue.retry(store, c, "still lagging", max_tries=2, backoff_s=1) == "dead"
    assert queue.counts(store) == {"dead": 1}


def test_concurrent_workers_never_claim_the_same_job(store):
    queue.enqueue(store, _rows(60))
    claimed: list[list[int]] = [[] for _ in range(4)]

    def work(k: int) -> None:
        while batch := queue.claim(store, f"w{k}", 3, lease_s=60):
            claimed[k] += [c.id for c in batch]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for ids in claimed for i in ids]
    assert len(every) == len(set(every)) == 60


# ---------------------------------------------------------------------------- config
def test_config_file_then_environment(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('db = "sqlite:///x.db"\n[worker]\nsettle_s = 3\n[collect]\nnode_logs = "/l/{node}"\n')
    s = config.build(config.read_file(path), {"SLURM_ATTR_DB": "postgresql+psycopg://h/db"})
    assert (s.db, s.settle_s, s.node_logs) == ("postgresql+psycopg://h/db", 3, ("/l/{node}",))
    assert config.build({}, {}).spool == "/var/spool/slurm-attr"


@pytest.mark.parametrize("text,error", [("setle_s = 3", "unknown setting"), ("settle_s = -1", "non-negative"),
                                        ("node_logs = [1]", "list of strings"), ("db = [", "c.toml")])
def test_config_mistakes_are_reported(tmp_path, text, error):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(config.ConfigError, match=error):
        config.build(config.read_file(path), {})


def test_install_reads_slurm_conf(tmp_path):
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\n  slurmuser = slurm\nEpilogSlurmctld=/etc/slurm/old-epilog\n")
    assert hook.slurm_user(conf) == "slurm"
    assert hook.other_epilog(conf, Path("/usr/local/sbin/slurm-attr-epilog")) == "/etc/slurm/old-epilog"
    assert hook.other_epilog(conf, Path("/etc/slurm/old-epilog")) is None
    assert hook.slurm_user(tmp_path / "missing.conf") == "root"


def test_queue_command_lists_and_revives_dead_letters(tmp_path):
    from click.testing import CliRunner

    from slurm_attr.cli import cli
    from slurm_attr.store.repository import Store

    db = f"sqlite:///{tmp_path / 'q.db'}"
    with Store.open(db) as store:
        queue.enqueue(store, _rows(2))
        for c in queue.claim(store, "w", 1, lease_s=60):
            queue.retry(store, c, "sacct: \x1b[31mSlurm is down", max_tries=1, backoff_s=1)
    out = CliRunner().invoke(cli, ["queue", "--db", db]).stdout
    assert "dead" in out and "Slurm is down" in out and "\x1b" not in out
    out = CliRunner().invoke(cli, ["queue", "--db", db, "--retry-dead"]).stdout
    assert out.startswith("1 dead-letter jobs queued again") and "dead:" not in out
    with Store.open(db) as store:
        assert queue.counts(store) == {"pending": 2}
