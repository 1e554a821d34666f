"""A Slurm client for fast tests: the real `SlurmCommands` (so its parsing is what runs), fed by a
runner that replays `sacct --parsable2` output recorded on the single-host test cluster (Slurm
22.05.8) instead of running the commands."""

from __future__ import annotations

from pathlib import Path

from slurm_attr.config import Settings
from slurm_attr.scope.slurm import DELIMITER, FAILURE_STATES, SlurmCommands, SlurmError

DATA = Path(__file__).resolve().parent / "data"


class Replay:
    """argv -> recorded stdout. sacct answers only for the jobs asked (as sacct does); the JSON
    plugin is absent (as on clusters built without it); sacctmgr knows no node events."""

    def __init__(self, recording: str = "sacct-22.05.8-parsable2.txt", cluster: str = "attrtest") -> None:
        self.lines = (DATA / recording).read_text().split("\n")  # not splitlines: \x1e is a break there
        self.cluster = cluster
        self.calls: list[list[str]] = []
        self.failing = False  # set to make every command fail (slurmdbd down)

    def __call__(self, argv: list[str]) -> str:
        self.calls.append(argv)
        if self.failing:
            raise SlurmError(f"{argv[0]} exited 1: slurmdbd is not responding")
        if argv[0] == "sacct" and "--format=JobIDRaw" in argv:  # backfill's failed-job query
            return "".join(f"{row[0]}\n" for row in self._jobs() if row[9].split()[0] in FAILURE_STATES)
        if argv[0] == "sacct" and "--json" in argv:
            raise SlurmError("sacct exited 1: JSON output is not available")
        if argv[0] == "sacct":
            wanted = {a.split("=", 1)[1] for a in argv if a.startswith("--jobs=")}
            ids = set(next(iter(wanted)).split(",")) if wanted else set()
            return "\n".join(line for line in self.lines
                             if line.split(DELIMITER)[0].split(".")[0] in ids) + "\n"
        if argv[0] == "sacctmgr":
            return ""
        if argv[0] == "scontrol" and "job" in argv:
            raise SlurmError("scontrol exited 1: slurm_load_jobs error: Invalid job id specified")
        if argv[0] == "scontrol":
            return f"ClusterName = {self.cluster}\n"
        raise SlurmError(f"{argv[0]}: not recorded")


    def _jobs(self) -> list[list[str]]:
        rows = [line.split(DELIMITER) for line in self.lines]
        return [r for r in rows if len(r) > 9 and "." not in r[0]]


def replayed_client(settings: Settings | None = None) -> tuple[SlurmCommands, Replay]:
    replay = Replay()
    return SlurmCommands(settings or Settings(), runner=replay), replay
