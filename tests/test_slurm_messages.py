"""Slurm's own messages about a job, in the exact formats slurmstepd and srun write into the job's
output and slurmctld writes to its log (slurmstepd req.c, srun, job_mgr.c, ping_nodes.c,
prep_slurmctld.c), each alone in a bundle: the message must name the cause and, where it says one,
the node."""

from __future__ import annotations

import pytest

# (where, text, state, exit code, sub_domain, code, nodes)
MESSAGES = [
    ("app", "slurmstepd: error: *** JOB 4242 ON gpu-01 CANCELLED AT 2026-11-20T10:59:00 DUE TO TIME LIMIT ***",
     "TIMEOUT", "0:15", "time_limit", None, ["gpu-01"]),
    ("app", "slurmstepd: error: *** STEP 4242.0 ON gpu-01 CANCELLED AT 2026-11-20T10:59:00 DUE TO PREEMPTION ***",
     "PREEMPTED", "0:15", "preemption", None, ["gpu-01"]),
    ("app", "slurmstepd: error: *** JOB 4242 ON gpu-01 CANCELLED AT 2026-11-20T10:59:00 ***",
     "CANCELLED", "0:15", "cancelled", None, ["gpu-01"]),
    ("app", "slurmstepd: error: *** STEP 4242.0 ON gpu-02 UNCORRECTABLE MEMORY ERROR AT 2026-11-20T10:59:00 ***",
     "FAILED", "0:135", "host", "Host memory UE", ["gpu-02"]),
    ("app", "slurmstepd: error: *** STEP 4242.0 STEPD TERMINATED ON gpu-02 AT 2026-11-20T10:59:00 DUE TO JOB NOT "
            "ENDING WITH SIGNALS ***",
     "FAILED", "0:9", "host", "Kill task failed", ["gpu-02"]),
    ("app", "slurmstepd: error: Detected 1 oom_kill event in StepId=4242.batch. Some of the step tasks have been "
            "OOM Killed.",
     "OUT_OF_MEMORY", "0:125", "host_oom", "cgroup OOM", None),
    ("app", "srun: error: gpu-02: task 3: Out Of Memory", "FAILED", "1:0", "host_oom", None, ["gpu-02"]),
    # Slurm's own memory enforcement before `error:` was written, whose kill leaves the job CANCELLED
    ("app", "slurmstepd: Job 4242 exceeded memory limit (18202456 > 16384000), being killed\n"
            "slurmstepd: *** JOB 4242 ON gpu-01 CANCELLED AT 2026-11-20T10:59:00 ***",
     "CANCELLED", "0:9", "host_oom", "memory limit", None),
    ("app", "srun: error: Node failure on gpu-02", "FAILED", "1:0", "host", None, ["gpu-02"]),
    ("app", "srun: error: gpu-02: task 2: Bus error", "FAILED", "1:0", "host", None, ["gpu-02"]),
    ("app", "srun: PrologSlurmctld failed, job killed", "FAILED", "0:9", "host", "PrologSlurmctld failed", None),
    ("app", "srun: error: Application launch failed: Socket timed out on send/recv operation",
     "FAILED", "1:0", "host", "Task launch unanswered", None),
    ("app", "slurmstepd: error: couldn't chdir to `/home/u/run': No such file or directory: going to /tmp instead",
     "FAILED", "1:0", "storage", "Working directory missing", None),
    ("app", "ORTE has lost communication with a remote daemon.\n\n  HNP daemon   : [[52106,0],0] on node gpu-01\n"
            "  Remote daemon: [[52106,0],1] on node gpu-02\n",
     "FAILED", "1:0", "host", "MPI daemon lost", ["gpu-02"]),
    ("app", "PRTE has lost communication with a remote daemon.\n\n  HNP daemon   : [prterun-gpu-01-34@0,0] on node "
            "gpu-01\n  Remote daemon: [prterun-gpu-01-34@0,1] on node gpu-02\n",
     "FAILED", "1:0", "host", "MPI daemon lost", ["gpu-02"]),
    ("app", "srun: error: Unable to create step for job 4242: Memory required by task is not available",
     "FAILED", "1:0", "host", "Step creation refused (memory)", None),
    ("app", "srun: error: fwd_tree_thread: can't find address for host gpu-02, check slurm.conf",
     "FAILED", "1:0", "host", "DNS failure", ["gpu-02"]),
    # newer releases name the function, and slurm_set_addr gives no reason
    ("app", "srun: error: _fwd_tree_get_addr: can't find address for host gpu-02, check slurm.conf",
     "FAILED", "1:0", "host", "DNS failure", ["gpu-02"]),
    ("app", 'srun: error: slurm_set_addr: Unable to resolve "gpu-02"', "FAILED", "1:0", "host", "DNS failure", None),
    ("app", "srun: error: Unable to create step for job 4242: Requested node configuration is not available",
     "FAILED", "1:0", "application", "Step request outside the allocation", None),
    ("app", "srun: fatal: Invalid user id: 1046", "FAILED", "1:0", "host", "User unknown on the node", None),
    # slurmd refusing the launch over its own setup, or unable to reach srun for the tasks' I/O
    ("app", "srun: error: Task launch for StepId=4242.0 failed on node gpu-02: Slurmd could not create a batch "
            "directory or file", "FAILED", "1:0", "host", "Task launch failed", ["gpu-02"]),
    ("app", "srun: error: Application launch failed: Slurmd could not set UID or GID",
     "FAILED", "1:0", "host", "Task launch failed", None),
    ("app", "srun: error: Task launch for StepId=4242.0 failed on node gpu-02: Slurmd could not connect IO",
     "FAILED", "1:0", "network", "srun unreachable from the node", ["gpu-02"]),
    ("app", "srun: error: Task launch for StepId=4242.0 failed on node gpu-02: unable to change directory to work "
            "directory", "FAILED", "1:0", "storage", "Working directory missing", ["gpu-02"]),
    ("app", "srun: error: Application launch failed: Job prolog failed", "FAILED", "1:0", "host", "Node prolog failed",
     None),
    ("app", "srun: error: Task launch for StepId=4242.0 failed on node gpu-02: User not found on host",
     "FAILED", "1:0", "host", "User unknown on the node", ["gpu-02"]),
    ("app", 'can\'t get password entry for user "alice". Either user does not exist or error with NIS/LDAP etc.',
     "FAILED", "1:0", "host", "User unknown on the node", None),
    ("controller", "[2026-11-20T10:59:00.123] error: Nodes gpu-02 not responding, setting DOWN\n"
                   "[2026-11-20T10:59:00.200] Killing JobId=4242 on failed node gpu-02",
     "NODE_FAIL", "0:0", "host", None, ["gpu-02"]),
    # Slurm-GCP finding the node's preemptible VM reclaimed, then slurmctld losing the node
    ("controller", "2026-11-20 10:58:30,123 INFO: 2 nodes set down due to node status 'preempted' (gpu-[02-03])\n"
                   "[2026-11-20T10:59:00.123] error: Nodes gpu-02 not responding, setting DOWN\n"
                   "[2026-11-20T10:59:00.200] Killing JobId=4242 on failed node gpu-02",
     "NODE_FAIL", "0:0", "preemption", "Cloud VM preempted", ["gpu-02"]),
    # a powered-down or cloud node that never came up for the job
    ("controller", "[2026-11-20T10:05:00.123] node gpu-02 not resumed by ResumeTimeout(600) - marking down and "
                   "power_save", "NODE_FAIL", "0:0", "host", "Node did not resume", ["gpu-02"]),
    # Grid Engine's qstat -j reason for a job its node could not start
    ("controller", 'Error for job 4242: can\'t get password entry for user "alice". Either the user does not exist '
                   "or NIS error!", "FAILED", "1:0", "host", "User unknown on the node", None),
    ("controller", "[2026-11-20T10:59:00.123] validate_node_specs: Node gpu-02 unexpectedly rebooted "
                   "boot_time=1795600000 last response=1795599000",
     "NODE_FAIL", "0:0", "host", None, ["gpu-02"]),
    ("controller", "[2026-11-20T10:00:01.123] error: prolog_slurmctld JobId=4242 prolog exit status 1:0",
     "FAILED", "1:0", "host", "PrologSlurmctld failed", None),
    # InactiveLimit: the job is told "TIME LIMIT", but its salloc/srun stopped answering
    ("controller", "[2026-11-20T10:41:21.003] job_time_limit: inactivity time limit reached for JobId=4242",
     "TIMEOUT", "0:0", "host", "Allocating command unresponsive", None),
    # before Slurm 20.02 and after: the job's id bare, then as JobId=
    ("controller", "[2026-11-20T10:59:00.123] requeue job 4242 due to failure of node gpu-02",
     "NODE_FAIL", "0:0", "host", "NODE_FAIL", ["gpu-02"]),
    ("controller", "[2026-11-20T10:59:00.123] requeue JobId=4242 due to failure of node gpu-02",
     "NODE_FAIL", "0:0", "host", "NODE_FAIL", ["gpu-02"]),
    ("controller", "[2026-11-20T10:59:00.123] _job_complete: JobId=4242 OOM failure",
     "OUT_OF_MEMORY", "0:125", "host_oom", "cgroup OOM", None),
    ("controller", "[2026-11-20T10:59:00.123] update_node: node gpu-02 reason set to: Kill task failed",
     "FAILED", "0:9", "host", "Kill task failed", ["gpu-02"]),
    # slurmstepd writes into slurmd's log on the node as well as into the job's output
    ("node", "[2026-11-20T10:59:00.123] [4242.0] error: *** STEP 4242.0 STEPD TERMINATED ON gpu-02 AT "
             "2026-11-20T10:59:00 DUE TO JOB NOT ENDING WITH SIGNALS ***",
     "FAILED", "0:9", "host", "Kill task failed", ["gpu-02"]),
    ("node", "[2026-11-20T10:59:00.123] [4242.0] error: *** STEP 4242.0 ON gpu-02 CANCELLED AT 2026-11-20T10:59:00 "
             "DUE TO TIME LIMIT ***",
     "FAILED", "0:15", "time_limit", "CANCELLED TIME LIMIT", ["gpu-02"]),
    ("node", "[2026-11-20T10:00:01.123] [4242.0] error: couldn't chdir to `/scratch/u/run': Stale file handle: going "
             "to /tmp instead",
     "FAILED", "1:0", "storage", "Working directory missing", ["gpu-02"]),
    ("node", "[2026-11-20T10:00:01.123] error: prolog failed: rc:230 output:Error running slurm prolog: 230",
     "FAILED", "1:0", "host", "Node prolog failed", ["gpu-02"]),
    ("node", "[2026-11-20T10:00:01.123] [4242.0] error: container_p_join: setns failed for /slurm-tmp/4242/.ns: "
             "Invalid argument",
     "FAILED", "1:0", "host", "Job container setup failed", ["gpu-02"]),
    # slurmd giving up on the launch; slurmd's own memory enforcement
    ("node", "[2026-11-20T10:00:21.123] error: Waiting for JobId=4242 REQUEST_LAUNCH_PROLOG notification failed, "
             "giving up after 20 sec",
     "FAILED", "0:0", "host", "slurmd launch failed", ["gpu-02"]),
    ("node", "[2026-11-20T10:00:01.123] error: Could not launch job 4242 and not able to requeue it, cancelling job",
     "CANCELLED", "0:0", "host", "slurmd launch failed", ["gpu-02"]),
    ("node", "[2026-11-20T10:00:01.123] error: Could not confirm batch launch for job 4242, aborting request",
     "FAILED", "0:0", "host", "slurmd launch failed", ["gpu-02"]),
    # slurmd finding the node unlike its slurm.conf line, where the job's tasks could not be laid out
    ("node", "[2026-11-20T10:00:00.123] error: Node configuration differs from hardware: CPUs=64:128(hw) Boards=1:1(hw) "
             "SocketsPerBoard=2:2(hw) CoresPerSocket=32:32(hw) ThreadsPerCore=1:2(hw)",
     "FAILED", "1:0", "host", "Node layout differs from slurm.conf", ["gpu-02"]),
    # the reason before that last word is the cause
    ("node", "[2026-11-20T10:00:01.100] error: [job 4242] prolog failed status=1:0\n"
             "[2026-11-20T10:00:01.123] error: Could not launch job 4242 and not able to requeue it, cancelling job",
     "CANCELLED", "0:0", "host", "Node prolog failed", ["gpu-02"]),
    ("node", "[2026-11-20T10:00:01.123] error: Invalid StepId=4242.0 credential for user 1001: host gpu-02 not in "
             "hostlist gpu-[03-04]",
     "FAILED", "1:0", "host", "slurmd launch failed", ["gpu-02"]),
    ("node", "[2026-11-20T10:40:01.123] Job 4242 exceeded memory limit (16809984>16384000), cancelling it",
     "CANCELLED", "0:9", "host_oom", "memory limit", ["gpu-02"]),
    ("node", "[2026-11-20T10:40:01.123] [4242.0] error: Step 4242.0 exceeded memory limit (16809984 > 16384000), "
             "being killed",
     "CANCELLED", "0:9", "host_oom", "memory limit", ["gpu-02"]),
    # the batch script gone from its node; the prolog refusing the job there
    ("controller", "[2026-11-20T10:59:00.123] Batch JobId=4242 missing from batch node gpu-02 (not found "
                   "BatchStartTime after startup), Requeuing job",
     "FAILED", "0:0", "host", "Batch script lost", ["gpu-02"]),
    ("controller", "[2026-11-20T10:00:01.123] error: slurmd error running JobId=4242 on node(s)=gpu-02: Job prolog "
                   "failed",
     "FAILED", "1:0", "host", "Prolog failed", ["gpu-02"]),
    # slurmctld giving up on the launch: the node refused it, never answered, or no credential
    ("controller", "[2026-11-20T10:00:01.123] Killing non-startable batch JobId=4242: Invalid job credential",
     "FAILED", "0:0", "host", "Launch failed", None),
    ("controller", "[2026-11-20T10:00:01.123] agent waited too long for nodes to respond, abort launch of JobId=4242",
     "FAILED", "0:0", "host", "Launch failed", None),
    ("controller", "[2026-11-20T10:00:01.123] error: Can not create job credential, attempting to requeue batch "
                   "JobId=4242",
     "FAILED", "0:0", "host", "Launch failed", None),
    ("controller", "[2026-11-20T10:00:01.123] Aborting JobId=4242 due to change in socket/core configuration of "
                   "allocated nodes",
     "FAILED", "0:0", "host", "Node layout changed", None),
    # slurmstepd's own failures to set a step up (slurmstepd's strings, 22.05), in the job's output and in
    # slurmd's log: the job's output file, its TMPDIR, the interconnect or MPI plugin
    ("node", "[2026-11-20T10:00:01.123] [4242.batch] error: Could not open stdout file /home/u/logs/out-4242.txt: "
             "No such file or directory",
     "FAILED", "0:0", "application", "Output file not opened", ["gpu-02"]),
    ("app", "slurmstepd: error: Unable to create TMPDIR [/local/scratch/4242]: No space left on device",
     "FAILED", "1:0", "host", "TMPDIR not created", None),
    ("node", "[2026-11-20T10:00:01.123] [4242.0] error: Unable to configure MPI plugin: Connection refused",
     "FAILED", "1:0", "host", "Step setup failed", ["gpu-02"]),
    ("app", "slurmstepd: error: Unable to attach to interconnect: Operation not permitted",
     "FAILED", "1:0", "host", "Step setup failed", None),
    ("node", "[2026-11-20T10:40:01.123] [4242.0] task 3 (12345) Out Of Memory (OOM)",
     "OUT_OF_MEMORY", "0:125", "host_oom", "cgroup OOM", ["gpu-02"]),
    ("app", "slurmstepd: error: task/cgroup: _oom_event_monitor: StepId=4242.0 hit memory limit at least once during "
            "execution. This may or may not result in some failure.",
     "FAILED", "1:0", "host_oom", "memory limit exceeded", None),
    ("app", "slurmstepd: error: job_container/tmpfs: _create_ns: Initial base mount failed, Permission denied",
     "FAILED", "1:0", "host", "Job container setup failed", None),
    # the cgroup plugins unable to place the job (the kernel's ENOSPC for a hierarchy out of cgroup ids)
    ("app", "slurmstepd: error: common_cgroup_instantiate: unable to create cgroup "
            "'/sys/fs/cgroup/memory/slurm/uid_1001/job_4242' : No space left on device",
     "FAILED", "1:0", "host", "Job cgroup setup failed", None),
    ("app", "slurmstepd: error: unable to create step 4242.0 cgroup",
     "FAILED", "1:0", "host", "Job cgroup setup failed", None),
    # a host that has no Slurm configuration and could not fetch one (configless mode's DNS lookup)
    ("app", "srun: error: fetch_config: DNS SRV lookup failed\nsrun: error: _establish_config_source: failed to fetch "
            "config\nsrun: fatal: Could not establish a configuration source",
     "FAILED", "1:0", "host", "Slurm configuration missing", None),
    # a request the controller did not answer in time (MessageTimeout): busy or down
    ("app", "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation",
     "FAILED", "1:0", "host", "Slurm controller unreachable", None),
    # the controller refusing what the job asked for
    ("app", "srun: error: Unable to allocate resources: Invalid account or account/partition combination specified",
     "FAILED", "1:0", "application", "Allocation refused", None),
    ("app", "salloc: error: Job submit/allocate failed: Requested node configuration is not available",
     "FAILED", "1:0", "application", "Allocation refused", None),
]

_PATHS = {"app": "app/slurm-4242.out", "controller": "controller/slurmctld.log", "node": "nodes/gpu-02/slurmd.log"}


def _ids(m: tuple) -> str:
    return f"{m[0]}:{m[1].split('] ')[-1][:50]}"


@pytest.mark.parametrize(("where", "text", "state", "exit_code", "sub_domain", "code", "nodes"), MESSAGES,
                         ids=[_ids(m) for m in MESSAGES])
def test_slurms_message_names_the_cause(make_bundle, where, text, state, exit_code, sub_domain, code, nodes):
    from slurm_attr.analyze import analyze_bundle
    d = analyze_bundle(make_bundle({_PATHS[where]: text + "\n"}, state=state, exit_code=exit_code))
    assert d["sub_domain"] == sub_domain
    if code:
        assert d["root_cause"]["code"] == code
    if nodes:
        assert d["root_cause"]["nodes"] == nodes


@pytest.mark.parametrize("text", [
    "[2026-11-20T10:00:01.123] error: prolog_slurmctld JobId=999 prolog exit status 1:0",
    "[2026-11-20T10:59:00.123] Batch JobId=999 missing from batch node gpu-02 (not found BatchStartTime after startup)",
    "[2026-11-20T10:00:01.123] error: slurmd error running JobId=999 on node(s)=gpu-02: Job prolog failed",
    "[2026-11-20T10:41:21.003] job_time_limit: inactivity time limit reached for JobId=999",
    "[2026-11-20T10:00:01.123] Killing non-startable batch JobId=999: Invalid job credential",
    "[2026-11-20T10:00:01.123] agent waited too long for nodes to respond, abort launch of JobId=999",
    "[2026-11-20T10:00:01.123] Aborting JobId=999 due to change in socket/core configuration of allocated nodes",
])
def test_another_jobs_failed_prolog_or_lost_batch_is_not_this_jobs(make_bundle, text):
    from slurm_attr.analyze import analyze_bundle
    d = analyze_bundle(make_bundle({"controller/slurmctld.log": text + "\n"}))
    assert d["sub_domain"] != "host"
    assert (d["root_cause"] or {}).get("code") not in {"PrologSlurmctld failed", "Batch script lost", "Prolog failed",
                                                        "Allocating command unresponsive", "Launch failed",
                                                        "Node layout changed"}


@pytest.mark.parametrize(("line", "not_sub_domain"), [
    ("[2026-11-20T10:59:00.123] [999.0] error: *** STEP 999.0 ON gpu-02 CANCELLED AT 2026-11-20T10:59:00 DUE TO TIME "
     "LIMIT ***", "time_limit"),
    ("[2026-11-20T10:59:00.123] [999.0] error: container_p_join: setns failed for /slurm-tmp/999/.ns: Invalid argument",
     "host"),
    ("[2026-11-20T10:00:01.123] error: Could not launch job 999 and not able to requeue it, cancelling job", "host"),
    ("[2026-11-20T10:00:01.123] error: Invalid StepId=999.0 credential for user 1001: host gpu-02 not in hostlist "
     "gpu-[03-04]", "host"),
    ("[2026-11-20T10:40:01.123] Job 999 exceeded memory limit (16809984>16384000), cancelling it", "host_oom"),
    ("[2026-11-20T10:40:01.123] [999.0] slurmstepd: error: Step 999.0 exceeded memory limit (16809984 > 16384000), "
     "being killed", "host_oom"),
    ("[2026-11-20T10:00:21.123] error: Waiting for JobId=999 REQUEST_LAUNCH_PROLOG notification failed, giving up "
     "after 20 sec", "host"),
    ("[2026-11-20T10:00:01.123] [999.0] error: Unable to configure MPI plugin: Connection refused", "host"),
    ("[2026-11-20T10:40:01.123] [999.0] task 3 (12345) Out Of Memory (OOM)", "host_oom"),
    ("[2026-11-20T10:00:01.123] [999.0] error: unable to create job 999 cgroup", "host"),
    ("[2026-11-20T10:00:01.123] error: Could not confirm batch launch for job 999, aborting request", "host"),
])
def test_another_jobs_step_in_slurmds_log_is_not_this_jobs(make_bundle, line, not_sub_domain):
    from slurm_attr.analyze import analyze_bundle
    d = analyze_bundle(make_bundle({"nodes/gpu-02/slurmd.log": line + "\n"}))
    assert d["sub_domain"] != not_sub_domain


def test_an_epilog_that_failed_after_the_job_is_not_why_it_failed(make_bundle):
    from slurm_attr.analyze import analyze_bundle
    line = "[2026-11-20T11:00:10.123] error: _job_complete: JobId=4242 epilog error on gpu-02, draining the node\n"
    d = analyze_bundle(make_bundle({"controller/slurmctld.log": line}))
    assert d["sub_domain"] == "unknown"



@pytest.mark.parametrize("line", [
    "2026-11-20 10:58:30,123 INFO: 2 nodes set down due to node status 'preempted' (gpu-[05-06])",   # not ours
    "2026-11-20 10:58:30,123 INFO: 1 nodes set down due to node status 'terminated' (gpu-02)",   # not reclaimed
])
def test_a_cloud_vm_reclaimed_elsewhere_or_stopped_otherwise_is_no_preemption(make_bundle, line):
    from slurm_attr.analyze import analyze_bundle
    d = analyze_bundle(make_bundle({"controller/slurmsync.log": line + "\n"}, state="NODE_FAIL", exit_code="0:0"))
    assert d["sub_domain"] == "host"


def test_the_state_of_a_one_node_job_is_that_nodes(make_bundle):
    from slurm_attr.analyze import analyze_bundle
    d = analyze_bundle(make_bundle({}, nodes="gpu-07", state="NODE_FAIL", exit_code="0:0"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host", ["gpu-07"])
    assert "NODE_FAIL on gpu-07" in d["verdict"]
    # across several nodes the state alone names none of them
    d = analyze_bundle(make_bundle({}, state="NODE_FAIL", exit_code="0:0"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host", [])


def test_a_job_whose_step_could_not_start_and_then_ran_out_of_time_hung_on_it(make_bundle):
    from slurm_attr.analyze import analyze_bundle
    out = "srun: error: Unable to create step for job 4242: Memory required by task is not available\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, state="TIMEOUT", exit_code="0:15"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "Step creation refused (memory)")
    assert "hung until its time limit" in d["verdict"]
    # another job's step is not this job's
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out.replace("4242", "999")}, state="TIMEOUT",
                                   exit_code="0:15"))
    assert d["sub_domain"] == "time_limit"


def test_a_cancel_for_a_node_failure_names_the_node_that_survived_not_the_one_that_failed(make_bundle):
    from slurm_attr.analyze import analyze_bundle
    out = ("slurmstepd: error: *** STEP 4242.0 ON gpu-01 CANCELLED AT 2026-11-20T10:30:00 DUE TO NODE FAILURE, SEE "
           "SLURMCTLD LOG FOR DETAILS ***\n")
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, state="NODE_FAIL", exit_code="0:0"))
    assert d["sub_domain"] == "host" and "gpu-01" not in d["root_cause"]["nodes"]
    assert [s["node"] for s in d["symptoms"] if s["code"] == "CANCELLED NODE FAILURE"] == [None]
    # the controller's log names the node that failed
    ctld = "[2026-11-20T10:29:30.000] Killing JobId=4242 on failed node gpu-02\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out, "controller/slurmctld.log": ctld},
                                   state="NODE_FAIL", exit_code="0:0"))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host", ["gpu-02"])


@pytest.mark.parametrize(("reason", "sub_domain", "code"), [
    ("NHC: check_hw_ib: No IB port mlx5_0:1 is ACTIVE (LinkUp 100 Gb/sec).", "network", "Health check (network)"),
    ("NHC: check_fs_mount: /lustre not mounted", "storage", "Health check (file system)"),
    ("NHC: check_nv_healthmon: GPU 3 failed", "gpu", "Health check (GPU)"),
    ("gpu health: Xid 79 on GPU 0000:18:00.0", "gpu", "Health check (GPU)"),
    ("NHC: check_hw_physmem: Actual RAM size 1006 GB less than minimum 1024 GB", "host", "Health check (node)"),
    ("PSU failure reported by the BMC", "host", "Node DOWN"),     # the admin's own words: the node
])
def test_a_health_check_that_took_the_node_out_names_the_failed_part(make_bundle, reason, sub_domain, code):
    from slurm_attr.analyze import analyze_bundle
    ctld = (f"[2026-11-20T10:30:00.000] update_node: node gpu-02 reason set to: {reason}\n"
            "[2026-11-20T10:30:01.000] update_node: node gpu-02 state set to DOWN\n"
            "[2026-11-20T10:30:02.000] Killing JobId=4242 on failed node gpu-02\n")
    d = analyze_bundle(make_bundle({"controller/slurmctld.log": ctld}, state="NODE_FAIL", exit_code="0:0"))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (sub_domain, code, ["gpu-02"])
    assert reason.rstrip(".") in d["verdict"]


def test_a_slurmd_that_could_not_start_is_its_nodes_fault(make_bundle):
    from slurm_attr.analyze import analyze_bundle
    log = ("[2026-11-20T10:00:14.247] error: Couldn't find the specified plugin name for cgroup/v2 looking at all files\n"
           "[2026-11-20T10:00:14.247] error: Unable to initialize cgroup plugin\n"
           "[2026-11-20T10:00:14.247] error: slurmd initialization failed\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/slurmd.log": log}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
        "host", "slurmd could not start", ["gpu-02"])


def test_another_jobs_output_file_slurmd_could_not_open_is_not_this_jobs(make_bundle):
    from slurm_attr.analyze import analyze_bundle
    line = ("[2026-11-20T10:00:01.123] [999.batch] error: Could not open stdout file /home/u/out-999.txt: No such file "
            "or directory\n")
    d = analyze_bundle(make_bundle({"nodes/gpu-02/slurmd.log": line}))
    assert (d["root_cause"] or {}).get("code") != "Output file not opened"
    assert d["evidence_status"] == "hypothesis"  # only the exit code is left


def test_a_controller_that_did_not_answer_is_not_a_refused_request(make_bundle):
    from slurm_attr.analyze import analyze_bundle
    line = "srun: error: Unable to allocate resources: Unable to contact slurm controller (connect failure)\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": line}))
    assert (d["sub_domain"], d["root_cause"]["code"]) != ("application", "Allocation refused")
    assert d["sub_domain"] == "host"
