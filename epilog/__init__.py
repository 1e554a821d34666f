"""The EpilogSlurmctld hook, shipped inside the package so `slurm-attr epilog install` can copy it."""
