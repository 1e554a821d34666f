"""Class 3 (huge inputs), for the rules' regexes: a user can print, or send to syslog with
`logger`, a line built to make a regex backtrack. A regex with a leading greedy class costs time
quadratic in a run of characters it accepts, so a 1 MiB line would stall the worker for hours.
Every rule is tried on long lines of the shapes that hurt, around each of its keywords."""

from __future__ import annotations

import time

import pytest
from hostile_helpers import write_bundle

from slurm_attr.analyze import analyze_bundle
from slurm_attr.extract.extractor import search_near_keywords
from slurm_attr.ruleset import load as load_rules

# Runs of what leading classes accept ([\w.-]+, \S+, .*, digits, spaces), and separators.
UNITS = (" ", "a ", "a", "1", "(", "[", ":", ", ", "=", "/", "a=1 ", "0x1", ". ", "\t", "-", "a.")
LINE_CHARS = 64 << 10
# Linear work on 64 KiB takes milliseconds; a quadratic regex takes a minute or more. The bound
# sits far from both, so a loaded machine does not fail it and a backtracking regex cannot pass.
SLOWEST_S = 1.0


def _hostile_lines(keyword: str):
    for unit in UNITS:
        run = unit * (LINE_CHARS // len(unit))
        yield keyword + run + "!"
        yield run + keyword + run + "\x01"
    yield (keyword + " ") * (LINE_CHARS // (len(keyword) + 1))  # each place a regex may start


@pytest.mark.parametrize("pattern", load_rules(None).patterns, ids=lambda p: p.id)
def test_no_rule_backtracks_on_a_long_hostile_line(pattern):
    worst, shape = 0.0, ""
    for keyword in pattern.keywords:
        for line in _hostile_lines(keyword):
            started = time.perf_counter()
            search_near_keywords(pattern, line)
            took = time.perf_counter() - started
            if took > worst:
                worst, shape = took, repr(line[:60])
    assert worst < SLOWEST_S, f"{pattern.id} took {worst:.1f} s on {shape}..."


def test_a_match_far_into_a_long_line_is_still_found():
    nccl = next(p for p in load_rules(None).patterns if p.id == "nccl.warn")
    line = "x" * 200_000 + " gpu-01:11:12 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1>"
    m = search_near_keywords(nccl, line)
    assert m is not None and m["host"] == "gpu-01"


def test_a_message_after_a_progress_bar_on_the_same_line_is_still_read(tmp_path):
    """tqdm redraws its bar with carriage returns, so a log message printed after it shares the
    bar's line: thousands of characters from the start, where a rule anchored at the start looks."""
    bar = "".join(f"\r 45%|####      | {i}/100 [00:10<00:12,  4.50it/s]" for i in range(100))
    line = bar + "2026-11-20 10:20:00 ERROR:root:checkpoint save failed: [Errno 28] No space left on device\n"
    d = analyze_bundle(write_bundle(tmp_path / "bundle", {"app/gpu-01/out.log": line}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("storage", "ENOSPC")


def test_megabyte_lines_built_to_backtrack_cost_seconds_not_hours(tmp_path):
    run = 1 << 20
    syslog = ("Nov 20 10:30:00 gpu-01 kernel: [UFW BLOCK] DPT=6818" + ", " * (run // 2) + "\n"
              "Nov 20 10:30:01 gpu-01 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.\n")
    out = ("NCCL WARN" + "1" * run + "\n" + "1" * run + "nvls" + "0x1" * (run // 3) + "\n"
           + "RuntimeError: " + "nan " * (run // 4) + "\n")  # a rule anchored at the start reads it all
    bundle = write_bundle(tmp_path / "bundle", {"nodes/gpu-01/syslog": syslog, "app/gpu-01/out.log": out})
    started = time.perf_counter()
    d = analyze_bundle(bundle)
    assert time.perf_counter() - started < 60
    assert d["sub_domain"] == "gpu"  # the real evidence still decides


def _classify_regexes(node, path=()):
    """Every compiled regex of the classification tables (they read a matched line's fields)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(key, str) and key.startswith("_") and hasattr(value, "search"):
                yield "/".join((*path, key)), value
            else:
                yield from _classify_regexes(value, (*path, str(key)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _classify_regexes(value, (*path, str(i)))


def test_no_classification_regex_backtracks_on_a_long_field():
    # A field is cut by the window above: a match spans at most about 1 KiB around its keyword.
    regexes = list(_classify_regexes(load_rules(None).classify))
    assert len(regexes) > 40
    for where, regex in regexes:
        for unit in (*UNITS, "nan ", "loss ", "error "):
            field = unit * ((2 << 10) // len(unit))
            started = time.perf_counter()
            regex.search(field + "!")
            took = time.perf_counter() - started
            assert took < SLOWEST_S, f"{where} took {took:.1f} s on a run of {unit!r}"
