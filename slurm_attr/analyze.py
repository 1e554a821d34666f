"""The four stages for one attempt: scope, collect, extract and correlate, verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slurm_attr import ruleset as rules
from slurm_attr.collect.bundle import BundleCollector
from slurm_attr.engine.pipeline import Engine
from slurm_attr.model import Observations, Workload
from slurm_attr.output.diagnosis import build
from slurm_attr.scope.static import load_workload


def diagnose(workload: Workload, obs: Observations, rules_dir: str | None = None) -> dict[str, Any]:
    ruleset = rules.load(rules_dir)
    events, verdict = Engine(ruleset, workload).run(obs)
    return build(workload, obs, events, verdict, ruleset)


def analyze_bundle(bundle: Path, rules_dir: str | None = None) -> dict[str, Any]:
    """Diagnose a static bundle. Raises BundleError when the bundle cannot be used at all."""
    workload = load_workload(bundle)
    ruleset = rules.load(rules_dir)
    obs = BundleCollector(bundle, workload, ruleset).collect()
    return diagnose(workload, obs, rules_dir)
