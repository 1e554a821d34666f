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
