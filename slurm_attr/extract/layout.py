"""Which node ran rank N: the step's task layout where the scheduler told it, else a guess.

A line that names a rank but no host (`[rank21]: ...`, an MPI abort of rank 5023) needs the node
the rank ran on. srun numbers its tasks 0..n-1 and lays them out on the step's nodes: in blocks of
consecutive ranks (the default) or round-robin (cyclic). When sacct gave the step's task count
and that is more than one task per node, each task is a rank and the layout says where it ran.
One task per node is a launcher (torchrun, mpirun) that starts its own ranks: then, and when
nothing is known, ranks are guessed in blocks of one per GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from slurm_attr.model import Step, Workload
from slurm_attr.scope.static import NodeListError, expand_nodes

GUESS = "rank (block distribution)"  # a node guessed from the rank alone
_NOT_RANKS = ("batch", "extern")


@dataclass(frozen=True)
class RankLayout:
    nodes: tuple[str, ...]
    per_node: int  # ranks on each node (block), or 0 for a round-robin layout
    how: str  # what `node_from` says of a node found this way

    def host(self, rank: int) -> str | None:
        index = rank % len(self.nodes) if self.per_node == 0 else rank // self.per_node
        return self.nodes[index] if 0 <= index < len(self.nodes) else None


def rank_layout(workload: Workload) -> RankLayout | None:
    if not workload.nodes:
        return None
    step = _rank_step(workload.steps)
    if step is not None:
        layout = _from_step(step)
        if layout is not None:
            return layout
    return RankLayout(tuple(workload.nodes), max(1, workload.gpus_per_node), GUESS)


def _rank_step(steps: list[Step]) -> Step | None:
    """The step that ran the most tasks: the one whose tasks are the job's ranks."""
    candidates = [s for s in steps if s.ntasks and s.nodes and s.id.split(".")[-1] not in _NOT_RANKS]
    return max(candidates, key=lambda s: s.ntasks or 0, default=None)


def _from_step(step: Step) -> RankLayout | None:
    try:
        nodes = tuple(expand_nodes(step.nodes))  # never empty: only steps with nodes get here
    except NodeListError:  # a step list no better than the job's: fall back to the guess
        return None
    ntasks = step.ntasks or 0
    kind = (step.distribution or "block").split(":")[0].split(",")[0].lower()
    # One task per node is a launcher; an uneven block split depends on each node's CPUs, which
    # sacct does not say; plane and arbitrary layouts are the user's own.
    if ntasks <= len(nodes) or kind not in ("block", "cyclic"):
        return None
    if kind == "block" and ntasks % len(nodes):
        return None
    per_node = ntasks // len(nodes) if kind == "block" else 0
    return RankLayout(nodes, per_node,
                      f"rank (step {step.id}: {ntasks} tasks, {kind} over {len(nodes)} nodes)")
