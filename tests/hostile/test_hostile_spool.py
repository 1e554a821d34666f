"""Class 7: a bad spool entry is set aside with its reason and never blocks the good ones; job
ids are ASCII digits and entries must be complete; `worker --once` ends."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from slurm_attr.config import Settings
from slurm_attr.store.models import QueueEntry
from slurm_attr.worker.loop import Worker
from slurm_attr.worker.spool import SpoolEntry, SpoolError, parse_env, read_entries


def _env(job_id: str = "42", **extra: str) -> bytes:
    env = {"SLURM_JOB_ID": job_id, "SLURM_JOB_RESTART_COUNT": "0", "SLURM_CLUSTER_NAME": "t", **extra}
    return b"".join(f"{k}={v}".encode() + b"\0" for k, v in env.items())


@pytest.mark.parametrize(("raw", "why"), [
    (_env()[:-1], "incomplete entry"),
    (_env()[: _env().index(b"RESTART") - 3], "incomplete entry"),
    (_env("٤٢"), "SLURM_JOB_ID is not a number"),
    (_env("42x"), "SLURM_JOB_ID is not a number"),
    (_env(SLURM_ARRAY_TASK_ID="1; reboot"), "SLURM_ARRAY_TASK_ID is not a number"),
    (_env(SLURM_CLUSTER_NAME="c" * 300), "SLURM_CLUSTER_NAME is longer"),
    (b"HOME=/root\0", "no SLURM_JOB_ID"),
])
def test_bad_entries_are_refused_with_a_reason(raw, why):
    with pytest.raises(SpoolError, match=why):
        parse_env(raw)


def test_a_truncated_job_id_disagrees_with_the_entry_name():
    with pytest.raises(SpoolError, match="disagrees"):
        parse_env(_env("4"), "4242.0.99.job")
    assert parse_env(_env("4242"), "4242.0.99.job")["SLURM_JOB_ID"] == "4242"


def _spool(tmp_path: Path) -> Path:
    spool = tmp_path / "spool"
    (spool / "new").mkdir(parents=True)
    return spool


def test_poison_entries_are_set_aside_and_the_good_ones_queued(tmp_path, store):
    spool = _spool(tmp_path)
    new = spool / "new"
    (new / "1.0.1.job").write_bytes(_env("1"))
    (new / "dangling.job").symlink_to(tmp_path / "gone")  # used to stop all ingestion
    (new / "passwd.job").symlink_to("/etc/passwd")
    os.mkfifo(new / "fifo.job")
    (new / "bad\udcff.job".encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
     ).write_bytes(_env("3"))
    (new / "2.0.1.job").write_bytes(_env("2"))
    (new / "3.0.1.job").write_bytes(_env("3")[:-1])
    worker = Worker(store, Settings(spool=str(spool), cluster="t"))
    assert worker.ingest() == 2
    with store.sessions() as s:
        assert sorted(s.scalars(select(QueueEntry.job_id)).all()) == ["1", "2"]
    assert os.listdir(new) == []
    assert sorted(os.listdir(spool / "failed")) == sorted(
        ["dangling.job", "passwd.job", "fifo.job", "3.0.1.job", os.fsdecode(b"bad\xff.job")])
    assert Path("/etc/passwd").exists()  # the link was moved, not what it points to


def test_a_chunk_the_database_refuses_is_retried_one_by_one(tmp_path, store):
    """Whatever slips past validation and is refused by the database costs only its own entry."""
    spool = _spool(tmp_path)
    good = spool / "new" / "1.0.1.job"
    good.write_bytes(_env("1"))
    bad = spool / "new" / "2.0.1.job"
    bad.write_bytes(_env("2"))
    entries = [SpoolEntry(good, parse_env(_env("1")), 0.0),
               SpoolEntry(bad, {**parse_env(_env("2")), "SLURM_CLUSTER_NAME": "t\udcff"}, 0.0)]
    worker = Worker(store, Settings(spool=str(spool), cluster="t"))
    assert worker._enqueue(entries) == 1
    assert os.listdir(spool / "failed") == ["2.0.1.job"] and not good.exists()


def test_entries_are_read_in_arrival_order_without_following_links(tmp_path):
    spool = _spool(tmp_path)
    for i, name in enumerate(["9.0.1.job", "1.0.1.job"]):
        path = spool / "new" / name
        path.write_bytes(_env(name.split(".")[0]))
        os.utime(path, (1000 + i, 1000 + i))
    got = [e.job_id for e in read_entries(spool) if isinstance(e, SpoolEntry)]
    assert got == ["9", "1"]


def test_worker_once_ends_with_poison_in_the_spool(tmp_path):
    spool = _spool(tmp_path)
    (spool / "new" / "5.0.1.job").write_bytes(_env("5"))
    (spool / "new" / "dangling.job").symlink_to(tmp_path / "gone")
    (spool / "new" / "6.0.1.job").write_bytes(_env("6", SLURM_CLUSTER_NAME="c" * 500))
    config = tmp_path / "config.toml"
    config.write_text(f'spool = "{spool}"\nsettle_s = 0\nbackoff_s = 600\nsacct = "/bin/false"\n')
    env = dict(os.environ, SLURM_ATTR_CONFIG=str(config), SLURM_ATTR_DB=f"sqlite:///{tmp_path / 'q.db'}")
    result = subprocess.run([sys.executable, "-m", "slurm_attr.cli", "worker", "--once"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(spool / "failed")) == ["6.0.1.job", "dangling.job"]
    assert "SLURM_CLUSTER_NAME is longer" in result.stderr


def test_a_database_that_is_down_sets_nothing_aside(tmp_path):
    """An unreachable database is an outage, not a refusal: every entry stays in the spool."""
    from sqlalchemy.exc import OperationalError

    from slurm_attr.store.repository import Store

    spool = _spool(tmp_path)
    (spool / "new" / "1.0.1.job").write_bytes(_env("1"))
    (spool / "new" / "2.0.1.job").write_bytes(_env("2"))
    down = Store("postgresql+psycopg://postgres@127.0.0.1:1/nothing")  # no server listens on port 1
    with pytest.raises(OperationalError):
        Worker(down, Settings(spool=str(spool), cluster="t")).ingest()
    assert sorted(os.listdir(spool / "new")) == ["1.0.1.job", "2.0.1.job"]
    assert not (spool / "failed").exists()
