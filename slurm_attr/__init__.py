"""slurm-attr: explains why each failed Slurm job failed."""

__version__ = "0.1.0"
