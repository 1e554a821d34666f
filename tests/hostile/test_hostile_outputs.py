"""Class 8 and 9: what users wrote reaches a spreadsheet as text, never as a formula or an extra
row, and reaches a terminal without control sequences (C0, C1, bidi overrides)."""

from __future__ import annotations

import csv
import io
import json
import unicodedata

import pytest
from hostile_helpers import cli, write_bundle

from slurm_attr.sanitize import clean, csv_cell

CONTROLS = ["\x1bc", "\x1b]0;pwned\x07", "\x9b2J", "\x85", "\u202e", "\u2066", "\r", "\x00", "\x7f"]


@pytest.mark.parametrize("control", CONTROLS, ids=[repr(c) for c in CONTROLS])
def test_clean_leaves_no_control_or_bidi_character(control):
    out = clean(f"a{control}b")
    assert out.startswith("a\ufffd") and out.endswith("b")
    assert not any(unicodedata.category(ch) in ("Cc", "Cf") for ch in out)


@pytest.mark.parametrize("cell", ["=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "\rx",
                                  " =1+1", "＝1+1"])
def test_csv_cell_neutralises_formulas(cell):
    assert csv_cell(cell).startswith("'")


def test_plain_values_are_left_alone():
    assert csv_cell("gpu-01") == "gpu-01" and csv_cell(3) == 3 and csv_cell(1.5) == 1.5


HOSTILE_NAME = "=cmd|' /C calc'!A0\r\nevil,row\x1b[2J\u202eexe.txt"


def _saved(tmp_path):
    bundle = write_bundle(tmp_path / "bundle", {"app/out.log": "ValueError: bad config\n"},
                          name=HOSTILE_NAME, user="@mallory", partition="+p")
    db = tmp_path / "attr.db"
    run = cli("analyze", str(bundle), "--save", db=db)
    assert run.rc == 0, run.stderr
    return run, db


def test_csv_report_has_one_row_per_attempt_and_no_formula(tmp_path):
    _, db = _saved(tmp_path)
    run = cli("report", "--since", "3650d", "--format", "csv", db=db)
    assert run.rc == 0, run.stderr
    rows = list(csv.reader(io.StringIO(run.stdout)))
    assert len(rows) == 2  # header + the one attempt: the CR LF in the name split nothing
    header, row = rows
    for cell in row:
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert row[header.index("user")] == "'@mallory" and row[header.index("partition")] == "'+p"
    assert "\r" not in run.stdout and "\x1b" not in run.stdout


def test_terminal_outputs_carry_no_control_sequences(tmp_path):
    run, db = _saved(tmp_path)
    report = cli("report", "--since", "3650d", db=db)
    for text in (run.stdout, run.stderr, report.stdout):
        assert not any(ch in text for ch in "\x1b\x9b\u202e\r\x07")
    assert "\ufffd" in run.stdout  # the name is still shown, its controls replaced


def test_json_output_keeps_user_text_verbatim_but_escaped(tmp_path):
    bundle = write_bundle(tmp_path / "bundle", {"app/out.log": "ValueError: x\n"}, name=HOSTILE_NAME)
    run = cli("analyze", str(bundle), "--format", "json")
    assert "\x1b" not in run.stdout  # JSON escapes it as \u001b
    assert json.loads(run.stdout)["workload"]["name"] == HOSTILE_NAME
