"""The worker in remote mode: live sources become a bundle, posted to a real `slurm-attr serve` on a
loopback port, which diagnoses and stores it. The Slurm client is the real one replaying sacct
output recorded on the test cluster (tests/slurm_replay.py), renamed to a cluster of its own."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from slurm_replay import Replay
from sqlalchemy import select, update
from test_service import READ, SUBMIT, free_port, start_service

from slurm_attr.analyze import analyze_bundle, diagnose_attempt
from slurm_attr.collect.confine import Root
from slurm_attr.config import Settings
from slurm_attr.connectors.export import write_bundle
from slurm_attr.ruleset import load as load_rules
from slurm_attr.scope.slurm import DELIMITER, SlurmCommands, workload_from
from slurm_attr.scope.static import BundleError, load_events
from slurm_attr.store import queue
from slurm_attr.store.models import QueueEntry
from slurm_attr.store.repository import Store
from slurm_attr.worker.loop import Worker
from slurm_attr.worker.remote import Refused, Remote, TokenFileError, read_token

CLUSTER = "east"  # the worker's cluster; the service's own config says "attrtest"
FAILED_END = datetime(2026, 11, 30, 3, 15, 39, tzinfo=UTC)  # job 4, attempt 1 (attempt 0 requeued)
NHC_DOWN = "node01|2026-11-30T03:15:37|Unknown|DOWN|NHC: GPU 0 fell off the bus|root\n"


class Cluster(Replay):
    """The recorded cluster under another name, whose sacctmgr knows node01 went down."""

    def __init__(self) -> None:
        super().__init__(cluster=CLUSTER)
        self.lines = [line.replace(f"{DELIMITER}attrtest{DELIMITER}", f"{DELIMITER}{CLUSTER}{DELIMITER}")
                      for line in self.lines]

    def __call__(self, argv: list[str]) -> str:
        if argv[0] == "sacctmgr" and not self.failing:
            self.calls.append(argv)
            return NHC_DOWN
        return super().__call__(argv)


def _syslog(folder: Path) -> None:
    """node01's syslog: the fault inside the window, the same words a day before and an hour
    after (cut away), and a rotated, gzipped file older still."""
    folder.mkdir(parents=True)
    day_before = "Nov 29 03:15:36 node01 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', " \
                 "name=<unknown>, GPU has fallen off the bus.\n"
    filler = "".join(f"Nov 29 {h:02d}:00:00 node01 systemd[1]: Started session {h}.\n" for h in range(4, 24))
    (folder / "syslog").write_text(
        day_before + filler +
        "Nov 30 03:15:35 node01 kernel: pcieport 0000:17:01.0: AER: Uncorrected (Fatal) error "
        "received: 0000:18:00.0\n"
        "Nov 30 03:15:36 node01 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', "
        "name=<unknown>, GPU has fallen off the bus.\n"
        "  continuation without a time of its own\n"
        "Nov 30 05:00:00 node01 systemd[1]: Started session 99 (after the window).\n")
    (folder / "syslog.1.gz").write_bytes(gzip.compress(
        b"Nov 28 10:00:00 node01 systemd[1]: Started session 1.\n"
        b"Nov 30 02:40:00 node01 kernel: EDAC MC0: 1 CE memory read error on CPU_SrcID#0\n"))


@pytest.fixture
def live(tmp_path) -> tuple[Settings, SlurmCommands, dict[str, str]]:
    """Settings, a Slurm client and the hook's environment for job 4 of cluster `east`."""
    _syslog(tmp_path / "logs" / "node01")
    ctl = tmp_path / "ctld"
    ctl.mkdir()
    (ctl / "slurmctld.log").write_text(
        "[2026-11-29T10:00:00.000] _slurm_rpc_submit_batch_job: JobId=3 (long before)\n"
        "[2026-11-30T03:15:37.000] update_node: node node01 state set to DOWN\n"
        "[2026-11-30T03:15:39.000] _job_complete: JobId=4 WEXITSTATUS 3\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "slurm-4.out").write_text("".join(
        f"[rank{r}]:[E1130 03:15:38.000000123 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=48211, OpType=ALLREDUCE, NumelIn=524288, "
        "NumelOut=524288, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.\n"
        for r in range(2)))
    conf = Settings(spool=str(tmp_path / "spool"), node_logs=(str(tmp_path / "logs/{node}/syslog*"),),
                    controller_logs=(str(ctl / "slurmctld.log*"),), job_output_roots=(str(tmp_path),),
                    settle_s=0, timezone="UTC", backoff_s=100)
    env = {"SLURM_JOB_ID": "4", "SLURM_JOB_USER": "root", "SLURM_JOB_RESTART_COUNT": "1",
           "SLURM_JOB_STDOUT": str(out / "slurm-%j.out"), "SLURM_JOB_WORK_DIR": str(tmp_path)}
    return conf, SlurmCommands(conf, runner=Cluster()), env


def _facts(client: SlurmCommands, attempt: int = 1) -> dict:
    return client.sacct(["4"])["4"][attempt]


def _essence(d: dict) -> dict:
    """What must agree between the in-process and the bundle diagnosis: the verdict, the root and
    every event (not where a line was: the bundle holds the lines cut to the window)."""
    events = [{k: v for k, v in e.items() if k not in ("source",)} for e in d["symptoms"]]
    return {"sub_domain": d["sub_domain"], "outcome": d["outcome"], "status": d["evidence_status"],
            "verdict": d["verdict"], "root_cause": d["root_cause"], "affected": d["affected_nodes"],
            "candidates": d["candidates"], "events": events, "workload": d["workload"]}


def test_a_bundle_built_from_live_sources_gives_the_in_process_diagnosis(live, tmp_path):
    conf, client, env = live
    facts = _facts(client)
    here = diagnose_attempt(facts, CLUSTER, env, conf, client)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    done = write_bundle(bundle, workload_from(facts, CLUSTER), load_rules(None), conf, env, client,
                        max_bytes=1 << 20)
    there = analyze_bundle(bundle)
    assert (here["sub_domain"], here["root_cause"]["code"]) == ("gpu", "XID 79")
    assert _essence(there) == _essence(here)
    assert any(e["rule"] == "sacctmgr.node_event" for e in there["symptoms"])  # from events.json
    syslog = (bundle / "nodes" / "node01" / "syslog").read_text()
    assert "Nov 30 03:15:36" in syslog and "continuation" in syslog
    assert "Nov 29 03:15:36" not in syslog and "05:00:00" not in syslog  # cut to the window
    assert (bundle / "nodes" / "node01" / "syslog.1").read_text().startswith("Nov 30 02:40:00")
    assert "JobId=3" not in (bundle / "controller" / "slurmctld.log").read_text()
    assert json.loads((bundle / "workload.json").read_text())["cluster"] == CLUSTER
    assert done.files == 4 and not done.notes


def test_what_could_not_be_packed_travels_in_coverage_json(live, tmp_path):
    """A missing controller log reads the same in the bundle's coverage as where it was made
    (why it is missing there), not as a file merely absent from the bundle."""
    conf, client, env = live
    for log in (tmp_path / "ctld").iterdir():
        log.unlink()
    facts = _facts(client)
    here = diagnose_attempt(facts, CLUSTER, env, conf, client)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    write_bundle(bundle, workload_from(facts, CLUSTER), load_rules(None), conf, env, client, 1 << 20)
    there = analyze_bundle(bundle)

    def gaps(d: dict) -> list:
        return sorted((c["collector"], c["node"], c["status"], c["reason"]) for c in d["coverage"]
                      if c["status"] != "ok" and c["collector"] != "metrics")

    assert gaps(there) == gaps(here) and any(g[0] == "controller" for g in gaps(here))


def test_events_json_is_validated_like_workload_json(tmp_path):
    (tmp_path / "events.json").write_text(json.dumps({"events": [
        {"node": "../etc", "start": "2026-11-30T03:15:37+00:00", "state": "DOWN"}]}))
    with Root(tmp_path) as root, pytest.raises(BundleError, match=r"events\[0\].*node must be a hostname"):
        load_events(root)
    (tmp_path / "events.json").write_text(json.dumps({"events": [
        {"node": "n1", "start": "yesterday", "state": "DOWN"}]}))
    with Root(tmp_path) as root, pytest.raises(BundleError, match="start must be an ISO 8601"):
        load_events(root)
    (tmp_path / "events.json").unlink()
    with Root(tmp_path) as root:
        assert load_events(root) is None


def test_a_broken_events_json_costs_its_coverage_not_the_diagnosis(make_bundle):
    bundle = make_bundle({"app/out.log": "ValueError: bad config\n"})
    (bundle / "events.json").write_text(json.dumps({"events": [{"node": "../etc", "state": "DOWN"}]}))
    d = analyze_bundle(bundle)
    assert d["sub_domain"] == "application"
    state = next(c for c in d["coverage"] if c["collector"] == "node_state")
    assert state["status"] == "error" and "events.json unusable" in state["reason"]


# ---------------------------------------------------------------------------- against the service
@pytest.fixture(scope="module")
def service(tmp_path_factory):
    folder = tmp_path_factory.mktemp("remote-svc")
    yield from start_service(folder, f"sqlite:///{folder / 'attr.db'}")


@pytest.fixture
def queued(tmp_path):
    with Store.open(f"sqlite:///{tmp_path / 'queue.db'}") as store:
        queue.enqueue(store, [{"cluster": CLUSTER, "entry": "4.1.031541.job", "job_id": "4", "attempt": 1,
                               "ended_at": FAILED_END + timedelta(seconds=2), "source": "epilog",
                               "payload": {}, "not_before": queue.now() - timedelta(seconds=1)}])
        yield store


def _row(store: Store) -> QueueEntry:
    with store.sessions() as s:
        return s.scalars(select(QueueEntry)).one()


def _worker(store: Store, live, remote: Remote) -> Worker:
    conf, client, env = live
    with store.sessions.begin() as s:  # the hook's environment, as the spool entry gave it
        s.scalars(select(QueueEntry)).one().payload = env
    return Worker(store, conf, client=client, name="remote-test", remote=remote)


def test_the_worker_posts_each_attempt_and_the_service_stores_it_under_the_workers_cluster(
        service, queued, live, caplog):
    caplog.set_level("DEBUG")
    worker = _worker(queued, live, Remote(service.url, SUBMIT, live[0]))
    assert worker.drain() == 1
    assert (_row(queued).state, _row(queued).last_error) == ("done", None)
    with Store.open(service.db) as stored:  # attempt 0 (requeued) came along: nobody had it
        assert stored.has_diagnosis(CLUSTER, "4", 1) and stored.has_diagnosis(CLUSTER, "4", 0)
        assert not stored.has_diagnosis("attrtest", "4", 1)
    got = httpx.get(f"{service.url}/v1/diagnoses/{CLUSTER}/4/1",
                    headers={"Authorization": f"Bearer {READ}"}).json()
    conf, client, env = live
    assert _essence(got) == _essence(diagnose_attempt(_facts(client), CLUSTER, env, conf, client))
    assert SUBMIT not in caplog.text


def test_backfill_in_remote_mode_leaves_what_the_service_already_has(service, queued, live):
    """The local store only queues; whether an attempt is diagnosed is the service's to say."""
    from slurm_attr.worker.backfill import enqueue_failed

    worker = _worker(queued, live, Remote(service.url, SUBMIT, live[0]))
    worker.drain()  # job 4's two failed attempts are now stored at the service
    since, until = datetime(2026, 11, 29, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC)
    plan = enqueue_failed(worker, since, until)
    assert (plan.queued, plan.already_diagnosed) == (2, 2)  # jobs 1 and 7 are new to it


def test_a_service_that_is_down_leaves_the_job_queued_without_spending_its_tries(queued, live):
    worker = _worker(queued, live, Remote(f"http://127.0.0.1:{free_port()}", SUBMIT, live[0]))
    for _ in range(live[0].max_tries + 2):  # an outage longer than every try allows
        worker.drain()
        with queued.sessions.begin() as s:  # the backoff, elapsed
            s.execute(update(QueueEntry).values(not_before=queue.now()))
    row = _row(queued)
    assert (row.state, row.tries) == ("pending", 0)  # never a dead letter for an outage
    assert "did not answer" in row.last_error
    assert worker.drain() == 0  # a waited-out job is not "handled": the loop sleeps, no busy loop
    waited = (queue.aware(_row(queued).not_before) - queue.now()).total_seconds()
    assert waited > 100 * 2 ** 3  # backoff_s=100, doubled on each failed round, up to an hour


def test_a_read_only_token_is_refused_clearly_and_the_job_stays_queued(service, queued, live):
    worker = _worker(queued, live, Remote(service.url, READ, live[0]))
    with pytest.raises(Refused, match=r"403.*'submit' is needed.*--token-file") as refused:
        worker.drain()
    assert READ not in str(refused.value)
    assert (_row(queued).state, _row(queued).tries) == ("pending", 0)


def test_a_bundle_the_service_refuses_becomes_a_dead_letter_with_its_reason(service, queued, live, tmp_path):
    (tmp_path / "out" / "slurm-4.out").write_text("x" * 99 + "\n" * 1 + ("y" * 99 + "\n") * 50_000)  # 5 MB: over the 4 MB cap
    worker = _worker(queued, live, Remote(service.url, SUBMIT, live[0]))
    worker.drain()
    row = _row(queued)
    assert row.state == "dead" and "413" in row.last_error and "unpacks past 4 MB" in row.last_error


def test_the_token_file_is_checked_and_never_echoed(tmp_path):
    path = tmp_path / "token"
    path.write_text(f"# the worker's token\n{SUBMIT} submit\n")
    path.chmod(0o600)
    assert read_token(path) == SUBMIT
    path.chmod(0o644)
    with pytest.raises(TokenFileError, match="chmod 600") as bad:
        read_token(path)
    path.write_text("short\n")
    path.chmod(0o600)
    with pytest.raises(TokenFileError, match="at least 16") as short:
        read_token(path)
    assert SUBMIT not in str(bad.value) and "short" not in str(short.value).split(":")[-1]


def test_the_token_never_crosses_a_network_in_clear_text_nor_sits_in_the_url():
    import click

    from slurm_attr.cli import _check_service_url

    _check_service_url("https://attr.example.org/base")
    _check_service_url("http://127.0.0.1:8080")  # a local proxy that adds TLS
    for bad, why in (("http://attr.example.org", "plain http"), ("https://u:p@attr.example.org", "credentials"),
                     ("ftp://attr.example.org", "http:// or https://")):
        with pytest.raises(click.UsageError, match=why):
            _check_service_url(bad)


def test_a_workload_written_for_a_bundle_reads_back_the_same(tmp_path):
    from slurm_attr.connectors.export import workload_document
    from slurm_attr.model import Step, Workload
    from slurm_attr.scope.static import load_workload

    start, end = datetime(2026, 11, 20, 10, tzinfo=UTC), datetime(2026, 11, 20, 11, tzinfo=UTC)
    w = Workload(cluster="east", job_id="77_3", attempt=2, name="train", user="kim", partition="gpu",
                 nodelist="gpu-[01-02]", nodes=["gpu-01", "gpu-02"], start=start, end=end,
                 state="NODE_FAIL", exit_code="0:9", timezone="Europe/Berlin",
                 log_timezones={"node": "UTC"}, reason="NodeDown", failed_node="gpu-02",
                 gpus_per_node=4, steps=[Step("0", "python", "NODE_FAIL", "0:9", "gpu-[01-02]", start, end)])
    (tmp_path / "workload.json").write_text(json.dumps(workload_document(w)))
    back = load_workload(tmp_path)
    assert back.to_dict() == w.to_dict()
    assert (back.timezone, back.log_timezones) == (w.timezone, w.log_timezones)
