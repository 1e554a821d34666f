"""The named decoders that patterns.yaml refers to."""

from __future__ import annotations

import re
from collections.abc import Callable

import hostlist

from slurm_attr.decode.base import (
    Classification,
    DecodeContext,
    classified,
    classify_from_table,
    render,
    strip_rank,
)
from slurm_attr.decode.xid import decode_xid

# NVSwitch SXid classes from the Fabric Manager user guide (appendix D): always fatal, and the
# potentially fatal ones (fatal to the partitions using that port). Everything else is non-fatal.
_SXID_ALWAYS_FATAL = {10003, 12020, 22003, 22011} | set(range(23001, 23018))
_SXID_FATAL = {
    11001, 11009, 11013, 11018, 11019, 11020, 12001, 12002, 12022, 12024, 12025, 12026, 12027,
    12030, 12031, 12032, 14017, 15001, 15006, 15009, 15010, 15012, 15013, 19047, 19048, 20034,
    24004, 24005, 24006, 24007, *range(19054, 19071),
}
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
_TRACEBACK = "Traceback (most recent call last):"
_JOB_CGROUP = re.compile(r"job_(?P<job>\d+)")
_SIGNALS = {"Killed": "SIGKILL", "Terminated": "SIGTERM", "Aborted": "SIGABRT",
            "Segmentation fault": "SIGSEGV", "Bus error": "SIGBUS"}
# What srun sends the remaining tasks once one failed (and a cancel sends them all).
_TEARDOWN_SIGNALS = ("SIGKILL", "SIGTERM")


def decode_sxid(fields: dict[str, str], ctx: DecodeContext) -> Classification:
    code = int(fields.get("sxid") or 0)
    said_fatal = fields.get("severity", "").lower() == "fatal" or "Fatal" in fields.get("detail", "")
    if code in _SXID_ALWAYS_FATAL:
        key, cls, note = "sxid.always_fatal", "always fatal: the whole fabric needs a host restart", "fatal"
    elif code in _SXID_FATAL or said_fatal:
        key, cls, note = "sxid.fatal", "fatal to the partitions using this NVSwitch port", "fatal"
    else:
        key, cls, note = "sxid.nonfatal", "non-fatal", "non-fatal"
    return classified(
        ctx, key, code=f"SXid {code}",
        summary=f"NVSwitch SXid {code} ({cls}) on switch {fields.get('pci', '?')}"
                + (f" port {fields['port']}" if fields.get("port") else "")
                + (f": {fields['detail']}" if fields.get("detail") else ""),
        action="Drain the node, reset the GPUs/NVSwitch fabric (restart the host for always-fatal "
               "SXids) and check the NVSwitch port and its link.",
        fields={"sxid_class": note},
    )


_PEER = re.compile(r"from peer (?P<peer>[A-Za-z][\w.-]*?)<\d+>")
# NCCL quoting the CUDA runtime's error text (`Cuda failure 'named symbol not found'`, `Cuda failure 1
# 'invalid argument'`): where NCCL's own table has no class for it, read as any other CUDA error.
_NCCL_CUDA_FAILURE = re.compile(r"Cuda failure (?:\d+ )?'(?P<text>[^']+)'")


def decode_nccl(fields: dict[str, str], ctx: DecodeContext) -> Classification | None:
    fields.setdefault("host", fields.get("node") or "?")
    if not fields.get("msg"):  # NCCL's last warning or result, as a framework or nccl-tests quote it
        quoted = (fields.get(group) for group in ("last", "xla", "test", "legacy"))
        fields["msg"] = next((text for text in quoted if text), "")
    peer = _PEER.search(fields.get("msg", ""))
    if peer and peer["peer"].split(".", 1)[0] in ctx.workload.nodes:
        fields["peer_node"] = peer["peer"].split(".", 1)[0]  # the far end of the failing transfer
    msg = fields.get("msg", "")
    cls = classify_from_table(ctx.ruleset.classify["nccl_errors"], fields, text=msg)
    cuda = _NCCL_CUDA_FAILURE.search(msg)
    if cls is None and cuda:
        cls = _cuda_class(ctx, {**fields, "msg": cuda["text"]}, cuda["text"], "CUDA error in NCCL")
    return cls or classified(ctx, "nccl.unclassified", code="NCCL error",
                             summary=render("NCCL error[[ on {host}]]: {msg}", fields))


def _cuda_class(ctx: DecodeContext, fields: dict[str, str], text: str, label: str) -> Classification | None:
    """The CUDA table's class of an error text; a class without a code is named by the text."""
    cls = classify_from_table(ctx.ruleset.classify["cuda_errors"], fields, text=text)
    if cls is not None:
        cls.code = cls.code or f"{label} ({text[:60]})"
    return cls


def decode_cuda(fields: dict[str, str], ctx: DecodeContext) -> Classification | None:
    number = fields.get("number") or fields.get("result")  # the two spellings' groups
    if number and not fields.get("msg"):  # a bare driver API result number: read as its text
        text = ctx.ruleset.cuda_driver_codes.get(int(number))
        if text is None:
            summary = render("The CUDA driver returned error {number}[[ to rank {rank}]].", fields)
            return classified(ctx, "cuda.unclassified", code=f"CUDA driver error {number}", summary=summary)
        fields["msg"] = text
    # A line may name the error without its text (`cuMemAlloc failed: CUDA_ERROR_ECC_UNCORRECTABLE`).
    if not fields.get("msg", "").strip():
        names = ("driver_code", "runtime_code", "hip_code")
        fields["msg"] = next((fields[k] for k in names if fields.get(k)), "")
    msg = fields["msg"].strip()
    cls = _cuda_class(ctx, fields, msg, "CUDA error")
    if cls is None and not fields.get("generic_rule"):  # an exception line falls back to its exception
        summary = render("CUDA reported '{msg}'[[ to rank {rank}]].", {**fields, "msg": msg[:200]})
        cls = classified(ctx, "cuda.unclassified", code=f"CUDA error ({msg[:60]})", summary=summary)
    return cls


def _traceback(fields: dict[str, str], ctx: DecodeContext) -> None:
    """Attach the traceback this exception line ends (found by walking back over its frames)."""
    rank = fields.get("rank")
    frame_seen = None
    for back, line in enumerate(reversed(ctx.before), 1):
        body, line_rank = strip_rank(line)
        if rank is not None and line_rank is not None and line_rank != rank:
            continue
        if frame_seen is None:
            m = _FRAME.match(body)
            if m:
                frame_seen = m
        if body.strip() == _TRACEBACK:
            fields["traceback_lines_before"] = str(back)
            if frame_seen:
                fields["frame"] = f"{frame_seen['file']}:{frame_seen['line']} in {frame_seen['func']}"
            return


def decode_python_exception(fields: dict[str, str], ctx: DecodeContext) -> Classification | None:
    exc = fields.get("exc", "")
    if exc.endswith("Warning"):
        return None
    _traceback(fields, ctx)
    if "traceback_lines_before" not in fields and not fields.get("msg"):
        return None  # a bare word like "KeyError" printed alone is not an exception report
    cls = classify_from_table(ctx.ruleset.classify["python_exceptions"], fields)
    if cls is not None:
        cls.code = cls.code or exc.rsplit(".", 1)[-1]
    return cls


def decode_oom(fields: dict[str, str], ctx: DecodeContext) -> Classification | None:
    memcg = fields.get("oom_memcg") or fields.get("task_memcg") or ""
    m = _JOB_CGROUP.search(memcg)
    if m and m["job"] != ctx.workload.job_id:
        return None  # another job's cgroup: not evidence about this one
    in_job = bool(m)
    cgroup_kill = fields.get("constraint") == "CONSTRAINT_MEMCG" or "cgroup" in fields.get("cgroup", "")
    scope = "the job's memory cgroup limit" if (in_job or cgroup_kill) else "the whole node's memory"
    return classified(
        ctx, "oom_kill.in_job" if in_job else "oom_kill.outside_job", code="OOM kill",
        summary=f"The kernel OOM killer killed {fields.get('proc', '?')} (pid {fields.get('pid', '?')}) "
                f"on {fields.get('node') or '?'}: it went over {scope}.",
        action="Request more memory (--mem / --mem-per-gpu) or reduce host memory use "
               "(dataloader workers, pinned buffers).",
    )


# slurmstepd's reason -> (outcome key, summary)
_CANCEL_REASONS = {
    "TIME LIMIT": ("cancel.time_limit", "Slurm cancelled the job at its time limit."),
    "PREEMPTION": ("cancel.preemption", "Slurm preempted the job."),
    "NODE FAILURE": ("cancel.node_failure", "Slurm cancelled the job because a node failed."),
    "JOB REQUEUE": ("cancel.requeue", "Slurm requeued the job."),
    "TASK FAILURE": ("cancel.task_failure", "Slurm cancelled the step because a task failed."),
}


def decode_slurm_cancel(fields: dict[str, str], ctx: DecodeContext) -> Classification:
    why = (fields.get("why") or "").strip()
    if not fields.get("host") and fields.get("host_after"):
        fields["host"] = fields["host_after"].rstrip("*").strip()
    key, text = _CANCEL_REASONS.get(why, ("cancel.other", "Slurm cancelled the job (scancel or a signal)."))
    if key == "cancel.other" and ctx.workload.state == "FAILED":
        # A cancel leaves the job CANCELLED; in a job that ended FAILED, a cancel without a reason
        # is srun (or the launcher) tearing the step down after a task failed.
        key, text = "cancel.task_failure", "The step was terminated after a task failed."
    if why == "TIME LIMIT" and fields.get("scope") == "STEP":
        text = "Slurm cancelled the job step at the job's time limit."
    if key == "cancel.node_failure" and fields.get("host") and len(ctx.workload.nodes) > 1:
        # The host named is the one whose slurmstepd printed the cancel: a node that survived.
        return classified(ctx, key, f"Slurm cancelled the job on {fields['host']} because another of "
                                    "its nodes failed.", code=f"CANCELLED {why}", elsewhere=True)
    return classified(ctx, key, text, code=f"CANCELLED {why}".strip(), node=fields.get("host"))


def decode_srun(fields: dict[str, str], ctx: DecodeContext) -> Classification:
    what = fields.get("what", "")
    node = fields.get("host")
    if "Out Of Memory" in what:
        return classified(ctx, "srun.oom", code="srun OOM", node=node,
                          summary=f"srun: task(s) {fields.get('tasks')} on {node} ran out of memory.",
                          action="Request more memory (--mem / --mem-per-gpu).")
    if what.startswith("Bus error"):  # SIGBUS: a mapped page could not be backed
        return classified(ctx, "srun.bus_error", code="srun SIGBUS", node=node,
                          summary=f"srun: task(s) {fields.get('tasks')} on {node} died of a bus error: "
                                  "mapped memory failed, most often /dev/shm full or too small.",
                          action="Give the job a larger /dev/shm; if it is ample, check the file "
                                 "system behind the job's mapped files.")
    signal = next((sig for word, sig in _SIGNALS.items() if what.startswith(word)), None)
    code = f"srun {signal}" if signal else "srun task exit"
    if signal not in _TEARDOWN_SIGNALS:
        # A task that died of its own accord; srun then kills the others (SIGKILL, SIGTERM).
        fields["first_failure"] = "yes"
    return classified(ctx, "srun.task_exit", code=code, node=node,
                      summary=f"srun: task(s) {fields.get('tasks')} on {node}: {what}")


def decode_controller_nodes(fields: dict[str, str], ctx: DecodeContext) -> Classification | None:
    try:
        named = hostlist.expand_hostlist(fields.get("nodes", ""))
    except hostlist.BadHostlist:
        named = [fields.get("nodes", "")]
    ours = [n for n in named if n in ctx.workload.nodes]
    if not ours:
        return None
    node = ours[0]
    fields["node_list"] = ",".join(ours)
    if fields.get("reason") is not None:
        checked = classify_from_table(ctx.ruleset.classify["health_checks"], {**fields, "node": node},
                                      text=fields["reason"])
        if checked is not None:  # a health check that names the failed part
            checked.node, checked.kind = node, "node_health_check"
            return checked
        return classified(ctx, "node.reason", code="Node reason", node=node,
                          summary=f"An admin or health check set the reason on {node}: "
                                  f"{fields['reason']}")
    if fields.get("preempted"):
        return classified(
            ctx, "node.preempted", code="Cloud VM preempted", node=node,
            summary=f"The cloud provider reclaimed the VM behind {node} (a preemptible or spot instance): "
                    "the node was taken back, it did not fail.",
            action="Resubmit (--requeue with checkpointing lets Slurm do it); run jobs that cannot lose "
                   "progress on on-demand nodes.")
    down = bool(fields.get("down") or fields.get("state"))
    admin = bool(fields.get("state"))
    summary = (f"{node} was set DOWN by an admin or health check (scontrol update)." if admin else
               f"{node} stopped responding to slurmctld" + (" and was set DOWN." if down else "."))
    return classified(
        ctx, "node.down" if down else "node.not_responding",
        code="Node DOWN" if down else "Node not responding", node=node, summary=summary,
        action="Check the node's syslog, slurmd and munge, and its BMC; drain it until it is understood.",
    )


# (a task's name may hold colons itself: `INFO: task kworker/u97:2:1234 blocked for more than ...`)
_HUNG = re.compile(r"INFO: task (?P<proc>[^\n]{1,64}?):(?P<pid>\d+) blocked for more than "
                   r"(?P<secs>\d+) seconds")
_IO_WAIT = re.compile(r"(?:__)?(?:bit_wait|wait_on_page|folio_wait|io_schedule|lock_page|"
                      r"balance_dirty_pages|wait_on_buffer|jbd2_|blk_mq_get_tag|submit_bio_wait)")
_FS_FAMILY = (
    (re.compile(r"^(?:nfs|rpc_|__rpc_|xprt_)|^(?:nfs|nfsv4|nfsv3|sunrpc)$"), "NFS"),
    (re.compile(r"^(?:cxi|kxSleep|mmfs|_ZN\w*Mmfs)|^mmfs"), "GPFS (Spectrum Scale)"),
    (re.compile(r"^(?:ll_|lov_|osc_|mdc_|ldlm_|ptlrpc_|lnet_|cl_)|^(?:lustre|ptlrpc|osc|mdc|lov|lnet|lmv)$"),
     "Lustre"),
    (re.compile(r"^(?:beegfs|FhgfsOps|fhgfs)|^(?:beegfs|fhgfs)$"), "BeeGFS"),
    (re.compile(r"^(?:cifs_|smb2_)|^cifs$"), "CIFS/SMB"),
    (re.compile(r"^ceph_|^ceph$"), "CephFS"),
    (re.compile(r"^(?:zfs|zpl_|zio_|txg_|zil_|dmu_|dsl_)|^(?:zfs|spl)$"), "ZFS"),
    (re.compile(r"^(?:xfs_|xlog)|^xfs$"), "XFS"),
    (re.compile(r"^ext4_|^ext4$"), "ext4"),
)
# File systems on the node's own disks: a stall there is those disks (or the pool), not a server.
_LOCAL_FS = {"ZFS", "XFS", "ext4"}


# Device drivers by kernel module: (module, what it drives); each has an outcome key per decoder.
_DRIVER_FAMILY = (
    (re.compile(r"^(?:nvidia|nvidia_uvm|nvidia_drm|nvidia_modeset|nvidia_peermem|nvidia_fs|amdgpu|amdkfd)$"),
     "GPU"),
    (re.compile(r"^(?:mlx[45]_\w+|ib_\w+|rdma_\w+|irdma|efa|bnxt_re|hfi1|cxi\w*)$"), "network adapter"),
)
_OOPS_KEYS = {"GPU": "oops.gpu_driver", "network adapter": "oops.nic_driver"}
_OOPS_VIA_KEYS = {"GPU": "oops_via.gpu_driver", "network adapter": "oops_via.nic_driver"}
_HUNG_KEYS = {"GPU": "hung_task.gpu_driver", "network adapter": "hung_task.nic_driver"}


def _driver_family(module: str) -> str | None:
    return next((name for regex, name in _DRIVER_FAMILY if regex.match(module)), None)


# Older kernels dump the task's raw stack words (64- or 32-bit) between its header and the call trace.
_STACK_WORDS = re.compile(r"(?:\s[0-9a-f]{8}(?:[0-9a-f]{8})?){2,}\s*$")
_FRAME_FN = re.compile(r"(?:\? )?(?P<func>\w+)\+0x[0-9a-f]+/0x[0-9a-f]+(?:\s+\[(?P<module>\w+)\])?")


def _fs_family(func: str, module: str) -> str | None:
    return next((name for regex, name in _FS_FAMILY if regex.search(func) or regex.search(module)), None)


def _stack_family(func: str, module: str) -> bool:
    """Whether a frame is in file-system or device-driver code."""
    return _fs_family(func, module) is not None or _driver_family(module) is not None


def decode_hung_task_fs(fields: dict[str, str], ctx: DecodeContext) -> Classification | None:
    """A stack frame of file-system or device-driver code inside a hung-task report: the
    file system, or the device, stopped answering. One report gives one event of each kind, at its
    first such frame: a file-system frame below an I/O-wait frame still names the file system."""
    func = fields.get("func") or fields.get("dfunc", "")
    module = fields.get("module") or fields.get("dmodule", "")
    family = _fs_family(func, module)
    driver = _driver_family(module) if family is None else None
    for line in reversed(ctx.before):
        m = _HUNG.search(line)
        if m:
            break
        frame = _FRAME_FN.search(line)
        if frame and (_stack_family(frame["func"], frame["module"] or "")
                      or (family is None and driver is None and _IO_WAIT.match(frame["func"]))):
            return None  # an earlier frame of this report already made this event
        if "Call Trace" not in line and "+0x" not in line and not re.search(r"(?:\s|state:)D\s", line) \
                and "hung_task_timeout_secs" not in line and "Tainted" not in line \
                and "Hardware name" not in line and "<TASK>" not in line and not _STACK_WORDS.search(line):
            return _oops_frame(fields, ctx)  # the frames are not part of a hung-task report
    else:
        return _oops_frame(fields, ctx)
    if driver is not None:
        return _hung_in_driver(fields, ctx, m, func, module, driver)
    if family is None:
        return _hung_in_io_wait(fields, ctx, m, func)
    fields.update(proc=m["proc"], pid=m["pid"], secs=m["secs"], fs=family)
    action = (f"Check the disks under the {family} file system (its pool or device status, the disks' "
              "error log in dmesg and SMART) and the file system's own errors; reboot the node if "
              "processes stay in D state." if family in _LOCAL_FS else
              f"Check the {family} servers and the node's path to them; the node recovers once the "
              "mount answers again (reboot it if processes stay in D state).")
    return classified(
        ctx, "hung_task.fs", code=f"{family.split()[0]} hang",
        summary=f"Task {m['proc']} (pid {m['pid']}) on {fields.get('node') or 'the node'} was blocked "
                f"for over {m['secs']} s inside {family} code ({func}): the file system stopped "
                "answering.",
        action=action,
    )


# The header of a kernel oops (the faulting task dies; the kernel goes on, tainted), as opposed to a
# WARN_ON backtrace or a soft lockup, which also print the instruction pointer but kill nothing.
_OOPS = re.compile(r"BUG: (?:kernel NULL pointer dereference|unable to handle (?:kernel )?(?:page fault|"
                   r"paging request)|kernel paging request)|Oops: |general protection fault|kernel BUG at |"
                   r"Unable to handle kernel")
_NOT_OOPS = re.compile(r"soft lockup|hard LOCKUP|blocked for more than|rcu_\w+ detected stalls")
_WARNING = re.compile(r"WARNING: CPU: ")
_TRACE_KEYS = {"GPU": "trace.gpu_driver", "network adapter": "trace.nic_driver"}


def decode_kernel_oops(fields: dict[str, str], ctx: DecodeContext) -> Classification | None:
    """The instruction pointer of a kernel oops (`RIP: 0010:nvidia_vma_access+0x1b/0x350 [nvidia]`):
    the module it points into is the driver that failed; none is the core kernel. Only an oops
    header above makes it one; a warning's backtrace into a driver, or one whose header the
    excerpt cut off, is kept as that driver's trace; a lockup's is neither."""
    func, module = fields.get("func", ""), fields.get("module") or ""
    for line in reversed(ctx.before):
        if _NOT_OOPS.search(line):
            return None
        if _WARNING.search(line):
            return _driver_trace(fields, ctx, func, module, "warned")
        if _OOPS.search(line):
            break
    else:
        return _driver_trace(fields, ctx, func, module, "logged a backtrace")
    node = fields.get("node") or "the node"
    where = f"the {module} module ({func})" if module else f"the kernel ({func})"
    summary = f"The kernel on {node} oopsed in {where}"
    if kind := _driver_family(module):
        key = _OOPS_KEYS[kind]
    elif family := _fs_family(func, module):
        key, kind = "oops.fs", f"{family} file-system"
    else:
        return classified(ctx, "oops.kernel", code="Kernel oops",
                          summary=f"{summary}: the task using it died.",
                          action="Drain the node and collect the full oops and the kernel version; update "
                                 "or roll back the kernel if it repeats.")
    return classified(
        ctx, key, code=f"Kernel oops in {module}",
        summary=summary + f": a {kind} driver fault; the task using it died and the device may need a reset.",
        action=f"Drain the node, collect the full oops, and update or roll back the {module} driver (a known "
               "driver bug more often than failing hardware); reboot before returning it to service.",
    )


_KERNEL_RIP = re.compile(r"RIP: 0010:(?P<func>[\w.]+)\+0x[0-9a-f]+/0x[0-9a-f]+(?: \[(?P<module>\w+)\])?")


def _oops_frame(fields: dict[str, str], ctx: DecodeContext) -> Classification | None:
    """A driver frame the hung-task rule matched that belongs to an oops's trace instead; a frame
    the unwinder only guessed (`? func`) is not one."""
    if not fields.get("dmodule") or fields.get("guess"):
        return None
    return decode_kernel_oops_frame({**fields, "func": fields["dfunc"], "module": fields["dmodule"]}, ctx)


def decode_kernel_oops_frame(fields: dict[str, str], ctx: DecodeContext) -> Classification | None:
    """The first device-driver frame of an oops whose instruction pointer is in the core kernel
    (`RIP: 0010:ida_free+0xc2/0x140`, then `amdgpu_pasid_free_delayed+0x116/0x1f0 [amdgpu]` under
    `Call Trace:`): the driver called the kernel with state it had broken, so the oops is the
    driver's. A RIP inside a module is the oops rule's own."""
    rip: re.Match[str] | None = None
    for line in reversed(ctx.before):
        frame = _FRAME_FN.search(line)
        if rip is None and frame and frame["module"] and _driver_family(frame["module"]) \
                and "? " + frame["func"] not in line:
            return None  # an earlier driver frame of this trace already made the event
        if _NOT_OOPS.search(line) or _WARNING.search(line):
            return None
        if rip is None and (m := _KERNEL_RIP.search(line)):
            if m["module"]:
                return None
            rip = m
        elif rip is not None and _OOPS.search(line):
            break
    else:
        return None
    func, module = fields.get("func", ""), fields.get("module", "")
    kind = _driver_family(module)
    if kind is None:
        return None
    node = fields.get("node") or "the node"
    return classified(
        ctx, _OOPS_VIA_KEYS[kind], code=f"Kernel oops in {module}", kind="kernel_oops_in_driver",
        summary=f"The kernel on {node} oopsed in {rip['func']}, called from the {module} module ({func}): a "
                f"{kind} driver fault; the task using it died and the device may need a reset.",
        action=f"Drain the node, collect the full oops, and update or roll back the {module} driver (a known "
               "driver bug more often than failing hardware); reboot before returning it to service.",
    )


def _driver_trace(fields: dict[str, str], ctx: DecodeContext, func: str, module: str,
                  what: str) -> Classification | None:
    """A backtrace into a device driver with no oops above it: a WARN_ON, or an oops whose header
    the excerpt cut off. The driver met a state it did not expect, but the task may have lived:
    context of the device, read as the reason only for a node Slurm then lost (lost_node_after)."""
    kind = _driver_family(module)
    if kind is None:
        return None
    node = fields.get("node") or "the node"
    return classified(
        ctx, _TRACE_KEYS[kind], code=f"Kernel trace in {module}",
        summary=f"The kernel on {node} {what} in the {module} module ({func}): the {kind} driver met a "
                "state it did not expect.",
        action=f"Collect the whole trace and the {module} driver version; if the device then failed or the "
               "node was lost, drain it and update or roll back the driver.",
    )


def _hung_in_driver(fields: dict[str, str], ctx: DecodeContext, m: re.Match[str], func: str, module: str,
                    what: str) -> Classification:
    """A hung task stuck inside a device driver: the device (or its driver) stopped answering."""
    fields.update(proc=m["proc"], pid=m["pid"], secs=m["secs"])
    return classified(
        ctx, _HUNG_KEYS[what], code=f"{what} driver hang",
        summary=f"Task {m['proc']} (pid {m['pid']}) on {fields.get('node') or 'the node'} was blocked "
                f"for over {m['secs']} s inside the {what} driver ({func} [{module}]): the device or its "
                "driver stopped answering.",
        action=f"Drain the node and check the {what} (its Xids or firmware events, a reset); processes "
               "stuck in a driver do not die, so reboot it before returning it to service.",
    )


def _hung_in_io_wait(fields: dict[str, str], ctx: DecodeContext, m: re.Match[str],
                     func: str) -> Classification | None:
    """A hung task waiting on page or block I/O: the storage under it stopped completing I/O."""
    if not _IO_WAIT.match(func):
        return None
    fields.update(proc=m["proc"], pid=m["pid"], secs=m["secs"], fs="page or block I/O")
    return classified(
        ctx, "hung_task.io_wait", code="I/O hang",
        summary=f"Task {m['proc']} (pid {m['pid']}) on {fields.get('node') or 'the node'} was blocked "
                f"for over {m['secs']} s waiting for I/O ({func}): the storage under it (a local "
                "disk or a network file system) stopped completing requests.",
        action="Find the mount the task was writing to (its working or output directory) and check "
               "that storage: server health, the node's path to it, the disk's error log.",
    )


def decode_os_error(fields: dict[str, str], ctx: DecodeContext) -> Classification:
    """A file-system error the job's own tools printed. A full quota is the user's to fix."""
    err = fields.get("err", "")
    what = fields.get("msg") or fields.get("exc") or err
    err = err[:1].upper() + err[1:]  # Go programs print the errno's text in lower case
    err = err.replace("Stale NFS file handle", "Stale file handle")  # glibc before 2.20
    where = f"rank {fields['rank']}" if fields.get("rank") else "the job"
    if err == "Disk quota exceeded":
        return classified(
            ctx, "os_error.quota", code="EDQUOT",
            summary=f"{where[0].upper() + where[1:]} could not write: the user's disk quota is "
                    f"exceeded (EDQUOT: {what}).",
            action="Free space under the user's (or project's) quota or ask for a larger one, then "
                   "resubmit; write checkpoints where the quota allows.")
    codes = {"No space left on device": ("ENOSPC", "the file system is full"),
             "Stale file handle": ("ESTALE", "the file system was remounted or its server restarted"),
             "Input/output error": ("EIO", "the storage returned an I/O error"),
             "Transport endpoint is not connected": ("ENOTCONN", "the mount lost its server"),
             "Cannot send after transport endpoint shutdown": ("ESHUTDOWN",
                                                               "the mount lost its server"),
             "Remote I/O error": ("EREMOTEIO", "the file system's server failed the call"),
             "Communication error on send": ("ECOMM", "the file system's client could not reach "
                                                      "the server holding the file")}
    code, meaning = codes.get(err, ("I/O", "the file system failed"))
    return classified(
        ctx, "os_error.storage", code=code,
        summary=f"{where[0].upper() + where[1:]} hit a file-system error: {meaning} ({what}).",
        action="Check the file system the job was using (space, server health, mounts); resubmit "
               "when it is healthy.")


_TABLE_HOST = re.compile(r"^\s*host\s*:\s*(?P<host>\S+)")
_TABLE_RANK = re.compile(r"^\s*rank\s*:\s*(?P<rank>\d+)")


def decode_torchrun_failure(fields: dict[str, str], ctx: DecodeContext) -> Classification:
    """One entry of torchrun's failure summary; the host and rank are on the lines above (or on
    the entry's own line, where a log shipper joined them)."""
    host, rank = fields.get("host"), fields.get("table_rank")
    root = False
    for line in reversed(ctx.before):
        body, _ = strip_rank(line)
        if "Root Cause" in body:
            root = True
            break
        if "exitcode" in body or "Failures:" in body or body.lstrip().startswith("==="):
            break  # the entry above this one, or the top of the table
        if host is None and (m := _TABLE_HOST.match(body)):
            host = m["host"]
        elif rank is None and (m := _TABLE_RANK.match(body)):
            rank = m["rank"]
    if rank is not None:
        fields["rank"] = rank
    if root:
        fields["first_failure"] = "yes"
    code = int(fields.get("exitcode") or 0)
    where = f" on {host}" if host else ""
    who = f"rank {rank}" if rank is not None else "a worker"
    first = " (torchrun's first observed failure)" if root else ""
    if code == -9:
        return classified(
            ctx, "torchrun.sigkill.first_failure" if root else "torchrun.sigkill",
            code="worker SIGKILL", node=host,
            summary=f"torchrun: {who}{where} was killed with SIGKILL{first}: most often the kernel "
                    "OOM killer.")
    if code == -7:
        return classified(ctx, "torchrun.sigbus", code="SIGBUS (shared memory)", node=host,
                          summary=f"torchrun: {who}{where} died of a bus error{first}: mapped memory "
                                  "failed, most often /dev/shm full or too small.",
                          action="Give the job a larger /dev/shm (container --shm-size, the node's "
                                 "tmpfs size) or fewer DataLoader workers.")
    if code < 0:
        return classified(ctx, "torchrun.signal.first_failure" if root else "torchrun.signal",
                          code=f"worker signal {-code}", node=host,
                          summary=f"torchrun: {who}{where} was killed by signal {-code}{first}.")
    return classified(ctx, "torchrun.exit.first_failure" if root else "torchrun.exit",
                      code=f"worker exit {code}", node=host,
                      summary=f"torchrun: {who}{where} exited with code {code}{first}.")


_SPOOL = re.compile(r"slurm_script|/slurmd/|/spool/slurm")


def decode_execve(fields: dict[str, str], ctx: DecodeContext) -> Classification:
    path, err = fields.get("path", "").strip(), fields.get("err", "").strip()
    if _SPOOL.search(path):
        return classified(
            ctx, "execve.spool_missing", code="batch script missing",
            summary=f"slurmstepd on {fields.get('node') or 'the node'} could not start the batch "
                    f"script {path} ({err}): slurmd's spool on the node is broken, not the job.",
            action="Drain the node; check slurmd's spool directory and /tmp (full, read-only or "
                   "wiped) and restart slurmd or reboot.")
    return classified(
        ctx, "execve.command_missing", code="exec failed",
        summary=f"slurmstepd could not run the job's command {path} ({err}): it is missing from "
                "the job's environment or PATH.",
        action="Fix the command or the environment (module load, PATH, container) and resubmit.")


_HELP_LINE = re.compile(r"^\s*(?P<key>Executable|Node):\s*(?P<value>\S+)")


def decode_mpi_exec_missing(fields: dict[str, str], ctx: DecodeContext) -> Classification | None:
    """Open MPI's help message for a program it could not access or execute on a node; the
    executable and the node are on the lines above its last one."""
    said: dict[str, str] = {}
    for line in reversed(ctx.before):
        body, _ = strip_rank(line)
        if "could not access" in body:
            break
        if m := _HELP_LINE.match(body):
            said.setdefault(m["key"], m["value"])
    else:
        return None  # not that message
    path, node = said.get("Executable", "the program"), said.get("Node")
    if int(fields.get("mpi_rank") or 0) > 0 and node:
        return classified(
            ctx, "mpi_exec.missing_on_node", code="Program missing on a node", node=node,
            summary=f"Open MPI could not access or execute {path} on {node}, after the ranks before "
                    f"{fields['mpi_rank']} had started elsewhere: that node's view of the file system "
                    "holding it (not mounted, stale or out of date there).",
            action=f"Check the file system holding {path} on {node} (mounted, ls -l the path there, "
                   "a client cache that has not seen it change); drain the node until it sees it.")
    return classified(
        ctx, "mpi_exec.missing", code="exec failed", node=node,
        summary=f"Open MPI could not access or execute the job's program {path}: a wrong path or "
                "missing permissions.",
        action="Fix the program's path or permissions (an absolute path on a file system every node "
               "mounts) and resubmit.")


DECODERS: dict[str, Callable[[dict[str, str], DecodeContext], Classification | None]] = {
    "xid": decode_xid,
    "sxid": decode_sxid,
    "nccl": decode_nccl,
    "cuda": decode_cuda,
    "python_exception": decode_python_exception,
    "oom": decode_oom,
    "slurm_cancel": decode_slurm_cancel,
    "srun": decode_srun,
    "controller_nodes": decode_controller_nodes,
    "hung_task_fs": decode_hung_task_fs,
    "kernel_oops": decode_kernel_oops,
    "kernel_oops_frame": decode_kernel_oops_frame,
    "os_error": decode_os_error,
    "torchrun_failure": decode_torchrun_failure,
    "execve": decode_execve,
    "mpi_exec_missing": decode_mpi_exec_missing,
}

__all__ = ["DECODERS", "render"]
