"""`slurm-attr rules check` and `rules explain`, and the rules being the whole truth: a priority
written in the YAML wins over a decoder's default."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from slurm_attr.analyze import analyze_bundle
from slurm_attr.cli import cli
from slurm_attr.ruleset import builtin_dir

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


def test_a_priority_edited_in_yaml_changes_the_verdict(make_bundle, rules_copy):
    bundle = make_bundle({"nodes/gpu-01/syslog": XID,
                          "app/out.log": "Traceback (most recent call last):\nValueError: bad config\n"})
    assert analyze_bundle(bundle)["sub_domain"] == "gpu"
    _edit(rules_copy / "patterns.yaml", "    decoder: xid\n", "    decoder: xid\n    priority: 1\n")
    edited = analyze_bundle(bundle, str(rules_copy))
    assert edited["sub_domain"] != "gpu"
    xid = next(s for s in edited["symptoms"] if s["kind"] == "gpu_xid")
    assert xid["priority"] == 1


def test_explain_shows_what_a_line_becomes_and_near_misses():
    result = CliRunner().invoke(cli, ["rules", "explain", XID])
    assert result.exit_code == 0
    assert "nvrm.xid: gpu_xid XID 79 -> cause, sub_domain gpu, priority 95" in result.output
    near = CliRunner().invoke(cli, ["rules", "explain", "NVRM: Xid (PCI:0000:18:00): banana"])
    assert "no pattern matches this line" in near.output and "nvrm.xid" in near.output
