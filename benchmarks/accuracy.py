"""Accuracy on the real-incident corpus (tests/incidents): per case and in total.

Each case is a bundle copied from a public incident report with a `case.yaml` giving its source
(url, date), the label a reader takes from the source's own conclusion (`sub_domain`, and
`root_node` where the source names one) and the reason for it. This scores the engine against
those labels: the sub_domain must match, and where a root node is labelled it must be among the
root cause's nodes (for an ambiguous verdict, among the candidates' nodes).

Usage: python benchmarks/accuracy.py [--json] [--only SUBSTRING] [--misses] [--corpus DIR]
(`--corpus` scores another directory of such cases, e.g. a held-out set before it joins the corpus.)
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from slurm_attr.analyze import analyze_bundle

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "incidents"


@dataclass
class CaseResult:
    case: str
    expected: str
    got: str
    evidence: str
    sub_domain_ok: bool
    expected_node: str | None
    got_nodes: list[str]
    node_ok: bool | None  # None: the source names no root node
    verdict: str
    error: str | None = None


def cases(corpus: Path = CORPUS) -> list[Path]:
    return sorted(p for p in corpus.iterdir() if (p / "case.yaml").is_file())


def load_case(case: Path) -> dict[str, Any]:
    return yaml.safe_load((case / "case.yaml").read_text())


def _nodes(d: dict[str, Any]) -> list[str]:
    if d.get("root_cause"):
        return list(d["root_cause"]["nodes"])
    return sorted({c["node"] for c in d.get("candidates", []) if c.get("node")})


def score_case(case: Path) -> CaseResult:
    meta = load_case(case)
    label = meta["label"]
    want, want_node = label["sub_domain"], label.get("root_node")
    try:
        d = analyze_bundle(case)
    except Exception as exc:
        return CaseResult(case.name, want, "crash", "", False, want_node, [], False if want_node else None,
                          "", f"{type(exc).__name__}: {exc}")
    nodes = _nodes(d)
    return CaseResult(
        case=case.name, expected=want, got=d["sub_domain"], evidence=d["evidence_status"],
        sub_domain_ok=d["sub_domain"] == want, expected_node=want_node, got_nodes=nodes,
        node_ok=(want_node in nodes) if want_node else None, verdict=d["verdict"],
    )


def summary(results: list[CaseResult]) -> dict[str, Any]:
    with_node = [r for r in results if r.node_ok is not None]
    both = [r for r in results if r.sub_domain_ok and r.node_ok is not False]
    return {
        "cases": len(results),
        "sub_domain_ok": sum(r.sub_domain_ok for r in results),
        "with_root_node": len(with_node),
        "root_node_ok": sum(bool(r.node_ok) for r in with_node),
        "fully_right": len(both),
        "crashed": sum(r.error is not None for r in results),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--only", help="score only cases whose name holds this text")
    parser.add_argument("--misses", action="store_true", help="list only the cases it gets wrong")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the directory of cases to score")
    args = parser.parse_args(argv)
    results = [score_case(c) for c in cases(args.corpus) if not args.only or args.only in c.name]
    total = summary(results)
    if args.json:
        print(json.dumps({"total": total, "cases": [asdict(r) for r in results]}, indent=2))
        return 0
    width = max((len(r.case) for r in results), default=10)
    for r in results:
        right = r.sub_domain_ok and r.node_ok is not False
        if args.misses and right:
            continue
        node = "" if r.node_ok is None else (" node ok" if r.node_ok else
                                              f" node {r.expected_node}? got {r.got_nodes or '-'}")
        mark = "ok  " if right else "MISS"
        print(f"{mark} {r.case:<{width}}  want {r.expected:<11} got {r.got:<11} "
              f"({r.evidence}){node}" + (f"  [{r.error}]" if r.error else ""))
    n = max(total["cases"], 1)
    print(f"\nsub_domain: {total['sub_domain_ok']}/{total['cases']} "
          f"({100 * total['sub_domain_ok'] / n:.0f}%)   root node: {total['root_node_ok']}/"
          f"{total['with_root_node']}   fully right: {total['fully_right']}/{total['cases']} "
          f"({100 * total['fully_right'] / n:.0f}%)   crashed: {total['crashed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
