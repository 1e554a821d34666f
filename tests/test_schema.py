"""The published diagnosis schema (schema/diagnosis-v1.json) holds for every sample, every real
incident and a hostile bundle: consumers can rely on it, and a change to the document that is
not reflected in the schema fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, sample_dirs
from jsonschema import Draft202012Validator, FormatChecker

from slurm_attr.analyze import analyze_bundle

SCHEMA = json.loads((ROOT / "schema" / "diagnosis-v1.json").read_text())
VALIDATOR = Draft202012Validator(SCHEMA, format_checker=FormatChecker())
INCIDENTS = sorted(p for p in (ROOT / "tests" / "incidents").glob("*/workload.json"))


def _errors(doc: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]


def test_the_schema_is_itself_valid():
    Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("bundle", sample_dirs() + [p.parent for p in INCIDENTS],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_diagnosis_matches_the_schema(bundle: Path):
    assert _errors(analyze_bundle(bundle)) == []


def test_the_schema_rejects_what_consumers_must_not_see():
    doc = analyze_bundle(sample_dirs()[0])
    for broken in ({**doc, "outcome": "hardwear"}, {**doc, "surprise": 1},
                   {**doc, "coverage": [{**doc["coverage"][0], "status": "fine"}]}):
        assert _errors(broken)


def test_the_typed_document_has_the_schemas_keys():
    """The TypedDicts code is type-checked against say what the published schema says."""
    from slurm_attr.output import document as t

    defs, top = SCHEMA["$defs"], SCHEMA["properties"]
    pairs = {t.DiagnosisDoc: SCHEMA, t.WorkloadDoc: defs["workload"], t.StepDoc: defs["step"],
             t.RootCauseDoc: defs["root_cause"], t.CandidateDoc: defs["candidate"],
             t.EventDoc: defs["event"], t.SourceDoc: defs["source"], t.CoverageDoc: defs["coverage"],
             t.SpanDoc: defs["coverage"]["properties"]["span"], t.ErrorDoc: top["errors"]["items"],
             t.TraceDoc: top["rule_trace"]["items"], t.RulesDoc: top["rules"]}
    for typed, schema in pairs.items():
        assert set(typed.__required_keys__) == set(schema["required"]), typed.__name__
        assert set(typed.__annotations__) == set(schema["properties"]), typed.__name__  # and optional ones
