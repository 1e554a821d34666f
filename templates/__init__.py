"""The built-in report templates, shipped inside the package as `slurm_attr.templates`."""
