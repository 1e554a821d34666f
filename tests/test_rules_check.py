"""`slurm-attr rules check` and `rules explain`, and the rules being the whole truth: a priority
written in the YAML wins over a decoder's default."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from slurm_attr.analyze import analyze_bundle
from slurm_attr.cli import cli
from slurm_attr.private_cache import PrivateCache
from slurm_attr.ruleset import RuleError, builtin_dir, load

XID = "Nov 20 10:30:00 gpu-01 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"


@pytest.fixture
def rules_copy(tmp_path) -> Path:
    target = tmp_path / "rules"
    shutil.copytree(builtin_dir(), target, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return target


def _edit(path: Path, old: str, new: str) -> int:
    """Replace the first `old` with `new`; returns the 1-based line where it was."""
    text = path.read_text()
    line = text[: text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new, 1))
    return line


def _check(directory: Path):
    return CliRunner().invoke(cli, ["rules", "check", str(directory)])


def test_the_shipped_rules_pass():
    result = CliRunner().invoke(cli, ["rules", "check"])
    assert result.exit_code == 0 and ": ok," in result.output


def test_a_typo_in_an_outcome_is_one_located_line(rules_copy):
    line = _edit(rules_copy / "policy.yaml", "  gpu: hardware\n", "  gpu: hardwear\n")
    result = _check(rules_copy)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: policy.yaml:{line}: outcomes: gpu: unknown outcome 'hardwear' "
        "(one of hardware, infrastructure, application, scheduler, user, unknown)"]


def test_a_key_given_twice_in_one_rule_is_an_error_not_a_silent_loss(rules_copy):
    line = _edit(rules_copy / "patterns.yaml", "    decoder: xid\n", "    decoder: xid\n    origins: [app]\n")
    result = _check(rules_copy)
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: patterns.yaml:{line + 1}: duplicate key 'origins'"


def test_a_bad_regex_names_the_pattern_and_its_line(rules_copy):
    line = _edit(rules_copy / "patterns.yaml", "  - id: nvrm.xid\n", "  - id: nvrm.xid\n")
    _edit(rules_copy / "patterns.yaml", "(?P<xid>\\d+)", "(?P<xid>\\d+")
    result = _check(rules_copy)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: patterns.yaml:{line} pattern nvrm.xid: bad regex:")


def test_a_missing_section_and_an_unknown_key_are_named(rules_copy):
    _edit(rules_copy / "patterns.yaml", "    decoder: xid\n", "    decoder: xid\n    prority: 3\n")
    assert "unknown key 'prority'" in _check(rules_copy).output
    shutil.copy(builtin_dir() / "patterns.yaml", rules_copy / "patterns.yaml")
    _edit(rules_copy / "policy.yaml", "explained_by:\n", "explained_by_typo:\n")
    assert "missing section 'explained_by'" in _check(rules_copy).output


def test_a_setting_hosts_must_agree_on_is_checked_and_its_priority_is_data(make_bundle, rules_copy):
    out = ("gpu-01:1:1 [0] NCCL INFO Using network IB\ngpu-02:1:1 [0] NCCL INFO Using network IB\n"
           "gpu-03:1:1 [0] NCCL INFO Using network Socket\n"
           "gpu-01:1:1 [0] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    bundle = make_bundle({"app/out.log": out}, nodes="gpu-[01-03]")
    assert analyze_bundle(bundle)["sub_domain"] == "gpu_oom"  # a mismatch (50) below a GPU OOM (70)
    _edit(rules_copy / "policy.yaml", "    sub_domain: network\n    priority: 50\n",
          "    sub_domain: network\n    priority: high\n")
    assert "must_agree: entry 1 needs kind" in _only_line(_check(rules_copy))
    _edit(rules_copy / "policy.yaml", "    priority: high\n", "    priority: 90\n")
    assert analyze_bundle(bundle, str(rules_copy))["sub_domain"] == "network"


def test_a_pattern_without_a_decoder_must_say_what_it_becomes(rules_copy):
    _edit(rules_copy / "patterns.yaml", "    priority: 76\n", "")
    output = _check(rules_copy).output
    assert output.startswith("Error: patterns.yaml:") and "missing 'priority'" in output


def test_a_priority_edited_in_yaml_changes_the_verdict(make_bundle, rules_copy):
    bundle = make_bundle({"nodes/gpu-01/syslog": XID,
                          "app/out.log": "Traceback (most recent call last):\nValueError: bad config\n"})
    assert analyze_bundle(bundle)["sub_domain"] == "gpu"
    _edit(rules_copy / "patterns.yaml", "    decoder: xid\n", "    decoder: xid\n    priority: 1\n")
    edited = analyze_bundle(bundle, str(rules_copy))
    assert edited["sub_domain"] != "gpu"
    xid = next(s for s in edited["symptoms"] if s["kind"] == "gpu_xid")
    assert xid["priority"] == 1


def test_what_an_exit_signal_alone_says_is_data(make_bundle, rules_copy, tmp_path):
    bundle = make_bundle({"app/out.log": "epoch 3\n"}, nodes="cpu-01", exit_code="0:7")
    assert analyze_bundle(bundle)["sub_domain"] == "host"
    _edit(rules_copy / "policy.yaml", "  7:\n    sub_domain: host\n", "  7:\n    sub_domain: application\n")
    assert analyze_bundle(bundle, str(rules_copy))["sub_domain"] == "application"
    broken = tmp_path / "broken"
    shutil.copytree(rules_copy, broken)
    line = _edit(broken / "policy.yaml", "  7:\n    sub_domain: application\n", "  77:\n    sub_domain: nowhere\n")
    result = _check(broken)
    assert result.exit_code != 0 and f"policy.yaml:{line}:" in result.output and "77" in result.output


def test_explain_shows_what_a_line_becomes_and_near_misses():
    result = CliRunner().invoke(cli, ["rules", "explain", XID])
    assert result.exit_code == 0
    assert "nvrm.xid: gpu_xid XID 79 -> cause, sub_domain gpu, priority 95" in result.output
    near = CliRunner().invoke(cli, ["rules", "explain", "NVRM: Xid (PCI:0000:18:00): banana"])
    assert "no pattern matches this line" in near.output and "nvrm.xid" in near.output


# ---------------------------------------------------------------- decoders.yaml, the Xid overlay, the vendor catalogs
OOM = ("Nov 20 10:30:00 gpu-01 kernel: oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,"
       "mems_allowed=0,oom_memcg=/slurm/uid_1000/job_4242,task_memcg=/slurm/uid_1000/job_4242/step_0,"
       "task=python,pid=4321,uid=1000\n")
APP_ERROR = "Traceback (most recent call last):\nValueError: bad config\n"


def _only_line(result) -> str:
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.mark.parametrize("old, new", [
    ("{role: cause, sub_domain: host_oom, priority: 78}", "{role: cause, sub_domain: host_oom, priority: 78.5}"),
    ("{role: cause, sub_domain: host_oom, priority: 78}", "{role: cuase, sub_domain: host_oom, priority: 78}"),
    ("{role: cause, sub_domain: host_oom, priority: 78}", "{role: cause, sub_domain: hostoom, priority: 78}"),
    ("{role: cause, sub_domain: host_oom, priority: 78}", "{role: cause, sub_domain: host_oom, prority: 78}"),
])
def test_a_typo_in_a_decoder_outcome_is_one_located_line(rules_copy, old, new):
    text = (rules_copy / "decoders.yaml").read_text()
    key_line = text[: text.index("  oom_kill.in_job:")].count("\n") + 1
    _edit(rules_copy / "decoders.yaml", old, new)
    assert _only_line(_check(rules_copy)).startswith(f"Error: decoders.yaml:{key_line}: ")


def test_an_outcome_key_no_decoder_names_or_a_missing_one_is_an_error(rules_copy):
    line = _edit(rules_copy / "decoders.yaml", "  oom_kill.in_job:", "  oom_kill.in_jb:")
    assert _only_line(_check(rules_copy)) == (
        f"Error: decoders.yaml:{line}: outcomes: unknown key 'oom_kill.in_jb': no decoder names it")
    _edit(rules_copy / "decoders.yaml", "  oom_kill.in_jb:", "  # oom_kill.in_jb:")
    assert "outcomes: no entry for oom_kill.in_job (a decoder names it)" in _only_line(_check(rules_copy))


def test_earlier_only_where_the_decoder_blames_an_earlier_xid(rules_copy):
    line = _edit(rules_copy / "decoders.yaml", "xid74.sympathetic:     {role: symptom, priority: 30}",
                 "xid74.sympathetic:     {role: symptom, sub_domain: earlier}")
    assert _only_line(_check(rules_copy)).startswith(
        f"Error: decoders.yaml:{line}: this decoder blames no earlier Xid")


@pytest.mark.parametrize("old, new, message", [
    ("\n79,gpu,cause,", "\n79,gpu,cuase,", "role must be one of"),
    ("\n79,gpu,cause,", "\n79,gpus,cause,", "unknown sub_domain 'gpus'"),
    ("\n79,gpu,cause,", "\n7900,gpu,cause,", "Xid 7900 is not in the vendor catalog"),
    ("\n79,gpu,cause,", "\n78,gpu,cause,", "Xid 78 is classified twice"),
])
def test_a_typo_in_the_xid_overlay_is_one_located_line(rules_copy, old, new, message):
    line = _edit(rules_copy / "xid_overlay.csv", old, new) + 1  # `old` starts on the line before
    result = _only_line(_check(rules_copy))
    assert result.startswith(f"Error: xid_overlay.csv:{line}: ") and message in result


def test_an_unknown_overlay_column_and_an_unversioned_catalog_are_named(rules_copy):
    line = _edit(rules_copy / "xid_overlay.csv", "xid,sub_domain,role,priority,origin",
                 "xid,sub_domain,role,priorty,origin")
    assert _only_line(_check(rules_copy)).startswith(
        f"Error: xid_overlay.csv:{line}: unknown column 'priorty'")
    shutil.copy(builtin_dir() / "xid_overlay.csv", rules_copy / "xid_overlay.csv")
    _edit(rules_copy / "xid_catalog.csv", "# version: ", "# release: ")
    assert "xid_catalog.csv:1: missing the '# version: ...' header line" in _only_line(_check(rules_copy))


def test_a_decoder_outcome_edited_in_yaml_changes_the_verdict(make_bundle, rules_copy):
    bundle = make_bundle({"nodes/gpu-01/syslog": OOM, "app/out.log": APP_ERROR})
    assert analyze_bundle(bundle)["sub_domain"] == "host_oom"
    _edit(rules_copy / "decoders.yaml", "oom_kill.in_job:           {role: cause, sub_domain: host_oom, priority: 78}",
          "oom_kill.in_job:           {role: cause, sub_domain: host_oom, priority: 3}")
    lowered = analyze_bundle(bundle, str(rules_copy))
    assert lowered["sub_domain"] == "application"
    assert next(s for s in lowered["symptoms"] if s["kind"] == "host_oom_kill")["priority"] == 3
    _edit(rules_copy / "decoders.yaml", "host_oom, priority: 3}", "host_oom, priority: 78}")
    _edit(rules_copy / "decoders.yaml", "oom_kill.in_job:           {role: cause,",
          "oom_kill.in_job:           {role: context,")
    assert analyze_bundle(bundle, str(rules_copy))["sub_domain"] == "application"


def test_the_xid_overlay_wins_over_the_catalog_and_is_recorded(make_bundle, rules_copy):
    bundle = make_bundle({"nodes/gpu-01/syslog": XID, "app/out.log": APP_ERROR})
    shipped = analyze_bundle(bundle)
    assert shipped["sub_domain"] == "gpu"
    assert shipped["rules"]["xid_catalog"] == "2025-10-29"
    _edit(rules_copy / "xid_overlay.csv", "\n79,gpu,cause,95,", "\n79,gpu,context,95,")
    edited = analyze_bundle(bundle, str(rules_copy))
    assert edited["sub_domain"] == "application"
    assert edited["rules"]["overlay"] != shipped["rules"]["overlay"]
    assert edited["rules"]["xid_catalog"] == shipped["rules"]["xid_catalog"]


def test_an_overlay_cell_overrides_the_vendors_and_an_empty_one_does_not(rules_copy):
    from slurm_attr.ruleset import load

    _edit(rules_copy / "xid_overlay.csv", "xid,sub_domain,role,priority,origin",
          "xid,sub_domain,role,priority,origin,immediate")
    text = (rules_copy / "xid_overlay.csv").read_text()
    rows = [line + ("," if line[:1].isdigit() else "") for line in text.splitlines()]
    rows = [line[:-1] + ",RESET_GPU" if line.startswith("79,") else line for line in rows]
    (rules_copy / "xid_overlay.csv").write_text("\n".join(rows) + "\n")
    catalog = load(str(rules_copy)).xid_catalog
    assert catalog[79]["immediate"] == "RESET_GPU"
    assert catalog[48]["immediate"] == "WORKFLOW_XID_48"  # the vendor's, the cell being empty


# ---------------------------------------------------------------- tools/gen_xid_catalog.py
def _generator():
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "tools" / "gen_xid_catalog.py"
    spec = importlib.util.spec_from_file_location("gen_xid_catalog", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, kind", [("xid_catalog.csv", "xid"), ("nvlink5_catalog.csv", "nvlink5")])
def test_the_vendor_catalogs_are_what_the_generator_makes_of_them(name, kind):
    shipped = (builtin_dir() / name).read_text()
    assert shipped.startswith("# generated: tools/gen_xid_catalog.py")
    assert _generator().generate(shipped, kind, "2025-10-29") == shipped


def test_the_generator_reads_the_published_html_table():
    import csv
    import html

    shipped = (builtin_dir() / "xid_catalog.csv").read_text()
    rows = list(csv.reader(line for line in shipped.splitlines() if not line.startswith("#")))[1:]
    cells = lambda row: "".join(f"<td>{html.escape(c).replace(' / ', ' /<br>')}</td>" for c in row)  # noqa: E731
    page = ("<html><body><table><tr><th>Other</th></tr><tr><td>x</td></tr></table>"
            "<table><thead><tr><th>XID</th><th>Mnemonic</th><th>Description</th>"
            "<th>Resolution Bucket (Immediate Action)</th><th>Investigatory Action</th></tr></thead><tbody>"
            "<tr><td colspan=5>Section: GPU</td></tr>"
            + "".join(f"<tr>{cells(row)}</tr>\n" for row in reversed(rows)) + "</tbody></table>")
    assert _generator().generate(page, "xid", "2025-10-29") == shipped


def test_the_generator_keeps_only_the_vendor_columns_of_a_combined_table():
    gen = _generator()
    combined = ("xid,mnemonic,description,immediate,investigatory,origin,sub_domain,role,priority\n"
                '13,"A /\nB",Graphics  Engine Exception,RESTART_APP,WORKFLOW_XID_13,app,application,cause,45\n')
    out = gen.generate(combined, "xid", "v1", source="https://example.org/catalog")
    assert out.splitlines()[1:] == ["# source: https://example.org/catalog", "# version: v1",
                                    "xid,mnemonic,description,immediate,investigatory",
                                    "13,A / B,Graphics Engine Exception,RESTART_APP,WORKFLOW_XID_13"]
    with pytest.raises(ValueError):
        gen.generate("code,name\n1,x\n", "xid", "v1")


def test_explain_names_the_decoder_outcome_keys_to_edit():
    from slurm_attr.extract.explain import explain
    from slurm_attr.ruleset import load

    found = explain(load(), OOM, node="gpu-01", job_id="4242")
    assert found.outcome_keys == ["oom_kill.in_job"]
    xid45 = "kernel: NVRM: Xid (PCI:0000:18:00): 45, pid=1, name=x, Ch 00000001 caused by previous Xid 79"
    assert explain(load(), xid45).outcome_keys == ["xid.blamed_on_earlier"]
    printed = CliRunner().invoke(cli, ["rules", "explain", "--node", "gpu-01", "--job", "4242", OOM])
    assert "decoder outcomes (rules/decoders.yaml): oom_kill.in_job" in printed.output


def test_a_dcgm_xid_samples_rank_below_the_kernel_line_is_data(rules_copy, make_bundle):
    """metrics.dcgm_xid_priority_delta in policy.yaml, not a number in the collector."""
    import json
    from datetime import UTC, datetime

    when = int(datetime(2026, 11, 20, 10, 30, tzinfo=UTC).timestamp())  # inside the job
    doc = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "DCGM_FI_DEV_XID_ERRORS", "Hostname": "gpu-01", "gpu": "0"},
         "values": [[when, "79"]]}]}}
    bundle = make_bundle({"metrics/dcgm.json": json.dumps(doc)})

    def dcgm_priority(rules: Path | None) -> int:
        d = analyze_bundle(bundle, str(rules) if rules else None)
        return next(e["priority"] for e in d["symptoms"] if e["rule"] == "metrics.dcgm_xid")

    shipped = dcgm_priority(None)
    _edit(rules_copy / "policy.yaml", "dcgm_xid_priority_delta: -5", "dcgm_xid_priority_delta: -20")
    assert dcgm_priority(rules_copy) == shipped - 15
    _edit(rules_copy / "policy.yaml", "dcgm_xid_priority_delta: -20", "dcgm_xid_priority_delta: x")
    load.cache_clear()  # the directory was loaded above, before this edit
    assert "dcgm_xid_priority_delta must be a whole number" in _check(rules_copy).output


def test_a_rules_own_outcome_is_checked(rules_copy):
    _edit(rules_copy / "patterns.yaml", "    outcome: infrastructure", "    outcome: infrastruktur")
    output = _check(rules_copy).output
    assert output.startswith("Error: patterns.yaml:") and "outcome must be one of" in output
    shutil.copy(builtin_dir() / "patterns.yaml", rules_copy / "patterns.yaml")
    load.cache_clear()
    _edit(rules_copy / "classify.yaml", "outcome: infrastructure", "outcome: infra")
    output = _check(rules_copy).output
    assert output.startswith("Error: classify.yaml:") and "outcome must be one of" in output


def test_parsed_rules_are_cached_by_content_and_never_stale(tmp_path, rules_copy, monkeypatch):
    """A start reads the parsed YAML from the cache; an edit is a new entry; a broken entry is
    parsed again. What comes back is what the YAML says, integer keys included."""
    from slurm_attr import ruleset

    monkeypatch.setattr(ruleset._parsed, "files", PrivateCache(tmp_path, "cache"))
    load.cache_clear()
    first = load(str(rules_copy))
    assert len(list((tmp_path / "cache").iterdir())) == 4  # one per YAML file

    def no_yaml(text, path):
        raise AssertionError(f"{path.name} was parsed again")

    with monkeypatch.context() as m:
        m.setattr(ruleset, "_parse_yaml", no_yaml)
        load.cache_clear()
        again = load(str(rules_copy))
    assert again.policy == first.policy and again.outcomes == first.outcomes
    assert [p.id for p in again.patterns] == [p.id for p in first.patterns]
    odd = {79: "a", "x": {1.5: [None, True]}, "when": "2025-10-29"}  # keys JSON would turn into text
    ruleset._parsed.put(b"odd", ruleset._parsed.encode(odd))
    assert ruleset._parsed.get(b"odd") == odd

    _edit(rules_copy / "policy.yaml", "dcgm_xid_priority_delta: -5", "dcgm_xid_priority_delta: -7")
    load.cache_clear()
    assert load(str(rules_copy)).policy["metrics"]["dcgm_xid_priority_delta"] == -7
    for entry in (tmp_path / "cache").iterdir():
        entry.write_text("{broken")
    load.cache_clear()
    assert load(str(rules_copy)).policy["metrics"]["dcgm_xid_priority_delta"] == -7

    # a file is cached only once its whole load passed: a bad regex is caught on every load
    before = set((tmp_path / "cache").iterdir())
    _edit(rules_copy / "patterns.yaml", "regex: 'NVRM: Xid", "regex: '(NVRM: Xid")
    for _ in range(2):
        load.cache_clear()
        with pytest.raises(RuleError, match="bad regex"):
            load(str(rules_copy))
        assert set((tmp_path / "cache").iterdir()) == before
    shutil.copy(builtin_dir() / "patterns.yaml", rules_copy / "patterns.yaml")
    load.cache_clear()
    assert "Xid" in load(str(rules_copy)).patterns[0].regex.pattern or load(str(rules_copy)).patterns

    (tmp_path / "cache").chmod(0o777)  # others could have planted rules there: not read
    monkeypatch.setattr(ruleset._parsed, "files", PrivateCache(tmp_path, "cache"))
    with monkeypatch.context() as m:
        m.setattr(ruleset, "_parse_yaml", no_yaml)
        load.cache_clear()
        with pytest.raises(AssertionError, match="was parsed again"):
            load(str(rules_copy))
    load.cache_clear()


def test_a_lead_domain_that_does_not_exist_is_named(rules_copy):
    _edit(rules_copy / "policy.yaml", "  domains: [gpu, gpu_memory,", "  domains: [gpus, gpu_memory,")
    assert "unexplained_failure_leads: unknown sub_domain 'gpus'" in _only_line(_check(rules_copy))


def test_a_first_failure_domain_that_does_not_exist_is_named(rules_copy):
    _edit(rules_copy / "policy.yaml", "placed_by_first_failure: [gpu,", "placed_by_first_failure: [gpus,")
    assert "placed_by_first_failure: unknown sub_domain 'gpus'" in _only_line(_check(rules_copy))


def test_a_collective_comparison_without_its_operations_is_named(rules_copy):
    _edit(rules_copy / "policy.yaml", "  ops: [AllReduce,", "  opz: [AllReduce,")
    assert "collectives_must_match needs kind, fields and ops" in _only_line(_check(rules_copy))


def test_a_hang_rule_without_its_priority_is_named(rules_copy):
    _edit(rules_copy / "policy.yaml", "  priority: 60\n  notes:", "  priority: high\n  notes:")
    assert "hung_on needs states and kinds" in _only_line(_check(rules_copy))


def test_a_hang_rule_without_a_note_for_each_of_its_states_is_named(rules_copy):
    _edit(rules_copy / "policy.yaml", '    CANCELLED: "The job then hung until it was cancelled."\n', "")
    assert "notes (a sentence for each state)" in _only_line(_check(rules_copy))


def test_a_lost_node_rule_with_an_unknown_domain_is_named(rules_copy):
    _edit(rules_copy / "policy.yaml", "  domains: [gpu, gpu_memory, nvlink, network, storage, host]\n  priority: 56",
          "  domains: [gpu, psu]\n  priority: 56")
    assert "lost_node_after: unknown sub_domain 'psu'" in _only_line(_check(rules_copy))


def test_an_absence_rule_with_a_bad_count_is_named(rules_copy):
    _edit(rules_copy / "policy.yaml", "  max_seq: 2\n", "  max_seq: 0\n")
    assert "absent_from_timeouts needs kinds" in _only_line(_check(rules_copy))


def test_a_timeouts_must_agree_rule_without_its_ops_is_named(rules_copy):
    text = (rules_copy / "policy.yaml").read_text()
    ops = next(line for line in text.splitlines() if line.startswith("  ops: [ALLREDUCE"))
    _edit(rules_copy / "policy.yaml", ops + "\n", "")
    assert "timeouts_must_agree needs kinds and ops" in _only_line(_check(rules_copy))


def test_an_across_hosts_rule_without_its_action_is_named(rules_copy):
    _edit(rules_copy / "policy.yaml", "    action: Rerun with NCCL_DEBUG=INFO", "    next: Rerun with NCCL_DEBUG=INFO")
    assert "across_hosts: entry 1 needs codes" in _only_line(_check(rules_copy))


def test_a_without_gpus_rule_with_an_unknown_outcome_is_named(rules_copy):
    _edit(rules_copy / "policy.yaml", "  outcome: application\n  summary: \"No GPU was visible",
          "  outcome: the user\n  summary: \"No GPU was visible")
    assert "without_gpus needs codes" in _only_line(_check(rules_copy))


def test_a_cuda_result_number_that_is_no_number_is_named(rules_copy):
    _edit(rules_copy / "classify.yaml", "  804: forward", "  eight hundred and four: forward")
    assert "cuda_driver_codes must map result numbers to their texts" in _only_line(_check(rules_copy))


def test_a_hang_after_done_rule_without_its_gap_is_named(rules_copy):
    _edit(rules_copy / "policy.yaml", "  min_gap_s: 300\n", "  min_gap_s: soon\n")
    assert "hung_after_done needs states and kinds" in _only_line(_check(rules_copy))


def test_a_stall_rule_without_its_node_bound_is_named(rules_copy):
    _edit(rules_copy / "policy.yaml", "  max_nodes: 1\n  priority: 58\n", "  priority: 58\n")
    assert "stalled_before_first_result needs states and kinds" in _only_line(_check(rules_copy))


def test_an_unknown_pattern_flag_is_named_with_the_known_ones(rules_copy):
    _edit(rules_copy / "patterns.yaml", "    lines_after: true\n", "    lines_afterwards: true\n")
    assert "unknown key 'lines_afterwards'" in _only_line(_check(rules_copy))
