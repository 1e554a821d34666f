"""The static bundle's files, described as `Sources` for the shared collector."""

from __future__ import annotations

from pathlib import Path

from slurm_attr.collect.collector import LogCollector, SourceFile, Sources
from slurm_attr.model import Observations, Workload
from slurm_attr.ruleset import Ruleset


def _files_under(root: Path) -> list[Path]:
    """Regular files below root, never following a link out of it, in a stable order."""
    if not root.is_dir():
        return []
    top = root.resolve()
    found = []
    for path in sorted(root.rglob("*")):
        try:
            real = path.resolve()
        except OSError:
            continue
        if real.is_file() and real.is_relative_to(top):
            found.append(path)
    return found


def bundle_sources(bundle: Path, workload: Workload) -> Sources:
    def described(paths: list[Path]) -> list[SourceFile]:
        out = []
        for path in paths:
            rel = path.relative_to(bundle)
            node = next((p for p in rel.parts[1:-1] if p in workload.nodes), None)
            out.append(SourceFile(path, rel.as_posix(), node))
        return out

    return Sources(
        app=described(_files_under(bundle / "app")),
        nodes={n: described(_files_under(bundle / "nodes" / n)) for n in workload.nodes},
        controller=described(_files_under(bundle / "controller")),
        metrics=[f for f in described(_files_under(bundle / "metrics")) if f.path.suffix == ".json"],
        missing={"job_output": "no job output (app/) in the bundle",
                 "node_syslog": "no system logs for {node} in the bundle",
                 "controller": "no slurmctld log in the bundle",
                 "metrics": "no metrics in the bundle"},
    )


class BundleCollector:
    def __init__(self, bundle: Path, workload: Workload, ruleset: Ruleset) -> None:
        self.collector = LogCollector(workload, ruleset, bundle_sources(bundle, workload))

    def collect(self) -> Observations:
        return self.collector.collect()
