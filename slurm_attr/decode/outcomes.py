"""The outcome keys decoders name. What each key means (role, sub_domain, priority) is data, in
rules/decoders.yaml; this module only lists the keys, so the loader can insist that the file
describes every one of them and nothing else.

Kept free of imports from the rest of the package: ruleset.py reads it while loading.
"""

from __future__ import annotations

# A decoder's whole reading of a line; decoders.yaml `outcomes` gives role, sub_domain, priority.
OUTCOME_KEYS = frozenset({
    # xid: a code missing from the vendor catalog, and one the local overlay does not classify
    "xid.not_in_catalog", "xid.not_in_overlay",
    "sxid.always_fatal", "sxid.fatal", "sxid.nonfatal",
    "oom_kill.in_job", "oom_kill.outside_job",
    "cancel.time_limit", "cancel.preemption", "cancel.node_failure", "cancel.requeue",
    "cancel.task_failure", "cancel.other",
    "srun.oom", "srun.bus_error", "srun.task_exit",
    "node.reason", "node.down", "node.not_responding", "node.preempted",
    "hung_task.fs", "hung_task.io_wait", "hung_task.gpu_driver", "hung_task.nic_driver",
    "os_error.quota", "os_error.storage",
    "torchrun.sigkill", "torchrun.sigkill.first_failure", "torchrun.sigbus",
    "torchrun.signal", "torchrun.signal.first_failure",
    "torchrun.exit", "torchrun.exit.first_failure",
    "execve.spool_missing", "execve.command_missing",
    "mpi_exec.missing_on_node", "mpi_exec.missing",
    "cuda.unclassified",
    "nccl.unclassified",
    "oops.gpu_driver", "oops.nic_driver", "oops.fs", "oops.kernel",
    "oops_via.gpu_driver", "oops_via.nic_driver", "trace.gpu_driver", "trace.nic_driver",
})

# A change to an Xid's catalog classification; decoders.yaml `adjustments`. True where the decoder
# hands the adjustment the earlier Xid it blames, so `sub_domain: earlier` and
# `priority_from_earlier` may be used.
ADJUSTMENT_KEYS: dict[str, bool] = {
    "xid.restart_app": False,
    "xid.after_non_cause": False,
    "xid.blamed_on_earlier": True,
    "xid31.driver_fault": False,
    "xid74.sympathetic": False,
    "xid154.needs_service": False,
    "nvlink5.injected": False,
    "nvlink5.sympathetic": False,
    "nvlink5.ignore": False,
    "nvlink5.nonfatal": False,
    "nvlink5.fatal": False,
}
