"""The store on both back-ends: SQLite (default) and the PostgreSQL server on 127.0.0.1:5432."""

from __future__ import annotations

import copy

import pytest
from conftest import sample_dirs
from sqlalchemy import func, select

from slurm_attr.analyze import analyze_bundle
from slurm_attr.store.models import Diagnosis, EventRow

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
        docs = {d.document["workload"]["job_id"]: d.document for d in s.scalars(select(Diagnosis))}
    for d in diagnoses:
        assert docs[d["workload"]["job_id"]] == d
