"""A requeued attempt: its own (scheduler) cause when nothing else is logged, and preemption only
when slurmctld says it preempted the job."""

from __future__ import annotations

from slurm_attr.analyze import analyze_bundle

PREEMPTED = ("[2026-11-20T10:40:00.123] preempted JobId=4242 has been requeued to reclaim resources "
             "for JobId=4300\n[2026-11-20T10:40:00.130] Requeuing JobId=4242\n")


def test_a_requeue_with_nothing_logged_is_its_own_scheduler_cause(make_bundle):
    d = analyze_bundle(make_bundle({}, state="REQUEUED", exit_code="0:15"))
    assert (d["sub_domain"], d["outcome"]) == ("requeued", "scheduler")
    assert "requeued" in d["verdict"]


def test_slurmctld_saying_it_preempted_makes_it_preemption(make_bundle):
    d = analyze_bundle(make_bundle({"controller/slurmctld.log": PREEMPTED}, state="REQUEUED",
                                   exit_code="0:15"))
    assert (d["sub_domain"], d["outcome"]) == ("preemption", "scheduler")
    assert "job 4300" in d["verdict"]


def test_another_jobs_preemption_is_not_evidence(make_bundle):
    other = PREEMPTED.replace("JobId=4242", "JobId=999")
    d = analyze_bundle(make_bundle({"controller/slurmctld.log": other}, state="REQUEUED",
                                   exit_code="0:15"))
    assert d["sub_domain"] == "requeued"


def test_a_requeued_attempt_whose_job_then_completed_is_listed_not_counted(make_bundle, tmp_path):
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import update

    from slurm_attr.report.query import Filters, load_frame
    from slurm_attr.report.tables import render_csv, render_text
    from slurm_attr.store import queue
    from slurm_attr.store.models import QueueEntry
    from slurm_attr.store.repository import Store

    requeued = analyze_bundle(make_bundle({}, state="REQUEUED", exit_code="0:15"))
    window = Filters(datetime(2026, 11, 19, tzinfo=UTC), datetime(2026, 11, 21, tzinfo=UTC))
    with Store.open(f"sqlite:///{tmp_path / 'r.db'}") as store:
        store.save_diagnosis(requeued)
        assert render_text(load_frame(store, window)).startswith("1 failed attempts")
        later = datetime(2026, 11, 20, 11, 5, tzinfo=UTC)  # the next attempt's hook run
        queue.enqueue(store, [{"cluster": "t", "entry": "4242.1.9.job", "job_id": "4242", "attempt": 1,
                               "ended_at": later, "payload": {}, "source": "epilog",
                               "not_before": later + timedelta(seconds=10)}])
        with store.sessions.begin() as s:  # what the worker does when sacct shows it COMPLETED
            s.execute(update(QueueEntry).values(state="skipped", last_error="COMPLETED"))
        frame = load_frame(store, window)
    text = render_text(frame)
    assert text.startswith("0 failed attempts") and "1 more were requeued" in text
    assert "4242" in text  # still listed
    assert render_csv(frame).splitlines()[1].endswith(",True")
