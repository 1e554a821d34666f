"""What each rule's regex costs on the worst line a user could print for it: every keyword of the
rule set between two long runs of one character class (letters, digits, word characters with dots
and dashes, spaces, punctuation) or of the keyword itself repeated (a device name printed over and
over), searched as the extractor searches (within the keyword window).
A regex with an unbounded class before an optional group or a literal tries every start in such a
run and costs time quadratic in it; a bounded one costs time linear in the line.

Prints the rules over --top, slowest first, in milliseconds per line (median of --repeat), beside
the baseline: the same lines searched for the bare keyword.

    python benchmarks/rule_regex_cost.py --run 1000 --top 15
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable
from functools import partial

from slurm_attr import ruleset
from slurm_attr.extract.extractor import search_near_keywords

RUNS = {"letters": "a", "digits": "1", "word.dash": "a.-", "spaces": " ", "colons": "a:", "brackets": "[a] ",
        "paths": "a/"}


def lines_for(keyword: str, run: int) -> list[str]:
    """The keyword between two runs of each class, and the keyword at the end of a run."""
    out = []
    for unit in (*RUNS.values(), keyword + " "):
        fill = (unit * (run // len(unit) + 1))[:run]
        out += [fill + keyword + fill, fill + " " + keyword]
    return out


def cost_ms(search: Callable[[str], object], lines: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for line in lines:
            search(line)
        times.append((time.perf_counter() - start) * 1000 / len(lines))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=int, default=1000, help="characters in each run (default 1000)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    rules = ruleset.load()
    rows = []
    for pattern in rules.patterns:
        lines = [line for k in pattern.keywords for line in lines_for(k, args.run)]
        if not lines:
            continue
        search = partial(search_near_keywords, pattern)
        slowest = max(lines, key=lambda line: cost_ms(search, [line], 1))
        rule_ms = cost_ms(search, [slowest], args.repeat)
        literal = re.compile(re.escape(pattern.keywords[0]))
        base_ms = cost_ms(literal.search, [slowest], args.repeat)
        rows.append((rule_ms, base_ms, pattern.id))
    rows.sort(reverse=True)
    print(f"{len(rows)} rules, runs of {args.run} characters; ms per line, median of {args.repeat}")
    print(f"{'rule':48} {'rule ms':>9} {'keyword ms':>11} {'ratio':>8}")
    for rule_ms, base_ms, rule_id in rows[:args.top]:
        print(f"{rule_id:48} {rule_ms:9.3f} {base_ms:11.4f} {rule_ms / max(base_ms, 1e-6):8.0f}")
    print(f"median over all rules: {statistics.median(r[0] for r in rows):.3f} ms; "
          f"worst: {rows[0][0]:.3f} ms ({rows[0][2]})")


if __name__ == "__main__":
    main()
