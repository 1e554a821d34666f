from __future__ import annotations

from pathlib import Path

from slurm_attr.decode import DecodeContext
from slurm_attr.decode.registry import DECODERS
from slurm_attr.decode.xid import decode_xid, nvlink5_rule
from slurm_attr.ruleset import load
from slurm_attr.scope.static import load_workload

RULES = load()


def ctx(make_bundle, before=()):
    return DecodeContext(RULES, load_workload(make_bundle({})), list(before))


def test_catalog_holds_the_ampere_and_newer_codes():
    for xid in (8, 13, 31, 43, 45, 48, 63, 64, 74, 79, 92, 94, 95, 109, 119, 120, 136, 137, 140,
                143, *range(144, 151), 154, 155, 158, 167, 171, 172):
        assert xid in RULES.xid_catalog, xid
    assert len(RULES.xid_catalog) >= 110


def test_xid79_is_a_gpu_root(make_bundle):
    c = decode_xid({"xid": "79", "pci": "0000:18:00", "detail": "GPU has fallen off the bus."},
                   ctx(make_bundle))
    assert (c.role, c.sub_domain, c.code) == ("cause", "gpu", "XID 79")
    assert "reboot" in c.action.lower()


def test_xid79_multiline_takes_the_pci_from_the_line_before(make_bundle):
    fields = {"xid": "79"}
    decode_xid(fields, ctx(make_bundle, ["NVRM: The NVIDIA GPU 0000:5d:00.0 (PCI ID: 10de:2330)"]))
    assert fields["pci"] == "0000:5d:00.0"


def test_xid149_link_event_subcode_4_decodes_to_signal_integrity(make_bundle):
    detail = ("NETIR_LINK_EVT Fatal XC0 i0 Link 08 (0x004505c6 0x00000000 0x00000000 0x00000000 "
              "0x00000000 0x00000000)")
    c = decode_xid({"xid": "149", "detail": detail}, ctx(make_bundle))
    assert c.sub_domain == "nvlink" and c.role == "cause"
    assert c.fields["subcode"] == "000100"
    assert c.fields["catalog_investigatory"] == "INVESTIGATE_LINK_SI"
    assert "signal integrity" in c.fields["decoded"]


def test_xid149_peer_device_and_ber_events(make_bundle):
    assert nvlink5_rule(RULES.nvlink5_catalog, 149, 0x025001C6, 0)["investigatory"] \
        == "INVESTIGATE_PEER_DEVICE"
    ber = decode_xid({"xid": "149", "detail": "NETIR_BER_EVENT Nonfatal XC0 i0 Link 02 "
                      "(0x00000226 0x00000001 0x0 0x0 0x0 0x0)"}, ctx(make_bundle))
    assert "signal integrity" in ber.fields["decoded"]


def test_xid74_register_bits(make_bundle):
    si = decode_xid({"xid": "74", "detail": "NVLink: fatal error detected on link 14(0x200000, 0x0, "
                     "0x0, 0x0, 0x0, 0x0, 0x0)"}, ctx(make_bundle))
    assert "signal integrity" in si.fields["decoded"] and si.role == "cause"
    sympathetic = decode_xid({"xid": "74", "detail": "NVLink: fatal error detected on link 2(0x2, "
                              "0x0, 0x0, 0x0, 0x0, 0x0, 0x0)"}, ctx(make_bundle))
    assert sympathetic.role == "symptom"


def test_xid45_belongs_to_the_xid_that_caused_it(make_bundle):
    c = decode_xid({"xid": "45", "detail": "Ch 00000001 caused by previous Xid 149"}, ctx(make_bundle))
    assert c.fields["caused_by_xid"] == "149"
    assert c.sub_domain == "nvlink" and c.role == "cause"  # the NVLink fault, not a generic GPU one
    earlier = decode_xid({"xid": "149", "detail": "NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x025001c6 "
                          "0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)"}, ctx(make_bundle))
    assert earlier.priority > c.priority  # when the Xid 149 is logged too, it is the root
    after_app = decode_xid({"xid": "45", "detail": "Ch 00000002 caused by previous Xid 13"}, ctx(make_bundle))
    assert after_app.sub_domain == "application"
    after_sympathetic = decode_xid({"xid": "45", "detail": "caused by previous Xid 43"}, ctx(make_bundle))
    assert after_sympathetic.role == "symptom"


def test_unknown_xid_is_still_reported(make_bundle):
    c = decode_xid({"xid": "999", "detail": "x"}, ctx(make_bundle))
    assert c.code == "XID 999" and "not in the catalog" in c.summary


def test_sxid_classes(make_bundle):
    fatal = DECODERS["sxid"]({"sxid": "20034", "detail": "Fatal, Link 30 LTSSM Fault Up"},
                             ctx(make_bundle))
    assert fatal.role == "cause" and fatal.sub_domain == "nvlink"
    nonfatal = DECODERS["sxid"]({"sxid": "12028", "detail": "Non-fatal, Link 32"}, ctx(make_bundle))
    assert nonfatal.role == "context"


def test_nccl_classes(make_bundle):
    c = DECODERS["nccl"]({"msg": "NET/IB : Got async event : port error", "host": "gpu-01"},
                         ctx(make_bundle))
    assert (c.role, c.sub_domain) == ("symptom", "network")
    remote = DECODERS["nccl"]({"msg": "NCCL error in: x.cpp:1, remote process exited or there was "
                               "a network error, NCCL version 2.21.5"}, ctx(make_bundle))
    assert (remote.code, remote.role, remote.sub_domain) == ("ncclRemoteError", "symptom", "network")
    usage = DECODERS["nccl"]({"msg": "Duplicate GPU detected : rank 1 and rank 0"}, ctx(make_bundle))
    assert usage.role == "cause" and usage.sub_domain == "application"


def test_python_exception_finds_its_traceback(make_bundle):
    fields = {"exc": "KeyError", "msg": "'labels'", "rank": "3"}
    before = ["[rank3]: Traceback (most recent call last):",
              '[rank2]:   File "other.py", line 1, in g',
              '[rank3]:   File "/w/train.py", line 40, in step']
    c = DECODERS["python_exception"](fields, ctx(make_bundle, before))
    assert c.sub_domain == "application" and c.code == "KeyError"
    assert fields["frame"] == "/w/train.py:40 in step"


def test_bare_exception_word_without_traceback_or_message_is_ignored(make_bundle):
    assert DECODERS["python_exception"]({"exc": "ValueError"}, ctx(make_bundle)) is None


def test_storage_errors_in_exceptions(make_bundle):
    c = DECODERS["python_exception"]({"exc": "OSError", "msg": "[Errno 28] No space left on device"},
                                     ctx(make_bundle))
    assert c.sub_domain == "storage"


def test_oom_in_another_jobs_cgroup_is_not_evidence(make_bundle):
    other = {"constraint": "CONSTRAINT_MEMCG", "oom_memcg": "/slurm/uid_1/job_1", "proc": "R"}
    assert DECODERS["oom"](other, ctx(make_bundle)) is None
    ours = {"constraint": "CONSTRAINT_MEMCG", "oom_memcg": "/slurm/uid_1/job_4242", "proc": "python"}
    assert DECODERS["oom"](ours, ctx(make_bundle)).sub_domain == "host_oom"


def test_controller_messages_only_count_for_the_jobs_nodes(make_bundle):
    assert DECODERS["controller_nodes"]({"nodes": "gpu-[07-09]"}, ctx(make_bundle)) is None
    c = DECODERS["controller_nodes"]({"nodes": "gpu-[02-03]", "down": ", setting DOWN"},
                                     ctx(make_bundle))
    assert c.node == "gpu-02" and c.code == "Node DOWN"


def test_rules_directory_is_inside_the_package():
    assert Path(RULES.directory, "patterns.yaml").is_file()
    assert len(RULES.version) == 12


# ---------------------------------------------------------------- classes from the real-incident corpus
def test_pci_ids_are_normalised():
    from slurm_attr.decode.base import normalize_pci
    assert normalize_pci("0000:18:00") == normalize_pci("0000:18:00.0") == normalize_pci("18:00.0") \
        == "0000:18:00.0"
    assert normalize_pci("0000:B3:00.1") == "0000:b3:00.1"
    assert normalize_pci("a67f:00:00") == "a67f:00:00.0"
    assert normalize_pci("not-a-pci-id") == "not-a-pci-id"


def test_every_prefix_layer_is_stripped_and_the_innermost_rank_kept():
    from slurm_attr.decode.base import strip_rank
    assert strip_rank("80: [rank80]: PermissionError: denied") == ("PermissionError: denied", "80")
    assert strip_rank("2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c5-a44c] OSError: x") \
        == ("OSError: x", None)
    assert strip_rank("2019-06-02T16:13:44.884Z: [1,12]<stdout>:host:815:864 [0] NCCL WARN x") \
        == ("host:815:864 [0] NCCL WARN x", "12")
    assert strip_rank("12:30:45 not a rank") == ("12:30:45 not a rank", None)
    assert strip_rank("[rank3]:   File \"x.py\", line 1, in f")[0] == "  File \"x.py\", line 1, in f"
    # torchrun's [defaultN] is a local rank: stripped, never taken for the job's rank
    assert strip_rank("[default5]:[rank13]: OSError: x") == ("OSError: x", "13")
    assert strip_rank("[default5]: OSError: x") == ("OSError: x", None)
    assert strip_rank("3: [default0]: OSError: x") == ("OSError: x", "3")
    # srun pads its label to the widest task id of the step
    assert strip_rank(" 3: OSError: x") == ("OSError: x", "3")
    assert strip_rank("   12:30:45 not a rank") == ("12:30:45 not a rank", None)
    # indentation (Nextflow's `Command error:` block) and worker pools' process tags
    assert strip_rank("    OSError: x") == ("OSError: x", None)
    assert strip_rank("(RayTrainWorker pid=48213, ip=10.0.3.7) OSError: x") == ("OSError: x", None)
    assert strip_rank("(pid=48213) [rank2]: OSError: x") == ("OSError: x", "2")
    assert strip_rank("(raylet, ip=10.0.3.7) OSError: x") == ("OSError: x", None)
    assert strip_rank("(VllmWorkerProcess pid=48213) OSError: x") == ("OSError: x", None)
    assert strip_rank("trainer-1  | OSError: x") == ("OSError: x", None)
    # a parenthesis of prose or a table's pipe is the message, not a tag
    assert strip_rank("(see below) OSError: x")[0] == "(see below) OSError: x"
    assert strip_rank("step 1 | loss 2.0")[0] == "step 1 | loss 2.0"


def test_render_never_shows_a_placeholder():
    from slurm_attr.decode.base import render
    assert render("Rank {rank} raised {exc}[[: {msg}]]", {"exc": "KeyError"}) == "A rank raised KeyError"
    assert render("worker exit [[{exitcode}]][[{rc}]][[ on {node}]].", {"rc": "-6", "node": "?"}) \
        == "worker exit -6."
    out = render("NCCL[[ on {host}]] saw a port error.", {"host": "?"})
    assert out == "NCCL saw a port error." and "?" not in out


def test_xid_restart_app_codes_are_not_hardware(make_bundle):
    for xid in (8, 32):
        c = decode_xid({"xid": str(xid), "detail": "Ch 00000010"}, ctx(make_bundle))
        assert c.sub_domain == "application", xid
        assert c.priority < decode_xid({"xid": "79", "detail": "x"}, ctx(make_bundle)).priority
    bus = decode_xid({"xid": "80", "detail": "x"}, ctx(make_bundle))  # HW origin: stays a GPU fault
    assert bus.sub_domain == "gpu"


def test_lone_xid154_reset_required_is_a_gpu_fault(make_bundle):
    c = decode_xid({"xid": "154", "detail": "GPU recovery action changed from 0x0 (None) to 0x1 "
                    "(GPU Reset Required)"}, ctx(make_bundle))
    assert (c.role, c.sub_domain) == ("cause", "gpu")
    assert c.fields["recovery_action"] == "0x1 (GPU Reset Required)"
    none = decode_xid({"xid": "154", "detail": "GPU recovery action changed from 0x1 (GPU Reset "
                       "Required) to 0x0 (None)"}, ctx(make_bundle))
    assert none.role == "context"


def test_nonfatal_nvlink5_events_are_not_a_root(make_bundle):
    ber = decode_xid({"xid": "149", "detail": "NETIR_BER_EVENT Nonfatal XC0 i0 Link 02 "
                      "(0x00000226 0x00000001 0x0 0x0 0x0 0x0)"}, ctx(make_bundle))
    assert ber.role != "cause"
    sat = decode_xid({"xid": "144", "detail": "SAW_MVB Nonfatal XC0 i0 Link 0 (0x00000001 0x00000008 "
                      "0x00000000 0x00000000 0x00000000 0x00000000)"}, ctx(make_bundle))
    assert sat.role != "cause"
    fatal = decode_xid({"xid": "149", "detail": "NETIR_LINK_EVT Fatal XC0 i0 Link 08 (0x004505c6 "
                        "0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)"}, ctx(make_bundle))
    assert fatal.role == "cause"


def test_xid31_from_the_jobs_process_is_the_job_from_no_process_the_gpu(make_bundle):
    job = decode_xid({"xid": "31", "detail": "pid=15342, Ch 00000010, intr 00000000. MMU Fault: ENGINE "
                      "GRAPHICS GPCCLIENT_T1_11 faulted @ 0x7f95_4afff000. Fault is of type FAULT_PDE "
                      "ACCESS_TYPE_VIRT_READ"}, ctx(make_bundle))
    assert job.sub_domain == "application" and job.fields["fault_pid"] == "15342"
    driver = decode_xid({"xid": "31", "pid": "'<unknown>'", "detail": "Ch 00000001, intr 0. MMU Fault: "
                         "ENGINE HOST0 HUBCLIENT_HOST faulted @ 0x1_0000"}, ctx(make_bundle))
    assert driver.sub_domain == "gpu"


def test_cuda_error_classes(make_bundle):
    cuda = DECODERS["cuda"]
    ecc = cuda({"msg": "uncorrectable ECC error encountered"}, ctx(make_bundle))
    assert (ecc.role, ecc.sub_domain) == ("cause", "gpu_memory")
    cublas = cuda({"msg": "CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"},
                  ctx(make_bundle))
    assert (cublas.role, cublas.sub_domain) == ("cause", "gpu_oom")
    # a text no table knows is kept as a symptom; inside an exception line the exception is kept instead
    unknown = cuda({"msg": "some code no table knows"}, ctx(make_bundle))
    assert (unknown.role, unknown.sub_domain, unknown.code) == ("symptom", None, "CUDA error (some code no table knows)")
    assert cuda({"msg": "some code no table knows", "generic_rule": "python.exception"}, ctx(make_bundle)) is None


def test_newer_nccl_port_error_is_network(make_bundle):
    c = DECODERS["nccl"]({"msg": "NET/IB: mlx5_0:1 Got non-fatal async event: port error(10)"},
                         ctx(make_bundle))
    assert c.sub_domain == "network"


def test_nan_loss_aborts_are_the_jobs_numerics(make_bundle):
    for exc, msg in (("AssertionError", "Rank 3: found NaN in local grad norm in backwards pass."),
                     ("FloatingPointError", "Minimum loss scale reached (0.0001). Your loss is "
                      "probably exploding."),
                     ("ValueError", "Loss is nan, stopping training")):
        c = DECODERS["python_exception"]({"exc": exc, "msg": msg}, ctx(make_bundle))
        assert (c.sub_domain, c.code) == ("application", "NaN/Inf loss"), msg


def test_quota_is_the_users_and_a_full_disk_the_storage(make_bundle):
    quota = DECODERS["os_error"]({"err": "Disk quota exceeded"}, ctx(make_bundle))
    full = DECODERS["os_error"]({"err": "No space left on device"}, ctx(make_bundle))
    stale = DECODERS["os_error"]({"err": "Stale file handle"}, ctx(make_bundle))
    assert (quota.sub_domain, full.sub_domain, stale.sub_domain) == ("application", "storage", "storage")
    py = DECODERS["python_exception"]({"exc": "OSError", "msg": "[Errno 122] Disk quota exceeded"},
                                      ctx(make_bundle))
    assert py.sub_domain == "application"


def test_hung_task_frames_in_file_system_code(make_bundle):
    hung = ["kernel: INFO: task python:4242 blocked for more than 120 seconds.",
            'kernel: "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.',
            "kernel: python          D    0  4242      1 0x00000080", "kernel: Call Trace:",
            "kernel:  __schedule+0x2c4/0x700"]
    nfs = DECODERS["hung_task_fs"]({"func": "nfs_wait_on_request", "module": "nfs"},
                                   ctx(make_bundle, hung))
    assert (nfs.sub_domain, nfs.role) == ("storage", "cause") and "NFS" in nfs.summary
    gpfs = DECODERS["hung_task_fs"]({"func": "cxiWaitEventWait", "module": "mmfslinux"},
                                    ctx(make_bundle, hung))
    assert "GPFS" in gpfs.summary
    # kernels since 5.x write the task line as `task:NAME state:D stack:...`
    modern = [hung[0], hung[1], "kernel: task:python          state:D stack:    0 pid: 4242 ppid:     1 "
              "flags:0x00000080", "kernel: Call Trace:", "kernel:  __schedule+0x2d1/0x860"]
    gpfs = DECODERS["hung_task_fs"]({"func": "cxiWaitEventWait", "module": "mmfslinux"},
                                    ctx(make_bundle, modern))
    assert gpfs is not None and (gpfs.sub_domain, gpfs.role) == ("storage", "cause")
    # one report, one event: a later frame of the same report adds nothing
    later = [*modern, "kernel:  cxiWaitEventWait+0x208/0x330 [mmfslinux]", "kernel:  schedule+0x35/0xa0"]
    assert DECODERS["hung_task_fs"]({"func": "_ZN6ThCond5kWaitEiPKc", "module": "mmfs26"},
                                    ctx(make_bundle, later)) is None
    # but a file-system frame below an I/O wait still names the file system
    waited = [*modern, "kernel:  io_schedule+0x12/0x40"]
    lustre = DECODERS["hung_task_fs"]({"func": "ll_file_write", "module": "lustre"}, ctx(make_bundle, waited))
    assert lustre is not None and lustre.role == "cause" and "Lustre" in lustre.summary
    # the same frame outside a hung-task report is not evidence
    assert DECODERS["hung_task_fs"]({"func": "nfs_wait_on_request"},
                                    ctx(make_bundle, ["kernel: eth0: link up"])) is None


def test_torchrun_failure_table_names_host_and_rank(make_bundle):
    before = ["Root Cause (first observed failure):", "[0]:", "  time      : 2023-05-19_16:39:58",
              "  host      : gpu-02.example.org", "  rank      : 9 (local_rank: 1)"]
    fields = {"exitcode": "-9", "pid": "1"}
    c = DECODERS["torchrun_failure"](fields, ctx(make_bundle, before))
    assert c.node == "gpu-02.example.org" and fields["rank"] == "9"
    assert fields["first_failure"] == "yes" and c.sub_domain == "host_oom"
    plain = DECODERS["torchrun_failure"]({"exitcode": "1"}, ctx(make_bundle, ["Failures:", "[1]:"]))
    assert plain.sub_domain is None and "first_failure" not in plain.fields


def test_batch_script_missing_is_the_node_a_missing_program_the_job(make_bundle):
    node = DECODERS["execve"]({"path": "/tmp/slurmd/job00089/slurm_script",
                               "err": "No such file or directory"}, ctx(make_bundle))
    user = DECODERS["execve"]({"path": "mkdir", "err": "No such file or directory"}, ctx(make_bundle))
    assert (node.sub_domain, user.sub_domain) == ("host", "application")


def test_nccl_mismatched_collective_is_the_application(make_bundle):
    c = DECODERS["nccl"]({"msg": "Mismatched collective detected, please check your collective calls "
                          "at and around rank 39."}, ctx(make_bundle))
    assert (c.role, c.sub_domain) == ("cause", "application")


def test_nccl_result_codes_printed_like_exceptions_are_symptoms(make_bundle):
    c = DECODERS["python_exception"]({"exc": "ncclRemoteError", "msg": "A call failed possibly due to "
                                      "a network error or a remote process exiting prematurely."},
                                     ctx(make_bundle))
    assert c.role == "symptom" and c.sub_domain is None


def test_nccl_names_the_peer_node_of_a_failed_transfer(make_bundle):
    fields = {"msg": "NET/IB : Got completion from peer gpu-02<37948> with error 12, opcode 2"}
    DECODERS["nccl"](fields, ctx(make_bundle))
    assert fields["peer_node"] == "gpu-02"
    ip = {"msg": "NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=0"}
    DECODERS["nccl"](ip, ctx(make_bundle))
    assert "peer_node" not in ip


# ---------------------------------------------------------------- outcome keys: the decoders name them, decoders.yaml says what they are
def _string_constants(path: Path) -> set[str]:
    import ast

    return {n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)}


def test_every_outcome_key_a_decoder_names_is_declared_and_described():
    import re

    from slurm_attr.decode.outcomes import ADJUSTMENT_KEYS, OUTCOME_KEYS

    declared = OUTCOME_KEYS | set(ADJUSTMENT_KEYS)
    prefixes = "|".join(sorted({k.split(".")[0] for k in declared}))
    looks_like_key = re.compile(rf"^(?:{prefixes})\.[a-z0-9_.]+$")
    decode_dir = Path(DECODERS["xid"].__code__.co_filename).parent
    named = set().union(*(_string_constants(p) for p in decode_dir.glob("*.py") if p.name != "outcomes.py"))
    named |= _string_constants(decode_dir.parent / "ruleset.py")  # xid.not_in_overlay: the catalog's default
    keys = {s for s in named if looks_like_key.match(s)}
    assert keys == declared  # no key named that is not declared, none declared that nothing names
    assert set(RULES.outcomes) == OUTCOME_KEYS and set(RULES.adjustments) == set(ADJUSTMENT_KEYS)


def _with(**changes):
    """The shipped ruleset with some decoders.yaml entries replaced."""
    from dataclasses import replace

    from slurm_attr.ruleset import Adjustment, Outcome

    outcomes = {k: v for k, v in changes.items() if isinstance(v, Outcome)}
    adjustments = {k: v for k, v in changes.items() if isinstance(v, Adjustment)}
    return replace(RULES, outcomes={**RULES.outcomes, **outcomes},
                   adjustments={**RULES.adjustments, **adjustments})


def test_decoders_take_role_domain_and_priority_from_the_rules(make_bundle):
    from slurm_attr.ruleset import Outcome

    rules = _with(**{"oom_kill.in_job": Outcome("symptom", "application", 7),
                     "cancel.preemption": Outcome("context", None, 1)})
    workload = load_workload(make_bundle({}))
    oom = DECODERS["oom"]({"oom_memcg": "/slurm/uid_1/job_4242", "proc": "python"},
                          DecodeContext(rules, workload))
    assert (oom.role, oom.sub_domain, oom.priority) == ("symptom", "application", 7)
    preempted = DECODERS["slurm_cancel"]({"why": "PREEMPTION"}, DecodeContext(rules, workload))
    assert (preempted.role, preempted.sub_domain, preempted.priority) == ("context", None, 1)
    outside = DECODERS["oom"]({"proc": "python"}, DecodeContext(rules, workload))
    assert outside.priority == RULES.outcomes["oom_kill.outside_job"].priority


def test_the_blame_on_an_earlier_xid_is_a_formula_with_named_parameters(make_bundle):
    from slurm_attr.ruleset import Adjustment

    line = {"xid": "45", "detail": "Ch 00000001 caused by previous Xid 79"}
    earlier = RULES.xid_catalog[79]["priority"]
    shipped = decode_xid(dict(line), ctx(make_bundle))
    assert shipped.priority == max(20, min(earlier, 80) - 15)
    rules = _with(**{"xid.blamed_on_earlier": Adjustment(
        role="symptom", sub_domain="earlier", sets_sub_domain=True, priority_from_earlier=(99, 1, 0))})
    edited = decode_xid(dict(line), DecodeContext(rules, load_workload(make_bundle({}))))
    assert (edited.role, edited.sub_domain, edited.priority) == ("symptom", "gpu", earlier - 1)


def test_an_adjustment_applies_only_to_its_sub_domains(make_bundle):
    from slurm_attr.ruleset import Adjustment

    rules = _with(**{"xid.restart_app": Adjustment(when_sub_domain=("nvlink",), sub_domain="application",
                                                   sets_sub_domain=True, priority_at_most=44)})
    c = decode_xid({"xid": "8", "detail": "Ch 00000010"}, DecodeContext(rules, load_workload(make_bundle({}))))
    assert c.sub_domain == "gpu" and "restart the application" not in c.summary


def test_an_xid_the_overlay_does_not_classify_takes_the_default_outcome(tmp_path):
    import shutil

    from slurm_attr.ruleset import builtin_dir

    rules_dir = tmp_path / "rules"
    shutil.copytree(builtin_dir(), rules_dir, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    overlay = rules_dir / "xid_overlay.csv"
    overlay.write_text("".join(line for line in overlay.read_text().splitlines(keepends=True)
                               if not line.startswith("79,")))
    entry = load(str(rules_dir)).xid_catalog[79]
    default = RULES.outcomes["xid.not_in_overlay"]
    assert (entry["role"], entry["sub_domain"], entry["priority"]) == (default.role, default.sub_domain,
                                                                      default.priority)
    assert entry["mnemonic"] == "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"  # the vendor's row stays


def test_prefix_host_reads_a_launchers_host_tag_through_other_layers():
    from slurm_attr.decode.base import prefix_host, strip_rank
    assert prefix_host("[gpu187:2]:torch.cuda.OutOfMemoryError: CUDA out of memory.") == "gpu187"
    assert prefix_host("2024-01-01 10:00:00 [node-a.cluster:13]: boom") == "node-a.cluster"
    assert prefix_host("[rank3]: RuntimeError: boom") is None
    assert prefix_host("[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog") is None
    assert strip_rank("[gpu187:2]:Traceback (most recent call last):")[0] == "Traceback (most recent call last):"


def test_pdsh_lightning_and_hydra_prefixes_are_layers():
    from slurm_attr.decode.base import prefix_host, strip_rank
    # DeepSpeed's pdsh launcher: `host: ` then torchrun's rank
    assert strip_rank("worker-1: [rank13]: Traceback (most recent call last):") \
        == ("Traceback (most recent call last):", "13")
    assert prefix_host("worker-1: [rank13]: OSError: x") == "worker-1"
    assert prefix_host("[proxy:0:1@nid001234] HYDU_sock_write: write error") == "nid001234"
    assert strip_rank("[rank: 3] RuntimeError: boom") == ("RuntimeError: boom", "3")
    # a progress bar the message was written after, and the carriage returns between its frames
    assert strip_rank("\rMap:  10%|█         | 1/10 [00:01<00:09,  1.00it/s]\rMap:  20%|██        | 2/10 "
                      "[00:02<00:08,  1.00it/s][E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog x") \
        == ("Watchdog x", "2")
    assert strip_rank("3: 100%|██████████| 10/10 [00:10<00:00] OSError: x") == ("OSError: x", "3")
    # exception names and prose are not hosts: upper case, or no digit
    for line in ("ValueError: x", "S3UploadFailedError: x", "error: gpu-02 is down", "note: x"):
        assert prefix_host(line) is None and strip_rank(line)[0] == line, line
