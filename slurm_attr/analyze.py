"""The four stages for one attempt: scope, collect, extract and correlate, verdict."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from slurm_attr import ruleset as rules
from slurm_attr.collect.files import ReadLimits
from slurm_attr.config import Settings
from slurm_attr.connectors.bundle import BundleCollector
from slurm_attr.engine.pipeline import Engine
from slurm_attr.model import AttemptFacts, Observations, Workload
from slurm_attr.output.diagnosis import document
from slurm_attr.scope.static import load_workload, open_bundle

if TYPE_CHECKING:
    from slurm_attr.scope.slurm import SlurmClient


def diagnose(workload: Workload, obs: Observations, rules_dir: str | None = None) -> dict[str, Any]:
    ruleset = rules.load(rules_dir)
    events, verdict = Engine(ruleset, workload).run(obs)
    return document(workload, obs, events, verdict, ruleset)


def diagnose_attempt(facts: AttemptFacts, cluster: str, env: dict[str, str], settings: Settings,
                     client: SlurmClient) -> dict[str, Any]:
    """Diagnose one ended attempt of a live cluster from its sacct facts and epilog environment."""
    from slurm_attr.connectors.slurm import collect  # not needed (nor paid for) by bundles
    from slurm_attr.scope.slurm import workload_from

    workload = workload_from(facts, cluster)
    ruleset = rules.load(settings.rules)
    obs = collect(workload, ruleset, settings, env, client)
    return diagnose(workload, obs, settings.rules)


def minimal_env(facts: AttemptFacts, cluster: str) -> dict[str, str]:
    """What a job's epilog would have said, rebuilt from sacct (backfill, on-demand analysis)."""
    return {"SLURM_JOB_ID": facts.job_id, "SLURM_JOB_USER": facts.user,
            "SLURM_JOB_WORK_DIR": facts.work_dir or "", "SLURM_CLUSTER_NAME": cluster,
            "SLURM_JOB_RESTART_COUNT": str(facts.attempt)}


def analyze_bundle(bundle: Path, rules_dir: str | None = None,
                   limits: ReadLimits | None = None) -> dict[str, Any]:
    """Diagnose a static bundle. Raises BundleError when the bundle cannot be used at all."""
    with open_bundle(bundle) as root:
        workload = load_workload(root)
        ruleset = rules.load(rules_dir)
        obs = BundleCollector(root, workload, ruleset, limits).collect()
    return diagnose(workload, obs, rules_dir)
