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


def test_xid45_caused_by_previous_is_a_symptom(make_bundle):
    c = decode_xid({"xid": "45", "detail": "Ch 00000001 caused by previous Xid 149"}, ctx(make_bundle))
    assert c.role == "symptom" and c.fields["caused_by_xid"] == "149"


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
    assert remote.code == "ncclRemoteError" and remote.sub_domain is None
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
