"""The store on both back-ends: SQLite (default) and the PostgreSQL server on 127.0.0.1:5432."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta

import pytest
from conftest import sample_dirs
from sqlalchemy import func, select

from slurm_attr.analyze import analyze_bundle
from slurm_attr.store.models import Diagnosis, EventRow
from slurm_attr.store.repository import Store

SAMPLE = analyze_bundle(sample_dirs()[0])


def test_saving_is_idempotent(store):
    assert store.save_diagnosis(SAMPLE) is True
    assert store.save_diagnosis(SAMPLE) is False
    with store.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Diagnosis)) == 1
        assert s.scalar(select(func.count()).select_from(EventRow)) == len(SAMPLE["symptoms"])


def test_rerun_replaces_or_keeps_history(store):
    store.save_diagnosis(SAMPLE)
    changed = copy.deepcopy(SAMPLE)
    changed["ruleset_version"] = "newer-rules"
    store.save_diagnosis(changed, keep_history=True)
    with store.sessions() as s:
        rows = s.execute(select(Diagnosis.ruleset_version, Diagnosis.is_current)).all()
    assert sorted(rows) == sorted([("newer-rules", True), (SAMPLE["ruleset_version"], False)])
    again = copy.deepcopy(SAMPLE)
    again["ruleset_version"] = "third"
    store.save_diagnosis(again)
    with store.sessions() as s:
        current = s.scalars(select(Diagnosis.ruleset_version).where(Diagnosis.is_current)).all()
        assert current == ["third"]


def test_a_failed_write_leaves_nothing_half_written(store):
    broken = copy.deepcopy(SAMPLE)
    broken["symptoms"][-1]["source"] = None  # fails while building the event rows
    with pytest.raises(TypeError):
        store.save_diagnosis(broken)
    with store.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Diagnosis)) == 0


def test_all_samples_round_trip(store):
    diagnoses = [analyze_bundle(b) for b in sample_dirs()]
    assert store.save_many(diagnoses) == len(diagnoses)
    with store.sessions() as s:
        docs = {d.body.document["workload"]["job_id"]: d.body.document for d in s.scalars(select(Diagnosis))}
    for d in diagnoses:
        assert docs[d["workload"]["job_id"]] == d


def test_migrations_match_the_models(store):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from slurm_attr.store.models import Base

    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_upgrade_from_the_first_schema_keeps_stored_diagnoses(tmp_path):
    from alembic import command
    from sqlalchemy import create_engine, text

    from slurm_attr.store.repository import alembic_config

    url = f"sqlite:///{tmp_path / 'old.db'}"
    command.upgrade(alembic_config(url), "0001")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO clusters (id, name) VALUES (1, 'c')"))
        conn.execute(text("INSERT INTO attempts (id, cluster_id, job_id, attempt, name, user_name, partition, "
                          "nodelist, n_nodes, gpus_per_node, start_time, end_time, elapsed_s, state, exit_code) "
                          "VALUES (1, 1, '9', 0, '', '', '', '', 0, 0, '2026-11-01', '2026-11-01', 0, 'FAILED', '1:0')"))
        conn.execute(text("INSERT INTO diagnoses (id, attempt_id, is_current, ruleset_version, document_hash, "
                          "created_at, outcome, sub_domain, evidence_status, verdict, coverage_ok, document) "
                          "VALUES (1, 1, 1, 'r', 'h', '2026-11-01', 'unknown', 'unknown', 'unknown', 'v', 0, "
                          "'{\"kept\": true, \"root_cause\": {\"action\": \"Drain it.\"}}')"))
        conn.execute(text("INSERT INTO queue (cluster, job_id, attempt, state, payload, tries, not_before, "
                          "created_at, updated_at) VALUES ('c', '9', 0, 'dead', '{}', 8, '2026-11-01', "
                          "'2026-11-01', '2026-11-01')"))
    engine.dispose()
    with Store.open(url) as store, store.engine.connect() as conn:
        document = conn.execute(text("SELECT document FROM diagnosis_documents")).scalar()
        assert document == '{"kept": true, "root_cause": {"action": "Drain it."}}'
        assert conn.execute(text("SELECT action FROM diagnoses")).scalar() == "Drain it."  # 0003
        assert conn.execute(text("SELECT entry, state FROM queue")).one() == ("9.0", "dead")


def test_reanalysis_with_new_rules_keeps_history_or_replaces_by_choice(tmp_path):
    import shutil

    from click.testing import CliRunner
    from conftest import ROOT

    from slurm_attr.cli import cli

    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    policy = rules / "policy.yaml"
    policy.write_text(policy.read_text().replace("margin: 8 ", "margin: 9 "))  # a local edit
    bundle = str(sample_dirs()[0])
    db = f"sqlite:///{tmp_path / 'h.db'}"
    runner = CliRunner()

    def run(*extra: str) -> None:
        assert runner.invoke(cli, ["analyze", bundle, "--save", "--db", db, *extra]).exit_code == 0

    def stored() -> list[tuple[str, bool]]:
        with Store.open(db) as store, store.sessions() as s:
            return [(d.ruleset_version, d.is_current) for d in s.scalars(select(Diagnosis).order_by(Diagnosis.id))]

    run()
    (builtin, _), = stored()
    run("--rules", str(rules), "--replace")
    (local, current), = stored()
    assert local != builtin and current
    run("--keep-history")
    assert stored() == [(local, False), (builtin, True)]


def test_times_with_an_offset_are_stored_in_utc_and_old_sqlite_rows_are_mended(tmp_path):
    from alembic import command
    from sqlalchemy import create_engine, text

    from slurm_attr.report.query import Filters, list_diagnoses
    from slurm_attr.store.repository import alembic_config

    d = analyze_bundle(next(b for b in sample_dirs() if b.name == "xid79-gpu-off-bus"))  # Chicago
    assert d["workload"]["end"].endswith("-06:00")
    end = datetime.fromisoformat(d["workload"]["end"])
    old = f"sqlite:///{tmp_path / 'old.db'}"
    command.upgrade(alembic_config(old), "0005")
    engine = create_engine(old)  # what the store wrote before 0006: the wall clock, offset dropped
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO clusters (id, name) VALUES (1, 'c')"))
        conn.execute(text("INSERT INTO attempts (id, cluster_id, job_id, attempt, name, user_name, partition, "
                          "nodelist, n_nodes, gpus_per_node, start_time, end_time, elapsed_s, state, exit_code) "
                          "VALUES (1, 1, '9', 0, '', '', '', '', 0, 0, :s, :e, 0, 'FAILED', '1:0')"),
                     {"s": d["workload"]["start"][:19].replace("T", " "), "e": d["workload"]["end"][:19].replace("T", " ")})
        conn.execute(text("INSERT INTO diagnoses (id, attempt_id, is_current, ruleset_version, document_hash, "
                          "created_at, outcome, sub_domain, evidence_status, verdict, coverage_ok) "
                          "VALUES (1, 1, 1, 'r', 'h', '2026-11-01', 'hardware', 'gpu', 'established', 'v', 1)"))
        conn.execute(text("INSERT INTO diagnosis_documents (diagnosis_id, document) VALUES (1, :doc)"),
                     {"doc": json.dumps(d)})
    engine.dispose()
    window = Filters(end - timedelta(minutes=1), end + timedelta(minutes=1))
    with Store.open(old) as store:  # upgraded to 0006 on opening
        rows, _ = list_diagnoses(store, window)
        assert [r["end"] for r in rows] == [end]
    with Store.open(f"sqlite:///{tmp_path / 'new.db'}") as store:  # and stored so from now on
        store.save_diagnosis(d)
        rows, _ = list_diagnoses(store, window)
        assert [r["end"] for r in rows] == [end]
