"""The built-in rules, shipped inside the package as `slurm_attr.builtin_rules`."""
