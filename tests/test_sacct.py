from __future__ import annotations

from slurm_attr.scope.sacct_json import parse_job, select_attempt


def test_2205_success_exit_code_is_cross_checked_against_steps():
    job = {"job_id": 7, "state": {"current": "FAILED", "reason": "NonZeroExitCode"},
           "exit_code": {"status": "SUCCESS", "return_code": 0},
           "time": {"start": 1700000000, "end": 1700003600},
           "steps": [{"step": {"name": "batch", "id": "batch"}, "state": "FAILED",
                      "exit_code": {"status": "FAILED", "return_code": 3}}]}
    facts = parse_job(job)
    assert facts.state == "FAILED" and facts.exit_code == "3:0"


def test_2411_shapes_numbers_lists_and_signals():
    num = lambda n: {"set": True, "infinite": False, "number": n}  # noqa: E731
    job = {"job_id": 8, "state": {"current": ["NODE_FAIL"], "reason": "NodeDown"},
           "exit_code": {"status": ["SIGNALED"], "return_code": num(0),
                         "signal": {"id": num(9), "name": "KILL"}},
           "time": {"start": num(1700000000), "end": num(1700000600)}, "restart_cnt": num(1),
           "failed_node": "gpu-03", "nodes": "gpu-[01-04]",
           "steps": [{"step": {"name": "python", "id": {"job_id": 8, "step_id": 0}},
                      "state": ["NODE_FAIL"], "exit_code": {"status": ["SIGNALED"],
                                                             "signal": {"id": num(9)}},
                      "time": {"start": num(1700000001), "end": num(1700000600)},
                      "tasks": {"count": num(32)}, "task": {"distribution": "cyclic"}}]}
    facts = parse_job(job)
    assert facts.state == "NODE_FAIL" and facts.exit_code == "0:9"
    assert facts.attempt == 1 and facts.failed_node == "gpu-03"
    assert facts.steps[0].id == "0"
    assert (facts.steps[0].ntasks, facts.steps[0].distribution) == (32, "cyclic")


def test_requeued_attempts_are_selected_by_restart_count():
    doc = {"jobs": [
        {"job_id": 9, "restart_cnt": 0, "state": {"current": ["NODE_FAIL"]}, "time": {"start": 100, "end": 200}},
        {"job_id": 9, "restart_cnt": 1, "state": {"current": ["FAILED"]}, "time": {"start": 300, "end": 400}},
    ]}
    assert select_attempt(doc, "9", 0).state == "NODE_FAIL"
    assert select_attempt(doc, "9", 1).state == "FAILED"
    assert select_attempt(doc, "9", None).state == "FAILED"
    assert select_attempt(doc, "10", 0) is None


def test_a_step_whose_task_fields_are_not_objects_has_no_layout():
    job = {"job_id": 10, "state": {"current": "FAILED"}, "time": {"start": 100, "end": 200},
           "steps": [{"step": {"name": "python", "id": 0}, "tasks": [4], "task": "cyclic"}]}
    step = parse_job(job).steps[0]
    assert (step.ntasks, step.distribution) == (None, "")
